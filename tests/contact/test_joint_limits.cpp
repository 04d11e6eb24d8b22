// Joint limits as one-sided constraints (contact/joint_limits.hpp): a pendulum falling onto its limit
// rests there under PGS and the interior-point model (violation bounded by the slop) and under the
// penalty spring (violation = load torque / limit stiffness); the planar joint's rate rows (a body
// spinning onto a limited coordinate); the PGS row layout (limit rows after the contact rows,
// Delassus entry (M^-1)_kk);
// ContactModel::None ignoring limits; the penalty limit forces' adjoint against forward-mode AD;
// and servos driving a joint into its limit or to a target velocity within their limits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/actuators.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

using V3 = Vector3<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// A rod of mass 1 and length 1 on a hinge about y at the world origin. Horizontal (along +x) at
// q = 0; gravity turns it towards +q (down). Its centre of mass is 0.5 from the hinge.
Model limited_pendulum(double lower, double upper, ContactModel contact) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"rod", Inertia<double>(1.0, V3(0.5, 0, 0), Eigen::Vector3d(1e-3, 1.0 / 12, 1.0 / 12).asDiagonal().toDenseMatrix()), {}});
  JointSpec j;
  j.name = "hinge";
  j.type = JointType::Revolute;
  j.parent = "world";
  j.child = "rod";
  j.axis = V3::UnitY();
  j.lower = lower;
  j.upper = upper;
  b.add_joint(j);
  Model m = b.build();
  m.contact.model = contact;
  return m;
}

// The velocity-level models (PGS, interior point) hold a limit to within the slop; penalty lets the
// spring give.
bool velocity_level(ContactModel cm) { return cm == ContactModel::Pgs || cm == ContactModel::Ipm; }

struct LimitRun {
  double max_violation = 0.0;  // largest q - upper over the run
  double q = 0.0, v = 0.0;     // final state
};

LimitRun drop_onto_upper_limit(const Model& m, double dt, double T, double q0 = 0.0) {
  Data d(m);
  Eigen::VectorXd q = Eigen::VectorXd::Constant(1, q0), v = Eigen::VectorXd::Zero(1), tau = v;
  LimitRun run;
  for (int t = 0; t < static_cast<int>(T / dt); ++t) {
    step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    run.max_violation = std::max(run.max_violation, q[0] - m.upper_limit[0]);
  }
  EXPECT_EQ(d.status, kStatusOk);
  run.q = q[0];
  run.v = v[0];
  return run;
}

TEST(JointLimits, PgsPendulumRestsAtItsLimit) {
  const double upper = 0.3, dt = 1e-3;
  const Model m = limited_pendulum(-kInf, upper, ContactModel::Pgs);
  const LimitRun run = drop_onto_upper_limit(m, dt, 3.0);
  // The speculative row lets the rod close the gap but not cross it; at rest Baumgarte leaves at
  // most the slop.
  EXPECT_LE(run.max_violation, m.contact.slop + 1e-9);
  EXPECT_NEAR(run.q, upper, m.contact.slop + 1e-9);
  EXPECT_LT(std::abs(run.v), 1e-6);
  std::printf("[ measured ] PGS pendulum: max violation %.3g rad, final %.3g rad\n", run.max_violation,
              run.q - upper);
}

// Under the interior-point model the limit is a row of its mixed LCP: the rod falls onto the limit
// and is held there against gravity for 10 s within the slop.
TEST(JointLimits, IpmPendulumIsHeldAtItsLimitWithinTheSlop) {
  const double upper = 0.3, dt = 1e-3;
  const Model m = limited_pendulum(-kInf, upper, ContactModel::Ipm);
  const LimitRun run = drop_onto_upper_limit(m, dt, 10.0);
  EXPECT_LE(run.max_violation, m.contact.slop + 1e-9);
  EXPECT_NEAR(run.q, upper, m.contact.slop + 1e-9);
  EXPECT_LT(std::abs(run.v), 1e-6);
  // Without the limit the rod would swing through: the row really acts.
  const LimitRun free = drop_onto_upper_limit(limited_pendulum(-kInf, upper, ContactModel::None), dt, 0.5);
  EXPECT_GT(free.max_violation, 0.5);
  std::printf("[ measured ] IPM pendulum over 10 s: max violation %.3g rad, final %.3g rad\n", run.max_violation,
              run.q - upper);
}

