// Passive joint forces (springs and viscous damping) and the forward dynamics the step
// integrates: a = aba(q, v, tau + passive(q, v)).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// data.tau_passive = -damping * v - stiffness * (q (-) q_rest), minus each fixed tendon's
/// J^T (stiffness (L - spring_length) + damping L_dot) (model.hpp, FixedTendon). Returns it.
template <class S>
const VectorX<S>& passive_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                 const VecRef<S>& v);

/// Accelerations under tau plus the passive forces. Returns data.ddq.
template <class S>
const VectorX<S>& forward_dynamics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                   const VecRef<S>& v, const VecRef<S>& tau);

/// Adjoint of passive_forces (accumulates into q_bar (nq, ambient), v_bar and model_bar; the tendons'
/// stiffness, damping and spring length are not parameters).
template <class S>
void passive_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& tau_passive_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        ModelTangentTpl<S>& model_bar);

/// Adjoint of forward_dynamics (accumulates into q_bar (nq, ambient), v_bar, tau_bar, model_bar).
/// forward_is_current: the last call on data was forward_dynamics(q, v, tau) with these very
/// arguments; its results are reused instead of recomputed.
template <class S>
void forward_dynamics_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& tau, const VecRef<S>& ddq_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                          VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current = false);

}  // namespace gradyn
