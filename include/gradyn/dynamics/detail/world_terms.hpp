// Per-body terms shared by the world-frame dynamics passes (rnea, aba, crba). Internal.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn::detail {

/// X Rx(angle) (k = 0), X Ry(angle) (k = 1) or X Rz(angle) (k = 2), given the cosine c and sine s:
/// column k stays, the two others mix.
template <int k, class S>
inline void times_principal_rotation(const Matrix3<S>& X, const S& c, const S& s, Matrix3<S>& out) {
  constexpr int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  out.col(k) = X.col(k);
  out.col(k1) = c * X.col(k1) + s * X.col(k2);
  out.col(k2) = c * X.col(k2) - s * X.col(k1);
}

/// out = X Rj, where Rj rotates by the angle (cosine c, sine s) about the joint axis a:
/// Rj = I + s [a]x + (1 - c) [a]x [a]x (axis_angle_to_matrix's formula, also for a non-unit a), with
/// [a]x [a]x = a a^T - |a|^2 I. For double, an axis that is exactly +-x, +-y or +-z (most URDF joints)
/// mixes two columns of X and keeps the third (Pinocchio's RX, RY, RZ joints); the AD scalar always
/// takes the general formula, since its axis may carry derivatives.
template <class S>
inline void times_axis_rotation(const Matrix3<S>& X, const Vector3<S>& a, const S& c, const S& s, Matrix3<S>& out) {
  if constexpr (std::is_same_v<S, double>) {
    using std::abs;
    if (a[1] == 0.0 && a[2] == 0.0 && abs(a[0]) == 1.0) return times_principal_rotation<0>(X, c, a[0] * s, out);
    if (a[0] == 0.0 && a[2] == 0.0 && abs(a[1]) == 1.0) return times_principal_rotation<1>(X, c, a[1] * s, out);
    if (a[0] == 0.0 && a[1] == 0.0 && abs(a[2]) == 1.0) return times_principal_rotation<2>(X, c, a[2] * s, out);
  }
  const S t = S(1) - c;
  const S d = S(1) - t * a.squaredNorm();
  const Vector3<S> ta = t * a, sa = s * a;
  Matrix3<S> Rj;
  Rj << d + ta.x() * a.x(), ta.x() * a.y() - sa.z(), ta.x() * a.z() + sa.y(),  //
      ta.y() * a.x() + sa.z(), d + ta.y() * a.y(), ta.y() * a.z() - sa.x(),    //
      ta.z() * a.x() - sa.y(), ta.z() * a.y() + sa.x(), d + ta.z() * a.z();
  out.noalias() = X * Rj;
}

/// out = liMi of body i: its joint placement times the joint transform at q. One-DoF joints skip the
/// general product (a revolute joint only rotates the placement's axes, a prismatic one only moves it).
template <class S>
inline void joint_pose(const ModelTpl<S>& model, const VecRef<S>& q, int i, Pose<S>& out) {
  using std::cos;
  using std::sin;
  const Pose<S>& P = model.joint_placement[i];
  switch (model.joint_type[i]) {
    case JointType::Revolute:
    case JointType::Continuous: {
      const S& th = q[model.idx_q[i]];
      times_axis_rotation<S>(P.R, model.joint_axis[i], cos(th), sin(th), out.R);
      out.p = P.p;
      return;
    }
    case JointType::Prismatic:
      out.R = P.R;
      out.p.noalias() = P.R * model.joint_axis[i];
      out.p = P.p + out.p * q[model.idx_q[i]];
      return;
    default:
      out = P * joint_transform<S>(model.joint_type[i], model.joint_axis[i],
                                   q.segment(model.idx_q[i], model.joint_nq(i)));
  }
}

template <class S>
inline void world_motion_subspace(const ModelTpl<S>& model, DataTpl<S>& data, int i);

