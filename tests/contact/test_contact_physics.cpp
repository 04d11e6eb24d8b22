// Whole simulations with known physical answers, for the penalty and PGS contact models (the
// single-contact basics, resting and inclines, live in test_penalty.cpp and test_pgs_contact.cpp):
// penalty contacts resting 10 s without drift; the rebound of a ball against its restitution (PGS:
// rebound speed = e * impact speed; penalty: the Hunt-Crossley damping for e, against a finely
// integrated 1-D impact); a stack of five boxes standing 10 s; a ball thrown at a hanging chain
// (momentum handed over, total momentum along the throw kept through the impact); the status
// flags (solver not converged, deep penetration); the PGS buffers staying put as contacts come and go.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/pgs_data.hpp"
#include "gradyn/dynamics/energy.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

using V3 = Vector3<double>;

GeomSpec geom(GeomType type, V3 size, double friction = 0.8, double restitution = 0.0) {
  GeomSpec g;
  g.type = type;
  g.size = size;
  g.friction = friction;
  g.restitution = restitution;
  return g;
}

JointSpec free_joint(const std::string& child) {
  JointSpec j;
  j.name = child + "_free";
  j.type = JointType::Free;
  j.parent = "world";
  j.child = child;
  return j;
}

Inertia<double> box_inertia(double mass, const V3& half) {
  const V3 full = 2 * half;
  return Inertia<double>(mass, V3::Zero(),
                         (mass / 12 * V3(full.y() * full.y() + full.z() * full.z(), full.x() * full.x() + full.z() * full.z(),
                                         full.x() * full.x() + full.y() * full.y()))
                             .asDiagonal()
                             .toDenseMatrix());
}

Inertia<double> sphere_inertia(double mass, double r) {
  return Inertia<double>(mass, V3::Zero(), Matrix3<double>::Identity() * 0.4 * mass * r * r);
}

// Free bodies (one geom each) above a ground plane.
Model bodies_on_plane(const std::vector<std::pair<GeomSpec, Inertia<double>>>& bodies, ContactModel cm,
                      double ground_friction = 0.8, double ground_restitution = 0.0) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {geom(GeomType::Plane, V3::Zero(), ground_friction, ground_restitution)}});
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string name = "body" + std::to_string(i);
    b.add_link({name, bodies[i].second, {}, {bodies[i].first}});
    b.add_joint(free_joint(name));
  }
  Model m = b.build();
  m.contact.model = cm;
  return m;
}

