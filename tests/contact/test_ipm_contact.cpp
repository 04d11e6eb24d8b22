// Interior-point (paper 000 mixed LCP) contact in the semi-implicit Euler step: resting contact
// without drift, the friction cone on an incline, restitution, agreement with PGS, the relaxation
// kappa, non-convergence reported in Data::status, forward-mode derivatives through the solve
// against central differences, joint-limit rows (after the contact rows; the same steps as PGS where
// the LCP has one solution), the RK4 refusal and settings validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "../support/ad_jacobian.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/errors.hpp"
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

// One free body of mass `mass` carrying `body_geom`, above a ground plane; Ipm contact.
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
  m.contact.model = ContactModel::Ipm;
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
}

TEST(IpmContact, SphereRestsOnPlane) {
  const double r = 0.1, dt = 1e-3;
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0)), 1.0, 0.8);
  Data d(m);
  Eigen::VectorXd q = at_height(m, r), v = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd q_start = q;
  simulate(m, d, q, v, dt, 10000);  // 10 s
  EXPECT_EQ(d.status, kStatusOk);
  EXPECT_EQ(d.ncontacts, 1);
  EXPECT_TRUE(ipm_data(d).result.converged);
  EXPECT_LE((q.head<3>() - q_start.head<3>()).norm(), 1e-4);
  EXPECT_NEAR(ipm_data(d).z[0], 9.81 * dt, 1e-8) << "the normal impulse carries the weight";
  EXPECT_LE(v.norm(), 1e-8);
}

TEST(IpmContact, BoxRestsOnPlane) {
  const double hz = 0.05, dt = 1e-3;
  Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, hz)), 1.0, 0.8);
  Data d(m);
  Eigen::VectorXd q = at_height(m, hz), v = Eigen::VectorXd::Zero(6);
  const Eigen::VectorXd q_start = q;
  simulate(m, d, q, v, dt, 10000);
  EXPECT_EQ(d.status, kStatusOk);
  EXPECT_EQ(d.ncontacts, 4);
  EXPECT_LE((q.head<3>() - q_start.head<3>()).norm(), 1e-4);
  EXPECT_NEAR(std::abs(q[6]), 1.0, 1e-6);  // still level
  EXPECT_NEAR(ipm_data(d).z.head(4).sum(), 9.81 * dt, 1e-8) << "the normal impulses carry the weight";
}

// Gravity tilted by theta about y is a plane inclined by theta: below the friction angle the box
// slides with a = g (sin theta - mu cos theta); above it, it sticks. Both with 4 and 8 directions
// (the slope direction x is one of them: the exact Coulomb law holds along it).
TEST(IpmContact, BoxOnInclineSlidesOrSticks) {
  const double theta = 0.3, g = 9.81, T = 2.0, dt = 1e-3;
  for (int directions : {4, 8}) {
    for (double mu : {0.1, 0.6}) {
      Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05), mu), 1.0, mu);
      m.gravity = V3(g * std::sin(theta), 0, -g * std::cos(theta));
      m.contact.ipm_friction_directions = directions;
      Data d(m);
      Eigen::VectorXd q = at_height(m, 0.05), v = Eigen::VectorXd::Zero(6);
      simulate(m, d, q, v, dt, static_cast<int>(T / dt));
      EXPECT_EQ(d.status, kStatusOk) << "mu " << mu << " N " << directions;
      const double travelled = q[0];
      if (mu < std::tan(theta)) {
        const double a = g * (std::sin(theta) - mu * std::cos(theta));
        EXPECT_NEAR(travelled, 0.5 * a * T * T, 0.01 * 0.5 * a * T * T) << "mu " << mu << " N " << directions;
      } else {
        EXPECT_LE(std::abs(travelled), 1e-4) << "mu " << mu << " N " << directions;
      }
      EXPECT_NEAR(q[1], 0.0, 1e-6) << "sideways drift";
    }
  }
}