/// oMi and the world-frame motion subspace oS of body i (its parent already done), and liMi unless
/// kKeepLocalPose is false (CRBA reads only the world terms; liMi may then be left stale).
template <class S, bool kKeepLocalPose = true>
inline void world_body_pose(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, int i) {
  const int p = model.parent[i];
  if constexpr (std::is_same_v<S, double>) {
    const JointType type = model.joint_type[i];
    // A revolute joint whose placement does not rotate (most URDF joints: origin rpy="0 0 0"): the
    // body's world axes are its parent's turned about the joint axis, without a 3x3 product. (The AD
    // scalar takes the general path: its placement may carry derivatives.)
    if (p >= 0 && (type == JointType::Revolute || type == JointType::Continuous) &&
        model.joint_placement[i].R == Matrix3<S>::Identity()) {
      const double th = q[model.idx_q[i]], c = std::cos(th), s = std::sin(th);
      const Pose<S>& P = data.oMi[p];
      if constexpr (kKeepLocalPose) {
        Pose<S>& L = data.liMi[i];
        times_axis_rotation<S>(model.joint_placement[i].R, model.joint_axis[i], c, s, L.R);
        L.p = model.joint_placement[i].p;
        times_axis_rotation<S>(P.R, model.joint_axis[i], c, s, data.oMi[i].R);
        data.oMi[i].p.noalias() = P.R * L.p;
      } else {
        times_axis_rotation<S>(P.R, model.joint_axis[i], c, s, data.oMi[i].R);
        data.oMi[i].p.noalias() = P.R * model.joint_placement[i].p;
      }
      data.oMi[i].p += P.p;
      world_motion_subspace(model, data, i);
      return;
    }
  }
  joint_pose(model, q, i, data.liMi[i]);
  if (p >= 0) {
    const Pose<S>& P = data.oMi[p];
    data.oMi[i].R.noalias() = P.R * data.liMi[i].R;
    data.oMi[i].p.noalias() = P.R * data.liMi[i].p;
    data.oMi[i].p += P.p;
  } else {
    data.oMi[i] = data.liMi[i];
  }
  world_motion_subspace(model, data, i);
}

/// The world-frame motion subspace oS of body i, its pose oMi set.
template <class S>
inline void world_motion_subspace(const ModelTpl<S>& model, DataTpl<S>& data, int i) {
  const JointType type = model.joint_type[i];
  const Pose<S>& X = data.oMi[i];
  S* oS = data.oS[i].data();  // column-major 6 x nv
  if (type == JointType::Revolute || type == JointType::Continuous) {  // oS = [R a; p x R a]
    Eigen::Map<Vector3<S>> w(oS);
    w.noalias() = X.R * model.joint_axis[i];
    Eigen::Map<Vector3<S>>(oS + 3) = X.p.cross(w);
  } else if (type == JointType::Prismatic) {  // oS = [0; R a]
    Eigen::Map<Vector3<S>>(oS).setZero();
    Eigen::Map<Vector3<S>>(oS + 3).noalias() = X.R * model.joint_axis[i];
  } else if (type == JointType::Free) {  // linear columns [0; R e_k], then angular [R e_k; p x R e_k]
    for (int k = 0; k < 3; ++k) {
      Eigen::Map<Vector3<S>>(oS + 6 * k).setZero();
      Eigen::Map<Vector3<S>>(oS + 6 * k + 3) = X.R.col(k);
      Eigen::Map<Vector3<S>>(oS + 6 * (3 + k)) = X.R.col(k);
      Eigen::Map<Vector3<S>>(oS + 6 * (3 + k) + 3) = X.p.cross(Vector3<S>(X.R.col(k)));
    }
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

/// Body i's step of RNEA's forward recursion (body frame), its parent already done and data.liMi[i]
/// already set: the body's velocity, acceleration (gravity included) and the force its own inertia
/// needs. Shared by rnea and rnea_vjp.
template <class S>
inline void rnea_forward_body(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& v, const VecRef<S>& a,
                              const Vector6<S>& a_world, int i) {
  const Pose<S>& X = data.liMi[i];
  const int p = model.parent[i];
  const int iv = model.idx_v[i], nvi = model.joint_nv(i);
  const auto& Sj = data.joint_S[i];
  Vector6<S> vj, aj;
  if (nvi == 1) {
    vj = Sj.col(0) * v[iv];
    aj = Sj.col(0) * a[iv];
  } else {
    vj.noalias() = Sj * v.segment(iv, nvi);
    aj.noalias() = Sj * a.segment(iv, nvi);
  }
  if (p >= 0) {
    data.v[i] = X.act_inv_motion(data.v[p]) + vj;
    data.a[i] = X.act_inv_motion(data.a[p]) + aj + cross_motion<S>(data.v[i], vj);
  } else {
    data.v[i] = vj;
    data.a[i] = X.act_inv_motion(a_world) + aj;
  }
  const Inertia<S>& I = model.body_inertia[i];
  data.f[i] = I * data.a[i] + cross_force<S>(data.v[i], I * data.v[i]);
}

}  // namespace gradyn::detail