// Position of free body i (q layout: x, y, z, quaternion).
V3 position(const Model& m, const Eigen::VectorXd& q, int body) { return q.segment<3>(m.idx_q[body]); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- resting -----------------------------------------------------------------------------------

// Started at the Hunt-Crossley equilibrium depth (k d^p = weight per contact), a sphere and a box
// stay within 0.1 mm for 10 s.
TEST(PenaltyPhysics, SphereAndBoxStayPutForTenSeconds) {
  const double k = 1e5, p = 1.5, dt = 1e-3, r = 0.1;
  const V3 half(0.1, 0.08, 0.05);
  for (bool box : {false, true}) {
    const GeomSpec g = box ? geom(GeomType::Box, half) : geom(GeomType::Sphere, V3(r, 0, 0));
    Model m = bodies_on_plane({{g, box ? box_inertia(1.0, half) : sphere_inertia(1.0, r)}}, ContactModel::Penalty);
    m.contact.stiffness = k;
    m.contact.exponent = p;
    m.contact.damping = 20.0;
    Data d(m);
    const double depth = std::pow(9.81 / (box ? 4 : 1) / k, 1 / p);
    Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
    q[2] = (box ? half.z() : r) - depth;
    const V3 start = position(m, q, 0);
    double drift = 0.0;
    for (int t = 0; t < 10000; ++t) {
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      drift = std::max(drift, (position(m, q, 0) - start).norm());
    }
    EXPECT_EQ(d.status, kStatusOk);
    EXPECT_LE(drift, 1e-4) << (box ? "box" : "sphere");
    std::printf("[ measured ] penalty %s: drift over 10 s %.3g m\n", box ? "box" : "sphere", drift);
  }
}

// ---- restitution ---------------------------------------------------------------------------------

// PGS: the normal row's target is -e u_n, so the ball leaves at e times its impact speed and climbs
// to e^2 times the drop height (less the penetration the impact step left, at most v dt).
TEST(PgsPhysics, ReboundSpeedIsRestitutionTimesImpactSpeed) {
  const double r = 0.05, h = 1.0, dt = 1e-3;
  for (double e : {0.5, 0.8}) {
    Model m = bodies_on_plane({{geom(GeomType::Sphere, V3(r, 0, 0), 0.5, e), sphere_inertia(1.0, r)}},
                              ContactModel::Pgs, 0.5, e);
    Data d(m);
    Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
    q[2] = r + h;
    double impact = 0.0, rebound = 0.0, apex = 0.0;
    for (int t = 0; t < 3000; ++t) {
      const double before = v[2];
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
      if (rebound == 0.0 && v[2] > 0.0) impact = -before, rebound = v[2];
      if (rebound > 0.0) apex = std::max(apex, q[2] - r);
      if (rebound > 0.0 && v[2] < 0.0) break;
    }
    ASSERT_GT(rebound, 0.0);
    EXPECT_NEAR(rebound / impact, e, 1e-8) << "e " << e;
    // the impact step leaves the ball up to v dt below the surface: apex/h within v dt / h
    EXPECT_NEAR(apex / h, e * e, impact * dt / h) << "e " << e;
    std::printf("[ measured ] PGS e = %.2f: rebound/impact %.9f, apex/h %.4f (e^2 = %.4f)\n", e, rebound / impact,
                apex / h, e * e);
  }
}

// Reference: the 1-D Hunt-Crossley impact m x'' = -k x^p (1 + c x') (x: penetration) integrated by RK4
// with a tiny step; returns the rebound speed over the impact speed.
double hunt_crossley_restitution(double k, double p, double c, double m, double v0) {
  auto accel = [&](double x, double xd) { return x > 0 ? -std::max(0.0, k * std::pow(x, p) * (1 + c * xd)) / m : 0.0; };
  double x = 0.0, xd = v0;
  const double h = 1e-7;
  while (true) {
    const double k1x = xd, k1v = accel(x, xd);
    const double k2x = xd + 0.5 * h * k1v, k2v = accel(x + 0.5 * h * k1x, xd + 0.5 * h * k1v);
    const double k3x = xd + 0.5 * h * k2v, k3v = accel(x + 0.5 * h * k2x, xd + 0.5 * h * k2v);
    const double k4x = xd + h * k3v, k4v = accel(x + h * k3x, xd + h * k3v);
    x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    xd += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    if (x < 0) return -xd / v0;
  }
}

// Penalty: the damping c that gives restitution e at impact speed v (model.hpp). Hunt & Crossley's
// c = 1.5 (1 - e) / v holds for e near 1 (e = 0.9 -> 0.909); Flores et al.'s c = 8 (1 - e) / (5 e v)
// holds over the range (e = 0.5 -> 0.470). Without gravity the ball's rebound is the 1-D impact's
// exactly, up to the step (dt = 1e-4: about 300 steps per contact).
TEST(PenaltyPhysics, DampingSetsTheRestitution) {
  const double r = 0.05, mass = 1.0, k = 1e6, p = 1.5, v0 = 3.0, dt = 1e-4;
  struct Case {
    double e, c, tolerance;  // tolerance on rebound/impact against e: the law's own error
  };
  for (const Case& cs : {Case{0.9, 1.5 * (1 - 0.9) / v0, 0.012}, Case{0.5, 8 * (1 - 0.5) / (5 * 0.5 * v0), 0.035}}) {
    Model m = bodies_on_plane({{geom(GeomType::Sphere, V3(r, 0, 0)), sphere_inertia(mass, r)}}, ContactModel::Penalty);
    m.gravity.setZero();
    m.contact.stiffness = k;
    m.contact.exponent = p;
    m.contact.damping = cs.c;
    Data d(m);
    Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
    q[2] = r + 1e-3;
    v[2] = -v0;  // body frame = world frame (identity orientation)
    for (int t = 0; t < 2000 && !(q[2] > r + 1e-3); ++t)
      step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    ASSERT_GT(q[2], r + 1e-3) << "left the floor";
    const double measured = v[2] / v0;
    const double reference = hunt_crossley_restitution(k, p, cs.c, mass, v0);
    EXPECT_NEAR(measured, reference, 5e-3 * reference) << "e " << cs.e;
    EXPECT_NEAR(measured, cs.e, cs.tolerance) << "e " << cs.e;
    std::printf("[ measured ] penalty e = %.2f (c = %.4f): rebound/impact %.4f, 1-D reference %.4f\n", cs.e, cs.c,
                measured, reference);
  }
  // With gravity: dropped from h, the ball climbs back to (rebound/impact)^2 h.
  const double e = 0.9, h = 0.5, vi = std::sqrt(2 * 9.81 * h);
  Model m = bodies_on_plane({{geom(GeomType::Sphere, V3(r, 0, 0)), sphere_inertia(mass, r)}}, ContactModel::Penalty);
  m.contact.stiffness = k;
  m.contact.exponent = p;
  m.contact.damping = 1.5 * (1 - e) / vi;
  Data d(m);
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
  q[2] = r + h;
  bool up = false;
  double apex = 0.0;
  for (int t = 0; t < 20000; ++t) {
    step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    if (q[2] > r && v[2] > 0) up = true;
    if (up) apex = std::max(apex, q[2] - r);
    if (up && v[2] < 0) break;
  }
  const double cor = hunt_crossley_restitution(k, p, m.contact.damping, mass, vi);
  EXPECT_NEAR(apex / h, cor * cor, 0.02 * cor * cor);
  EXPECT_NEAR(apex / h, e * e, 0.04 * e * e);
  std::printf("[ measured ] penalty drop e = 0.9: apex/h %.4f (reference %.4f, e^2 %.4f)\n", apex / h, cor * cor, e * e);
}

// ---- a stack of five boxes -----------------------------------------------------------------------

struct StackResult {
  double max_drift = 0.0;  // largest horizontal displacement of any box [m]
  double max_sink = 0.0;   // largest fall below its starting height of any box [m]
  double max_tilt = 0.0;   // largest tilt of any box [rad]
  double wall_s = 0.0;
  double mean_sweeps = 0.0;
  int max_rows = 0;
  int unconverged_steps = 0;  // PGS stopped at pgs_iterations sweeps
};

StackResult stand_stack(ContactModel cm, double dt, double T, const std::function<void(ContactSettings&)>& tune) {
  const V3 half(0.1, 0.1, 0.1);
  std::vector<std::pair<GeomSpec, Inertia<double>>> boxes(5, {geom(GeomType::Box, half, 0.8), box_inertia(1.0, half)});
  Model m = bodies_on_plane(boxes, cm);
  tune(m.contact);
  Data d(m);
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), tau = v;
  for (int i = 0; i < 5; ++i) q[m.idx_q[i] + 2] = half.z() * (2 * i + 1);
  const Eigen::VectorXd q_start = q;
  StackResult res;
  long sweeps = 0;
  const int steps = static_cast<int>(T / dt);
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < steps; ++t) {
    step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    sweeps += pgs_data(d).result.iterations;
    if (!pgs_data(d).result.converged) ++res.unconverged_steps;
    res.max_rows = std::max(res.max_rows, pgs_data(d).problem.rows);
    for (int i = 0; i < 5; ++i) {
      const int iq = m.idx_q[i];
      res.max_drift = std::max(res.max_drift, (q.segment<2>(iq) - q_start.segment<2>(iq)).norm());
      res.max_sink = std::max(res.max_sink, q_start[iq + 2] - q[iq + 2]);
      const double w = std::min(1.0, std::abs(q[iq + 6]) / q.segment<4>(iq + 3).norm());
      res.max_tilt = std::max(res.max_tilt, 2 * std::acos(w));
    }
  }
  res.wall_s = seconds_since(start);
  res.mean_sweeps = static_cast<double>(sweeps) / steps;
  EXPECT_EQ(d.status & ~kStatusSolverNotConverged, kStatusOk);
  return res;
}

