// Policies inside the rollout (control/policy.hpp): the closed loop is the step under the network's
// controls; its adjoint w.r.t. the weights, the task and the initial state against central
// differences; decay 0 keeps only each step's own adjoint; observation names and sizes are checked.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "../support/cart_pole.hpp"
#include "gradyn/control/policy.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {
namespace {

Model cart_pole() { return test::cart_pole({.pole_mass = 0.2, .pole_inertia = 0.02, .slider_damping = 0.1, .gear = 2.0}); }

struct Fixture {
  Model model = cart_pole();
  Policy policy = make_policy(model, {"slider.q", "hinge.q", "hinge.v", "clock.cos(0.5)", "task[0]"}, {6},
                              Activation::Tanh, Activation::Identity);
  Eigen::VectorXd weights = dense_initial_weights(policy.shape, 7, false);
  Eigen::VectorXd task = Eigen::VectorXd::Constant(1, 0.4);
  Eigen::Vector2d q0{0.1, 0.2}, v0{0.0, -0.3};
  StepOptions options{0.01, Integrator::SemiImplicitEuler};
  int T = 50;

  // The loss sum(a . qs) + sum(b . vs) of a rollout.
  double loss(const Eigen::VectorXd& w, const Eigen::VectorXd& tk, const Eigen::Vector2d& q, const MatrixXr<double>& a,
              const MatrixXr<double>& b) const {
    Data data(model);
    PolicyWorkspace work(model, policy);
    MatrixXr<double> qs(T + 1, 2), vs(T + 1, 2), us(T, 1);
    std::vector<std::uint32_t> status(T);
    policy_rollout(model, data, policy, w, tk, q, v0, options, work, qs, vs, us, status);
    return (a.array() * qs.array()).sum() + (b.array() * vs.array()).sum();
  }
};

TEST(Policy, TheClosedLoopIsTheStepUnderTheNetworksControls) {
  Fixture f;
  Data data(f.model);
  PolicyWorkspace work(f.model, f.policy);
  MatrixXr<double> qs(f.T + 1, 2), vs(f.T + 1, 2), us(f.T, 1);
  std::vector<std::uint32_t> status(f.T);
  policy_rollout(f.model, data, f.policy, f.weights, f.task, f.q0, f.v0, f.options, work, qs, vs, us, status);
  DenseWorkspace net(f.policy.shape);
  Eigen::VectorXd q = f.q0, v = f.v0;
  Data fresh(f.model);
  for (int t = 0; t < f.T; ++t) {
    const double time = static_cast<double>(t) * 0.01;
    net.input << q[0], q[1], v[1], std::cos(2 * std::numbers::pi * 0.5 * time), 0.4;
    const Eigen::VectorXd ctrl = dense_forward<double>(f.policy.shape, f.weights, net);
    EXPECT_EQ(us(t, 0), ctrl[0]);
    step<double>(f.model, fresh, q, v, Eigen::VectorXd::Zero(2), ctrl, 0.01, Integrator::SemiImplicitEuler, q, v);
    EXPECT_EQ((qs.row(t + 1).transpose() - q).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ(status[t], kStatusOk);
  }
}

TEST(Policy, TheAdjointMatchesCentralDifferences) {
  Fixture f;
  std::mt19937 rng(3);
  std::normal_distribution<double> normal;
  MatrixXr<double> a(f.T + 1, 2), b(f.T + 1, 2);
  for (int i = 0; i < a.size(); ++i) a.data()[i] = normal(rng), b.data()[i] = normal(rng);
  Data data(f.model);
  PolicyWorkspace work(f.model, f.policy);
  MatrixXr<double> qs(f.T + 1, 2), vs(f.T + 1, 2), us(f.T, 1);
  std::vector<std::uint32_t> status(f.T);
  policy_rollout(f.model, data, f.policy, f.weights, f.task, f.q0, f.v0, f.options, work, qs, vs, us, status);
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(2), v0_bar = Eigen::VectorXd::Zero(2),
                  w_bar = Eigen::VectorXd::Zero(f.weights.size()), task_bar = Eigen::VectorXd::Zero(1);
  ModelTangent model_bar(f.model);
  model_bar.setZero();
  policy_rollout_vjp(f.model, data, f.policy, f.weights, f.task, qs, vs, f.options, a, b, MatrixXr<double>(), 1.0, work,
                     q0_bar, v0_bar, w_bar, task_bar, model_bar);
  const double h = 1e-6;
  for (int i = 0; i < f.weights.size(); i += 5) {
    Eigen::VectorXd up = f.weights, down = f.weights;
    up[i] += h, down[i] -= h;
    const double fd = (f.loss(up, f.task, f.q0, a, b) - f.loss(down, f.task, f.q0, a, b)) / (2 * h);
    EXPECT_NEAR(w_bar[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "weight " << i;
  }
  Eigen::VectorXd tu = f.task, td = f.task;
  tu[0] += h, td[0] -= h;
  EXPECT_NEAR(task_bar[0], (f.loss(f.weights, tu, f.q0, a, b) - f.loss(f.weights, td, f.q0, a, b)) / (2 * h), 1e-6);
  for (int k = 0; k < 2; ++k) {
    Eigen::Vector2d qu = f.q0, qd = f.q0;
    qu[k] += h, qd[k] -= h;
    EXPECT_NEAR(q0_bar[k], (f.loss(f.weights, f.task, qu, a, b) - f.loss(f.weights, f.task, qd, a, b)) / (2 * h),
                1e-6 * std::max(1.0, std::abs(q0_bar[k])));
  }
  // Decay 0: nothing is carried back, so the initial state's adjoint is the loss's own at t = 0.
  Eigen::VectorXd q0_zero = Eigen::VectorXd::Zero(2), v0_zero = Eigen::VectorXd::Zero(2), w_zero = w_bar * 0,
                  t_zero = task_bar * 0;
  policy_rollout_vjp(f.model, data, f.policy, f.weights, f.task, qs, vs, f.options, a, b, MatrixXr<double>(), 0.0, work,
                     q0_zero, v0_zero, w_zero, t_zero, model_bar);
  EXPECT_EQ((q0_zero - a.row(0).transpose()).cwiseAbs().maxCoeff(), 0.0);
}

TEST(Policy, ObservationNamesAndSizesAreChecked) {
  const Model model = cart_pole();
  try {
    make_policy(model, {"hinge.angle"}, {4}, Activation::Tanh, Activation::Identity);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown observation 'hinge.angle'; valid: 'slider.q', 'hinge.q', "
                                         "'slider.v', 'hinge.v', 'clock.sin(<Hz>)'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make_policy(model, {"clock.cos(1.0"}, {4}, Activation::Tanh, Activation::Identity), ArgumentError);
  EXPECT_THROW(make_policy(model, {"task[x]"}, {4}, Activation::Tanh, Activation::Identity), ArgumentError);
  EXPECT_THROW(make_policy(model, {"memory[1]"}, {4}, Activation::Tanh, Activation::Identity, 1), ArgumentError);
  const Policy recurrent = make_policy(model, {"memory[1]"}, {4}, Activation::Tanh, Activation::Identity, 2);
  EXPECT_EQ(recurrent.shape.outputs(), model.nu() + 2);
  const Policy policy = make_policy(model, {"task[3]"}, {}, Activation::Tanh, Activation::Identity);
  EXPECT_EQ(policy.task_size, 4);
  EXPECT_EQ(policy.shape.param_count(), 2);
  EXPECT_THROW(check_policy_arguments(model, policy, 2, 3), ArgumentError);
  EXPECT_THROW(check_policy_arguments(model, policy, 3, 4), ArgumentError);
  EXPECT_NO_THROW(check_policy_arguments(model, policy, 2, 4));
}

}  // namespace
}  // namespace gradyn
