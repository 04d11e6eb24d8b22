// Actuators inside the step (dynamics/actuation.hpp): each kind's force law and clamps against the
// formula, the servo kind against paper 002's servo map (actuator_torques), the adjoint of
// controls and actuator parameters against forward-mode AD and finite differences (gradcheck),
// the builder's and the MJCF loader's checks. MuJoCo's trajectories: tests/python/test_model_actuators.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradyn/dynamics/actuation.hpp"
#include "gradyn/dynamics/actuators.hpp"
#include "gradyn/grad/gradcheck.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

// A hinge and a slide in a chain, with one actuator of every kind (added by the caller).
ModelBuilder two_joints() {
  ModelBuilder b;
  b.add_link({"base", std::nullopt, {}, {}});
  b.add_link({"arm", Inertia<double>(1.0, Vector3<double>(0.3, 0, 0), Matrix3<double>::Identity() * 0.02), {}, {}});
  b.add_link({"slider", Inertia<double>(0.5, Vector3<double>(0.1, 0, 0), Matrix3<double>::Identity() * 0.01), {}, {}});
  JointSpec hinge;
  hinge.name = "hinge";
  hinge.type = JointType::Continuous;
  hinge.parent = "base", hinge.child = "arm";
  hinge.axis = Vector3<double>(0, 1, 0);
  b.add_joint(hinge);
  JointSpec slide;
  slide.name = "slide";
  slide.type = JointType::Prismatic;
  slide.parent = "arm", slide.child = "slider";
  slide.origin.p = Vector3<double>(0.6, 0, 0);
  slide.axis = Vector3<double>(1, 0, 0);
  b.add_joint(slide);
  return b;
}

ActuatorSpec spec(const std::string& name, ActuatorKind kind, const std::string& joint, double gear) {
  ActuatorSpec a;
  a.name = name, a.kind = kind, a.joint = joint, a.gear = gear;
  return a;
}

Model every_kind(bool clamps) {
  ModelBuilder b = two_joints();
  ActuatorSpec motor = spec("motor", ActuatorKind::Motor, "hinge", 2.0);
  ActuatorSpec position = spec("position", ActuatorKind::Position, "hinge", 1.5);
  position.kp = 20, position.kv = 1.2;
  ActuatorSpec velocity = spec("velocity", ActuatorKind::Velocity, "slide", 0.5);
  velocity.kv = 8;
  ActuatorSpec general = spec("general", ActuatorKind::General, "slide", 1.0);
  general.gain = Vector3<double>(2, -1, 0.5), general.bias = Vector3<double>(0.3, -4, -0.2);
  ActuatorSpec servo = spec("servo", ActuatorKind::Servo, "hinge", 1.0);
  servo.kp = 5, servo.kv = 3, servo.velocity_limit = 2;
  if (clamps) {
    motor.ctrl_range = {-1, 1}, motor.force_range = {-1.5, 1.2};
    position.ctrl_range = {-0.5, 0.8};
    velocity.force_range = {-2, 2};
    general.ctrl_range = {-1, 1}, general.force_range = {-3, 3.5};
    servo.force_range = {-4, 4};
  }
  for (ActuatorSpec* a : {&motor, &position, &velocity, &general, &servo}) b.add_actuator(*a);
  return b.build();
}

double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

