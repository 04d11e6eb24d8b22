// Dry joint friction, joint couplings and body connections (contact/joint_constraints.hpp): the
// coupling polynomial and its Jacobian against forward-mode AD; the penalty forces' adjoint against
// AD; a frictional hinge held below its bound and slipping with the net torque above it (pgs, ipm);
// couplings and a four-bar linkage's loop held by pgs and ipm (and by penalty's stiff spring); the step's reverse-mode Jacobian
// against AD through the friction, coupling, connection and contact rows; the erp adjoint through a
// connection against central differences; and the models that refuse them.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "../support/contact_scenes.hpp"
#include "../support/erp_gradient.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/flat/export.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

using test::relative_error;
using V3 = Vector3<double>;

// Three hinges in a chain about y, z and y; joint "c" follows joint "a" by a quadratic law, and
// joint "b" has dry friction. floating: on a 2 kg base with a free joint instead of the world.
Model coupled_chain(ContactModel contact, double frictionloss = 0.3, bool floating = false) {
  ModelBuilder b;
  if (floating)
    b.add_link({"base", Inertia<double>(2.0, V3::Zero(), Matrix3<double>::Identity() * 0.05), {}});
  else
    b.add_link({"base", std::nullopt, {}});
  const char* names[] = {"l1", "l2", "l3"};
  const V3 axes[] = {V3::UnitY(), V3::UnitZ(), V3::UnitY()};
  for (int i = 0; i < 3; ++i) {
    b.add_link({names[i], Inertia<double>(1.0 - 0.2 * i, V3(0.2, 0, 0), Matrix3<double>::Identity() * 0.01), {}});
    JointSpec j;
    j.name = std::string(1, static_cast<char>('a' + i));
    j.type = JointType::Revolute;
    j.parent = i == 0 ? "base" : names[i - 1];
    j.child = names[i];
    j.origin.p = V3(i == 0 ? 0.0 : 0.4, 0, 0);
    j.axis = axes[i];
    j.damping = 0.05;
    if (i == 1) j.frictionloss = frictionloss;
    j.reference = 0.1 * i;
    b.add_joint(j);
  }
  JointCouplingSpec c;
  c.name = "cam";
  c.joint1 = "c";
  c.joint2 = "a";
  c.polycoef = {0.05, -0.8, 0.6, 0.3, 0.0};
  b.add_joint_coupling(c);
  BuildOptions options;
  options.floating_base = floating;
  Model m = b.build(options);
  m.contact.model = contact;
  return m;
}

TEST(JointConstraints, CouplingErrorAndSlopeMatchForwardModeAD) {
  const Model model = coupled_chain(ContactModel::Pgs);
  const JointCoupling& c = model.joint_couplings[0];
  EXPECT_DOUBLE_EQ(c.q1_ref, 0.2);  // the joints' reference values
  EXPECT_DOUBLE_EQ(c.q2_ref, 0.0);
  const Eigen::VectorXd q = Eigen::Vector3d(0.7, -0.2, 0.4);
  auto f = [&](const VectorX<ADScalar>& x) {
    const ModelTpl<ADScalar> m = model.cast<ADScalar>();
    ADScalar slope;
    VectorX<ADScalar> out(1);
    out[0] = joint_coupling_error<ADScalar>(m, c, x, slope);
    return out;
  };
  const Eigen::MatrixXd J = test::ad_jacobian(f, q);
  double slope;
  const double g = joint_coupling_error<double>(model, c, q, slope);
  const double x = q[0];
  EXPECT_NEAR(g, q[2] - 0.2 - (0.05 - 0.8 * x + 0.6 * x * x + 0.3 * x * x * x), 1e-15);
  EXPECT_NEAR(J(0, 0), -slope, 1e-14);
  EXPECT_NEAR(J(0, 2), 1.0, 1e-15);
  EXPECT_EQ(J(0, 1), 0.0);
}

