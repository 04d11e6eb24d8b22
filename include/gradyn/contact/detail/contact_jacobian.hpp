// Contact Jacobians in generalised coordinates, shared by the velocity-level contact models.
//
// The row of contact c along a world direction d gives the relative velocity of geom b's material
// point minus geom a's at the contact point p: J_d v = d . (v_b(p) - v_a(p)). Column j of joint i (an
// ancestor-or-self of the body) contributes S_j^world . [p x d; d]: the joint's world-frame motion
// subspace (about the world origin) against the unit force d at p written as a wrench about the
// origin. Geoms on the world (body -1) contribute nothing.
#pragma once

#include "gradyn/model/data.hpp"

namespace gradyn::detail {

/// Adds sign * (Jacobian of body's material point `point` along each column of `directions`, 3
/// unit world vectors) into the 3 columns of JT (nv x 3). Needs data.oMi at the current q.
template <class S, class Block>
void add_point_jacobian(const ModelTpl<S>& model, const DataTpl<S>& data, int body, const Vector3<S>& point,
                        const Matrix3<S>& directions, const S& sign, Block&& JT) {
  Eigen::Matrix<S, 6, 3> wrenches;  // unit forces along the directions at `point`, about the world origin
  for (int r = 0; r < 3; ++r) {
    wrenches.col(r).template head<3>() = sign * point.cross(Vector3<S>(directions.col(r)));
    wrenches.col(r).template tail<3>() = sign * directions.col(r);
  }
  for (int i = body; i >= 0; i = model.parent[i]) {
    const int iv = model.idx_v[i];
    for (int j = 0; j < model.joint_nv(i); ++j) {
      const Vector6<S> motion = data.oMi[i].act_motion(Vector6<S>(data.joint_S[i].col(j)));
      JT.row(iv + j) += motion.transpose() * wrenches;
    }
  }
}

/// Adds the relative-velocity Jacobian of contact c along its frame's columns (normal, tangent1,
/// tangent2) into the 3 columns of JT (nv x 3): b's point velocity minus a's.
template <class S, class Block>
void add_contact_frame_jacobian(const ModelTpl<S>& model, const DataTpl<S>& data, const ContactTpl<S>& c,
                                Block&& JT) {
  const int body_a = model.geoms[c.geom_a].body, body_b = model.geoms[c.geom_b].body;
  if (body_b >= 0) add_point_jacobian<S>(model, data, body_b, c.point, c.frame, S(1), JT);
  if (body_a >= 0) add_point_jacobian<S>(model, data, body_a, c.point, c.frame, S(-1), JT);
}

}  // namespace gradyn::detail