TEST(JointLimits, PenaltyPendulumRestsWhereTheSpringCarriesGravity) {
  const double upper = 0.3, dt = 1e-3;
  Model m = limited_pendulum(-kInf, upper, ContactModel::Penalty);
  m.contact.limit_stiffness = 1e4;
  m.contact.limit_damping = 20.0;  // about 0.2 of critical for the rod's 1/3 kg m^2
  const LimitRun run = drop_onto_upper_limit(m, dt, 3.0);
  const double gravity_torque = 9.81 * 0.5 * std::cos(upper);
  EXPECT_NEAR(run.q - upper, gravity_torque / m.contact.limit_stiffness, 1e-6);
  EXPECT_LT(std::abs(run.v), 1e-4);
  // The impact: the rod (I = 1/3 kg m^2) arrives at w = sqrt(2 m g l sin(upper) / I) and the spring
  // alone would stop it at w sqrt(I / k); the damper stops it sooner.
  const double I = 1.0 / 3, w = std::sqrt(2 * 9.81 * 0.5 * std::sin(upper) / I);
  EXPECT_LE(run.max_violation, w * std::sqrt(I / m.contact.limit_stiffness));
  EXPECT_GT(run.max_violation, gravity_torque / m.contact.limit_stiffness);
  std::printf("[ measured ] penalty pendulum: max violation %.3g rad, final %.3g rad (static %.3g)\n",
              run.max_violation, run.q - upper, gravity_torque / m.contact.limit_stiffness);
}

TEST(JointLimits, LowerLimitHoldsFromTheOtherSide) {
  // Mirror: the rod hangs towards -q when the hinge axis is flipped; lower limit -0.4.
  for (ContactModel cm : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    Model m = limited_pendulum(-0.4, kInf, cm);
    m.gravity = -m.gravity;  // now gravity turns the rod towards -q
    Data d(m);
    Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = q, tau = q;
    double worst = 0.0;
    for (int t = 0; t < 3000; ++t) {
      step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      worst = std::max(worst, m.lower_limit[0] - q[0]);
    }
    // penalty: at most the undamped spring's stop of the impact (see above)
    const double I = 1.0 / 3, w = std::sqrt(2 * 9.81 * 0.5 * std::sin(0.4) / I);
    EXPECT_LE(worst, velocity_level(cm) ? 1e-4 + 1e-9 : w * std::sqrt(I / m.contact.limit_stiffness))
        << contact_model_name(cm);
    EXPECT_NEAR(q[0], -0.4, velocity_level(cm) ? 1e-4 + 1e-9 : 1e-3) << contact_model_name(cm);
  }
}

TEST(JointLimits, NoneIgnoresLimits) {
  const Model m = limited_pendulum(-kInf, 0.3, ContactModel::None);
  const LimitRun run = drop_onto_upper_limit(m, 1e-3, 0.5);
  EXPECT_GT(run.max_violation, 0.5) << "ContactModel::None does not enforce limits (documented)";
}

