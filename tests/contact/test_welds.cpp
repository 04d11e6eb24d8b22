// Welds (MJCF <equality><weld>; contact/joint_constraints.hpp): the builder's anchors and rotation
// from q0; a free box welded to the tip of a two-hinge arm moves as the same box on a fixed joint
// (pgs and ipm); a box welded to the world with a held tilt stays there under gravity; the orientation
// error's adjoint, the step's reverse-mode Jacobian and the erp adjoint against forward-mode AD and
// central differences; penalty's stiff spring holding the box; and bad specs refused.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "../support/contact_scenes.hpp"
#include "../support/erp_gradient.hpp"
#include "../support/error_of.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn {
namespace {

using test::relative_error;
using V3 = Vector3<double>;

const V3 kTip(0.4, 0, 0);  // where the box sits on the arm's second link

// An arm of two hinges (about y at the origin, then about x at 0.4 m) carrying a 1 kg box at the
// tip of its second link, tilted by rpy (0.3, -0.2, 0.5). welded: the box floats on a free joint and
// a weld holds it there (box = body1, link2 = body2, anchors and rotation from q0); else a fixed
// joint carries it.
Model arm_with_box(ContactModel contact, bool welded) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  const auto rod = [](double mass, const V3& to) {
    return Inertia<double>(mass, 0.5 * to, Matrix3<double>::Identity() * mass * to.squaredNorm() / 12);
  };
  b.add_link({"link1", rod(0.5, kTip), {}});
  b.add_link({"link2", rod(0.3, kTip), {}});
  Matrix3<double> box_inertia;
  box_inertia << 0.02, 0.001, 0, 0.001, 0.015, 0.002, 0, 0.002, 0.01;
  b.add_link({"box", Inertia<double>(1.0, V3(0.05, 0.02, -0.03), box_inertia), {}});
  const auto joint = [&](const char* name, JointType type, const char* parent, const char* child, const Pose<double>& at,
                         const V3& axis) {
    JointSpec j;
    j.name = name;
    j.type = type;
    j.parent = parent;
    j.child = child;
    j.origin = at;
    j.axis = axis;
    j.damping = type == JointType::Revolute ? 0.02 : 0.0;
    b.add_joint(j);
  };
  joint("shoulder", JointType::Revolute, "world", "link1", Pose<double>(), V3::UnitY());
  joint("elbow", JointType::Revolute, "link1", "link2", Pose<double>(Matrix3<double>::Identity(), kTip), V3::UnitX());
  const Pose<double> box_on_tip(rpy_to_matrix<double>(V3(0.3, -0.2, 0.5)), kTip);
  if (welded) {
    // the free joint's placement: where the box is at q0 (both hinges at 0)
    const Pose<double> tip_at_q0(Matrix3<double>::Identity(), kTip);
    joint("float", JointType::Free, "world", "box", tip_at_q0 * box_on_tip, V3::UnitX());
    ConnectionSpec weld;
    weld.name = "hold";
    weld.frame1 = "box";
    weld.frame2 = "link2";
    weld.anchor1 = V3(0.01, 0.02, 0.03);  // any point: with the orientation held, all of them meet
    weld.weld = true;
    b.add_connection(weld);
  } else {
    joint("carry", JointType::Fixed, "link2", "box", box_on_tip, V3::UnitX());
  }
  Model m = b.build();
  m.contact.model = contact;
  return m;
}

// |position gap| and |orientation error| of connection c at q.
std::pair<double, double> weld_errors(const Model& model, const Eigen::VectorXd& q, int c = 0) {
  Data d(model);
  forward_kinematics<double>(model, d, q);
  Vector3<double> p1, p2;
  connection_points<double>(d, model.body_connections[static_cast<size_t>(c)], p1, p2);
  return {(p1 - p2).norm(), weld_rotation_error<double>(d, model.body_connections[static_cast<size_t>(c)]).norm()};
}

