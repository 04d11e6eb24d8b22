// Convex hulls in the simulation: hulls resting on a plane, a box resting on a hull and a hull
// resting on a hull under PGS for 10 s; the step Jacobian through hull contacts under penalty
// (step_vjp, which differentiates each contact pair by local forward-mode AD in collide_vjp)
// against forward-mode AD through the whole step; the hull's scale as a parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "../support/contact_scenes.hpp"
#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

using namespace test;
constexpr double kPi = std::numbers::pi;

// A hexagonal prism (circumradius r, height h, base on z = 0), and a tetrahedron: not boxes.
std::vector<V3> hex_prism(double r, double h) {
  std::vector<V3> out;
  for (int k = 0; k < 6; ++k)
    for (double z : {0.0, h}) out.emplace_back(r * std::cos(kPi * k / 3), r * std::sin(kPi * k / 3), z);
  return out;
}
std::vector<V3> tetrahedron(double r, double h) {
  std::vector<V3> out;
  for (int k = 0; k < 3; ++k) out.emplace_back(r * std::cos(2 * kPi * k / 3), r * std::sin(2 * kPi * k / 3), 0);
  out.emplace_back(0, 0, h);
  return out;
}
std::vector<V3> corners(const V3& half) {
  std::vector<V3> out;
  for (int k = 0; k < 8; ++k)
    out.emplace_back(k & 1 ? half.x() : -half.x(), k & 2 ? half.y() : -half.y(), k & 4 ? half.z() : -half.z());
  return out;
}

GeomSpec hull_spec(const std::vector<V3>& points, double friction = 0.8) {
  GeomSpec g = convex_hull_geom("", points);
  g.friction = friction;
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

// The world's geoms (a plane, or a hull block), then one free body with `top` at its origin.
Model resting_scene(const std::vector<GeomSpec>& world, const GeomSpec& top, const Inertia<double>& inertia) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, world});
  b.add_link({"top", inertia, {}, {top}});
  b.add_joint(free_joint("top"));
  Model m = b.build();
  m.contact.model = ContactModel::Pgs;
  return m;
}

struct RestResult {
  double drift = 0, tilt = 0;
  int contacts = 0;
  int status = 0;
};

// 10 s at 1 ms from q (at rest); the largest displacement and tilt of the top body.
RestResult rest(const Model& m, Eigen::VectorXd q) {
  Data d(m);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(m.nv), tau = v;
  const Eigen::VectorXd q0 = q;
  RestResult r;
  for (int t = 0; t < 10000; ++t) {
    step<double>(m, d, q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q, v);
    r.drift = std::max(r.drift, (q.head<3>() - q0.head<3>()).norm());
    const Eigen::Quaterniond a(q0[6], q0[3], q0[4], q0[5]), b(q[6], q[3], q[4], q[5]);
    r.tilt = std::max(r.tilt, a.angularDistance(b));
  }
  r.contacts = d.ncontacts;
  r.status = d.status;
  return r;
}

Inertia<double> solid(const ConvexHull& h, double mass) {
  return Inertia<double>(mass, h.centroid, h.inertia * (mass / h.volume));
}

TEST(HullContact, HullsRestOnAPlaneUnderPgs) {
  GeomSpec ground;
  ground.type = GeomType::Plane;
  ground.friction = 0.8;
  for (const auto& [name, points] : {std::pair<std::string, std::vector<V3>>{"hexagonal prism", hex_prism(0.1, 0.06)},
                                     {"tetrahedron", tetrahedron(0.12, 0.1)}}) {
    const GeomSpec g = hull_spec(points);
    const Model m = resting_scene({ground}, g, solid(*g.hull, 1.0));
    Eigen::VectorXd q = m.q0;  // base on z = 0
    const RestResult r = rest(m, q);
    std::printf("[ measured ] PGS %s on a plane: %d contacts, drift over 10 s %.3g m, tilt %.3g rad\n", name.c_str(),
                r.contacts, r.drift, r.tilt);
    EXPECT_EQ(r.status, kStatusOk) << name;
    EXPECT_GE(r.contacts, 3) << name;  // the base outline (a vertex may lift within the slop)
    EXPECT_LE(r.drift, 1e-4) << name;
    EXPECT_LE(r.tilt, 1e-3) << name;
  }
}

TEST(HullContact, BoxOnAHullAndHullOnAHullRestUnderPgs) {
  // A hull block fixed in the world, top face at z = 0.1, and on it a box primitive, a cube hull
  // and a hexagonal prism.
  GeomSpec block = hull_spec(corners(V3(0.5, 0.5, 0.1)));
  const V3 half(0.1, 0.08, 0.05);
  GeomSpec box;
  box.type = GeomType::Box;
  box.size = half;
  box.friction = 0.8;
  const GeomSpec cube = hull_spec(corners(half)), prism = hull_spec(hex_prism(0.1, 0.06));
  struct Top {
    std::string name;
    GeomSpec geom;
    double base;  // height of the body origin above its lowest point
  };
  for (const Top& top : {Top{"box on a hull", box, half.z()}, Top{"cube hull on a hull", cube, half.z()},
                         Top{"prism hull on a hull", prism, 0.0}}) {
    // (held by a named pointer: a reference into a temporary's hull would dangle)
    const std::shared_ptr<const ConvexHull> shape = top.geom.hull ? top.geom.hull : make_convex_hull(corners(half));
    const Model m = resting_scene({block}, top.geom, solid(*shape, 1.0));
    Eigen::VectorXd q = m.q0;
    q.head<3>() = V3(0.05, -0.1, 0.1 + top.base);
    const RestResult r = rest(m, q);
    std::printf("[ measured ] PGS %s: %d contacts, drift over 10 s %.3g m, tilt %.3g rad\n", top.name.c_str(), r.contacts,
                r.drift, r.tilt);
    EXPECT_EQ(r.status, kStatusOk) << top.name;
    EXPECT_GE(r.contacts, 4) << top.name;
    EXPECT_LE(r.drift, 1e-4) << top.name;
    EXPECT_LE(r.tilt, 1e-3) << top.name;
  }
}