// A puck on a planar joint whose plane is vertical (the joint frame turned about x by 90 degrees:
// joint y = world z), spinning (theta moves), falls onto the lower limit of its y coordinate: that
// coordinate's rate is sin(theta) vx + cos(theta) vy (body-frame velocities), so a row along e_y
// would let it fall through once theta has turned.
TEST(JointLimits, PlanarCoordinateLimitUsesTheRateRow) {
  for (ContactModel cm : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    ModelBuilder b;
    b.add_link({"world", std::nullopt, {}});
    b.add_link({"puck", Inertia<double>(2.0, V3::Zero(), Matrix3<double>::Identity() * 0.01), {}});
    JointSpec j;
    j.name = "planar";
    j.type = JointType::Planar;
    j.parent = "world";
    j.child = "puck";
    j.origin.R = axis_angle_to_matrix<double>(V3::UnitX(), M_PI / 2);
    b.add_joint(j);
    Model m = b.build();
    m.lower_limit[1] = 0.0;  // y >= 0: a floor at height 0
    m.contact.model = cm;
    m.contact.limit_stiffness = 1e5;
    m.contact.limit_damping = 200.0;
    Data d(m);
    Eigen::VectorXd q(3), v(3), tau = Eigen::VectorXd::Zero(3);
    q << 0.0, 0.2, 0.0;
    v << 0.0, 0.0, 3.0;  // spinning at 3 rad/s: theta passes 1 rad before the puck lands
    double worst = 0.0;
    for (int t = 0; t < 2000; ++t) {
      step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      worst = std::max(worst, -q[1]);
    }
    EXPECT_EQ(d.status, kStatusOk) << contact_model_name(cm);
    EXPECT_GT(std::abs(q[2]), 1.0) << "the puck kept spinning (no friction on a limit)";
    const double static_violation = 2.0 * 9.81 / m.contact.limit_stiffness;
    // penalty: at most the undamped spring's stop of the landing speed sqrt(2 g 0.2)
    const double undamped_stop = std::sqrt(2 * 9.81 * 0.2) * std::sqrt(2.0 / m.contact.limit_stiffness);
    EXPECT_LE(worst, velocity_level(cm) ? 1e-4 + 1e-9 : undamped_stop) << contact_model_name(cm);
    EXPECT_NEAR(q[1], velocity_level(cm) ? 0.0 : -static_violation, velocity_level(cm) ? 1e-4 + 1e-9 : 1e-5)
        << contact_model_name(cm);
  }
}

// Rows: contacts first (3 each), then limits. A limit row of a scalar joint is -e_k for an upper
// limit and its Delassus entry is (M^-1)_kk.
TEST(JointLimits, PgsRowLayoutPutsLimitsAfterContacts) {
  ModelBuilder b;
  GeomSpec plane;
  plane.type = GeomType::Plane;
  b.add_link({"world", std::nullopt, {}, {plane}});
  GeomSpec ball;
  ball.type = GeomType::Sphere;
  ball.size = V3(0.05, 0, 0);
  ball.placement.p = V3(0.4, 0, 0);
  b.add_link({"base", Inertia<double>(2.0, V3::Zero(), Matrix3<double>::Identity() * 0.02), {}});
  b.add_link({"arm", Inertia<double>(0.5, V3(0.2, 0, 0), Matrix3<double>::Identity() * 0.01), {}, {ball}});
  JointSpec slide;
  slide.name = "slide", slide.type = JointType::Prismatic, slide.parent = "world", slide.child = "base";
  slide.axis = V3::UnitX();
  slide.lower = -1.0, slide.upper = 0.0;
  JointSpec hinge;
  hinge.name = "hinge", hinge.type = JointType::Revolute, hinge.parent = "base", hinge.child = "arm";
  hinge.origin.p = V3(0, 0, 0.1);
  hinge.axis = V3::UnitY();
  hinge.lower = -1.0, hinge.upper = 1.0;
  b.add_joint(slide).add_joint(hinge);
  Model m = b.build();
  m.contact.model = ContactModel::Pgs;
  Data d(m);
  // slide past its upper limit (by 2 slops: a gentle Baumgarte push, which does not jerk the arm off
  // the floor) and the arm tilted down onto the floor (the ball's centre
  // at 0.1 - 0.4 sin(q1), 0.05 above the floor when sin(q1) = 1/8: about 1 mm deep here).
  Eigen::VectorXd q(2), v = Eigen::VectorXd::Zero(2), tau = v, qn(2), vn(2);
  q << 2e-4, std::asin(0.125) + 0.0025;
  v << 0.3, 0.0;  // the slide still driving into its limit
  step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  ASSERT_EQ(pgs_data(d).ncontacts, 1);
  ASSERT_EQ(pgs_data(d).nlimits, 1);
  ASSERT_EQ(pgs_data(d).problem.rows, 4);
  EXPECT_EQ(pgs_data(d).limit_coord[0], 0);
  EXPECT_EQ(pgs_data(d).limit_side[0], -1);
  EXPECT_EQ(pgs_data(d).JT.col(3), Eigen::Vector2d(-1.0, 0.0));
  const Eigen::MatrixXd Minv = crba<double>(m, d, q).inverse();
  EXPECT_NEAR(pgs_data(d).problem.A(3, 3), Minv(0, 0), 1e-12);
  EXPECT_GT(pgs_data(d).lambda[3], 0.0) << "the limit pushes back";
  EXPECT_GT(pgs_data(d).lambda[0], 0.0) << "the floor pushes the ball";
  EXPECT_LT(qn[0], 2e-4) << "moving back into range";
}