TEST(PgsPhysics, StackOfFiveBoxesStandsForTenSeconds) {
  const StackResult res = stand_stack(ContactModel::Pgs, 1e-3, 10.0, [](ContactSettings&) {});
  std::printf("[ measured ] PGS stack of 5: drift %.3g m, sink %.3g m, tilt %.3g rad, rows <= %d, %.1f sweeps/step, "
              "%d of 10000 steps unconverged, %.2f s wall\n",
              res.max_drift, res.max_sink, res.max_tilt, res.max_rows, res.mean_sweeps, res.unconverged_steps, res.wall_s);
  EXPECT_LE(res.max_drift, 1e-4);
  EXPECT_LE(res.max_sink, 5 * 1e-4 + 1e-4) << "five contact layers, each settling within its slop";
  EXPECT_LE(res.max_tilt, 1e-3);
}

// Penalty: each layer sinks by its Hunt-Crossley depth (k d^p = the weight above, per corner), so
// the stack starts there; smoothed Coulomb friction has nothing to resist in a straight stack.
TEST(PenaltyPhysics, StackOfFiveBoxesStandsForTenSeconds) {
  const double k = 1e5, p = 1.5;
  const StackResult res = stand_stack(ContactModel::Penalty, 1e-3, 10.0, [&](ContactSettings& s) {
    s.stiffness = k;
    s.exponent = p;
    s.damping = 20.0;
  });
  std::printf("[ measured ] penalty stack of 5: drift %.3g m, sink %.3g m, tilt %.3g rad, %.2f s wall\n",
              res.max_drift, res.max_sink, res.max_tilt, res.wall_s);
  // The total sink of the top box: the sum of the five layers' equilibrium depths, plus the
  // settling overshoot (damped).
  double depths = 0.0;
  for (int layer = 1; layer <= 5; ++layer) depths += std::pow(layer * 9.81 / 4 / k, 1 / p);
  EXPECT_LE(res.max_drift, 1e-4);
  EXPECT_LE(res.max_sink, 2 * depths);
  EXPECT_LE(res.max_tilt, 1e-3);
}