TEST(Actuation, EachKindsForceLawAndClamps) {
  const Model m = every_kind(/*clamps=*/true);
  ASSERT_EQ(m.nu(), 5);
  Data d(m);
  const Eigen::Vector2d q(0.3, -0.2), v(-0.7, 1.1);
  for (const Eigen::VectorXd& u : {Eigen::VectorXd((Eigen::VectorXd(5) << 0.4, 0.1, -0.3, 0.2, 0.1).finished()),
                                   Eigen::VectorXd((Eigen::VectorXd(5) << 3.0, -2.0, 5.0, -4.0, 2.0).finished())}) {
    actuation<double>(m, d, q, v, u);
    const double Lh = q[0], Vh = v[0];
    // motor: gear 2, ctrl [-1, 1], force [-1.5, 1.2]
    const double f_motor = clamp(clamp(u[0], -1, 1), -1.5, 1.2);
    // position: gear 1.5, L = 1.5 q
    const double up = clamp(u[1], -0.5, 0.8), f_position = 20 * up - 20 * (1.5 * Lh) - 1.2 * (1.5 * Vh);
    // velocity: gear 0.5 on the slide, force [-2, 2]
    const double f_velocity = clamp(8 * u[2] - 8 * (0.5 * v[1]), -2, 2);
    // general: affine gain and bias on the slide (gear 1)
    const double ug = clamp(u[3], -1, 1);
    const double f_general = clamp((2 - q[1] + 0.5 * v[1]) * ug + 0.3 - 4 * q[1] - 0.2 * v[1], -3, 3.5);
    // servo: kv (clip(kp (u - L), 2) - V), force [-4, 4]
    const double f_servo = clamp(3 * (clamp(5 * (u[4] - Lh), -2, 2) - Vh), -4, 4);
    const double expected[5] = {f_motor, f_position, f_velocity, f_general, f_servo};
    for (int k = 0; k < 5; ++k) EXPECT_NEAR(d.actuator_force[k], expected[k], 1e-12) << m.actuators[k].name;
    EXPECT_NEAR(d.actuation_tau[0], 2 * f_motor + 1.5 * f_position + f_servo, 1e-12);
    EXPECT_NEAR(d.actuation_tau[1], 0.5 * f_velocity + f_general, 1e-12);
  }
  // no controls: every control zero
  actuation<double>(m, d, q, v, Eigen::VectorXd());
  const Eigen::VectorXd zeros = d.actuation_tau;
  actuation<double>(m, d, q, v, Eigen::VectorXd::Zero(5));
  EXPECT_EQ(d.actuation_tau, zeros);
  EXPECT_THROW(actuation<double>(m, d, q, v, Eigen::VectorXd::Zero(4)), ArgumentError);
}

// Paper 002's position servo, as the servo actuator kind and as the separate actuator_torques map.
TEST(Actuation, ServoKindIsPaper002sServo) {
  ModelBuilder b = two_joints();
  ActuatorSpec servo = spec("", ActuatorKind::Servo, "hinge", 1.0);
  servo.kp = 4, servo.kv = 2.5, servo.velocity_limit = 0.7, servo.force_range = {-1.1, 1.1};
  b.add_actuator(servo);
  const Model m = b.build();
  EXPECT_EQ(m.actuators[0].name, "hinge");
  Data d(m);
  std::vector<ServoSettings> settings(2);
  settings[0] = ServoSettings{ServoKind::Position, 4, 2.5, 1.1, 0.7};
  settings[1] = ServoSettings{ServoKind::Torque, 0, 0, 0.0, std::nullopt};
  for (double u : {-2.0, -0.1, 0.05, 0.3, 1.5})
    for (double qh : {-0.4, 0.0, 0.2}) {
      const Eigen::Vector2d q(qh, 0), v(0.3, 0);
      Eigen::VectorXd tau(2), ctrl(1), servo_u(2);
      ctrl << u;
      servo_u << u, 0;
      actuation<double>(m, d, q, v, ctrl);
      actuator_torques<double>(m, settings, q, v, servo_u, tau);
      EXPECT_NEAR(d.actuation_tau[0], tau[0], 1e-14) << "u " << u << " q " << qh;
    }
}

// Controls and every actuator parameter: the adjoint against forward mode and central differences,
// for both integrators, with the controls inside their ranges (no clamp kink within the FD step)
// and with some of them clamped (the bound's gradient).
TEST(Actuation, GradcheckControlsAndActuatorParameters) {
  for (bool clamps : {false, true}) {
    const Model m = every_kind(clamps);
    const int T = 5;
    MatrixXr<double> taus = MatrixXr<double>::Zero(T, m.nv), ctrls(T, m.nu());
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < m.nu(); ++k) ctrls(t, k) = (clamps && k == 0 ? 1.7 : 0.25) * std::sin(1.0 + t + 2.0 * k);
    const Eigen::VectorXd q0 = (Eigen::VectorXd(2) << 0.2, 0.1).finished(), v0 = (Eigen::VectorXd(2) << -0.3, 0.4).finished();
    for (Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::RK4}) {
      SCOPED_TRACE(std::string(clamps ? "clamped, " : "") + integrator_name(integrator));
      GradcheckOptions o;
      o.integrator = integrator;
      o.running_loss = true;
      const GradcheckResult r = gradcheck(m, q0, v0, taus, ctrls, 0.01, o);
      ASSERT_EQ(r.blocks.size(), 5u);
      EXPECT_EQ(r.blocks[3].name, "ctrls");
      EXPECT_GT(r.blocks[3].scale, 0.0);
      EXPECT_TRUE(r.passed(1e-9, 1e-6)) << r.summary();
    }
  }
}