// add_joint_limit_forces_vjp against forward-mode AD of add_joint_limit_forces (revolute,
// prismatic, planar coordinates, violated and damped).
TEST(JointLimits, PenaltyLimitForcesVjpMatchesForwardMode) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  const Inertia<double> inertia(1.0, V3(0.1, 0, 0), Matrix3<double>::Identity() * 0.01);
  b.add_link({"a", inertia, {}});
  b.add_link({"b", inertia, {}});
  b.add_link({"c", inertia, {}});
  JointSpec ja;
  ja.name = "ja", ja.type = JointType::Revolute, ja.parent = "world", ja.child = "a", ja.axis = V3::UnitZ();
  ja.lower = -0.5, ja.upper = 0.5;
  JointSpec jb;
  jb.name = "jb", jb.type = JointType::Prismatic, jb.parent = "a", jb.child = "b", jb.axis = V3::UnitX();
  jb.lower = 0.0, jb.upper = 0.3;
  JointSpec jc;
  jc.name = "jc", jc.type = JointType::Planar, jc.parent = "b", jc.child = "c";
  b.add_joint(ja).add_joint(jb).add_joint(jc);
  Model m = b.build();
  m.contact.model = ContactModel::Penalty;
  m.contact.limit_stiffness = 300.0;
  m.contact.limit_damping = 7.0;
  m.lower_limit.segment<3>(2) << -0.2, -kInf, -1.0;
  m.upper_limit.segment<3>(2) << 0.4, 0.1, kInf;
  Eigen::VectorXd q(5), v(5);
  q << 0.6, -0.05, 0.5, 0.3, 0.8;   // ja above, jb below, planar x above, y above, theta free
  v << 0.2, 0.4, -0.3, 0.1, 0.7;
  Eigen::VectorXd tau = Eigen::VectorXd::Zero(5);
  add_joint_limit_forces<double>(m, q, v, tau);
  ASSERT_GT(tau.head<4>().cwiseAbs().minCoeff(), 0.0) << "every translation/hinge DoF feels a limit here";
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd tau_bar(5);
  for (int i = 0; i < 5; ++i) tau_bar[i] = normal(rng);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(5), v_bar = Eigen::VectorXd::Zero(5);
  add_joint_limit_forces_vjp<double>(m, q, v, tau_bar, q_bar, v_bar);
  const ModelTpl<ADScalar> ma = m.cast<ADScalar>();
  for (int half = 0; half < 2; ++half) {  // 10 inputs in two chunks of 8 directions
    VectorX<ADScalar> qa = q.cast<ADScalar>(), va = v.cast<ADScalar>();
    for (int input = 8 * half; input < std::min(10, 8 * half + 8); ++input) {
      const int slot = input - 8 * half;
      if (input < 5)
        qa[input] = ad_seed(q[input], slot);
      else
        va[input - 5] = ad_seed(v[input - 5], slot);
    }
    VectorX<ADScalar> ta = VectorX<ADScalar>::Zero(5);
    add_joint_limit_forces<ADScalar>(ma, qa, va, ta);
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(ta[i].value(), tau[i], 1e-14);
    Eigen::Matrix<double, 8, 1> directional = Eigen::Matrix<double, 8, 1>::Zero();
    for (int i = 0; i < 5; ++i) directional += tau_bar[i] * ta[i].derivatives();
    for (int slot = 0; slot < 8; ++slot) {
      const int input = slot + 8 * half;  // 0..4 q, 5..9 v
      if (input >= 10) continue;
      const double want = directional[slot];
      const double got = input < 5 ? q_bar[input] : v_bar[input - 5];
      EXPECT_NEAR(got, want, 1e-12 * (1 + std::abs(want))) << "input " << input;
    }
  }
}