// Sliding at 45 degrees between two of the 4 directions: the inscribed square cone holds
// cos(pi / 4) mu lambda_n there, the 8-gon mu lambda_n (45 degrees is one of its directions).
TEST(IpmContact, DiagonalSlidingShowsThePolyhedralCone) {
  const double g = 9.81, mu = 0.5, dt = 1e-3, v0 = 2.0;
  for (int directions : {4, 8}) {
    Model m = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0), mu), 1.0, mu);
    m.contact.ipm_friction_directions = directions;
    Data d(m);
    Eigen::VectorXd q = at_height(m, 0.1), v = Eigen::VectorXd::Zero(6);
    // One step of a sphere sliding along (1, 1): its friction impulse from the change of linear
    // momentum (the spin the impulse starts is far too small to stop the slip within the step).
    v[0] = v[1] = v0 / std::sqrt(2.0);
    Eigen::VectorXd qn = q, vn = v;
    step<double>(m, d, q, v, Eigen::VectorXd::Zero(6), dt, Integrator::SemiImplicitEuler, qn, vn);
    ASSERT_TRUE(ipm_data(d).result.converged);
    const double normal = ipm_data(d).z[0];
    EXPECT_NEAR(normal, g * dt, 1e-8);  // s_n = v_z+ <= tolerance / lambda_n
    // Body-frame linear velocity = world at identity orientation. Friction along -(1, 1)/sqrt 2.
    const double friction = (v.head<2>() - vn.head<2>()).norm();
    const double expected = (directions == 4 ? std::cos(M_PI / 4) : 1.0) * mu * normal;
    EXPECT_NEAR(friction, expected, 1e-9) << "N " << directions;
  }
}

TEST(IpmContact, BallBouncesToRestitutionSquaredHeight) {
  const double r = 0.05, h = 1.0, dt = 1e-3;
  for (double e : {0.5, 0.8}) {
    Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0), 0.5, e), 1.0, 0.5, e);
    Data d(m);
    Eigen::VectorXd q = at_height(m, r + h), v = Eigen::VectorXd::Zero(6);
    const Eigen::VectorXd tau = Eigen::VectorXd::Zero(6);
    bool bounced = false;
    double apex = 0.0, impact_speed = 0.0, rebound_speed = 0.0;
    for (int t = 0; t < 2500; ++t) {
      const double vz = v[2];
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      if (!bounced && v[2] > 0.0) {
        bounced = true;
        impact_speed = -vz;
        rebound_speed = v[2];
      }
      if (bounced) apex = std::max(apex, q[2] - r);
      if (bounced && v[2] < 0.0) break;  // past the first apex
    }
    ASSERT_TRUE(bounced);
    EXPECT_EQ(d.status, kStatusOk);
    EXPECT_NEAR(rebound_speed, e * impact_speed, 1e-6) << "e " << e;
    EXPECT_NEAR(apex, e * e * h, 0.1 * e * e * h) << "e " << e;
  }
}

// Where the two cones coincide (resting; sliding along a tangent axis) PGS and the interior point
// solve the same LCP: same trajectories up to the solvers' tolerances. (The box starts 5e-5 deep,
// within the slop: at depth 0 a solver's 1e-8 m/s of separation may lose the contact for a step.)
TEST(IpmContact, AgreesWithPgs) {
  const double theta = 0.3, g = 9.81, dt = 1e-3;
  for (double mu : {0.1, 0.6}) {
    Model ipm = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05), mu), 1.0, mu);
    ipm.gravity = V3(g * std::sin(theta), 0, -g * std::cos(theta));
    ipm.contact.ipm_tolerance = 1e-13;
    Model pgs = ipm;
    pgs.contact.model = ContactModel::Pgs;
    pgs.contact.pgs_iterations = 1000;
    pgs.contact.pgs_tolerance = 1e-14;
    Data di(ipm), dp(pgs);
    Eigen::VectorXd qi = at_height(ipm, 0.05 - 5e-5), vi = Eigen::VectorXd::Zero(6);
    Eigen::VectorXd qp = qi, vp = vi;
    double worst_q = 0.0, worst_v = 0.0;
    for (int t = 0; t < 500; ++t) {
      simulate(ipm, di, qi, vi, dt, 1);
      simulate(pgs, dp, qp, vp, dt, 1);
      worst_q = std::max(worst_q, (qi - qp).lpNorm<Eigen::Infinity>());
      worst_v = std::max(worst_v, (vi - vp).lpNorm<Eigen::Infinity>());
    }
    EXPECT_EQ(di.status, kStatusOk);
    EXPECT_EQ(di.ncontacts, 4);
    EXPECT_LE(worst_q, 1e-9) << "mu " << mu;
    EXPECT_LE(worst_v, 1e-9) << "mu " << mu;
    if (mu < std::tan(theta))
      EXPECT_GT(vi[0], 0.5) << "slides";
    else
      EXPECT_LT(std::abs(vi[0]), 1e-9) << "sticks";
  }
}