TEST(Actuation, BuilderNamesTheActuatorItCannotBuild) {
  {
    ModelBuilder b = two_joints();
    ActuatorSpec a = spec("wrist_motor", ActuatorKind::Motor, "wrist", 1.0);
    a.where = SourceLocation{"arm.xml", 42, "<motor name='wrist_motor'>"};
    b.add_actuator(a);
    try {
      b.build();
      FAIL() << "expected a ModelError";
    } catch (const ModelError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("arm.xml:42"), std::string::npos) << what;
      EXPECT_NE(what.find("wrist_motor"), std::string::npos) << what;
      EXPECT_NE(what.find("'wrist'"), std::string::npos) << what;
    }
  }
  {
    ModelBuilder b = two_joints();
    b.add_actuator(spec("twice", ActuatorKind::Motor, "hinge", 1.0));
    b.add_actuator(spec("twice", ActuatorKind::Motor, "slide", 1.0));
    EXPECT_THROW(b.build(), ModelError);
  }
  ModelBuilder b = two_joints();
  ActuatorSpec bad = spec("bad", ActuatorKind::Motor, "hinge", std::nan(""));
  EXPECT_THROW(b.add_actuator(bad), ModelError);
  bad.gear = 1, bad.ctrl_range = {1.0, -1.0};
  EXPECT_THROW(b.add_actuator(bad), ModelError);
}

TEST(Actuation, MjcfActuatorsAndWhatIsSkipped) {
  std::vector<std::string> warnings;
  const Model m = load_mjcf(std::string(GRADYN_TEST_DATA) + "/mjcf/actuated_arm.xml", {.warnings = &warnings});
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(m.nu(), 6);
  const Actuator& servo = m.actuators[m.actuator_id("elbow_servo")];
  EXPECT_EQ(servo.kind, ActuatorKind::Position);
  EXPECT_EQ(servo.gain, Vector3<double>(30, 0, 0));  // kp from its default class
  EXPECT_EQ(servo.bias, Vector3<double>(0, -30, -1.5));
  EXPECT_EQ(servo.gear, 1.5);
  EXPECT_TRUE(servo.ctrl_limited && servo.force_limited);
  EXPECT_EQ(servo.force_upper, 8.0);
  const Actuator& damper = m.actuators[m.actuator_id("elbow_damper")];
  EXPECT_EQ(damper.kind, ActuatorKind::General);
  EXPECT_EQ(damper.gain, Vector3<double>(0, 0, -0.3));
  const std::string xml = R"(<mujoco><worldbody><body><joint name="j" type="hinge"/><joint name="b" type="ball"/>
      <geom size=".1" mass="1"/></body></worldbody>
      <tendon><fixed name="t"><joint joint="j" coef="1"/></fixed></tendon>
      <actuator><motor joint="j"/><intvelocity joint="j" actrange="-1 1"/><motor tendon="t"/><motor joint="b"/>
      <general joint="j" dyntype="filter"/><position joint="j" kp="3"/></actuator></mujoco>)";
  warnings.clear();
  const Model skipped = parse_mjcf_string(xml, "skips.xml", {.warnings = &warnings}).build();
  EXPECT_EQ(skipped.nu(), 2);  // the hinge's motor and position servo
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  for (const char* expected : {"<intvelocity>", "acts through its tendon", "drives the spherical joint 'b'",
                               "dyntype 'filter'"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << " in:\n" << all;
}

}  // namespace
}  // namespace gradyn
