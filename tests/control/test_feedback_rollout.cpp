// One iLQR line-search candidate (control/ilqr.hpp, feedback_rollout): with no feedback it is the
// open-loop rollout bit for bit (ctrl and tau inputs); with gains it applies the documented control
// law, clamped; a candidate that diverges flags its steps and does not throw.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../support/cart_pole.hpp"
#include "../support/laikago_scene.hpp"
#include "gradyn/control/ilqr.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A pendulum on a cart, the cart driven by a motor clamped to +-5.
Model cart_pole() { return test::cart_pole({.ctrl_range = std::pair{-5.0, 5.0}}); }

TEST(FeedbackRollout, WithoutFeedbackItIsTheOpenLoopRollout) {
  const Model model = cart_pole();
  Data data(model);
  const int T = 30;
  const StepOptions options{0.02, Integrator::SemiImplicitEuler};
  MatrixXr<double> u_ref(T, 1), k(T, 1);
  for (int t = 0; t < T; ++t) u_ref(t, 0) = 3 * std::sin(0.3 * t), k(t, 0) = std::cos(0.2 * t);
  const double alpha = 0.5;
  MatrixXr<double> q_ref(T + 1, 2), v_ref(T + 1, 2);
  q_ref.row(0) << 0.1, 0.2;
  v_ref.row(0) << 0.0, -0.3;
  // The reference trajectory's later rows do not matter without gains.
  q_ref.bottomRows(T).setConstant(7.0), v_ref.bottomRows(T).setConstant(-7.0);
  const MatrixXr<double> K = MatrixXr<double>::Zero(T, 4);
  const Eigen::VectorXd u_min = Eigen::VectorXd::Constant(1, -5), u_max = -u_min;
  MatrixXr<double> qs(T + 1, 2), vs(T + 1, 2), us(T, 1);
  std::vector<std::uint32_t> status(T);
  feedback_rollout(model, data, q_ref, v_ref, u_ref, k, K, alpha, u_min, u_max, ControlInput::Ctrl, options, qs, vs,
                   us, status);
  const MatrixXr<double> ctrls = u_ref + alpha * k;
  EXPECT_EQ((us - ctrls).cwiseAbs().maxCoeff(), 0.0);
  MatrixXr<double> qs_open(T + 1, 2), vs_open(T + 1, 2);
  Data fresh(model);
  rollout<double>(model, fresh, q_ref.row(0).transpose(), v_ref.row(0).transpose(), MatrixXr<double>::Zero(T, 2), ctrls,
                  options.dt, options.integrator, qs_open, vs_open, {});
  EXPECT_EQ((qs - qs_open).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ((vs - vs_open).cwiseAbs().maxCoeff(), 0.0);
  for (std::uint32_t s : status) EXPECT_EQ(s, kStatusOk);

  // Generalised forces instead of the actuators' controls.
  const MatrixXr<double> k_tau = MatrixXr<double>::Zero(T, 2), K_tau = MatrixXr<double>::Zero(2 * T, 4);
  MatrixXr<double> taus(T, 2), us_tau(T, 2);
  taus.col(0) = u_ref.col(0), taus.col(1) = -u_ref.col(0);
  const Eigen::VectorXd limit = Eigen::VectorXd::Constant(2, kInf);
  feedback_rollout(model, data, q_ref, v_ref, taus, k_tau, K_tau, 1.0, -limit, limit, ControlInput::Tau, options, qs,
                   vs, us_tau, status);
  rollout<double>(model, fresh, q_ref.row(0).transpose(), v_ref.row(0).transpose(), taus, MatrixXr<double>(), options.dt,
                  options.integrator, qs_open, vs_open, {});
  EXPECT_EQ((qs - qs_open).cwiseAbs().maxCoeff(), 0.0);
}

TEST(FeedbackRollout, AppliesTheClampedControlLawOnAFloatingBase) {
  const Model model = test::laikago_standing(ContactModel::None).model;
  Data data(model);
  const int T = 5, nv = model.nv;
  const StepOptions options{1e-3, Integrator::SemiImplicitEuler};
  MatrixXr<double> q_ref(T + 1, model.nq), v_ref = MatrixXr<double>::Zero(T + 1, nv);
  for (int t = 0; t <= T; ++t) q_ref.row(t) = neutral_configuration(model).transpose();
  // The plan's start differs from the reference at later steps by a known tangent.
  Eigen::VectorXd offset = Eigen::VectorXd::LinSpaced(nv, -0.05, 0.05);
  for (int t = 1; t <= T; ++t) {
    Eigen::VectorXd q(model.nq);
    integrate<double>(model, q_ref.row(0).transpose(), -offset, q);
    q_ref.row(t) = q.transpose();
  }
  MatrixXr<double> u_ref = MatrixXr<double>::Zero(T, nv), k = MatrixXr<double>::Zero(T, nv);
  MatrixXr<double> K = MatrixXr<double>::Zero(T * nv, 2 * nv);
  for (int t = 0; t < T; ++t) K.block(t * nv, 0, nv, nv).setIdentity();  // u = q_ref (-) q
  const Eigen::VectorXd u_min = Eigen::VectorXd::Constant(nv, -0.02), u_max = Eigen::VectorXd::Constant(nv, 0.03);
  MatrixXr<double> qs(T + 1, model.nq), vs(T + 1, nv), us(T, nv);
  std::vector<std::uint32_t> status(T);
  feedback_rollout(model, data, q_ref, v_ref, u_ref, k, K, 1.0, u_min, u_max, ControlInput::Tau, options, qs, vs, us,
                   status);
  for (int t = 1; t < T; ++t) {
    Eigen::VectorXd dq(nv);
    difference<double>(model, q_ref.row(t).transpose(), qs.row(t).transpose(), dq);
    const Eigen::VectorXd expected = dq.cwiseMax(u_min).cwiseMin(u_max);
    EXPECT_LT((us.row(t).transpose() - expected).cwiseAbs().maxCoeff(), 1e-15) << "t " << t;
  }
  EXPECT_GT((us.array() == 0.03).count(), 0);  // some controls clamped
}

TEST(FeedbackRollout, ADivergingCandidateFlagsItsStepsAndShapesAreChecked) {
  const Model model = cart_pole();
  Data data(model);
  const int T = 4;
  MatrixXr<double> q_ref = MatrixXr<double>::Zero(T + 1, 2), v_ref = q_ref, u_ref = MatrixXr<double>::Zero(T, 2);
  const MatrixXr<double> k = MatrixXr<double>::Constant(T, 2, 1e308), K = MatrixXr<double>::Zero(2 * T, 4);
  const Eigen::VectorXd limit = Eigen::VectorXd::Constant(2, kInf);
  MatrixXr<double> qs(T + 1, 2), vs(T + 1, 2), us(T, 2);
  std::vector<std::uint32_t> status(T);
  feedback_rollout(model, data, q_ref, v_ref, u_ref, k, K, 10.0, -limit, limit, ControlInput::Tau,
                   StepOptions{0.01, Integrator::SemiImplicitEuler}, qs, vs, us, status);
  EXPECT_NE(status[0] & kStatusNonFinite, 0u);
  MatrixXr<double> wrong_us(T, 1);
  EXPECT_THROW(feedback_rollout(model, data, q_ref, v_ref, u_ref, k, K, 1.0, -limit, limit, ControlInput::Tau,
                                StepOptions{0.01, Integrator::SemiImplicitEuler}, qs, vs, wrong_us, status),
               ArgumentError);
}

}  // namespace
}  // namespace gradyn
