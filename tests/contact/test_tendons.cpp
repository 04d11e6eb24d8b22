// Fixed tendons (model.hpp, FixedTendon): a tendon over one joint with coefficient 1 steps exactly as
// that joint's own limit and spring (pgs, ipm, penalty; one with coefficient 2 and doubled bounds as
// the same constraint); a hamstring over two joints holds its range under pgs, ipm and penalty while
// torques pull it past (and leaves it without a contact model); the spring-damper's force and energy;
// the step Jacobian and step_vjp through active tendon limit rows and the spring-damper against
// forward-mode AD; couplings of tendon lengths (MJCF <equality><tendon>), one of single-joint tendons
// stepping as the joint coupling; and the builder's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../support/contact_scenes.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

using test::relative_error;
using V3 = Vector3<double>;

struct LegOptions {
  ContactModel contact = ContactModel::Pgs;
  bool hip_limit = false;  // the hip's own range [-0.4, 0.3] instead of a tendon's
  std::vector<double> coefs = {0.5, -0.5};  // the tendon over (hip, knee); {} no tendon
  double lower = -0.3, upper = 0.2;
  double stiffness = 0.0, damping = 0.0, joint_stiffness = 0.0;
  std::optional<double> spring_length;
};

// A leg hanging from the world: hip and knee hinges about y, thigh and shin 0.4 m, and a tendon over
// the first coefs.size() of them.
Model leg(const LegOptions& o) {
  ModelBuilder b;
  b.add_link({"pelvis", std::nullopt, {}});
  b.add_link({"thigh", Inertia<double>(2.0, V3(0, 0, -0.2), Matrix3<double>::Identity() * 0.03), {}});
  b.add_link({"shin", Inertia<double>(1.0, V3(0, 0, -0.2), Matrix3<double>::Identity() * 0.015), {}});
  JointSpec hip;
  hip.name = "hip", hip.parent = "pelvis", hip.child = "thigh", hip.axis = V3::UnitY();
  hip.type = o.hip_limit ? JointType::Revolute : JointType::Continuous;
  if (o.hip_limit) hip.lower = -0.4, hip.upper = 0.3;
  hip.stiffness = o.joint_stiffness;
  hip.rest = 0.1;
  hip.damping = 0.02;
  JointSpec knee;
  knee.name = "knee", knee.parent = "thigh", knee.child = "shin", knee.axis = V3::UnitY();
  knee.type = JointType::Continuous, knee.origin.p = V3(0, 0, -0.4), knee.damping = 0.02;
  b.add_joint(hip).add_joint(knee);
  if (!o.coefs.empty()) {
    TendonSpec t;
    t.name = "hamstring";
    const char* joints[] = {"hip", "knee"};
    for (size_t i = 0; i < o.coefs.size(); ++i) t.joints.push_back(joints[i]), t.coefs.push_back(o.coefs[i]);
    if (std::isfinite(o.lower)) t.lower = o.lower;
    if (std::isfinite(o.upper)) t.upper = o.upper;
    t.stiffness = o.stiffness, t.damping = o.damping, t.spring_length = o.spring_length;
    b.add_tendon(t);
  }
  Model m = b.build();
  m.contact.model = o.contact;
  return m;
}

// q and v after `steps` steps of 1 ms from rest at q = (0.1, -0.2) under a constant torque.
void run(const Model& m, int steps, const Eigen::Vector2d& tau, Eigen::VectorXd& q, Eigen::VectorXd& v,
         double* worst_length = nullptr) {
  Data d(m);
  q = Eigen::Vector2d(0.1, -0.2), v = Eigen::Vector2d::Zero();
  for (int k = 0; k < steps; ++k) {
    step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    if (worst_length) *worst_length = std::max(*worst_length, tendon_length<double>(m, m.tendons[0], q));
  }
  EXPECT_EQ(d.status, 0);
}

