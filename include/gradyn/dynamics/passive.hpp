// Passive joint forces (springs and viscous damping) and the forward dynamics the step
// integrates: a = aba(q, v, tau + passive(q, v)).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// data.tau_passive = -damping * v - stiffness * (q (-) q_rest). Returns it.
template <class S>
const VectorX<S>& passive_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                 const VecRef<S>& v);

/// Accelerations under tau plus the passive forces. Returns data.ddq.
template <class S>
const VectorX<S>& forward_dynamics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                   const VecRef<S>& v, const VecRef<S>& tau);

}  // namespace gradyn
