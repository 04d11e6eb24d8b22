// Per-body terms shared by the world-frame dynamics passes (rnea, aba, crba). Internal.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn::detail {

/// liMi, oMi and the world-frame motion subspace oS of body i (its parent already done).
template <class S>
inline void world_body_pose(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int i) {
  data.liMi[i] = model.joint_placement[i] *
                 joint_transform<S>(model.joint_type[i], model.joint_axis[i], q.segment(model.idx_q[i], model.joint_nq(i)));
  const int p = model.parent[i];
  data.oMi[i] = p >= 0 ? data.oMi[p] * data.liMi[i] : data.liMi[i];
  const JointType type = model.joint_type[i];
  if (type == JointType::Revolute || type == JointType::Continuous) {  // oS = [R a; p x R a]
    const Vector3<S> w = data.oMi[i].R * model.joint_axis[i];
    data.oS[i].col(0) << w, data.oMi[i].p.cross(w);
  } else if (type == JointType::Prismatic) {  // oS = [0; R a]
    data.oS[i].col(0) << Vector3<S>::Zero(), data.oMi[i].R * model.joint_axis[i];
  } else {
    for (int k = 0; k < model.joint_nv(i); ++k)
      data.oS[i].col(k) = data.oMi[i].act_motion(Vector6<S>(data.joint_S[i].col(k)));
  }
}

/// Body i's rigid-body inertia as a 6x6 matrix in the world frame, about the world origin.
template <class S>
inline Matrix6<S> world_inertia(const Inertia<S>& I, const Pose<S>& oMi) {
  const Vector3<S> c = oMi.act_point(I.com);
  const Matrix3<S> cx = skew(c);
  const Matrix3<S> mcx = I.mass * cx;
  Matrix6<S> M;
  M.template topLeftCorner<3, 3>() = oMi.R * I.inertia_com * oMi.R.transpose() - mcx * cx;
  M.template topRightCorner<3, 3>() = mcx;
  M.template bottomLeftCorner<3, 3>() = -mcx;
  M.template bottomRightCorner<3, 3>() = I.mass * Matrix3<S>::Identity();
  return M;
}

/// [0; -g]: gravity enters the passes as an upward acceleration of the world (Featherstone).
template <class S>
inline Vector6<S> world_acceleration(const ModelTpl<S>& model) {
  Vector6<S> a = Vector6<S>::Zero();
  a.template tail<3>() = -model.gravity;
  return a;
}

/// Body i's step of RNEA's forward recursion (body frame), its parent already done: liMi from
/// the joint transform Mj, then the body's velocity, acceleration (gravity included) and the
/// force its own inertia needs. Shared by rnea and rnea_vjp.
template <class S>
inline void rnea_forward_body(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& v, const VecRef<S>& a,
                              const Vector6<S>& a_world, int i, const Pose<S>& Mj) {
  data.liMi[i] = model.joint_placement[i] * Mj;
  const int p = model.parent[i];
  const int iv = model.idx_v[i], nvi = model.joint_nv(i);
  const auto& Sj = data.joint_S[i];
  const Vector6<S> vj = Sj * v.segment(iv, nvi);
  const Vector6<S> aj = Sj * a.segment(iv, nvi);
  if (p >= 0) {
    data.v[i] = data.liMi[i].act_inv_motion(data.v[p]) + vj;
    data.a[i] = data.liMi[i].act_inv_motion(data.a[p]) + aj + cross_motion<S>(data.v[i], vj);
  } else {
    data.v[i] = vj;
    data.a[i] = data.liMi[i].act_inv_motion(a_world) + aj;
  }
  const Inertia<S>& I = model.body_inertia[i];
  data.f[i] = I * data.a[i] + cross_force<S>(data.v[i], I * data.v[i]);
}

}  // namespace gradyn::detail
