// Servo actuators (paper 002's motor model): analytic torques unsaturated and saturated, the
// adjoint against forward-mode AD and central differences away from the clip kinks, a position
// servo lifting a pendulum against gravity, and bad settings.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/actuators.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Inertia<double> link_inertia(double mass) {
  return Inertia<double>(mass, Eigen::Vector3d(0, 0.5, 0),
                         Eigen::Vector3d(0.005, 0.004, 0.002).asDiagonal().toDenseMatrix());
}

// A chain of 1-DoF joints (revolute, prismatic, continuous), optionally on a free base.
Model servo_chain(bool floating_base, double model_effort = kInf, double model_velocity = kInf) {
  ModelBuilder b;
  b.add_link({"base", link_inertia(2.0), {}});
  const JointType types[3] = {JointType::Revolute, JointType::Prismatic, JointType::Continuous};
  for (int i = 0; i < 3; ++i) {
    const std::string link = "link" + std::to_string(i);
    b.add_link({link, link_inertia(1.0), {}});
    JointSpec j;
    j.name = "joint" + std::to_string(i);
    j.type = types[i];
    j.parent = i == 0 ? "base" : "link" + std::to_string(i - 1);
    j.child = link;
    j.origin.p = Eigen::Vector3d(0, 0.5, 0);
    j.axis = Eigen::Vector3d::UnitX();
    j.effort_limit = model_effort;
    j.velocity_limit = model_velocity;
    b.add_joint(j);
  }
  return b.build({.floating_base = floating_base});
}

ServoSettings servo(ServoKind kind, double kp, double kv, std::optional<double> effort = std::nullopt,
                    std::optional<double> velocity = std::nullopt) {
  return ServoSettings{kind, kp, kv, effort, velocity};
}

Eigen::VectorXd torques(const Model& m, const std::vector<ServoSettings>& s, const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v, const Eigen::VectorXd& u) {
  Eigen::VectorXd tau(m.nv);
  actuator_torques<double>(m, s, q, v, u, tau);
  return tau;
}

TEST(Actuators, TorqueMotorsClipToTheEffortLimit) {
  const Model m = servo_chain(false, /*model_effort=*/3.0);
  const std::vector<ServoSettings> s(3, servo(ServoKind::Torque, 0, 0));
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(3), v = Eigen::VectorXd::Zero(3);
  EXPECT_TRUE(torques(m, s, q, v, Eigen::Vector3d(5, -5, 1)).isApprox(Eigen::Vector3d(3, -3, 1), 0));
  // A servo's own limit overrides the model's.
  const std::vector<ServoSettings> own(3, servo(ServoKind::Torque, 0, 0, 0.5));
  EXPECT_TRUE(torques(m, own, q, v, Eigen::Vector3d(5, -5, 0.25)).isApprox(Eigen::Vector3d(0.5, -0.5, 0.25), 0));
}

TEST(Actuators, PositionServoUnsaturatedAndSaturated) {
  const Model m = servo_chain(false);
  const Eigen::Vector3d q(0.1, -0.2, 0.3), v(0.05, 0.1, -0.1), u(0.3, -0.4, 1.3);
  // Unsaturated: v_target = kp (u - q), tau = kv (v_target - v).
  std::vector<ServoSettings> s(3, servo(ServoKind::Position, 2.0, 10.0));
  Eigen::Vector3d want;
  want << 10 * (2 * 0.2 - 0.05), 10 * (2 * -0.2 - 0.1), 10 * (2 * 1.0 + 0.1);
  EXPECT_LT((torques(m, s, q, v, u) - want).norm(), 1e-12);
  // Commanded velocity clipped to +-0.3: v_target = 0.3, -0.3, 0.3.
  for (auto& x : s) x.velocity_limit = 0.3;
  want << 10 * (0.3 - 0.05), 10 * (-0.3 - 0.1), 10 * (0.3 + 0.1);
  EXPECT_LT((torques(m, s, q, v, u) - want).norm(), 1e-12);
  // And the torque clipped to +-2.6 as well (the first and third saturate, the second is -4 -> -2.6).
  for (auto& x : s) x.effort_limit = 2.6;
  want << 2.5, -2.6, 2.6;
  EXPECT_LT((torques(m, s, q, v, u) - want).norm(), 1e-12);
}

TEST(Actuators, VelocityServoAndModelLimits) {
  // Limits left unset come from the model.
  const Model m = servo_chain(false, /*model_effort=*/1.5, /*model_velocity=*/1.0);
  const std::vector<ServoSettings> s(3, servo(ServoKind::Velocity, 0, 4.0));
  const Eigen::Vector3d q = Eigen::Vector3d::Zero(), v(0.5, 0.2, -0.1), u(2.0, 0.3, -0.2);
  // v_target = 1 (clipped), 0.3, -0.2; tau = 4 (0.5) = 2 -> 1.5, 4 (0.1) = 0.4, 4 (-0.1) = -0.4.
  EXPECT_LT((torques(m, s, q, v, u) - Eigen::Vector3d(1.5, 0.4, -0.4)).norm(), 1e-12);
}