TEST(Welds, AnchorsAndRotationComeFromTheReferenceConfiguration) {
  const Model model = arm_with_box(ContactModel::Pgs, true);
  ASSERT_EQ(model.body_connections.size(), 1u);
  const BodyConnection& c = model.body_connections[0];
  EXPECT_TRUE(c.weld);
  EXPECT_EQ(model.body_names[c.body1], "box");
  EXPECT_EQ(model.body_names[c.body2], "link2");
  EXPECT_EQ(model.connection_blocks(), 2);
  // body2's orientation in body1's frame: the box's tilt, inverted
  EXPECT_LT((c.rotation - rpy_to_matrix<double>(V3(0.3, -0.2, 0.5)).transpose()).norm(), 1e-12);
  // the point rows at the centre of mass of the body that turns most easily (link2, a rod of
  // moments 4e-3, against the box's 2e-2), and its mate in the box
  EXPECT_LT((c.anchor2 - V3(0.2, 0, 0)).norm(), 1e-15);
  const V3 given(0.01, 0.02, 0.03);  // the anchor the weld was given, in the box's frame
  Data d0(model);
  forward_kinematics<double>(model, d0, model.q0);
  const V3 from_given = d0.oMi[c.body1].act_point(given), from_model = d0.oMi[c.body1].act_point(c.anchor1);
  const V3 mate_given = d0.oMi[c.body2].act_inv_point(from_given);
  EXPECT_LT((c.rotation.transpose() * (given - c.anchor1) + c.anchor2 - mate_given).norm(), 1e-12);
  EXPECT_LT((d0.oMi[c.body2].act_point(c.anchor2) - from_model).norm(), 1e-12);
  const auto [gap, angle] = weld_errors(model, model.q0);
  EXPECT_LT(gap, 1e-15);
  EXPECT_LT(angle, 1e-15);
  // the orientation error is sin(angle) about the axis that takes body2 where the weld holds it
  Data d(model);
  Eigen::VectorXd q = model.q0;
  q[model.idx_q[1]] = 0.1;  // the elbow turns link2 by 0.1 rad about x; the box stays
  forward_kinematics<double>(model, d, q);
  EXPECT_LT((weld_rotation_error<double>(d, c) - V3(-std::sin(0.1), 0, 0)).norm(), 1e-12);
}

// Worst hinge-angle difference between the welded and the fixed box over 1 s at time step dt
// (the arm swings under gravity and gentle torques), and the weld's worst gap and angle.
struct WeldRun {
  double diff = 0, gap = 0, angle = 0, swing = 0;
};
WeldRun weld_against_fixed(ContactModel contact, double dt) {
  const Model welded = arm_with_box(contact, true), fixed = arm_with_box(contact, false);
  Data dw(welded), df(fixed);
  Eigen::VectorXd qw = welded.q0, vw = Eigen::VectorXd::Zero(welded.nv), qf = fixed.q0, vf = Eigen::VectorXd::Zero(2);
  WeldRun run;
  const int steps = static_cast<int>(std::lround(1.0 / dt));
  for (int k = 0; k < steps; ++k) {
    const double t = k * dt;
    const Eigen::Vector2d tau(0.5 * std::sin(4 * t), 0.2 * std::cos(3 * t));
    Eigen::VectorXd tau_w = Eigen::VectorXd::Zero(welded.nv);
    tau_w.head<2>() = tau;
    step<double>(welded, dw, qw, vw, tau_w, dt, Integrator::SemiImplicitEuler, qw, vw);
    step<double>(fixed, df, qf, vf, tau, dt, Integrator::SemiImplicitEuler, qf, vf);
    EXPECT_EQ(dw.status, 0) << contact_model_name(contact) << " step " << k;
    const auto [gap, angle] = weld_errors(welded, qw);
    run.gap = std::max(run.gap, gap);
    run.angle = std::max(run.angle, angle);
    run.diff = std::max(run.diff, (qw.head<2>() - qf).cwiseAbs().maxCoeff());
    run.swing = std::max(run.swing, qf.cwiseAbs().maxCoeff());
  }
  return run;
}