TEST(JointConstraints, PenaltyForcesAdjointMatchesForwardModeAD) {
  const Model model = coupled_chain(ContactModel::Penalty);
  const Eigen::VectorXd q = Eigen::Vector3d(0.7, -0.2, 0.4), v = Eigen::Vector3d(0.3, 0.004, -0.5);
  Eigen::VectorXd x0(6);
  x0 << q, v;
  auto f = [&](const VectorX<ADScalar>& x) {
    const ModelTpl<ADScalar> m = model.cast<ADScalar>();
    VectorX<ADScalar> tau = VectorX<ADScalar>::Zero(3);
    add_joint_constraint_forces<ADScalar>(m, x.head(3), x.tail(3), tau);
    return tau;
  };
  const Eigen::MatrixXd J = test::ad_jacobian(f, x0);
  EXPECT_GT(J.cwiseAbs().maxCoeff(), 1.0);
  for (int r = 0; r < 3; ++r) {
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(3), v_bar = Eigen::VectorXd::Zero(3);
    add_joint_constraint_forces_vjp<double>(model, q, v, Eigen::VectorXd::Unit(3, r), q_bar, v_bar);
    Eigen::VectorXd row(6);
    row << q_bar, v_bar;
    EXPECT_LT(relative_error(row.transpose(), J.row(r)), 1e-13) << "row " << r;
  }
}

// A 1/3 kg m^2 rod on a hinge about y without gravity, frictionloss 2 N m, pushed by `torque` for 1 s.
double hinge_velocity_after_one_second(ContactModel contact, double torque) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  b.add_link({"rod", Inertia<double>(1.0, V3(0.5, 0, 0), Eigen::Vector3d(1e-3, 1.0 / 12, 1.0 / 12).asDiagonal().toDenseMatrix()), {}});
  JointSpec j;
  j.name = "hinge";
  j.type = JointType::Revolute;
  j.parent = "world";
  j.child = "rod";
  j.axis = V3::UnitY();
  j.frictionloss = 2.0;
  b.add_joint(j);
  Model m = b.build();
  m.gravity.setZero();
  m.contact.model = contact;
  Data d(m);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(1), v = q, tau = Eigen::VectorXd::Constant(1, torque);
  for (int k = 0; k < 1000; ++k) step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
  EXPECT_EQ(d.status, 0);
  return v[0];
}

TEST(JointConstraints, FrictionHoldsBelowItsBoundAndSlipsWithTheNetTorqueAbove) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    // PGS's boxed row is exact; the interior point stops within ipm_tolerance of its complementarity,
    // which 1000 steps add up to ~1e-7
    const double tolerance = contact == ContactModel::Pgs ? 1e-12 : 1e-6;
    EXPECT_NEAR(hinge_velocity_after_one_second(contact, 1.5), 0.0, tolerance) << contact_model_name(contact);
    EXPECT_NEAR(hinge_velocity_after_one_second(contact, -1.9), 0.0, tolerance) << contact_model_name(contact);
    // net 1 N m on 1/3 kg m^2 for 1 s
    EXPECT_NEAR(hinge_velocity_after_one_second(contact, 3.0), 3.0, tolerance) << contact_model_name(contact);
    EXPECT_NEAR(hinge_velocity_after_one_second(contact, -3.0), -3.0, tolerance) << contact_model_name(contact);
  }
  // None does not enforce it (the plain articulated dynamics)
  EXPECT_NEAR(hinge_velocity_after_one_second(ContactModel::None, 1.5), 4.5, 1e-9);
}

