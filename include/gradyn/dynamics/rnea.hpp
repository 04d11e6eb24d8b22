// Recursive Newton-Euler: inverse dynamics tau = M(q) a + C(q, v) v + g(q) (armature included
// in M; passive spring and damper forces are not part of it, see passive.hpp).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Returns data.tau. Also fills data.liMi, v, a (gravity included), f (body frame; not oMi).
template <class S>
const VectorX<S>& rnea(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a);

/// C(q, v) v + g(q) = rnea(q, v, 0). Returns data.tau.
template <class S>
const VectorX<S>& nonlinear_effects(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                    const VecRef<S>& v);

/// g(q) = rnea(q, 0, 0). Returns data.tau.
template <class S>
const VectorX<S>& generalized_gravity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q);

/// Adjoint of rnea: accumulates tau_bar^T d rnea / d(q, v, a, model parameters) into q_bar
/// (size nq, ambient), v_bar, a_bar and model_bar. Recomputes the forward pass itself.
template <class S>
void rnea_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& a,
              const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> a_bar,
              ModelTangentTpl<S>& model_bar);

}  // namespace gradyn