// Joint limits are rows after the contact rows: G = -J_l (J_l = -e_k for an upper limit), -cfm on
// the diagonal, lambda_l >= 0 pushing back into range.
TEST(IpmContact, LimitRowsFollowTheContactRows) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {geom(GeomType::Plane, V3::Zero())}});
  GeomSpec ball = geom(GeomType::Sphere, V3(0.05, 0, 0));
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
  m.contact.model = ContactModel::Ipm;
  m.contact.cfm = 1e-6;
  Data d(m);
  // the slide 2 slops past its upper limit, still driving into it; the arm's ball about 1 mm deep
  Eigen::VectorXd q(2), v = Eigen::VectorXd::Zero(2), tau = v, qn(2), vn(2);
  q << 2e-4, std::asin(0.125) + 0.0025;
  v << 0.3, 0.0;
  step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  EXPECT_EQ(d.status, kStatusOk);
  ASSERT_EQ(d.ncontacts, 1);
  ASSERT_EQ(ipm_data(d).nlimits, 1);
  EXPECT_EQ(ipm_data(d).limit_coord[0], 0);
  EXPECT_EQ(ipm_data(d).limit_side[0], -1);
  const int row = (m.contact.ipm_friction_directions + 2) * d.ncontacts;
  ASSERT_EQ(ipm_data(d).problem.n_ineq(), row + 1);
  EXPECT_EQ(Eigen::Vector2d(ipm_data(d).problem.G.row(row).transpose()), Eigen::Vector2d(1.0, 0.0));
  EXPECT_EQ(ipm_data(d).problem.F(row, row), -m.contact.cfm);
  // Baumgarte on the violation beyond the slop: target erp / dt (2e-4 - 1e-4)
  EXPECT_NEAR(ipm_data(d).problem.m[row], -m.contact.erp / 1e-3 * (2e-4 - m.contact.slop), 1e-12);
  EXPECT_GT(ipm_data(d).z[row], 0.0) << "the limit pushes back";
  EXPECT_GT(ipm_data(d).z[0], 0.0) << "the floor pushes the ball";
  EXPECT_LT(qn[0], 2e-4) << "moving back into range";
  EXPECT_NEAR(-vn[0], m.contact.erp / 1e-3 * (2e-4 - m.contact.slop), 1e-6) << "at the Baumgarte rate";
}