TEST(Tendons, OneJointWithCoefficientOneStepsAsThatJointsLimitAndSpring) {
  const Eigen::Vector2d tau(6.0, -1.0);  // drives the hip into its upper bound
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    LegOptions joint_limit{.contact = contact, .hip_limit = true, .coefs = {}, .joint_stiffness = 3.0};
    LegOptions tendon{.contact = contact, .coefs = {1.0}, .lower = -0.4, .upper = 0.3, .stiffness = 3.0,
                      .spring_length = 0.1};
    Eigen::VectorXd q_joint, v_joint, q_tendon, v_tendon;
    run(leg(joint_limit), 800, tau, q_joint, v_joint);
    run(leg(tendon), 800, tau, q_tendon, v_tendon);
    EXPECT_NEAR(q_joint[0], 0.3, 2e-3) << contact_model_name(contact);  // at its bound
    EXPECT_LT((q_tendon - q_joint).norm(), 1e-12) << contact_model_name(contact);
    EXPECT_LT((v_tendon - v_joint).norm(), 1e-12) << contact_model_name(contact);
    // coefficient 2, bounds doubled: the same constraint on a row twice as long
    LegOptions doubled = tendon;
    doubled.coefs = {2.0}, doubled.lower = -0.8, doubled.upper = 0.6, doubled.stiffness = 0.75;
    doubled.spring_length = 0.2;
    Eigen::VectorXd q2, v2;
    run(leg(doubled), 800, tau, q2, v2);
    if (contact == ContactModel::Penalty)  // a spring on L twice as long is four times as stiff on the hip
      EXPECT_NEAR(q2[0], 0.3, 2e-3);
    else
      EXPECT_LT((q2 - q_joint).norm(), 1e-6) << contact_model_name(contact);
  }
}

TEST(Tendons, AHamstringOverTwoJointsHoldsItsRange) {
  const Eigen::Vector2d tau(4.0, -3.0);  // both pull the length 0.5 hip - 0.5 knee up
  double free_length = -1e9;
  Eigen::VectorXd q, v;
  run(leg({.contact = ContactModel::None}), 1000, tau, q, v, &free_length);
  EXPECT_GT(free_length, 0.6);  // without a contact model nothing holds it (as the joint limits)
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    double worst = -1e9;
    run(leg({.contact = contact}), 1000, tau, q, v, &worst);
    const Model m = leg({.contact = contact});
    const double length = tendon_length<double>(m, m.tendons[0], q);
    // pgs and ipm: Baumgarte leaves the slop; penalty: the load over limit_stiffness
    const double tolerance = contact == ContactModel::Penalty ? 4e-3 : 2e-4;
    EXPECT_LT(worst, 0.2 + tolerance) << contact_model_name(contact);
    EXPECT_GT(length, 0.2 - tolerance) << contact_model_name(contact);  // it ends on its bound
  }
}

TEST(Tendons, SpringDamperForceAndEnergy) {
  Model m = leg({.contact = ContactModel::None, .lower = -INFINITY, .upper = INFINITY, .stiffness = 40.0,
                 .damping = 1.5, .spring_length = 0.05});
  m.gravity.setZero();
  Data d(m);
  const Eigen::Vector2d q(0.3, -0.4), v(0.7, 0.2);
  const double length = 0.5 * 0.3 + 0.5 * 0.4, rate = 0.5 * 0.7 - 0.5 * 0.2;
  const double tension = 40.0 * (length - 0.05) + 1.5 * rate;
  const Eigen::VectorXd tau = passive_forces<double>(m, d, q, v);
  EXPECT_NEAR(tau[0], -0.02 * 0.7 - 0.5 * tension, 1e-12);
  EXPECT_NEAR(tau[1], -0.02 * 0.2 + 0.5 * tension, 1e-12);
  EXPECT_NEAR(potential_energy<double>(m, d, q), 0.5 * 40.0 * (length - 0.05) * (length - 0.05), 1e-12);
  // spring length by default: the length at the joints' spring rest (q_rest: hip 0.1, knee 0)
  const Model rest = leg({.contact = ContactModel::None, .stiffness = 1.0});
  EXPECT_NEAR(rest.tendons[0].spring_length, 0.05, 1e-15);
}