// A floating base (torque and velocity servos on its six DoFs) with three servoed 1-DoF joints; the
// inputs put each clip clearly on one side of its kink (by at least 0.05), some clipped, some not.
struct GradientCase {
  Model model = servo_chain(true);
  std::vector<ServoSettings> settings;
  Eigen::VectorXd q, v, u;
  GradientCase() {
    settings = {servo(ServoKind::Torque, 0, 0, 1.0),            // |u| = 0.4: passes
                servo(ServoKind::Torque, 0, 0, 1.0),            // |u| = 1.7: clipped
                servo(ServoKind::Velocity, 0, 3.0),             // no limits
                servo(ServoKind::Velocity, 0, 3.0, 5.0, 0.5),   // velocity clipped, torque passes
                servo(ServoKind::Velocity, 0, 3.0, 0.2),        // torque clipped
                servo(ServoKind::Torque, 0, 0),                 // no limit
                servo(ServoKind::Position, 4.0, 2.0, 10.0, 3.0),   // nothing clipped
                servo(ServoKind::Position, 4.0, 2.0, 10.0, 0.5),   // velocity clipped
                servo(ServoKind::Position, 4.0, 2.0, 0.3, 3.0)};   // torque clipped
    q.resize(model.nq);
    q << 0.1, -0.2, 0.3, 0.1, 0.2, -0.1, 0.97, 0.2, -0.1, 0.4;
    v.resize(model.nv);
    v << 0.3, -0.2, 0.1, 0.2, 0.3, -0.4, 0.1, 0.2, -0.3;
    u.resize(model.nv);
    u << 0.4, 1.7, 0.5, 0.9, -0.6, 2.0, 0.5, 0.3, 0.9;
  }
};

TEST(ActuatorsVjp, MatchesForwardModeAndFiniteDifferences) {
  const GradientCase c;
  const Model& m = c.model;
  const int nin = m.nq + 2 * m.nv;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  Eigen::VectorXd tau_bar(m.nv);
  for (auto& x : tau_bar) x = uniform(rng);

  // Reference: the Jacobian column by column, forward-mode AD in chunks and central differences.
  Eigen::VectorXd x0(nin);
  x0 << c.q, c.v, c.u;
  const ModelTpl<ADScalar> mad = m.cast<ADScalar>();
  Eigen::MatrixXd J_ad(m.nv, nin), J_fd(m.nv, nin);
  VectorX<ADScalar> xa(nin), tau_ad(m.nv);
  for (int start = 0; start < nin; start += kADChunk) {
    for (int k = 0; k < nin; ++k) xa[k] = ad_seed(x0[k], k >= start && k < start + kADChunk ? k - start : -1);
    actuator_torques<ADScalar>(mad, c.settings, xa.head(m.nq), xa.segment(m.nq, m.nv), xa.tail(m.nv), tau_ad);
    for (int k = start; k < std::min(nin, start + kADChunk); ++k)
      for (int r = 0; r < m.nv; ++r) J_ad(r, k) = tau_ad[r].derivatives()[k - start];
  }
  const double h = 1e-6;
  for (int k = 0; k < nin; ++k) {
    Eigen::VectorXd xp = x0, xm = x0;
    xp[k] += h;
    xm[k] -= h;
    J_fd.col(k) = (torques(m, c.settings, xp.head(m.nq), xp.segment(m.nq, m.nv), xp.tail(m.nv)) -
                   torques(m, c.settings, xm.head(m.nq), xm.segment(m.nq, m.nv), xm.tail(m.nv))) /
                  (2 * h);
  }

  // The adjoint accumulates: start from a non-zero value.
  Eigen::VectorXd q_bar = Eigen::VectorXd::Constant(m.nq, 0.5), v_bar = Eigen::VectorXd::Constant(m.nv, 0.5),
                  u_bar = Eigen::VectorXd::Constant(m.nv, 0.5);
  actuator_torques_vjp<double>(m, c.settings, c.q, c.v, c.u, tau_bar, q_bar, v_bar, u_bar);
  Eigen::VectorXd got(nin);
  got << q_bar.array() - 0.5, v_bar.array() - 0.5, u_bar.array() - 0.5;
  EXPECT_LT((got - J_ad.transpose() * tau_bar).norm(), 1e-12) << got.transpose();
  EXPECT_LT((got - J_fd.transpose() * tau_bar).norm(), 1e-8) << got.transpose();

  // The clipped DoFs pass nothing back: u of DoF 1 (torque clipped), DoF 3 (velocity clipped),
  // DoF 4 (torque clipped), and u and q of DoFs 7 and 8.
  for (int dof : {1, 3, 4, 7, 8}) EXPECT_EQ(u_bar[dof] - 0.5, 0.0) << "DoF " << dof;
  EXPECT_EQ(q_bar[7 + 1] - 0.5, 0.0);
  EXPECT_EQ(q_bar[7 + 2] - 0.5, 0.0);
  EXPECT_NE(u_bar[6] - 0.5, 0.0);
  // The ADScalar adjoint gives the same numbers.
  VectorX<ADScalar> qb = VectorX<ADScalar>::Zero(m.nq), vb = VectorX<ADScalar>::Zero(m.nv),
                    ub = VectorX<ADScalar>::Zero(m.nv);
  actuator_torques_vjp<ADScalar>(mad, c.settings, c.q.cast<ADScalar>(), c.v.cast<ADScalar>(),
                                 c.u.cast<ADScalar>(), tau_bar.cast<ADScalar>(), qb, vb, ub);
  for (int k = 0; k < m.nv; ++k) EXPECT_DOUBLE_EQ(ub[k].value(), u_bar[k] - 0.5);
}