// Limits alone (no contact): the LCP on the limit rows has one solution, so PGS and the interior
// point give the same steps. A two-link arm flung down under gravity comes to rest on the shoulder's
// and the elbow's upper limits (both rows active at once, coupled through M).
TEST(IpmContact, LimitStepsAgreeWithPgs) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  const Inertia<double> link(1.0, V3(0.25, 0, 0), Eigen::Vector3d(1e-3, 0.02, 0.02).asDiagonal().toDenseMatrix());
  b.add_link({"upper", link, {}});
  b.add_link({"lower", link, {}});
  JointSpec shoulder;
  shoulder.name = "shoulder", shoulder.type = JointType::Revolute, shoulder.parent = "world", shoulder.child = "upper";
  shoulder.axis = V3::UnitY();
  shoulder.lower = -1.0, shoulder.upper = 0.4;
  JointSpec elbow;
  elbow.name = "elbow", elbow.type = JointType::Revolute, elbow.parent = "upper", elbow.child = "lower";
  elbow.origin.p = V3(0.5, 0, 0);
  elbow.axis = V3::UnitY();
  elbow.lower = -0.3, elbow.upper = 0.8;  // hanging freely the elbow would bend to 1.17
  b.add_joint(shoulder).add_joint(elbow);
  Model ipm = b.build();
  ipm.contact.model = ContactModel::Ipm;
  ipm.contact.ipm_tolerance = 1e-13;
  Model pgs = ipm;
  pgs.contact.model = ContactModel::Pgs;
  pgs.contact.pgs_iterations = 1000;
  pgs.contact.pgs_tolerance = 1e-14;
  Data di(ipm), dp(pgs);
  Eigen::VectorXd qi(2), vi(2);
  qi << 0.0, 0.0;
  vi << 0.5, 2.0;
  Eigen::VectorXd qp = qi, vp = vi;
  double worst = 0.0;
  int both_active = 0;
  for (int t = 0; t < 1500; ++t) {
    simulate(ipm, di, qi, vi, 1e-3, 1);
    simulate(pgs, dp, qp, vp, 1e-3, 1);
    EXPECT_EQ(ipm_data(di).nlimits, pgs_data(dp).nlimits) << "step " << t;
    both_active += ipm_data(di).nlimits == 2;
    worst = std::max({worst, (qi - qp).lpNorm<Eigen::Infinity>(), (vi - vp).lpNorm<Eigen::Infinity>()});
  }
  EXPECT_EQ(di.status, kStatusOk);
  EXPECT_GT(both_active, 100) << "both limits held together";
  EXPECT_NEAR(qi[0], 0.4, ipm.contact.slop + 1e-9);
  EXPECT_NEAR(qi[1], 0.8, ipm.contact.slop + 1e-9);
  EXPECT_LE(worst, 1e-8);
}

// kappa > 0: every complementarity pair stops at s z = kappa. A resting sphere touching the floor
// (depth 0, no Baumgarte target) leaves with separation velocity kappa / lambda_n instead of 0.
TEST(IpmContact, KappaGivesASlightlySoftContact) {
  const double r = 0.1, dt = 1e-3;
  for (double kappa : {0.0, 1e-7, 1e-6}) {
    Model m = free_body_on_plane(geom(GeomType::Sphere, V3(r, 0, 0)), 1.0, 0.8);
    m.contact.ipm_kappa = kappa;
    Data d(m);
    Eigen::VectorXd q = at_height(m, r), v = Eigen::VectorXd::Zero(6), qn = q, vn = v;
    step<double>(m, d, q, v, Eigen::VectorXd::Zero(6), dt, Integrator::SemiImplicitEuler, qn, vn);
    ASSERT_TRUE(ipm_data(d).result.converged) << kappa;
    const double lambda_n = ipm_data(d).z[0];
    EXPECT_NEAR(vn[2] * lambda_n, kappa, m.contact.ipm_tolerance) << kappa;  // s_n = v_z+ (target 0)
    EXPECT_GE(vn[2], -m.contact.ipm_tolerance);  // s_n >= 0, to the residual tolerance
    EXPECT_NEAR(lambda_n, 9.81 * dt + vn[2], 1e-10) << kappa;  // the impulse also lifts it
    // Over a second with a margin that keeps the contact active, it hovers just above the floor
    // (gap ~ dt kappa / lambda_n) instead of resting on it.
    Model hover = m;
    hover.contact.margin = 1e-3;
    Data dh(hover);
    Eigen::VectorXd qh = q, vh = v;
    simulate(hover, dh, qh, vh, dt, 1000);
    EXPECT_EQ(dh.status, kStatusOk);
    const double gap = qh[2] - r;
    const double expected_gap = dt * kappa / (9.81 * dt);
    EXPECT_NEAR(gap, expected_gap, 0.02 * expected_gap + 1e-10) << kappa;
  }
}