TEST(Tendons, StepJacobianAndVjpThroughLimitRowsAndTheSpringMatchForwardModeAD) {
  const double dt = 1e-3;
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    const Model m = leg({.contact = contact, .stiffness = 20.0, .damping = 0.8});
    // 1 mm past the upper bound and moving on into it: an active row (pgs, ipm), a pushing spring (penalty)
    const Eigen::VectorXd q = Eigen::Vector2d(0.302, -0.1);
    const Eigen::VectorXd v = Eigen::Vector2d(0.5, -0.3), tau = Eigen::Vector2d(2.0, -1.0);
    const Eigen::MatrixXd J_ad = test::step_jacobian_ad(m, q, v, tau, dt, Integrator::SemiImplicitEuler);
    const Eigen::MatrixXd J_vjp = test::step_jacobian_vjp(m, q, v, tau, dt, Integrator::SemiImplicitEuler);
    EXPECT_LT(relative_error(J_vjp, J_ad), 1e-7) << contact_model_name(contact) << "\n" << J_vjp << "\nAD\n" << J_ad;
    Data d(m);
    Eigen::MatrixXd A(4, 4), B(4, 2), none;
    step_jacobian(m, d, q, v, tau, Eigen::VectorXd(), dt, Integrator::SemiImplicitEuler, A, B, none);
    Eigen::MatrixXd J(4, 6);
    J << A, B;
    EXPECT_LT(relative_error(J, J_ad), 1e-7) << contact_model_name(contact) << "\n" << J << "\nAD\n" << J_ad;
    // the row is active: the tendon changes the Jacobian
    const Eigen::MatrixXd J_free = test::step_jacobian_ad(leg({.contact = contact, .coefs = {}}), q, v, tau, dt,
                                                          Integrator::SemiImplicitEuler);
    EXPECT_GT(relative_error(J_free, J_ad), 1e-3) << contact_model_name(contact);
  }
}

// The leg with its knee coupled to its hip by knee - ref = p(hip - ref): as a joint coupling, or as a
// coupling of the lengths of two tendons (MJCF <equality><tendon>): "shin" over the knee alone and
// "thigh" over the hip alone (the same constraint), or "hamstring" (0.5 hip - 0.5 knee) led by
// "thigh" (two tendons sharing the hip).
enum class Coupled { Joints, SingleJointTendons, Hamstring };
Model coupled_leg(ContactModel contact, Coupled how) {
  ModelBuilder b;
  b.add_link({"pelvis", std::nullopt, {}});
  b.add_link({"thigh", Inertia<double>(2.0, V3(0, 0, -0.2), Matrix3<double>::Identity() * 0.03), {}});
  b.add_link({"shin", Inertia<double>(1.0, V3(0, 0, -0.2), Matrix3<double>::Identity() * 0.015), {}});
  JointSpec hip;
  hip.name = "hip", hip.parent = "pelvis", hip.child = "thigh", hip.axis = V3::UnitY(), hip.type = JointType::Continuous;
  hip.reference = 0.1;
  JointSpec knee = hip;
  knee.name = "knee", knee.parent = "thigh", knee.child = "shin", knee.origin.p = V3(0, 0, -0.4), knee.reference = -0.2;
  b.add_joint(hip).add_joint(knee);
  JointCouplingSpec c;
  c.name = "cam", c.polycoef = {0.02, -0.8, 0.6, 0.3, 0.0};
  if (how == Coupled::Joints) {
    c.joint1 = "knee", c.joint2 = "hip";
  } else {
    const auto tendon = [&](const char* name, std::vector<std::string> joints, std::vector<double> coefs) {
      TendonSpec t;
      t.name = name, t.joints = std::move(joints), t.coefs = std::move(coefs);
      b.add_tendon(t);
    };
    tendon("thigh", {"hip"}, {1.0});
    if (how == Coupled::SingleJointTendons)
      tendon("shin", {"knee"}, {1.0});
    else
      tendon("hamstring", {"hip", "knee"}, {0.5, -0.5});
    c.tendons = true, c.joint1 = how == Coupled::SingleJointTendons ? "shin" : "hamstring", c.joint2 = "thigh";
  }
  b.add_joint_coupling(c);
  Model m = b.build();
  m.contact.model = contact;
  return m;
}