// ---- a ball thrown at a hanging chain ------------------------------------------------------------

// Six capsule links (0.1 m, 0.1 kg) hang from a hinge about y; a 0.1 kg ball flies along +x into
// the middle of the lowest link. Along x no external force acts but the top hinge's, and an
// impulse at the bottom of a hinged chain reaches the top hinge only through every link, each
// passing on about 2 - sqrt(3) = 0.27 of it (uniform rods: 4e-4 of it arrives at the hinge of a
// six-link chain). So through the impact window the total x momentum stays within 1 % of the
// ball's (the window also sees gravity turn the upper links, all far below that).
struct ChainThrow {
  double ball_before = 0.0, ball_after = 0.0, chain_after = 0.0, worst_total_change = 0.0;
};

ChainThrow throw_at_chain(ContactModel cm, double dt, const std::function<void(ContactSettings&)>& tune) {
  const int links = 6;
  const double length = 0.1, link_mass = 0.1, ball_mass = 0.1, ball_r = 0.03, speed = 2.0;
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}});
  for (int i = 0; i < links; ++i) {
    GeomSpec capsule = geom(GeomType::Capsule, V3(0.02, 0.5 * length - 0.02, 0), 0.3);
    capsule.placement.p = V3(0, 0, -0.5 * length);
    const std::string name = "link" + std::to_string(i);
    b.add_link({name,
                Inertia<double>(link_mass, V3(0, 0, -0.5 * length),
                                Eigen::Vector3d(link_mass * length * length / 12, link_mass * length * length / 12, 1e-5)
                                    .asDiagonal()
                                    .toDenseMatrix()),
                {},
                {capsule}});
    JointSpec j;
    j.name = "hinge" + std::to_string(i);
    j.type = JointType::Revolute;
    j.parent = i == 0 ? "world" : "link" + std::to_string(i - 1);
    j.child = name;
    j.origin.p = i == 0 ? V3(0, 0, 1.0) : V3(0, 0, -length);
    j.axis = V3::UnitY();
    b.add_joint(j);
  }
  b.add_link({"ball", sphere_inertia(ball_mass, ball_r), {}, {geom(GeomType::Sphere, V3(ball_r, 0, 0), 0.3)}});
  b.add_joint(free_joint("ball"));
  Model m = b.build();
  m.contact.model = cm;
  tune(m.contact);
  Data d(m);
  const int ball = m.body_id("ball");
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(m.nv), tau = v;
  const double impact_height = 1.0 - (links - 0.5) * length;
  q.segment<3>(m.idx_q[ball]) = V3(-0.1, 0, impact_height);
  v[m.idx_v[ball]] = speed;
  ChainThrow out;
  out.ball_before = ball_mass * speed;
  const double total_before = spatial_momentum<double>(m, d, q, v)[3];
  bool touched = false;
  int after_contact = 0;
  // Window: from the start until 20 ms after the last contact (long past the impact, short against
  // the chain's swing period of about 0.6 s).
  for (int t = 0; t < static_cast<int>(0.5 / dt); ++t) {
    step<double>(m, d, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
    const double total = spatial_momentum<double>(m, d, q, v)[3];
    out.worst_total_change = std::max(out.worst_total_change, std::abs(total - total_before));
    if (d.ncontacts > 0) touched = true, after_contact = 0;
    else if (touched && ++after_contact * dt >= 0.02) break;
  }
  EXPECT_TRUE(touched);
  EXPECT_EQ(d.status, kStatusOk);
  const Eigen::Matrix3d R = quaternion_xyzw_to_matrix(q[m.idx_q[ball] + 3], q[m.idx_q[ball] + 4], q[m.idx_q[ball] + 5],
                                                      q[m.idx_q[ball] + 6]);
  out.ball_after = ball_mass * (R * v.segment<3>(m.idx_v[ball]))[0];
  out.chain_after = spatial_momentum<double>(m, d, q, v)[3] - out.ball_after;
  return out;
}

