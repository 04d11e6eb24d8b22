// Articulated-body algorithm: forward dynamics a = M(q)^-1 (tau - C(q, v) v - g(q)) in O(n).
// Pure rigid-body dynamics (armature included); forward_dynamics() adds the passive forces.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Returns data.ddq. Also fills data.liMi, oMi, oS, ov, oc, oI, oIa, opA, U, Dinv, u and oa (world
/// frame, gravity included); not the body-frame v and a.
/// Sets kStatusSingularInertia in data.status if a joint's articulated inertia is singular.
template <class S>
const VectorX<S>& aba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& tau);

/// Adjoint of aba: accumulates ddq_bar^T d aba / d(q, v, tau, model parameters) into q_bar (nq,
/// ambient), v_bar, tau_bar and model_bar. By the implicit function theorem on rnea(q, v, a) = tau:
/// mu = M^-1 ddq_bar, tau_bar += mu, and (q, v, model)_bar -= mu^T d rnea / d(q, v, model) at a.
/// forward_is_current: the last call on data was aba(q, v, tau) with these very arguments, so its
/// results are reused instead of recomputed (the step adjoint uses this).
template <class S>
void aba_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
             const VecRef<S>& ddq_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar,
             ModelTangentTpl<S>& model_bar, bool forward_is_current = false);

/// x = M(q)^-1 b in O(n), reusing the articulated inertias of the last aba(q, ...) call on data.
template <class S>
void minv_solve(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& b, VecOut<S> x);

}  // namespace gradyn