TEST(Welds, AWeldedBoxMovesAsTheBoxOnAFixedJoint) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    ASSERT_EQ(arm_with_box(contact, true).nv, 8);
    ASSERT_EQ(arm_with_box(contact, false).nv, 2);
    const WeldRun coarse = weld_against_fixed(contact, 1e-3), fine = weld_against_fixed(contact, 5e-4);
    EXPECT_GT(coarse.swing, 2.0) << contact_model_name(contact);  // the arm swings through large angles
    EXPECT_LT(coarse.gap, 1e-6) << contact_model_name(contact);
    EXPECT_LT(coarse.angle, 1e-6) << contact_model_name(contact);
    // the same machine, discretised differently (the welded box's velocities are projected onto
    // the weld's rows at the start of each step): the hinges agree to first order in dt. Measured:
    // 1.69e-3 rad at 1 ms and 8.4e-4 at 0.5 ms over a 3.2 rad swing (gap 7.6e-8 m, angle 9.5e-8).
    EXPECT_LT(coarse.diff, 4e-3) << contact_model_name(contact);
    EXPECT_GT(fine.diff / coarse.diff, 0.4) << contact_model_name(contact);
    EXPECT_LT(fine.diff / coarse.diff, 0.6) << contact_model_name(contact);
  }
}

// A 1 kg box on a free joint, welded to the world with a held tilt (rotation rpy (0.2, 0.1, -0.3) of
// the world in the box's frame; anchor: the box's corner at (0.1, 0.1, 0.1)) and started a little off.
Model box_welded_to_world(ContactModel contact) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"box", Inertia<double>(1.0, V3(0.02, 0, 0), Matrix3<double>::Identity() * 0.01), {}});
  JointSpec j;
  j.name = "float";
  j.type = JointType::Free;
  j.parent = "world";
  j.child = "box";
  j.origin.p = V3(0, 0, 1);
  b.add_joint(j);
  ConnectionSpec weld;
  weld.frame1 = "box";
  weld.anchor1 = V3(0.1, 0.1, 0.1);
  weld.anchor2 = V3(0.1, 0.1, 1.1);
  weld.weld = true;
  weld.rotation = rpy_to_matrix<double>(V3(0.2, 0.1, -0.3));
  b.add_connection(weld);
  Model m = b.build();
  m.contact.model = contact;
  return m;
}

TEST(Welds, ABoxWeldedToTheWorldTurnsToItsHeldTiltAndStays) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = box_welded_to_world(contact);
    EXPECT_EQ(model.body_connections[0].name, "weld0");
    EXPECT_EQ(model.body_connections[0].body2, -1);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(6), tau = Eigen::VectorXd::Zero(6);
    EXPECT_GT(weld_errors(model, q).second, 0.2);  // it starts untilted
    for (int k = 0; k < 2000; ++k) {
      step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      ASSERT_EQ(d.status, 0) << contact_model_name(contact) << " step " << k;
    }
    const auto [gap, angle] = weld_errors(model, q);
    EXPECT_LT(gap, 1e-6) << contact_model_name(contact);
    EXPECT_LT(angle, 1e-6) << contact_model_name(contact);
    EXPECT_LT(v.norm(), 1e-5) << contact_model_name(contact);
  }
}

TEST(Welds, PenaltyHoldsTheTiltWithAStiffSpring) {
  // the spring is explicit: stable while dt < 2 I / limit_damping, I = 0.01 kg m^2 the box's
  // smallest moment; the default limit_damping (20) sits at that edge at dt = 1 ms
  Model model = box_welded_to_world(ContactModel::Penalty);
  model.contact.limit_damping = 10.0;
  Data d(model);
  Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(6), tau = Eigen::VectorXd::Zero(6);
  for (int k = 0; k < 3000; ++k) {
    step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    ASSERT_EQ(d.status, 0) << "step " << k;
  }
  const auto [gap, angle] = weld_errors(model, q);
  // the spring's sag under the 1 kg box's weight, m g / limit_stiffness = 9.8e-4 m (and the turn its
  // offset centre of mass makes)
  EXPECT_NEAR(gap, 9.81 / model.contact.limit_stiffness, 3e-4);
  EXPECT_LT(angle, 1e-3);
  EXPECT_LT(v.norm(), 1e-3);
}

