// The Lie-group piece of the RK4 (Runge-Kutta-Munthe-Kaas) step, shared by step and step_vjp (the
// brackets themselves are each joint kind's, joints/<kind>.hpp).
// Internal.
#pragma once

#include "gradyn/model/model.hpp"

namespace gradyn::detail {

// The stage derivative of the Lie-algebra offset theta for q(t) = q0 (+) theta(t) with body
// velocity xi: dexp^-1_{-theta}(xi) = xi + [theta, xi]/2 + [theta, [theta, xi]]/12, truncated
// where RK4 needs it (Munthe-Kaas). Keeps RK4 fourth-order on quaternion and planar joints.
template <class S>
inline void dexpinv(const ModelTpl<S>& model, const VectorX<S>& theta, const VectorX<S>& xi, VectorX<S>& out) {
  out = xi;
  for (int i = 0; i < model.nbodies(); ++i) {
    const JointType t = model.joint_type[i];
    if (!joint_is_group(t)) continue;
    const int iv = model.idx_v[i];
    S b1[6], b2[6];
    joint_bracket<S>(t, theta.data() + iv, xi.data() + iv, b1);
    joint_bracket<S>(t, theta.data() + iv, b1, b2);
    for (int k = 0; k < model.joint_nv(i); ++k) out[iv + k] += b1[k] / S(2) + b2[k] / S(12);
  }
}

}  // namespace gradyn::detail
