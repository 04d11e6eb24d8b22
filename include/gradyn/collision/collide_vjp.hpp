// Reverse mode of collision detection: adjoints of the contacts collide() reported (point, frame,
// depth) -> adjoints of the body poses (wrenches, see dynamics/kinematics_vjp.hpp) and of the geoms'
// sizes and placements. The contact set and the branches of the narrowphase are held fixed (they are
// discrete choices made on values); within them the map is smooth and this is its exact adjoint.
#pragma once

#include <vector>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

// ContactBarTpl (the adjoint of one contact) is in collision/geometry.hpp.

/// contact_bar[c] for c in [0, data.ncontacts) (the contacts collide() left in data, at the
/// configuration whose data.oMi / data.oMg are current): accumulates pose_bar (nbodies, wrenches)
/// for the bodies the geoms are attached to (world geoms have none) and model_bar's geom fields
/// (geom_size, geom_placement_R, geom_placement_p). The normal's adjoint is frame.col(0).
template <class S>
void collide_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const std::vector<ContactBarTpl<S>>& contact_bar,
                 std::vector<Vector6<S>>& pose_bar, ModelTangentTpl<S>& model_bar);

/// Forward mode of collide() for contact c of data: rows point (0-2), frame column-major (3-11;
/// the normal is 3-5), depth (12); columns the left world twist xi = [dtheta; dp0] of geom a's pose
/// (0-5) and of geom b's (6-11), zero for a world geom. Same contact set and branches as collide_vjp.
using ContactJacobian = Eigen::Matrix<double, 13, 12>;

/// jac[c] for c in [0, data.ncontacts) (jac needs that many entries; data.oMg and data.contacts
/// from the same collide()). Never allocates.
void collide_jacobian(const Model& model, const Data& data, std::vector<ContactJacobian>& jac);

}  // namespace gradyn