TEST(Welds, StepReverseModeJacobianMatchesForwardModeAD) {
  const double dt = 1e-3;
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    // the arm with its welded box, moving, the weld a little open in position and orientation
    // (penalty: a spring-damper its explicit step is stable with on the light arm,
    // PenaltyHoldsTheTiltWithAStiffSpring)
    Model arm = arm_with_box(contact, true);
    arm.contact.limit_stiffness = 2e3, arm.contact.limit_damping = 5.0;
    Data d(arm);
    Eigen::VectorXd q = arm.q0, v = Eigen::VectorXd::Zero(8), tau = Eigen::VectorXd::Zero(8);
    tau.head<2>() << 2.0, -1.0;
    for (int k = 0; k < 80; ++k) step<double>(arm, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    q[2] += 2e-3;                        // the box's free joint: off in x
    q[5] += 3e-3;                        // and turned (its quaternion read normalised)
    Model world = box_welded_to_world(contact);
    world.contact.limit_stiffness = 2e3, world.contact.limit_damping = 5.0;
    Eigen::VectorXd qb = world.q0, vb = Eigen::VectorXd::LinSpaced(6, -0.2, 0.3);
    for (const auto& [name, model, q0, v0, tau0] :
         {std::tuple<const char*, const Model&, Eigen::VectorXd, Eigen::VectorXd, Eigen::VectorXd>{
              "arm with box", arm, q, v, tau},
          {"box on the world", world, qb, vb, Eigen::VectorXd::LinSpaced(6, 0.5, -0.4)}}) {
      const Eigen::MatrixXd J_ad = test::step_jacobian_ad(model, q0, v0, tau0, dt, Integrator::SemiImplicitEuler);
      const Eigen::MatrixXd J = test::step_jacobian_vjp(model, q0, v0, tau0, dt, Integrator::SemiImplicitEuler);
      EXPECT_LT(relative_error(J, J_ad), 1e-7) << name << " " << contact_model_name(contact) << "\n" << J << "\nAD\n" << J_ad;
    }
  }
}

TEST(Welds, ErpAdjointThroughTheOrientationMatchesCentralDifferences) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = box_welded_to_world(contact);  // 0.37 rad off its held tilt
    const Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::LinSpaced(6, 0.1, -0.1), tau = Eigen::VectorXd::Zero(6);
    const auto [adjoint, fd] = test::erp_gradient_and_central_difference(model, q, v, tau, 7);
    EXPECT_GT(std::abs(fd), 1e-3) << contact_model_name(contact);
    EXPECT_NEAR(adjoint, fd, 1e-6 * std::max(1.0, std::abs(fd))) << contact_model_name(contact);
  }
}

TEST(Welds, BadSpecsAreRefusedWithAClearMessage) {
  using test::error_of;
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"box", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.01), {}});
  JointSpec j;
  j.name = "float";
  j.type = JointType::Free;
  j.parent = "world";
  j.child = "box";
  b.add_joint(j);
  ConnectionSpec bad;
  bad.frame1 = "box";
  bad.weld = true;
  ModelBuilder no_anchor = b;
  no_anchor.add_connection(bad);
  EXPECT_NE(error_of([&] { no_anchor.build(); }).find("give anchor1"), std::string::npos);
  bad.anchor1 = V3::Zero();
  bad.rotation = Matrix3<double>::Identity() * 2.0;
  ModelBuilder not_a_rotation = b;
  not_a_rotation.add_connection(bad);
  EXPECT_NE(error_of([&] { not_a_rotation.build(); }).find("weld 'weld0': the rotation is not a rotation matrix"),
            std::string::npos);
}

}  // namespace
}  // namespace gradyn