void expect_momentum_handed_over(const ChainThrow& r, const char* what) {
  EXPECT_LT(r.ball_after, 0.9 * r.ball_before) << what << ": the ball lost momentum";
  EXPECT_GT(r.chain_after, 0.1 * r.ball_before) << what << ": the chain gained it";
  EXPECT_LE(r.worst_total_change, 0.01 * r.ball_before) << what << ": total x momentum kept through the impact";
  std::printf("[ measured ] %s chain: ball %.4f -> %.4f, chain 0 -> %.4f N s, worst total change %.2e (%.2e of the ball's)\n",
              what, r.ball_before, r.ball_after, r.chain_after, r.worst_total_change, r.worst_total_change / r.ball_before);
}

TEST(PgsPhysics, BallHandsMomentumToAHangingChain) {
  expect_momentum_handed_over(throw_at_chain(ContactModel::Pgs, 1e-3, [](ContactSettings&) {}), "PGS");
}

TEST(PenaltyPhysics, BallHandsMomentumToAHangingChain) {
  expect_momentum_handed_over(throw_at_chain(ContactModel::Penalty, 1e-4,
                                             [](ContactSettings& s) {
                                               s.stiffness = 1e5;
                                               s.damping = 2.0;
                                               s.velocity_scale = 0.05;
                                             }),
                              "penalty");
}

// ---- status flags --------------------------------------------------------------------------------

