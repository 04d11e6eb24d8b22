// Energies, centre of mass and momentum: the invariants tests and users check.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// 1/2 v^T M(q) v (armature included). Runs forward_kinematics(q, v).
template <class S>
S kinetic_energy(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v);

/// Gravitational potential -sum m_i g.c_i plus spring energy 1/2 k (q (-) q_rest)^2.
template <class S>
S potential_energy(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q);

/// Total mass of the bodies (the world excluded).
template <class S>
S total_mass(const ModelTpl<S>& model);

/// Centre of mass of the whole model in the world frame.
template <class S>
Vector3<S> center_of_mass(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q);

/// Spatial momentum of the whole model about the world origin, world frame: [angular; linear].
template <class S>
Vector6<S> spatial_momentum(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v);

}  // namespace gradyn