// Servos within their limits: a position servo commanded past the upper limit pushes the rod onto
// it and holds it there, at its torque limit; a velocity servo spins a wheel up to the clipped
// target speed without exceeding its torque.
TEST(JointLimits, PositionServoPushesIntoTheLimitWithinItsEffort) {
  for (ContactModel cm : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    Model m = limited_pendulum(-kInf, 0.3, cm);
    m.gravity.setZero();
    const double effort = 2.0, speed = 1.5, dt = 1e-3;
    const std::vector<ServoSettings> servos = {ServoSettings{ServoKind::Position, 10.0, 5.0, effort, speed}};
    Data d(m);
    Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = q, tau(1);
    const Eigen::VectorXd u = Eigen::VectorXd::Constant(1, 1.0);  // target beyond the limit
    double worst = 0.0, max_torque = 0.0, max_speed = 0.0;
    for (int t = 0; t < 3000; ++t) {
      actuator_torques<double>(m, servos, q, v, u, tau);
      max_torque = std::max(max_torque, std::abs(tau[0]));
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      max_speed = std::max(max_speed, std::abs(v[0]));
      worst = std::max(worst, q[0] - 0.3);
    }
    EXPECT_EQ(d.status, kStatusOk) << contact_model_name(cm);
    EXPECT_LE(max_torque, effort);
    EXPECT_DOUBLE_EQ(tau[0], effort) << "held against the limit at full effort";
    EXPECT_LE(max_speed, speed * 1.05);
    if (velocity_level(cm)) {
      EXPECT_LE(worst, m.contact.slop + 1e-9);
      EXPECT_NEAR(q[0], 0.3, m.contact.slop + 1e-9);
    } else {
      EXPECT_NEAR(q[0] - 0.3, effort / m.contact.limit_stiffness, 1e-6);
    }
  }
}

TEST(JointLimits, VelocityServoReachesItsClippedTarget) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"wheel", Inertia<double>(3.0, V3::Zero(), Eigen::Vector3d(0.05, 0.05, 0.1).asDiagonal().toDenseMatrix()), {}});
  JointSpec j;
  j.name = "axle", j.type = JointType::Continuous, j.parent = "world", j.child = "wheel", j.axis = V3::UnitZ();
  j.damping = 0.2;  // a load: 0.2 N m per rad/s
  b.add_joint(j);
  Model m = b.build();
  m.contact.model = ContactModel::Pgs;  // nothing to touch: the step is the plain one
  const double effort = 1.0, limit = 4.0, kv = 2.0, dt = 1e-3;
  const std::vector<ServoSettings> servos = {ServoSettings{ServoKind::Velocity, 0.0, kv, effort, limit}};
  Data d(m);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = q, tau(1);
  const Eigen::VectorXd u = Eigen::VectorXd::Constant(1, 10.0);  // above the velocity limit
  double max_torque = 0.0;
  for (int t = 0; t < 5000; ++t) {
    actuator_torques<double>(m, servos, q, v, u, tau);
    max_torque = std::max(max_torque, std::abs(tau[0]));
    step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
  }
  EXPECT_LE(max_torque, effort);
  // Steady state of the proportional loop: kv (limit - w) = damping w.
  const double steady = kv * limit / (kv + 0.2);
  EXPECT_NEAR(v[0], steady, 1e-6);
  EXPECT_LT(v[0], limit);
}

}  // namespace
}  // namespace gradyn