ContactSettings penalty_settings() {
  ContactSettings s;
  s.model = ContactModel::Penalty;
  s.stiffness = 2e4;
  s.exponent = 1.5;
  s.damping = 0.8;
  s.velocity_scale = 0.05;
  s.viscous_friction = 0.3;
  return s;
}

// Two free-body scenes on the tilted plane of contact_scenes.hpp (a hull on its face, a
// tetrahedron on an edge) and a free tetrahedron pressed onto a hull block (hull-hull).
std::vector<Case> hull_cases() {
  const ContactSettings settings = penalty_settings();
  std::vector<Case> out;
  const Model prism = free_body_on_plane(hull_spec(hex_prism(0.1, 0.06)), settings);
  out.push_back({"prism on its face", prism, touching(prism, 0.0, 0.0, face_down(prism), 0.002),
                 vec6(0.3, -0.2, -0.1, 0.2, 0.1, 0.4), vec6(0, 0, 1, 0, 0, 0)});
  const Model tet = free_body_on_plane(hull_spec(tetrahedron(0.12, 0.1)), settings);
  out.push_back({"tetrahedron on an edge", tet, touching(tet, 0.1, 0.0, V3(0.5, -0.2, 0.1), 0.002),
                 vec6(-0.2, 0.3, -0.4, 1.0, -0.5, 0.2), Eigen::VectorXd::Zero(6)});
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {hull_spec(corners(V3(0.5, 0.5, 0.1)), 0.6)}});
  Matrix3<double> I;
  I << 0.011, 0.001, 0.0, 0.001, 0.013, 0.002, 0.0, 0.002, 0.012;
  GeomSpec g = hull_spec(tetrahedron(0.12, 0.1));
  g.placement = Pose<double>(rpy_to_matrix<double>(V3(0.1, 0.2, -0.1)), V3(0.01, -0.02, 0.005));
  b.add_link({"body", Inertia<double>(1.3, V3(0.0, 0.01, -0.01), I), {}, {g}});
  b.add_joint(free_joint("body"));
  Model on_block = b.build();
  on_block.contact = settings;
  out.push_back({"tetrahedron on a hull block", on_block,
                 touching(on_block, 0.1, 0.05, Matrix3<double>(on_block.geoms[1].placement.R.transpose()), 0.002),
                 vec6(0.2, 0.1, -0.3, 0.3, -0.2, 0.1), Eigen::VectorXd::Zero(6)});
  return out;
}

TEST(HullContact, PenaltyStepJacobianMatchesForwardModeAD) {
  for (const Case& c : hull_cases()) {
    Data d(c.model);
    forward_kinematics<double>(c.model, d, c.q);
    collide<double>(c.model, d, c.model.contact.margin);
    ASSERT_GT(d.ncontacts, 0) << c.name;
    const Eigen::MatrixXd J_ad = step_jacobian_ad(c.model, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler);
    const Eigen::MatrixXd J = step_jacobian_vjp(c.model, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler);
    EXPECT_GT(J.bottomLeftCorner(c.model.nv, c.model.nq).cwiseAbs().maxCoeff(), 1e-3) << c.name << ": contact matters";
    const double err = relative_error(J, J_ad);
    std::printf("[ measured ] %s (%d contacts): step Jacobian step_vjp vs forward AD, relative error %.2g\n", c.name.c_str(),
                d.ncontacts, err);
    EXPECT_LT(err, 1e-7) << c.name;
  }
}

TEST(HullContact, HullScaleIsAParameterWithAnAdjoint) {
  // The loss after one step, as a function of the hull's scale (p entries "<g>.size[k]"):
  // params_gradient through step_vjp against central differences.
  const Case c = hull_cases()[0];
  const Loss loss(c.model, 7);
  const std::vector<std::string> names = param_names(c.model);
  const Eigen::VectorXd p = get_params(c.model);
  Data d(c.model);
  Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(c.model.nq), v_bar = Eigen::VectorXd::Zero(c.model.nv),
                  tau_bar = Eigen::VectorXd::Zero(c.model.nv);
  ModelTangent model_bar(c.model);
  step_vjp<double>(c.model, d, c.q, c.v, c.tau, 1e-3, Integrator::SemiImplicitEuler, loss.wq, loss.wv, q_bar, v_bar,
                   tau_bar, model_bar);
  const Eigen::VectorXd grad = params_gradient<double>(c.model, model_bar);
  int checked = 0;
  for (int k = 0; k < static_cast<int>(names.size()); ++k) {
    if (names[k].find(".size[") == std::string::npos) continue;
    const double h = 1e-6;
    Eigen::VectorXd pp = p, pm = p;
    pp[k] += h;
    pm[k] -= h;
    const double fd = (loss(with_params<double>(c.model, pp), c.q, c.v, c.tau) - loss(with_params<double>(c.model, pm), c.q, c.v, c.tau)) / (2 * h);
    EXPECT_NEAR(grad[k], fd, 1e-5 * (1 + std::abs(fd))) << names[k];
    ++checked;
  }
  EXPECT_EQ(checked, 3);  // the hull's scale along x, y, z (the plane has no size)
}

}  // namespace
}  // namespace gradyn