TEST(ContactStatus, PgsFlagsAnUnconvergedSolveAndKeepsGoing) {
  const V3 half(0.1, 0.08, 0.05);
  Model m = bodies_on_plane({{geom(GeomType::Box, half), box_inertia(1.0, half)}}, ContactModel::Pgs);
  m.contact.pgs_iterations = 1;  // four coupled corner contacts need more than one sweep
  Data d(m);
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
  q[2] = half.z() - 1e-3;
  v[3] = 0.5;  // rolling: the corners push unevenly
  EXPECT_NO_THROW(step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v));
  EXPECT_FALSE(pgs_data(d).result.converged);
  EXPECT_TRUE(d.status & kStatusSolverNotConverged);
  EXPECT_FALSE(d.status & kStatusDeepPenetration);
  // A single contact converges within the default sweeps: no flag.
  Model ball = bodies_on_plane({{geom(GeomType::Sphere, V3(0.1, 0, 0)), sphere_inertia(1.0, 0.1)}}, ContactModel::Pgs);
  Data fresh(ball);
  Eigen::VectorXd qb = ball.q0, vb = Eigen::VectorXd::Zero(6);
  qb[2] = 0.1 - 1e-3;
  vb[0] = 0.5;  // sliding
  step<double>(ball, fresh, qb, vb, tau, 1e-3, Integrator::SemiImplicitEuler, qb, vb);
  EXPECT_TRUE(pgs_data(fresh).result.converged);
  EXPECT_EQ(fresh.status, kStatusOk);
}

TEST(ContactStatus, DeepPenetrationIsFlaggedForEveryContactModel) {
  for (ContactModel cm : {ContactModel::Penalty, ContactModel::Pgs}) {
    for (Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::RK4}) {
      if (cm == ContactModel::Pgs && integrator == Integrator::RK4) continue;
      Model m = bodies_on_plane({{geom(GeomType::Sphere, V3(0.1, 0, 0)), sphere_inertia(1.0, 0.1)}}, cm);
      m.contact.max_penetration = 0.02;
      Data d(m);
      Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v, qn = q, vn = v;
      q[2] = 0.1 - 0.015;  // 15 mm: deep, within the bound
      step<double>(m, d, q, v, tau, 1e-3, integrator, qn, vn);
      EXPECT_FALSE(d.status & kStatusDeepPenetration) << contact_model_name(cm);
      q[2] = 0.1 - 0.03;  // 30 mm: beyond it
      EXPECT_NO_THROW(step<double>(m, d, q, v, tau, 1e-3, integrator, qn, vn));
      EXPECT_TRUE(d.status & kStatusDeepPenetration) << contact_model_name(cm);
      EXPECT_FALSE(d.status & kStatusNonFinite);
    }
  }
}

// ---- PGS buffers -----------------------------------------------------------------------------------

// A tilted box dropped on the floor touches with 1, 2 and 4 corners and leaves it again while it
// bounces: the LCP storage is allocated once (at 12 rows, enough for 4 contacts) and then reused.
TEST(PgsPhysics, LcpStorageIsReusedAsContactsComeAndGo) {
  const V3 half(0.1, 0.08, 0.05);
  Model m = bodies_on_plane({{geom(GeomType::Box, half, 0.5, 0.6), box_inertia(1.0, half)}}, ContactModel::Pgs, 0.5, 0.6);
  Data d(m);
  Eigen::VectorXd q = m.q0, v = Eigen::VectorXd::Zero(6), tau = v;
  const Eigen::Quaterniond tilt(Eigen::AngleAxisd(0.3, V3(1, 0.5, 0).normalized()));
  q.segment<7>(0) << 0, 0, 0.3, tilt.x(), tilt.y(), tilt.z(), tilt.w();
  const double* storage = nullptr;
  std::vector<int> counts_seen(5, 0);
  for (int t = 0; t < 2000; ++t) {
    step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    if (pgs_data(d).problem.rows > 0 && storage == nullptr) storage = pgs_data(d).problem.A.data();
    if (storage) EXPECT_EQ(pgs_data(d).problem.A.data(), storage) << "step " << t;
    counts_seen[std::min(d.ncontacts, 4)] += 1;
  }
  EXPECT_GT(counts_seen[0], 0);
  EXPECT_GT(counts_seen[1] + counts_seen[2], 0);
  EXPECT_GT(counts_seen[4], 0);
  EXPECT_EQ(pgs_data(d).problem.A.rows(), 12);
  EXPECT_EQ(d.status & ~kStatusSolverNotConverged, kStatusOk);
}

}  // namespace
}  // namespace gradyn