TEST(JointConstraints, VelocityLevelModelsHoldTheCoupling) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = coupled_chain(contact);
    Data d(model);
    // start on the constraint, with a violating velocity and torques on every joint
    Eigen::VectorXd q = model.q0, v = Eigen::Vector3d(1.0, -2.0, 3.0), tau = Eigen::Vector3d(0.5, 1.0, -0.7);
    double slope;
    q[2] += joint_coupling_error<double>(model, model.joint_couplings[0], q, slope) * -1.0;
    double worst = 0.0;
    for (int k = 0; k < 500; ++k) {
      step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      worst = std::max(worst, std::abs(joint_coupling_error<double>(model, model.joint_couplings[0], q, slope)));
    }
    // the velocity rows hold J v+ = 0 to the solver's tolerance; the position drifts by second order
    // in dt per step (q+ moves along the tangent of a curved constraint), which Baumgarte removes
    EXPECT_LT(worst, 1e-5) << contact_model_name(contact);
    EXPECT_GT(std::abs(q[0] - model.q0[0]), 0.05) << contact_model_name(contact);  // it moved
    EXPECT_EQ(d.status, 0) << contact_model_name(contact);
  }
}

TEST(JointConstraints, StepReverseModeJacobianMatchesForwardModeAD) {
  const double dt = 1e-3;
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    // friction and coupling rows alone
    const Model chain = coupled_chain(contact, 0.02);
    Eigen::VectorXd q = Eigen::Vector3d(0.3, -0.2, 0.0), v = Eigen::Vector3d(0.4, 0.3, 0.0),
                    tau = Eigen::Vector3d(0.5, 0.2, -0.1);
    double slope;
    q[2] -= joint_coupling_error<double>(chain, chain.joint_couplings[0], q, slope) - 1e-3;  // slightly off
    v[2] = slope * v[0];
    // with contact: the arm on its box, with dry friction on both joints (one sticking, one sliding)
    ContactSettings settings;
    settings.model = contact;
    Model arm = test::arm_on_box(settings);
    arm.frictionloss << 0.05, 5.0;
    Eigen::VectorXd qa(2), va(2), ta(2);
    qa << 0.55, 0.05;
    va << 0.4, -0.7;
    ta << 3.0, -1.0;
    for (const auto& [name, model, q0, v0, tau0] :
         {std::tuple<const char*, const Model&, Eigen::VectorXd, Eigen::VectorXd, Eigen::VectorXd>{
              "coupled chain", chain, q, v, tau},
          {"arm on a box", arm, qa, va, ta}}) {
      const Eigen::MatrixXd J_ad = test::step_jacobian_ad(model, q0, v0, tau0, dt, Integrator::SemiImplicitEuler);
      const Eigen::MatrixXd J = test::step_jacobian_vjp(model, q0, v0, tau0, dt, Integrator::SemiImplicitEuler);
      EXPECT_LT(relative_error(J, J_ad), 1e-7) << name << " " << contact_model_name(contact) << "\n"
                                                << J << "\nAD\n"
                                                << J_ad;
    }
  }
}

// A four-bar linkage in the xz plane (hinges about y): crank 0.2 from the origin, coupler 0.6, rocker
// 0.5 from (0.6, 0, 0); the coupler's end is connected to the rocker's (anchor2 from q0).
// rolling: the linkage's frame rolls about x on a hinge of its own, and the anchors start
// anchor_gap apart along the rocker's z (Cassie's legs: a planar loop on joints that are not).
Model four_bar(ContactModel contact, bool rolling = false, double anchor_gap = 0.0) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  const char* ground = "world";
  if (rolling) {
    b.add_link({"frame", Inertia<double>(1.0, V3(0.3, 0, 0), Matrix3<double>::Identity() * 0.05), {}});
    JointSpec roll;
    roll.name = "roll";
    roll.type = JointType::Revolute;
    roll.parent = "world";
    roll.child = "frame";
    roll.axis = V3::UnitX();
    roll.damping = 0.05;
    b.add_joint(roll);
    ground = "frame";
  }
  const V3 tip(0.52301245, 0, 0.29403736), rocker_tip(-0.07698755, 0, 0.49403736);
  const auto rod = [](double mass, const V3& to) {
    return Inertia<double>(mass, 0.5 * to, Matrix3<double>::Identity() * mass * to.squaredNorm() / 12);
  };
  b.add_link({"crank", rod(0.2, V3(0, 0, 0.2)), {}});
  b.add_link({"coupler", rod(0.5, tip), {}});
  b.add_link({"rocker", rod(0.4, rocker_tip), {}});
  const auto hinge = [&](const char* name, const char* parent, const char* child, const V3& at) {
    JointSpec j;
    j.name = name;
    j.type = JointType::Revolute;
    j.parent = parent;
    j.child = child;
    j.origin.p = at;
    j.axis = V3::UnitY();
    j.damping = 0.02;
    b.add_joint(j);
  };
  hinge("crank", ground, "crank", V3::Zero());
  hinge("coupler", "crank", "coupler", V3(0, 0, 0.2));
  hinge("rocker", ground, "rocker", V3(0.6, 0, 0));
  ConnectionSpec loop;
  loop.name = "loop";
  loop.frame1 = "coupler";
  loop.frame2 = "rocker";
  loop.anchor1 = tip;
  if (anchor_gap != 0.0) loop.anchor2 = rocker_tip + V3(0, 0, anchor_gap);
  b.add_connection(loop);
  Model m = b.build();
  m.contact.model = contact;
  return m;
}

