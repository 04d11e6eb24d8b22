// Contact Jacobians in generalised coordinates, shared by the velocity-level contact models.
//
// The row of contact c along a world direction d gives the relative velocity of geom b's material
// point minus geom a's at the contact point p: J_d v = d . (v_b(p) - v_a(p)). Column j of joint i (an
// ancestor-or-self of the body) contributes S_j^world . [p x d; d]: the joint's world-frame motion
// subspace (about the world origin) against the unit force d at p written as a wrench about the
// origin. Geoms on the world (body -1) contribute nothing.
//
// Used by the interior-point contact (contact/ipm_contact.cpp, ipm_contact_vjp.cpp); PGS builds the
// same rows (pgs_contact.cpp) and could share these.
#pragma once

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/data.hpp"
#include "gradyn/model/params.hpp"

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

/// Adjoint of the contact Jacobians (the rows add_contact_frame_jacobian builds, 3 per contact) for
/// J_bar += a z^T: a holds one weight per row (3 k + r: contact k, frame column r), z is a
/// generalised velocity. Row r of contact k is J w = d . (u_b(p) - u_a(p)), u(p) = v0 + omega x p
/// from the world velocities [omega; v0] under w, d = frame column r; so with u_rel, w_rel the
/// relative point and angular velocities under z: d_bar += a u_rel, p_bar += a d x w_rel, and the
/// bodies' world velocities get +-a [p x d; d], whose adjoint (world_velocities_vjp) reaches the
/// body poses and the joint axes. Accumulates data.contact_bar[k] (k < ncontacts), data.adj_pose_bar
/// and model_bar; uses data.adj_ow / adj_ow_bar, and z_bar_scratch (nv) for z's own adjoint (discarded).
template <class S>
void add_contact_jacobian_rank_one_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VectorX<S>& a,
                                       const VecRef<S>& z, VectorX<S>& z_bar_scratch, ModelTangentTpl<S>& model_bar) {
  const int nb = model.nbodies();
  world_velocities<S>(model, data, z, data.adj_ow);
  for (int i = 0; i < nb; ++i) data.adj_ow_bar[i].setZero();
  const Vector6<S> at_rest = Vector6<S>::Zero();
  for (int k = 0; k < data.ncontacts; ++k) {
    const ContactTpl<S>& c = data.contacts[k];
    const int ba = model.geoms[c.geom_a].body, bb = model.geoms[c.geom_b].body;
    const Vector6<S>& Va = ba >= 0 ? data.adj_ow[ba] : at_rest;
    const Vector6<S>& Vb = bb >= 0 ? data.adj_ow[bb] : at_rest;
    const Vector3<S> w_rel = Vb.template head<3>() - Va.template head<3>();
    const Vector3<S> u_rel = Vb.template tail<3>() - Va.template tail<3>() + w_rel.cross(c.point);
    ContactBarTpl<S>& cbar = data.contact_bar[k];
    for (int r = 0; r < 3; ++r) {
      const S w = a[3 * k + r];
      if (is_inert_zero(w)) continue;
      const Vector3<S> d = c.frame.col(r);
      cbar.frame.col(r) += w * u_rel;
      cbar.point += w * d.cross(w_rel);
      Vector6<S> wrench;
      wrench << c.point.cross(d), d;
      if (bb >= 0) data.adj_ow_bar[bb] += w * wrench;
      if (ba >= 0) data.adj_ow_bar[ba] -= w * wrench;
    }
  }
  z_bar_scratch.setZero();
  world_velocities_vjp<S>(model, data, z, data.adj_ow_bar, z_bar_scratch, data.adj_pose_bar, &model_bar);
}

/// Adjoint of weight * z^T M(q) x (M symmetric, armature included) by polarisation into two
/// quadratic forms (mass_quadratic_vjp); scratch (nv) holds z +- x. Accumulates data.adj_pose_bar and
/// model_bar.
template <class S>
void mass_bilinear_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VectorX<S>& z, const VectorX<S>& x,
                       const S& weight, VectorX<S>& scratch, ModelTangentTpl<S>& model_bar) {
  scratch = z + x;
  mass_quadratic_vjp<S>(model, data, scratch, S(0.25) * weight, data.adj_pose_bar, model_bar);
  scratch = z - x;
  mass_quadratic_vjp<S>(model, data, scratch, S(-0.25) * weight, data.adj_pose_bar, model_bar);
}

}  // namespace gradyn::detail
