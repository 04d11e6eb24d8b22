// Velocity-level (PGS) contact in the semi-implicit Euler step: resting contact without drift, the
// friction cone on an incline (slide below the friction angle, stick above it), restitution, the
// RK4 refusal (forward and adjoint), settings validation, and a diverged step that the warm start
// must not carry into the next.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../support/laikago_scene.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

using V3 = Vector3<double>;

GeomSpec geom(GeomType type, V3 size, double friction = 1.0, double restitution = 0.0) {
  GeomSpec g;
  g.type = type;
  g.size = size;
  g.friction = friction;
  g.restitution = restitution;
  return g;
}

// One free body of mass `mass` carrying `body_geom`, above a ground plane.
Model free_body_on_plane(const GeomSpec& body_geom, double mass, double friction, double restitution = 0.0) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {geom(GeomType::Plane, V3::Zero(), friction, restitution)}});
  const double I = 0.4 * mass * 0.1 * 0.1;
  b.add_link({"body", Inertia<double>(mass, V3::Zero(), Matrix3<double>::Identity() * I), {}, {body_geom}});
  JointSpec j;
  j.name = "free";
  j.type = JointType::Free;
  j.parent = "world";
  j.child = "body";
  b.add_joint(j);
  Model m = b.build();
  m.contact.model = ContactModel::Pgs;
  return m;
}

Eigen::VectorXd at_height(const Model& m, double z) {
  Eigen::VectorXd q = m.q0;
  q.segment<3>(m.idx_q[0]) = V3(0, 0, z);
  return q;
}

void simulate(const Model& m, Data& d, Eigen::VectorXd& q, Eigen::VectorXd& v, double dt, int steps) {
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(m.nv);
  for (int t = 0; t < steps; ++t) step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
  ASSERT_EQ(d.status, kStatusOk);
}

TEST(PgsContact, SphereRestsOnPlane) {
  const double r = 0.1;
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0)), 1.0, 0.8);
  Data d(m);
  Eigen::VectorXd q = at_height(m, r), v = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd q_start = q;
  simulate(m, d, q, v, 1e-3, 10000);
  EXPECT_EQ(d.ncontacts, 1);
  EXPECT_TRUE(pgs_data(d).result.converged);
  EXPECT_LE((q.head<3>() - q_start.head<3>()).norm(), 1e-4);
  EXPECT_NEAR(pgs_data(d).lambda[0], 9.81 * 1e-3, 1e-6) << "the normal impulse carries the weight";
}

// A step that diverges (a NaN torque) must not spoil the steps after it through the warm start: the
// next step equals the one a fresh Data takes (no impulses remembered), bit for bit.
TEST(PgsContact, ADivergedStepIsNotRememberedByTheWarmStart) {
  const double r = 0.1;
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0)), 1.0, 0.8);
  Data d(m), fresh(m);
  const Eigen::VectorXd q = at_height(m, r - 1e-4);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(6), q_next(7), v_next(6), q_ref(7), v_ref(6);
  v[0] = 0.5;  // sliding: normal and friction rows at work
  Eigen::VectorXd tau = Eigen::VectorXd::Zero(6);
  tau[0] = std::numeric_limits<double>::quiet_NaN();
  step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q_next, v_next);
  ASSERT_TRUE(d.status & kStatusNonFinite);
  tau[0] = 0.0;
  step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q_next, v_next);
  step<double>(m, fresh, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q_ref, v_ref);
  ASSERT_TRUE(v_next.allFinite());
  EXPECT_EQ(v_next, v_ref);
  EXPECT_EQ(q_next, q_ref);
}

TEST(PgsContact, BoxRestsOnPlane) {
  const double hz = 0.05;
  Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, hz)), 1.0, 0.8);
  Data d(m);
  Eigen::VectorXd q = at_height(m, hz), v = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd q_start = q;
  simulate(m, d, q, v, 1e-3, 10000);
  EXPECT_EQ(d.ncontacts, 4);
  EXPECT_LE((q.head<3>() - q_start.head<3>()).norm(), 1e-4);
  EXPECT_NEAR(std::abs(q[6]), 1.0, 1e-6);  // still level
}

// Gravity tilted by theta about y is a plane inclined by theta: below the friction angle the box
// slides with a = g (sin theta - mu cos theta); above it, it sticks.
TEST(PgsContact, BoxOnInclineSlidesOrSticks) {
  const double theta = 0.3, g = 9.81, T = 2.0, dt = 1e-3;
  for (double mu : {0.1, 0.6}) {
    Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05), mu), 1.0, mu);
    m.gravity = V3(g * std::sin(theta), 0, -g * std::cos(theta));
    Data d(m);
    Eigen::VectorXd q = at_height(m, 0.05), v = Eigen::VectorXd::Zero(6);
    simulate(m, d, q, v, dt, static_cast<int>(T / dt));
    const double travelled = q[0];
    if (mu < std::tan(theta)) {
      const double a = g * (std::sin(theta) - mu * std::cos(theta));
      EXPECT_NEAR(travelled, 0.5 * a * T * T, 0.03 * 0.5 * a * T * T) << "mu " << mu;
    } else {
      EXPECT_LE(std::abs(travelled), 1e-3) << "mu " << mu;
    }
    EXPECT_NEAR(q[1], 0.0, 1e-6) << "sideways drift";
  }
}