double loop_gap(const Model& model, const Eigen::VectorXd& q) {
  Data d(model);
  forward_kinematics<double>(model, d, q);
  Vector3<double> p1, p2;
  connection_points<double>(d, model.body_connections[0], p1, p2);
  return (p1 - p2).norm();
}

TEST(JointConstraints, ConnectionAnchorsMeetAtTheReferenceConfiguration) {
  const Model model = four_bar(ContactModel::Pgs);
  ASSERT_EQ(model.body_connections.size(), 1u);
  const BodyConnection& c = model.body_connections[0];
  EXPECT_EQ(model.body_names[c.body1], "coupler");
  EXPECT_EQ(model.body_names[c.body2], "rocker");
  EXPECT_LT((c.anchor2 - V3(-0.07698755, 0, 0.49403736)).norm(), 1e-12);
  EXPECT_LT(loop_gap(model, model.q0), 1e-15);
}

TEST(JointConstraints, VelocityLevelModelsKeepTheLoopClosed) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = four_bar(contact);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(3), tau = Eigen::Vector3d(0.15, 0, 0);
    double worst = 0.0;
    for (int k = 0; k < 1000; ++k) {
      step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      worst = std::max(worst, loop_gap(model, q));
      ASSERT_EQ(d.status, 0) << contact_model_name(contact) << " step " << k;
    }
    EXPECT_LT(worst, 1e-6) << contact_model_name(contact);
    EXPECT_GT(std::abs(q[0]), 0.5) << contact_model_name(contact);  // the crank turned
  }
}

TEST(JointConstraints, PenaltyHoldsTheLoopWithAStiffSpring) {
  // the gap under a load F is F / limit_stiffness: about a millimetre here, against centimetres
  // open when nothing holds the loop
  const Eigen::VectorXd tau = Eigen::Vector3d(0.15, 0, 0);
  double worst = 0.0, open = 0.0;
  for (ContactModel contact : {ContactModel::Penalty, ContactModel::None}) {
    const Model model = four_bar(contact);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(3);
    for (int k = 0; k < 1000; ++k) {
      step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      (contact == ContactModel::Penalty ? worst : open) = std::max(contact == ContactModel::Penalty ? worst : open,
                                                                    loop_gap(model, q));
      ASSERT_EQ(d.status, 0) << contact_model_name(contact) << " step " << k;
    }
    if (contact == ContactModel::Penalty) EXPECT_GT(std::abs(q[0]), 0.5);  // the crank turned
  }
  EXPECT_LT(worst, 2e-3);  // measured 1.15e-3 at the start of the swing
  EXPECT_GT(open, 2e-2);
}

