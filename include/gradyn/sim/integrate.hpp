// Configuration-space operations over the whole model: q (+) dv, q1 (-) q0, neutral q.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// q_out = q (+) dv (see joint.hpp for each joint's manifold). q_out may alias q.
template <class S>
void integrate(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& dv, VecOut<S> q_out);

/// d = q1 (-) q0, so that integrate(q0, d) = q1.
template <class S>
void difference(const ModelTpl<S>& model, const VecRef<S>& q0, const VecRef<S>& q1, VecOut<S> d);

/// Zero angles, identity quaternions.
template <class S>
VectorX<S> neutral_configuration(const ModelTpl<S>& model);

/// Renormalises every quaternion in q (in place).
template <class S>
void normalize_configuration(const ModelTpl<S>& model, VecOut<S> q);

/// Adjoint of integrate: accumulates q_out_bar^T d integrate / d(q, dv) into q_bar (nq, ambient)
/// and dv_bar (nv).
template <class S>
void integrate_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& dv, const VecRef<S>& q_out_bar,
                   VecOut<S> q_bar, VecOut<S> dv_bar);

}  // namespace gradyn
