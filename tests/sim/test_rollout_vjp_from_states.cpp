// rollout_vjp_from_states: the caller's forward trajectory as checkpoints gives rollout_vjp's
// results exactly, without re-running a forward step.
#include <gtest/gtest.h>

#include "../support/random_model.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

TEST(RolloutVjpFromStates, EqualsRolloutVjpWithoutForwardSteps) {
  for (const Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::RK4}) {
    const Model model = test::random_model(7, 41, true, true);
    Data data(model);
    std::mt19937 rng(3);
    const Eigen::VectorXd q0 = test::random_configuration(model, rng), v0 = test::random_vector(model.nv, rng);
    const int T = 40;
    const MatrixXr<double> taus = MatrixXr<double>::Random(T, model.nv);
    MatrixXr<double> qs, vs;
    rollout(model, data, q0, v0, taus, 1e-3, integrator, qs, vs);
    const MatrixXr<double> qs_bar = MatrixXr<double>::Random(T + 1, model.nq);
    const MatrixXr<double> vs_bar = MatrixXr<double>::Random(T + 1, model.nv);

    Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(model.nq), v0_bar = Eigen::VectorXd::Zero(model.nv);
    MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, model.nv);
    ModelTangent model_bar(model);
    rollout_vjp(model, data, q0, v0, taus, 1e-3, integrator, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, model_bar);

    Eigen::VectorXd q0_bar2 = Eigen::VectorXd::Zero(model.nq), v0_bar2 = Eigen::VectorXd::Zero(model.nv);
    MatrixXr<double> taus_bar2 = MatrixXr<double>::Zero(T, model.nv);
    ModelTangent model_bar2(model);
    rollout_vjp_from_states(model, data, qs, vs, taus, 1e-3, integrator, qs_bar, vs_bar, q0_bar2, v0_bar2, taus_bar2,
                            model_bar2);
    EXPECT_EQ(data.rollout_adj_forward_steps, 0);
    EXPECT_EQ(q0_bar, q0_bar2);
    EXPECT_EQ(v0_bar, v0_bar2);
    EXPECT_EQ(taus_bar, taus_bar2);
    EXPECT_EQ(params_gradient(model, model_bar), params_gradient(model, model_bar2));
    EXPECT_GT(q0_bar.norm(), 0.0);
  }
}

TEST(RolloutVjpFromStates, WrongTrajectoryShapeNamesExpectedAndActual) {
  const Model model = test::random_model(3, 2);
  Data data(model);
  const MatrixXr<double> taus = MatrixXr<double>::Zero(5, model.nv);
  const MatrixXr<double> qs = MatrixXr<double>::Zero(5, model.nq), vs = MatrixXr<double>::Zero(6, model.nv);
  const MatrixXr<double> qs_bar = MatrixXr<double>::Zero(6, model.nq), vs_bar = MatrixXr<double>::Zero(6, model.nv);
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(model.nq), v0_bar = Eigen::VectorXd::Zero(model.nv);
  MatrixXr<double> taus_bar = MatrixXr<double>::Zero(5, model.nv);
  ModelTangent model_bar(model);
  try {
    rollout_vjp_from_states(model, data, qs, vs, taus, 1e-3, Integrator::RK4, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar,
                            model_bar);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("qs: expected shape (6, " + std::to_string(model.nq) + "), got (5, "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gradyn