TEST(JointConstraints, ADirectionTheJointsCanHardlyMoveIsLeftOut) {
  // the rolling four-bar with its anchors 2 mm apart: the roll joint turns the gap out of the
  // loop's plane, so the out-of-plane row moves by ~2e-3 of the others; kept, it demanded huge
  // velocities and both solvers failed (Cassie's legs did)
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = four_bar(contact, /*rolling=*/true, /*anchor_gap=*/2e-3);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(4), tau = Eigen::Vector4d(0.5, 0.3, 0, 0);
    for (int k = 0; k < 500; ++k) {
      step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      ASSERT_EQ(d.status, 0) << contact_model_name(contact) << " step " << k;
    }
    const Eigen::Matrix3d& axes =
        contact == ContactModel::Pgs ? pgs_data(d).connection_axes[0] : ipm_data(d).connection_axes[0];
    int zero_columns = 0;
    for (int c = 0; c < 3; ++c) zero_columns += axes.col(c).isZero(0.0) ? 1 : 0;
    EXPECT_EQ(zero_columns, 1) << contact_model_name(contact) << "\n" << axes;
    // the in-plane gap is closed; what is left lies along the direction left out
    Data fk(model);
    forward_kinematics<double>(model, fk, q);
    Vector3<double> p1, p2;
    connection_points<double>(fk, model.body_connections[0], p1, p2);
    Eigen::Vector3d kept_gap = Eigen::Vector3d::Zero();
    for (int c = 0; c < 3; ++c) kept_gap[c] = axes.col(c).dot(p1 - p2);
    EXPECT_LT(kept_gap.norm(), 1e-6) << contact_model_name(contact);
    EXPECT_GT(std::abs(q[1]), 0.3) << contact_model_name(contact);  // the crank turned
    EXPECT_GT(std::abs(q[0]), 1e-3) << contact_model_name(contact);  // and the frame rolled
  }
}

TEST(JointConstraints, StepReverseModeJacobianThroughAConnectionMatchesForwardModeAD) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    const Model model = four_bar(contact);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(3), tau = Eigen::Vector3d(0.3, 0, 0);
    for (int k = 0; k < 60; ++k) step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    const Eigen::VectorXd push = Eigen::Vector3d(0.2, 0.05, -0.05);
    const Eigen::MatrixXd J_ad = test::step_jacobian_ad(model, q, v, push, 1e-3, Integrator::SemiImplicitEuler);
    const Eigen::MatrixXd J = test::step_jacobian_vjp(model, q, v, push, 1e-3, Integrator::SemiImplicitEuler);
    EXPECT_LT(relative_error(J, J_ad), 1e-7) << contact_model_name(contact) << "\n" << J << "\nAD\n" << J_ad;
  }
}

TEST(JointConstraints, ConnectionErpAdjointMatchesCentralDifferences) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    Model model = four_bar(contact);
    Data d(model);
    Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::Zero(3), tau = Eigen::Vector3d(0.3, 0, 0);
    for (int k = 0; k < 60; ++k) step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    q[2] += 0.01;  // open the loop a little, so that its Baumgarte target reads erp
    const auto [adjoint, fd] = test::erp_gradient_and_central_difference(model, q, v, tau, 5);
    EXPECT_GT(std::abs(fd), 1e-3) << contact_model_name(contact);
    EXPECT_NEAR(adjoint, fd, 1e-6 * std::max(1.0, std::abs(fd))) << contact_model_name(contact);
  }
}

TEST(JointConstraints, StepJacobianThroughJointRowsMatchesForwardModeAD) {
  // pgs and ipm: by reverse mode (one step_vjp per output); penalty: its own forward-mode terms
  const Eigen::VectorXd tau = Eigen::Vector3d(0.5, 0.2, -0.1);
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    for (const Model& model : {coupled_chain(contact), four_bar(contact)}) {
      Eigen::VectorXd q = Eigen::Vector3d(0.3, -0.2, 0.1), v = Eigen::Vector3d(0.4, 0.003, -0.2);
      Data d(model);
      if (!model.body_connections.empty()) {
        q = model.q0, v.setZero();  // a moving state on the loop
        for (int k = 0; k < 60; ++k) step<double>(model, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      }
      Eigen::MatrixXd A(6, 6), B(6, 3), none;
      step_jacobian(model, d, q, v, tau, Eigen::VectorXd(), 1e-3, Integrator::SemiImplicitEuler, A, B, none);
      const Eigen::MatrixXd J_ad = test::step_jacobian_ad(model, q, v, tau, 1e-3, Integrator::SemiImplicitEuler);
      Eigen::MatrixXd J(6, 9);
      J << A, B;
      EXPECT_LT(relative_error(J, J_ad), 1e-7) << contact_model_name(contact) << " " << model.body_connections.size();
    }
  }
}

