// The Lie-group pieces of the RK4 (Runge-Kutta-Munthe-Kaas) step, shared by step and step_vjp.
// Internal.
#pragma once

#include "gradyn/model/model.hpp"

namespace gradyn::detail {

inline bool is_group_joint(JointType t) {
  return t == JointType::Spherical || t == JointType::Free || t == JointType::Planar;
}

// Lie bracket [x, y] of two tangent vectors of one joint (zero on vector-space joints).
template <class S>
inline void joint_bracket(JointType type, const S* x, const S* y, S* out) {
  switch (type) {
    case JointType::Spherical: {  // so(3): x cross y
      const Vector3<S> r = Vector3<S>(x[0], x[1], x[2]).cross(Vector3<S>(y[0], y[1], y[2]));
      for (int k = 0; k < 3; ++k) out[k] = r[k];
      break;
    }
    case JointType::Free: {  // se(3) with (linear, angular): [(v1,w1),(v2,w2)] = (w1 x v2 - w2 x v1, w1 x w2)
      const Vector3<S> v1(x[0], x[1], x[2]), w1(x[3], x[4], x[5]), v2(y[0], y[1], y[2]), w2(y[3], y[4], y[5]);
      const Vector3<S> lin = w1.cross(v2) - w2.cross(v1), ang = w1.cross(w2);
      for (int k = 0; k < 3; ++k) out[k] = lin[k], out[3 + k] = ang[k];
      break;
    }
    case JointType::Planar:  // se(2) with (vx, vy, w)
      out[0] = -x[2] * y[1] + y[2] * x[1];
      out[1] = x[2] * y[0] - y[2] * x[0];
      out[2] = S(0);
      break;
    default:
      for (int k = 0; k < joint_nv(type); ++k) out[k] = S(0);
  }
}

// The stage derivative of the Lie-algebra offset theta for q(t) = q0 (+) theta(t) with body
// velocity xi: dexp^-1_{-theta}(xi) = xi + [theta, xi]/2 + [theta, [theta, xi]]/12, truncated
// where RK4 needs it (Munthe-Kaas). Keeps RK4 fourth-order on quaternion and planar joints.
template <class S>
inline void dexpinv(const ModelTpl<S>& model, const VectorX<S>& theta, const VectorX<S>& xi, VectorX<S>& out) {
  out = xi;
  for (int i = 0; i < model.nbodies(); ++i) {
    const JointType t = model.joint_type[i];
    if (!is_group_joint(t)) continue;
    const int iv = model.idx_v[i];
    S b1[6], b2[6];
    joint_bracket<S>(t, theta.data() + iv, xi.data() + iv, b1);
    joint_bracket<S>(t, theta.data() + iv, b1, b2);
    for (int k = 0; k < model.joint_nv(i); ++k) out[iv + k] += b1[k] / S(2) + b2[k] / S(12);
  }
}

}  // namespace gradyn::detail