// contact.ipm_warm_start: along a box's slide-then-stick trajectory every warm-started step is close to
// the cold step from the same state, in fewer Newton iterations. Not to 1e-10: four contacts under a
// box over-constrain it, and residuals of 1e-10 leave v+ uncertain to ~1e-7 m/s there (the stopping
// point, which now depends on the previous step, decides).
TEST(IpmContact, WarmStartGivesTheSameStepsInFewerIterations) {
  Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05)), 1.0, 0.5);
  Model m_warm = m;
  m_warm.contact.ipm_warm_start = true;
  Data cold(m), warm(m_warm);
  Eigen::VectorXd q = at_height(m, 0.0499), v = Eigen::VectorXd::Zero(6), tau = Eigen::VectorXd::Zero(6);
  v[0] = 0.05;  // slides, then sticks
  Eigen::VectorXd qc = q, vc = v, qw = q, vw = v;
  int cold_iterations = 0, warm_iterations = 0;
  double worst = 0.0;
  for (int t = 0; t < 200; ++t) {
    step<double>(m, cold, qw, vw, tau, 1e-3, Integrator::SemiImplicitEuler, qc, vc);
    step<double>(m_warm, warm, qw, vw, tau, 1e-3, Integrator::SemiImplicitEuler, qw, vw);
    ASSERT_TRUE(ipm_data(cold).result.converged);
    ASSERT_TRUE(ipm_data(warm).result.converged);
    ASSERT_EQ(warm.ncontacts, 4);
    cold_iterations += ipm_data(cold).result.iterations;
    warm_iterations += ipm_data(warm).result.iterations;
    worst = std::max(worst, (vw - vc).lpNorm<Eigen::Infinity>());
    EXPECT_LT((vw - vc).lpNorm<Eigen::Infinity>(), 1e-6) << "step " << t;
    EXPECT_LT((qw - qc).lpNorm<Eigen::Infinity>(), 1e-9) << "step " << t;
  }
  EXPECT_LT(vw.norm(), 1e-3) << "the box came to rest";
  RecordProperty("worst_velocity_difference", std::to_string(worst));
  std::printf("warm start: worst |v+ warm - v+ cold| %.2e m/s, iterations %d warm, %d cold\n", worst, warm_iterations, cold_iterations);
  EXPECT_LT(warm_iterations, cold_iterations * 3 / 4) << "warm " << warm_iterations << " cold " << cold_iterations;
}

TEST(IpmContact, NonConvergenceSetsTheFlagAndKeepsTheIterate) {
  Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05)), 1.0, 0.5);
  m.contact.ipm_iterations = 2;
  Data d(m);
  Eigen::VectorXd q = at_height(m, 0.049), v = Eigen::VectorXd::Zero(6), qn = q, vn = v;
  v[0] = 0.3;
  EXPECT_NO_THROW(step<double>(m, d, q, v, Eigen::VectorXd::Zero(6), 1e-3, Integrator::SemiImplicitEuler, qn, vn));
  EXPECT_FALSE(ipm_data(d).result.converged);
  EXPECT_EQ(ipm_data(d).result.iterations, 2);
  EXPECT_TRUE(d.status & kStatusSolverNotConverged);
  EXPECT_TRUE(vn.allFinite());
  EXPECT_EQ(vn, ipm_data(d).workspace.x) << "v+ is the last iterate";
  // With enough iterations the same step converges and clears nothing else.
  m.contact.ipm_iterations = 50;
  Data d2(m);
  step<double>(m, d2, q, v, Eigen::VectorXd::Zero(6), 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  EXPECT_TRUE(ipm_data(d2).result.converged);
  EXPECT_EQ(d2.status, kStatusOk);
}

