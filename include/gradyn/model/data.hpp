// Data: the workspace of the algorithms for one Model. Allocated once by the constructor; no
// algorithm allocates afterwards. Each field says which algorithm fills it and in which frame.
#pragma once

#include <cstdint>
#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn {

/// Numerical trouble is reported here, never thrown (it must not abort a batch).
enum StatusFlag : std::uint32_t {
  kStatusOk = 0,
  kStatusNonFinite = 1u << 0,      // a NaN or inf appeared in the output state or accelerations
  kStatusSingularInertia = 1u << 1,  // a joint's articulated inertia was not invertible
};

template <class S>
struct DataTpl {
  using Scalar = S;
  using Matrix6XS = Matrix6X<S>;
  using MatrixDof = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  using VectorDof = Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1>;

  explicit DataTpl(const ModelTpl<S>& model);

  // kinematics (forward_kinematics, and every dynamics pass)
  std::vector<Pose<S>> liMi;      // body pose in its parent body frame
  std::vector<Pose<S>> oMi;       // body pose in the world
  std::vector<Vector6<S>> v;      // body spatial velocity, body frame
  std::vector<Vector6<S>> a;      // body spatial acceleration, body frame (gravity included in ABA/RNEA)
  std::vector<Matrix6XS> joint_S; // joint motion subspace, body frame (constant; filled at construction)
  std::vector<Pose<S>> oMf;       // frame poses in the world (update_frames)

  // RNEA
  std::vector<Vector6<S>> f;      // force transmitted by the joint into the body, body frame
  VectorX<S> tau;                 // rnea output (size nv)

  // ABA
  std::vector<Vector6<S>> c;      // velocity-product acceleration v x (S qd)
  std::vector<Matrix6<S>> Ia;     // articulated inertia, body frame
  std::vector<Vector6<S>> pA;     // articulated bias force, body frame
  std::vector<Matrix6XS> U;       // Ia S
  std::vector<MatrixDof> Dinv;    // (S^T Ia S + armature)^-1
  std::vector<VectorDof> u;       // tau - S^T pA
  VectorX<S> ddq;                 // aba output (size nv)

  // CRBA
  std::vector<Matrix6<S>> Ic;     // composite rigid-body inertia, body frame
  MatrixX<S> M;                   // joint-space inertia matrix (crba output, both triangles)

  // forces and passive terms
  VectorX<S> tau_passive;         // -damping v - stiffness (q (-) q_rest)
  VectorX<S> tau_total;           // tau + tau_passive (forward_dynamics)

  // integration workspace (step)
  VectorX<S> q_tmp, v_tmp, dv_tmp, k_q[4], k_v[4];

  std::uint32_t status = kStatusOk;
};

using Data = DataTpl<double>;

template <class S>
DataTpl<S>::DataTpl(const ModelTpl<S>& model) {
  const int nb = model.nbodies();
  liMi.resize(nb);
  oMi.resize(nb);
  v.assign(nb, Vector6<S>::Zero());
  a.assign(nb, Vector6<S>::Zero());
  f.assign(nb, Vector6<S>::Zero());
  c.assign(nb, Vector6<S>::Zero());
  Ia.assign(nb, Matrix6<S>::Zero());
  Ic.assign(nb, Matrix6<S>::Zero());
  pA.assign(nb, Vector6<S>::Zero());
  joint_S.resize(nb);
  U.resize(nb);
  Dinv.resize(nb);
  u.resize(nb);
  for (int i = 0; i < nb; ++i) {
    const int nvi = model.joint_nv(i);
    joint_S[i] = joint_subspace<S>(model.joint_type[i], model.joint_axis[i]);
    U[i] = Matrix6XS::Zero(6, nvi);
    Dinv[i] = MatrixDof::Zero(nvi, nvi);
    u[i] = VectorDof::Zero(nvi);
  }
  oMf.resize(model.frames.size());
  tau = VectorX<S>::Zero(model.nv);
  ddq = VectorX<S>::Zero(model.nv);
  M = MatrixX<S>::Zero(model.nv, model.nv);
  tau_passive = VectorX<S>::Zero(model.nv);
  tau_total = VectorX<S>::Zero(model.nv);
  q_tmp = VectorX<S>::Zero(model.nq);
  v_tmp = VectorX<S>::Zero(model.nv);
  dv_tmp = VectorX<S>::Zero(model.nv);
  for (int k = 0; k < 4; ++k) {
    k_q[k] = VectorX<S>::Zero(model.nv);
    k_v[k] = VectorX<S>::Zero(model.nv);
  }
}

}  // namespace gradyn
