// Frame and point Jacobians: J v gives the frame's spatial velocity.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

enum class ReferenceFrame : std::uint8_t {
  Local,               // [w; v] of the frame, in the frame's own axes
  World,               // spatial velocity in world axes about the world origin (Featherstone)
  LocalWorldAligned,   // [w; v] of the frame's origin, in world axes
};

/// 6 x nv Jacobian of a frame (model.frames index). Runs forward_kinematics(q).
/// Rows are [angular; linear].
template <class S>
void frame_jacobian(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int frame, ReferenceFrame ref,
                    MatrixX<S>& J);

/// 3 x nv Jacobian of the world velocity of a point fixed on a body (point in body coordinates).
template <class S>
void point_jacobian(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int body,
                    const Vector3<S>& point, MatrixX<S>& J);

}  // namespace gradyn
