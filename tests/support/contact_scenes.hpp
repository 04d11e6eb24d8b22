// Scenes and Jacobian helpers shared by the contact adjoint tests (tests/contact/test_*_vjp.cpp):
// a free body over a slightly tilted plane, a two-link arm pressing on a box, and the full step
// Jacobian w.r.t. (q, v, tau) by forward-mode AD and by one step_vjp per output.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "ad_jacobian.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/collision/collide.hpp"
#include "gradyn/model/builder.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn::test {

using V3 = Vector3<double>;

inline double relative_error(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
  EXPECT_EQ(A.rows(), B.rows());
  EXPECT_EQ(A.cols(), B.cols());
  return (A - B).cwiseAbs().maxCoeff() / std::max(1.0, B.cwiseAbs().maxCoeff());
}

inline GeomSpec geom(GeomType type, V3 size, double friction = 0.8) {
  GeomSpec g;
  g.type = type;
  g.size = size;
  g.friction = friction;
  return g;
}

// A free body carrying `body_geom` (placed off its centre of mass) over a tilted ground plane.
inline Model free_body_on_plane(const GeomSpec& body_geom, const ContactSettings& contact) {
  ModelBuilder b;
  GeomSpec ground = geom(GeomType::Plane, V3::Zero(), 0.6);
  ground.placement.R = rpy_to_matrix<double>(V3(0.05, -0.03, 0));
  b.add_link({"world", std::nullopt, {}, {ground}});
  Matrix3<double> I;
  I << 0.011, 0.001, 0.0, 0.001, 0.013, 0.002, 0.0, 0.002, 0.012;
  GeomSpec g = body_geom;
  g.placement.p = V3(0.01, -0.02, 0.005);
  g.placement.R = rpy_to_matrix<double>(V3(0.1, 0.2, -0.1));
  b.add_link({"body", Inertia<double>(1.3, V3(0.0, 0.01, -0.01), I), {}, {g}});
  JointSpec j;
  j.name = "free";
  j.type = JointType::Free;
  j.parent = "world";
  j.child = "body";
  b.add_joint(j);
  Model m = b.build();
  m.contact = contact;
  return m;
}

// Two revolute links (pitch, then roll) on a post; the second carries a capsule that presses on a
// box fixed to the world.
inline Model arm_on_box(const ContactSettings& contact) {
  ModelBuilder b;
  GeomSpec box = geom(GeomType::Box, V3(0.3, 0.3, 0.1));
  box.placement.p = V3(0.3, 0, 0.1);
  b.add_link({"world", std::nullopt, {}, {box}});
  b.add_link({"upper", Inertia<double>(2.0, V3(0.15, 0, 0), Matrix3<double>::Identity() * 0.02), {}, {}});
  GeomSpec capsule = geom(GeomType::Capsule, V3(0.04, 0.12, 0), 0.9);
  capsule.placement.p = V3(0.15, 0, 0);
  capsule.placement.R = rpy_to_matrix<double>(V3(0, M_PI / 2, 0));
  b.add_link({"lower", Inertia<double>(1.0, V3(0.15, 0, 0), Matrix3<double>::Identity() * 0.01), {}, {capsule}});
  JointSpec j1;
  j1.name = "shoulder";
  j1.type = JointType::Revolute;
  j1.parent = "world";
  j1.child = "upper";
  j1.origin.p = V3(0, 0, 0.5);
  j1.axis = V3(0, 1, 0);
  b.add_joint(j1);
  JointSpec j2;
  j2.name = "elbow";
  j2.type = JointType::Revolute;
  j2.parent = "upper";
  j2.child = "lower";
  j2.origin.p = V3(0.3, 0, 0);
  j2.axis = V3(0.2, 1, 0.1).normalized();
  b.add_joint(j2);
  Model m = b.build();
  m.contact = contact;
  return m;
}

inline Eigen::VectorXd free_state(const Model& m, V3 p, const Matrix3<double>& R) {
  Eigen::VectorXd q = m.q0;
  q.segment<3>(0) = p;
  const Eigen::Quaterniond quat(R);
  q.segment<4>(3) << quat.x(), quat.y(), quat.z(), quat.w();
  return q;
}

inline Eigen::VectorXd free_state(const Model& m, V3 p, V3 rpy) { return free_state(m, p, rpy_to_matrix<double>(rpy)); }