TEST(Tendons, ACouplingOfSingleJointTendonsStepsAsTheJointCoupling) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    const Model joints = coupled_leg(contact, Coupled::Joints), tendons = coupled_leg(contact, Coupled::SingleJointTendons);
    ASSERT_TRUE(tendons.joint_couplings[0].tendons);
    EXPECT_EQ(tendons.joint_couplings[0].q1_ref, joints.joint_couplings[0].q1_ref);  // the lengths at q0
    Data dj(joints), dt(tendons);
    Eigen::VectorXd qj = joints.q0, vj = Eigen::Vector2d::Zero(), qt = qj, vt = vj;
    const Eigen::Vector2d tau(1.5, -0.5);
    for (int k = 0; k < 300; ++k) {
      step<double>(joints, dj, qj, vj, tau, 1e-3, Integrator::SemiImplicitEuler, qj, vj);
      step<double>(tendons, dt, qt, vt, tau, 1e-3, Integrator::SemiImplicitEuler, qt, vt);
    }
    EXPECT_LT((qt - qj).norm() + (vt - vj).norm(), 1e-12) << contact_model_name(contact);
    EXPECT_GT(std::abs(qj[0] - joints.q0[0]), 0.05) << contact_model_name(contact);  // it moved
  }
}

TEST(Tendons, ATendonCouplingHoldsAndItsStepJacobianMatchesForwardModeAD) {
  const double dt = 1e-3;
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    const Model m = coupled_leg(contact, Coupled::Hamstring);
    Data d(m);
    Eigen::VectorXd q = m.q0, v = Eigen::Vector2d::Zero();
    const Eigen::VectorXd tau = Eigen::Vector2d(1.5, -0.5);
    double slope, worst = 0.0;
    for (int k = 0; k < 300; ++k) {
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      worst = std::max(worst, std::abs(joint_coupling_error<double>(m, m.joint_couplings[0], q, slope)));
    }
    // it starts 0.02 off (c0): pgs and ipm close the gap within a few steps, penalty to its spring's sag
    EXPECT_LT(std::abs(joint_coupling_error<double>(m, m.joint_couplings[0], q, slope)),
              contact == ContactModel::Penalty ? 1e-3 : 1e-6)
        << contact_model_name(contact) << " worst " << worst;
    const Eigen::MatrixXd J_ad = test::step_jacobian_ad(m, q, v, tau, dt, Integrator::SemiImplicitEuler);
    const Eigen::MatrixXd J_vjp = test::step_jacobian_vjp(m, q, v, tau, dt, Integrator::SemiImplicitEuler);
    EXPECT_LT(relative_error(J_vjp, J_ad), 1e-7) << contact_model_name(contact) << "\n" << J_vjp << "\nAD\n" << J_ad;
  }
}

TEST(Tendons, TheBuilderRefusesWhatItCannotSimulate) {
  const auto message = [](const std::function<void(TendonSpec&)>& change) {
    ModelBuilder b;
    b.add_link({"base", std::nullopt, {}});
    b.add_link({"a", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.01), {}});
    b.add_link({"ball", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.01), {}});
    JointSpec j;
    j.name = "hinge", j.parent = "base", j.child = "a", j.type = JointType::Revolute, j.axis = V3::UnitZ();
    b.add_joint(j);
    j.name = "socket", j.parent = "a", j.child = "ball", j.type = JointType::Spherical;
    b.add_joint(j);
    TendonSpec t;
    t.name = "t", t.joints = {"hinge"}, t.coefs = {1.0};
    change(t);
    b.add_tendon(t);
    try {
      b.build();
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    return std::string("built");
  };
  EXPECT_EQ(message([](TendonSpec&) {}), "built");
  EXPECT_NE(message([](TendonSpec& t) { t.joints = {"elbow"}; }).find("unknown joint 'elbow'"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.joints = {"socket"}, t.coefs = {1.0}; }).find("hinge and slide joints only"),
            std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.joints = {"hinge", "hinge"}, t.coefs = {1.0, 2.0}; }).find("twice"),
            std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.coefs = {1.0, 2.0}; }).find("one coefficient per joint"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.joints.clear(), t.coefs.clear(); }).find("spans no joint"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.lower = 0.5, t.upper = 0.1; }).find("is above upper bound"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.damping = -1.0; }).find("must be finite and >= 0"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.coefs = {NAN}; }).find("must be finite"), std::string::npos);
  EXPECT_NE(message([](TendonSpec& t) { t.joints = {"hinge"}; }).find("built"), std::string::npos);
}

}  // namespace
}  // namespace gradyn