// Paper 002's servo on a pendulum (link horizontal at q = 0, lifted by positive q): a step target
// from 0 to 1 rad. The torque stays within the effort limit, the speed within the velocity limit up
// to the transient of the velocity loop, and the pendulum settles near the target (a proportional
// servo keeps an error of gravity torque / (kp kv)).
TEST(Actuators, PositionServoLiftsAPendulumToAStepTarget) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"link", link_inertia(1.0), {}});
  JointSpec j;
  j.name = "shoulder";
  j.type = JointType::Revolute;
  j.parent = "world";
  j.child = "link";
  j.axis = Eigen::Vector3d::UnitX();
  b.add_joint(j);
  const Model model = b.build();
  Data data(model);
  const double effort = 8.0, velocity = 1.0, kp = 20.0, kv = 40.0, target = 1.0, dt = 1e-3;
  const std::vector<ServoSettings> servos = {servo(ServoKind::Position, kp, kv, effort, velocity)};
  Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = Eigen::VectorXd::Zero(1), tau(1);
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(1, target);
  double max_torque = 0, max_speed = 0;
  for (int t = 0; t < 3000; ++t) {
    actuator_torques<double>(model, servos, q, v, u, tau);
    max_torque = std::max(max_torque, std::abs(tau[0]));
    step<double>(model, data, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    max_speed = std::max(max_speed, std::abs(v[0]));
  }
  EXPECT_LE(max_torque, effort);
  EXPECT_DOUBLE_EQ(max_torque, effort);  // the step saturates the motor at first
  EXPECT_LE(max_speed, 1.05 * velocity);
  // The velocity limit was what bound the speed: lifting at the commanded +1 rad/s, the servo lags
  // it by gravity torque / kv at most (0.12 rad/s).
  EXPECT_GE(max_speed, velocity - 9.81 * 0.5 / kv);
  const double gravity_torque = 9.81 * 0.5 * std::cos(target);
  EXPECT_NEAR(q[0], target - gravity_torque / (kp * kv), 2e-3);
  EXPECT_LT(std::abs(v[0]), 1e-3);
}

TEST(Actuators, BadSettingsNameTheDoF) {
  const Model m = servo_chain(false);
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(3);
  Eigen::VectorXd tau(3);
  auto expect_error = [&](std::vector<ServoSettings> s, const std::string& needle) {
    try {
      actuator_torques<double>(m, s, z, z, z, tau);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<ServoSettings> ok(3, servo(ServoKind::Position, 1, 1));
  auto with = [&](int dof, ServoSettings s) {
    auto copy = ok;
    copy[dof] = s;
    return copy;
  };
  expect_error(with(1, servo(ServoKind::Position, -1, 1)), "DoF 1 (joint 'joint1'): kp must be >= 0");
  expect_error(with(2, servo(ServoKind::Velocity, 1, -2)), "DoF 2 (joint 'joint2'): kv must be >= 0");
  expect_error(with(0, servo(ServoKind::Torque, 0, 0, -1.0)), "DoF 0 (joint 'joint0'): effort_limit");
  expect_error(with(2, servo(ServoKind::Position, 1, 1, std::nullopt, std::nan(""))),
               "DoF 2 (joint 'joint2'): velocity_limit");
  expect_error({ok[0], ok[1]}, "expected one per DoF (3), got 2");
  // Position servos need a 1-DoF joint: not a free base.
  const Model floating = servo_chain(true);
  std::vector<ServoSettings> s(floating.nv, servo(ServoKind::Torque, 0, 0));
  s[4] = servo(ServoKind::Position, 1, 1);
  EXPECT_THROW(check_servo_settings(floating, s), ArgumentError);
  // The adjoint checks as well.
  Eigen::VectorXd qb(3), vb(3), ub(3);
  EXPECT_THROW(actuator_torques_vjp<double>(m, with(1, servo(ServoKind::Position, -1, 1)), z, z, z, z, qb, vb, ub),
               ArgumentError);
}

}  // namespace
}  // namespace gradyn
