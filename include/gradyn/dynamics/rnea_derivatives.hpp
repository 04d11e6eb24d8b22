// Analytical partial derivatives of inverse dynamics, tau = rnea(q, v, a), with respect to the
// configuration (tangent directions) and the velocity, in one pass over the tree: the world-frame
// method of Carpentier & Mansard ("Analytical derivatives of rigid body dynamics algorithms",
// RSS 2018), re-derived for gradyn's conventions (src/dynamics/rnea_derivatives.cpp has the
// derivation). Used by the step's analytical Jacobian (sim/step_jacobian.hpp), where building a
// whole Jacobian from these costs a few passes instead of one pass per direction.
//
// Tangent directions: column c of d tau / dq is the derivative along q (+) eps e_c (joint_integrate,
// integrate.hpp): every joint moves its child by its own motion subspace, in the child frame.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// dtau_dq, dtau_dv (nv x nv, overwritten): the derivatives of rnea(q, v, a) (rigid-body terms;
/// the armature term has none). Also fills the joint-space inertia matrix data.M (armature
/// included) from the same composite inertias, and data.oMi, oS, ov, oc, oa, oI, oIc. Its workspace is in data (preallocated).
template <class S>
void rnea_derivatives(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& a, Eigen::Ref<MatrixX<S>> dtau_dq, Eigen::Ref<MatrixX<S>> dtau_dv);

}  // namespace gradyn