// Forward-mode AD through the step (implicit derivatives of the LCP solution) against central
// differences, for a sliding box (4 contacts, normal and friction rows active) and a resting one:
// derivatives with respect to the state and to the friction coefficient.
TEST(IpmContact, ForwardModeMatchesCentralDifferences) {
  const double dt = 1e-3;
  // The floor's friction is the pair's (the larger): the box's is below it.
  Model m = free_body_on_plane(geom(GeomType::Box, V3(0.1, 0.08, 0.05), 0.1), 1.0, 0.4);
  m.contact.slop = 0.0;
  Eigen::VectorXd q0 = at_height(m, 0.0495);
  q0.segment<4>(3) = Eigen::Vector4d(0.01, -0.02, 0.0, 1.0).normalized();  // slightly tilted: unequal depths
  for (double vx : {0.5, 0.0}) {
    Eigen::VectorXd v0 = Eigen::VectorXd::Zero(6);
    v0[0] = vx;
    v0[2] = -0.05;
    // x = (v (6), friction of the floor)
    Eigen::VectorXd x0(7);
    x0 << v0, 0.4;
    auto f_ad = [&](const VectorX<ADScalar>& x) {
      ModelTpl<ADScalar> ma = m.cast<ADScalar>();
      ma.geoms[0].friction = x[6];
      DataTpl<ADScalar> da(ma);
      VectorX<ADScalar> q = q0.cast<ADScalar>(), v = x.head(6), tau = VectorX<ADScalar>::Zero(6);
      VectorX<ADScalar> qn(7), vn(6);
      step<ADScalar>(ma, da, q, v, tau, ADScalar(dt), Integrator::SemiImplicitEuler, qn, vn);
      EXPECT_TRUE(ipm_data(da).result.converged);
      return VectorX<ADScalar>(vn);
    };
    auto f_fd = [&](const Eigen::VectorXd& x) {
      Model mf = m;
      mf.geoms[0].friction = x[6];
      Data df(mf);
      Eigen::VectorXd qn(7), vn(6);
      step<double>(mf, df, q0, x.head(6), Eigen::VectorXd::Zero(6), dt, Integrator::SemiImplicitEuler, qn, vn);
      return Eigen::VectorXd(vn);
    };
    const Eigen::MatrixXd J_ad = test::ad_jacobian(f_ad, x0);
    const Eigen::MatrixXd J_fd = test::fd_jacobian(f_fd, x0, 1e-7);
    EXPECT_LE((J_ad - J_fd).lpNorm<Eigen::Infinity>(), 1e-5 * (1.0 + J_fd.lpNorm<Eigen::Infinity>()))
        << "vx " << vx << "\nAD\n" << J_ad << "\nFD\n" << J_fd;
    EXPECT_GT(J_ad.lpNorm<Eigen::Infinity>(), 0.1);
  }
}

// A body on a ball joint whose sphere is centred on the joint: rotations cannot open its contact with
// an overlapping world sphere (J_n = 0), so no velocity reaches the Baumgarte target. The row is made
// inert instead of leaving the solver an infeasible LCP.
TEST(IpmContact, ContactTheJointsCannotOpenIsInert) {
  ModelBuilder b;
  GeomSpec fixed = geom(GeomType::Sphere, V3(0.1, 0, 0));
  fixed.placement.p = V3(0.17, 0, 0);  // overlaps the moving sphere by 0.03 m
  b.add_link({"world", std::nullopt, {}, {fixed}});
  b.add_link({"ball", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.004), {},
              {geom(GeomType::Sphere, V3(0.1, 0, 0))}});
  JointSpec j;
  j.name = "hinge";
  j.type = JointType::Spherical;
  j.parent = "world";
  j.child = "ball";
  b.add_joint(j);
  Model m = b.build();
  m.contact.model = ContactModel::Ipm;
  Data d(m);
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(3), qn = q, vn = v;
  v << 0.3, -0.2, 0.5;
  step<double>(m, d, q, v, Eigen::VectorXd::Zero(3), 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  ASSERT_EQ(d.ncontacts, 1);
  EXPECT_GT(d.contacts[0].depth, 0.02);
  EXPECT_TRUE(ipm_data(d).result.converged);
  EXPECT_EQ(d.status, kStatusOk);
  EXPECT_NEAR(ipm_data(d).z[0], 0.0, 1e-9) << "no impulse on the inert row";
  EXPECT_LE((vn - v).norm(), 1e-8) << "the spin goes on (frictional rows carry no load without a normal one)";
}