TEST(JointConstraints, StepJacobianOfAFloatingBaseIsInTangentCoordinates) {
  // the coupled chain on a free-floating base: q has a quaternion, the Jacobian is over tangents
  const Model model = coupled_chain(ContactModel::Pgs, 0.02, /*floating=*/true);
  ASSERT_EQ(model.nq, model.nv + 1);
  Eigen::VectorXd q = model.q0, v = Eigen::VectorXd::LinSpaced(model.nv, -0.3, 0.4);
  q.segment<3>(0) = V3(0.1, -0.2, 0.3);
  q.segment<4>(3) = Eigen::Vector4d(0.1, 0.2, -0.3, 0.9).normalized();
  double slope;
  q[model.nq - 1] -= joint_coupling_error<double>(model, model.joint_couplings[0], q, slope);
  const Eigen::VectorXd tau = Eigen::VectorXd::LinSpaced(model.nv, 0.2, -0.1);
  Data d(model);
  const int nv = model.nv;
  Eigen::MatrixXd A(2 * nv, 2 * nv), B(2 * nv, nv), none;
  step_jacobian(model, d, q, v, tau, Eigen::VectorXd(), 1e-3, Integrator::SemiImplicitEuler, A, B, none);
  // central differences over (q's tangent, v), outputs as tangents of q+ and v+
  const auto run = [&](const Eigen::VectorXd& dq, const Eigen::VectorXd& dv, Eigen::VectorXd& qn, Eigen::VectorXd& vn) {
    Eigen::VectorXd q1(model.nq);
    integrate<double>(model, q, dq, q1);
    Data fresh(model);
    step<double>(model, fresh, q1, v + dv, tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  };
  Eigen::VectorXd q0n(model.nq), v0n(nv);
  run(Eigen::VectorXd::Zero(nv), Eigen::VectorXd::Zero(nv), q0n, v0n);
  Eigen::MatrixXd A_fd(2 * nv, 2 * nv);
  const double h = 1e-6;
  for (int c = 0; c < 2 * nv; ++c) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(nv), dv = dq;
    (c < nv ? dq[c] : dv[c - nv]) = h;
    Eigen::VectorXd qp(model.nq), vp(nv), qm(model.nq), vm(nv), tp(nv), tm(nv);
    run(dq, dv, qp, vp);
    run(-dq, -dv, qm, vm);
    difference<double>(model, q0n, qp, tp);
    difference<double>(model, q0n, qm, tm);
    A_fd.col(c) << (tp - tm) / (2 * h), (vp - vm) / (2 * h);
  }
  EXPECT_LT(relative_error(A, A_fd), 1e-6) << "\n" << A << "\nFD\n" << A_fd;
}

TEST(JointConstraints, UnsupportedPathsRefuseWithAClearMessage) {
  const Model pgs = coupled_chain(ContactModel::Pgs);
  EXPECT_THROW(flat::export_flat_model(pgs), ArgumentError);
  // a Data sized for fewer rows than the model now has says so instead of writing past its buffers
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm}) {
    Model grown = coupled_chain(contact);
    Data stale(grown);
    grown.frictionloss.setConstant(0.1);
    grown.joint_couplings.push_back(grown.joint_couplings[0]);
    Eigen::VectorXd q = grown.q0, v = Eigen::VectorXd::Zero(3);
    try {
      step<double>(grown, stale, q, v, v, 1e-3, Integrator::SemiImplicitEuler, q, v);
      ADD_FAILURE() << contact_model_name(contact) << ": expected an ArgumentError";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("make a new Data"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gradyn