TEST(PgsContact, BallBouncesToRestitutionSquaredHeight) {
  const double r = 0.05, h = 1.0, dt = 1e-3;
  for (double e : {0.5, 0.8}) {
    Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0), 0.5, e), 1.0, 0.5, e);
    Data d(m);
    Eigen::VectorXd q = at_height(m, r + h), v = Eigen::VectorXd::Zero(6);
    const Eigen::VectorXd tau = Eigen::VectorXd::Zero(6);
    bool bounced = false;
    double apex = 0.0;
    for (int t = 0; t < 2500; ++t) {
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      if (v[2] > 0.0) bounced = true;
      if (bounced) apex = std::max(apex, q[2] - r);
      if (bounced && v[2] < 0.0) break;  // past the first apex
    }
    ASSERT_TRUE(bounced);
    EXPECT_NEAR(apex, e * e * h, 0.1 * e * e * h) << "e " << e;
  }
}

TEST(PgsContact, Rk4IsRefused) {
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), 1.0, 1.0);
  Data d(m);
  Eigen::VectorXd q = at_height(m, 0.1), v = Eigen::VectorXd::Zero(6), tau = v;
  Eigen::VectorXd qn = q, vn = v;
  EXPECT_THROW(step<double>(m, d, q, v, tau, 1e-3, Integrator::RK4, qn, vn), ArgumentError);
}

TEST(PgsContact, BadSettingsAreRejected) {
  auto expect_error = [](ContactSettings s, const std::string& field) {
    try {
      check_contact_settings(s);
      ADD_FAILURE() << "no error for " << field;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  ContactSettings s;
  s.model = ContactModel::Pgs;
  EXPECT_NO_THROW(check_contact_settings(s));
  ContactSettings bad = s;
  bad.pgs_iterations = 0;
  expect_error(bad, "pgs_iterations");
  bad = s;
  bad.erp = 1.5;
  expect_error(bad, "erp");
  bad = s;
  bad.cfm = -1.0;
  expect_error(bad, "cfm");
  bad = s;
  bad.pgs_tolerance = std::nan("");
  expect_error(bad, "pgs_tolerance");
  bad = s;
  bad.restitution_threshold = -0.1;
  expect_error(bad, "restitution_threshold");
  bad = s;
  bad.slop = -1e-3;
  expect_error(bad, "slop");
}

TEST(PgsContact, AdjointsRefuseRk4) {
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), 1.0, 1.0);
  Data d(m);
  Eigen::VectorXd q = at_height(m, 0.1), v = Eigen::VectorXd::Zero(6), tau = v;
  Eigen::VectorXd qb = Eigen::VectorXd::Zero(m.nq), vb = Eigen::VectorXd::Zero(6), taub = vb;
  ModelTangent mb(m);
  // gradients through PGS: tests/contact/test_pgs_contact_vjp.cpp; RK4 has no PGS step to differentiate
  EXPECT_THROW(step_vjp<double>(m, d, q, v, tau, 1e-3, Integrator::RK4, qb, vb, qb, vb, taub, mb), ArgumentError);
}

}  // namespace
}  // namespace gradyn

namespace gradyn {
namespace {

// A quadruped started 6 cm into the ground under its stance controller rises to its standing height
// without being launched: the Baumgarte separation velocity is capped (max_correction_velocity).
// The penalty model holds the same bound through its spring (checked alongside).
TEST(DeepStart, AQuadrupedSixCentimetresDeepRisesWithoutALaunch) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    SCOPED_TRACE(contact_model_name(contact));
    test::LaikagoScene s = test::laikago_standing(contact);
    if (contact == ContactModel::Penalty) s.model.contact.velocity_scale = 0.3;  // the scene's penalty setting
    const Model& m = s.model;
    const Eigen::VectorXd stance = s.q;
    Eigen::VectorXd q = s.q, v = Eigen::VectorXd::Zero(m.nv), tau(m.nv);
    q[2] -= 0.06;
    Data d(m);
    double peak = 0;
    for (int t = 0; t < 1500; ++t) {  // 1.5 s under the stance PD (kp 150, kd 5) on the 12 leg joints
      tau.setZero();
      for (int i = 1; i < m.nbodies(); ++i) {
        const int iq = m.idx_q[i], iv = m.idx_v[i];
        tau[iv] = 150.0 * (stance[iq] - q[iq]) - 5.0 * v[iv];
      }
      step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
      peak = std::max(peak, v.head<3>().norm());
    }
    EXPECT_LT(peak, 1.0);                           // [m/s] the base's speed
    EXPECT_NEAR(q[2], stance[2], 0.03);             // standing again
    EXPECT_GT(q.segment<4>(3).normalized()[3], 0.99);  // upright (quaternion w)
  }
}

}  // namespace
}  // namespace gradyn