// A slider squeezed between two walls, both deeper than the slop: Baumgarte asks for separation from
// both, which no velocity gives. With cfm = 0 the LCP is infeasible (reported, not thrown); cfm > 0
// (s_n = J_n v - target + cfm lambda_n, PGS's constraint force mixing) makes it solvable, and the
// symmetric pushes cancel.
TEST(IpmContact, CfmMakesConflictingContactsSolvable) {
  ModelBuilder b;
  GeomSpec left = geom(GeomType::Box, V3(0.05, 0.5, 0.5)), right = left;
  left.placement.p = V3(-0.15, 0, 0);
  right.placement.p = V3(0.15, 0, 0);
  b.add_link({"world", std::nullopt, {}, {left, right}});
  b.add_link({"slider", Inertia<double>(1.0, V3::Zero(), Matrix3<double>::Identity() * 0.004), {},
              {geom(GeomType::Sphere, V3(0.11, 0, 0))}});  // 0.01 m into each wall
  JointSpec j;
  j.name = "slide";
  j.type = JointType::Prismatic;
  j.parent = "world";
  j.child = "slider";
  j.axis = V3(1, 0, 0);
  b.add_joint(j);
  Model m = b.build();
  m.gravity.setZero();
  m.contact.model = ContactModel::Ipm;
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(1), qn = q, vn = v;
  {
    Data d(m);
    EXPECT_NO_THROW(step<double>(m, d, q, v, v, 1e-3, Integrator::SemiImplicitEuler, qn, vn));
    ASSERT_EQ(d.ncontacts, 2);
    EXPECT_FALSE(ipm_data(d).result.converged);
    EXPECT_TRUE(d.status & kStatusSolverNotConverged);
  }
  m.contact.cfm = 1e-4;
  Data d(m);
  step<double>(m, d, q, v, v, 1e-3, Integrator::SemiImplicitEuler, qn, vn);
  EXPECT_TRUE(ipm_data(d).result.converged);
  EXPECT_EQ(d.status, kStatusOk);
  EXPECT_NEAR(vn[0], 0.0, 1e-9);
  // Each normal row: 0 = J_n v+ - target + cfm lambda_n with v+ = 0.
  // (the contacts are deep: their Baumgarte target is max_correction_velocity, the cap)
  const double target = std::min(m.contact.erp / 1e-3 * (d.contacts[0].depth - m.contact.slop),
                                 m.contact.max_correction_velocity);
  EXPECT_NEAR(ipm_data(d).z[0], target / m.contact.cfm, 1e-6 * target / m.contact.cfm);
  EXPECT_NEAR(ipm_data(d).z[1], ipm_data(d).z[0], 1e-6 * ipm_data(d).z[0]);
}

TEST(IpmContact, Rk4IsRefused) {
  Model m = free_body_on_plane(geom(GeomType::Sphere, V3(0.1, 0, 0)), 1.0, 1.0);
  Data d(m);
  Eigen::VectorXd q = at_height(m, 0.1), v = Eigen::VectorXd::Zero(6), tau = v;
  Eigen::VectorXd qn = q, vn = v;
  try {
    step<double>(m, d, q, v, tau, 1e-3, Integrator::RK4, qn, vn);
    ADD_FAILURE() << "RK4 with ipm contact did not throw";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'ipm'"), std::string::npos) << e.what();
  }
}

TEST(IpmContact, BadSettingsAreRejected) {
  auto expect_error = [](ContactSettings s, const std::string& field) {
    try {
      check_contact_settings(s);
      ADD_FAILURE() << "no error for " << field;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  ContactSettings s;
  s.model = ContactModel::Ipm;
  EXPECT_NO_THROW(check_contact_settings(s));
  EXPECT_STREQ(contact_model_name(ContactModel::Ipm), "ipm");
  ContactSettings bad = s;
  bad.ipm_iterations = 0;
  expect_error(bad, "ipm_iterations");
  bad = s;
  bad.ipm_tolerance = -1e-9;
  expect_error(bad, "ipm_tolerance");
  bad = s;
  bad.ipm_kappa = std::nan("");
  expect_error(bad, "ipm_kappa");
  bad = s;
  bad.ipm_friction_directions = 2;
  expect_error(bad, "ipm_friction_directions");
}

}  // namespace
}  // namespace gradyn