// The orientation of the free body (its last geom) that lays that geom's frame parallel to the
// ground plane's (geom 0): a box face down.
inline Matrix3<double> face_down(const Model& m) {
  return m.geoms[0].placement.R * m.geoms.back().placement.R.transpose();
}

inline Eigen::VectorXd vec6(double a, double b, double c, double d, double e, double f) {
  Eigen::VectorXd x(6);
  x << a, b, c, d, e, f;
  return x;
}

// The free body's configuration at horizontal position (x, y) and orientation rpy whose deepest
// contact with the other geoms has depth `depth` (bisection on the height).
inline Eigen::VectorXd touching(const Model& model, double x, double y, const Matrix3<double>& R, double depth) {
  Data d(model);
  auto deepest = [&](double z) {
    const Eigen::VectorXd q = free_state(model, V3(x, y, z), R);
    forward_kinematics<double>(model, d, q);
    collide<double>(model, d, 0.0);
    double deepest = -1.0;
    for (int k = 0; k < d.ncontacts; ++k) deepest = std::max(deepest, d.contacts[k].depth);
    return deepest;
  };
  double lo = -1.0, hi = 1.0;  // deepest(lo) > depth > deepest(hi)
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (deepest(mid) > depth ? lo : hi) = mid;
  }
  return free_state(model, V3(x, y, hi), R);
}

inline Eigen::VectorXd touching(const Model& model, double x, double y, V3 rpy, double depth) {
  return touching(model, x, y, rpy_to_matrix<double>(rpy), depth);
}

// One test scene: a model and the state (q, v) and torques tau of the step under test.
struct Case {
  std::string name;
  Model model;
  Eigen::VectorXd q, v, tau;
};

// A fixed random linear loss of one semi-implicit Euler step (dt = 1 ms) from a fresh Data (no
// warm start): w_q . q+ + w_v . v+, evaluable on a cast model for parameter derivatives.
struct Loss {
  Eigen::VectorXd wq, wv;
  Loss(const Model& m, unsigned seed) {
    std::srand(seed);
    wq = Eigen::VectorXd::Random(m.nq);
    wv = Eigen::VectorXd::Random(m.nv);
  }
  template <class S>
  S operator()(const ModelTpl<S>& m, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
               const Eigen::VectorXd& tau) const {
    DataTpl<S> d(m);
    VectorX<S> qn(m.nq), vn(m.nv);
    step<S>(m, d, q.cast<S>(), v.cast<S>(), tau.cast<S>(), S(1e-3), Integrator::SemiImplicitEuler, qn, vn);
    return qn.dot(wq.cast<S>()) + vn.dot(wv.cast<S>());
  }
};

// Full Jacobian of step w.r.t. (q, v, tau) by forward-mode AD.
inline Eigen::MatrixXd step_jacobian_ad(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                 const Eigen::VectorXd& tau, double dt, Integrator integrator) {
  Eigen::VectorXd x0(model.nq + 2 * model.nv);
  x0 << q, v, tau;
  const ModelTpl<ADScalar> m = model.cast<ADScalar>();
  auto f = [&](const VectorX<ADScalar>& x) {
    DataTpl<ADScalar> d(m);  // fresh: no warm start carried between evaluations
    VectorX<ADScalar> out(model.nq + model.nv);
    VectorX<ADScalar> qn(model.nq), vn(model.nv);
    step<ADScalar>(m, d, x.head(model.nq), x.segment(model.nq, model.nv), x.tail(model.nv), ADScalar(dt), integrator,
                   qn, vn);
    out << qn, vn;
    return out;
  };
  return ad_jacobian(f, x0);
}

// The same Jacobian from one step_vjp per output.
inline Eigen::MatrixXd step_jacobian_vjp(const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                  const Eigen::VectorXd& tau, double dt, Integrator integrator) {
  Data d(model);
  const int nx = model.nq + model.nv;
  Eigen::MatrixXd J(nx, model.nq + 2 * model.nv);
  for (int r = 0; r < nx; ++r) {
    const Eigen::VectorXd seed = Eigen::VectorXd::Unit(nx, r);
    Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                    tau_bar = Eigen::VectorXd::Zero(model.nv);
    ModelTangent model_bar(model);
    step_vjp<double>(model, d, q, v, tau, dt, integrator, seed.head(model.nq), seed.tail(model.nv), q_bar, v_bar,
                     tau_bar, model_bar);
    J.row(r) << q_bar.transpose(), v_bar.transpose(), tau_bar.transpose();
  }
  return J;
}

}  // namespace gradyn::test
