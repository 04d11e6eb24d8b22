// Composite rigid-body algorithm: the joint-space inertia matrix M(q), armature on its diagonal.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Returns data.M, both triangles filled. Also fills data.liMi, oMi, oS, oYc.
template <class S>
const MatrixX<S>& crba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q);

}  // namespace gradyn
