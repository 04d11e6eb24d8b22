// Articulated-body algorithm: forward dynamics a = M(q)^-1 (tau - C(q, v) v - g(q)) in O(n).
// Pure rigid-body dynamics (armature included); forward_dynamics() adds the passive forces.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Returns data.ddq. Also fills data.liMi, oMi, v, a (gravity included), Ia, pA, U, Dinv, u.
/// Sets kStatusSingularInertia in data.status if a joint's articulated inertia is singular.
template <class S>
const VectorX<S>& aba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& tau);

}  // namespace gradyn
