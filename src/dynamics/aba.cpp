#include "gradyn/dynamics/aba.hpp"

#include <Eigen/LU>

#include "gradyn/autodiff.hpp"

namespace gradyn {

template <class S>
const VectorX<S>& aba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& tau) {
  using std::isfinite;
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau", tau.size(), model.nv);
  const int nb = model.nbodies();

  // Pass 1 (root to leaves): poses, velocities, velocity-product accelerations, bias forces.
  for (int i = 0; i < nb; ++i) {
    data.liMi[i] = model.joint_placement[i] * joint_transform<S>(model.joint_type[i], model.joint_axis[i],
                                                                   q.segment(model.idx_q[i], model.joint_nq(i)));
    const int p = model.parent[i];
    const Vector6<S> vj = data.joint_S[i] * v.segment(model.idx_v[i], model.joint_nv(i));
    if (p >= 0) {
      data.oMi[i] = data.oMi[p] * data.liMi[i];
      data.v[i] = data.liMi[i].act_inv_motion(data.v[p]) + vj;
      data.c[i] = cross_motion<S>(data.v[i], vj);
    } else {
      data.oMi[i] = data.liMi[i];
      data.v[i] = vj;
      data.c[i].setZero();
    }
    const Inertia<S>& I = model.body_inertia[i];
    data.Ia[i] = I.matrix();
    data.pA[i] = cross_force<S>(data.v[i], I * data.v[i]);
  }

  // Pass 2 (leaves to root): articulated inertias and bias forces.
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    if (nvi == 1) {  // fast path: every revolute and prismatic joint
      const Vector6<S> s = data.joint_S[i].col(0);
      const Vector6<S> U = data.Ia[i] * s;
      const S D = s.dot(U) + model.armature[iv];
      if (!(value_of(D) > 0)) data.status |= kStatusSingularInertia;
      const S Dinv = S(1) / D;
      data.U[i].col(0) = U;
      data.Dinv[i](0, 0) = Dinv;
      data.u[i](0) = tau[iv] - s.dot(data.pA[i]);
      if (p >= 0) {
        const Matrix6<S> Ia_a = data.Ia[i] - (Dinv * U) * U.transpose();
        const Vector6<S> pa = data.pA[i] + Ia_a * data.c[i] + U * (Dinv * data.u[i](0));
        data.Ia[p] += transform_inertia_to_parent<S>(data.liMi[i], Ia_a);
        data.pA[p] += data.liMi[i].act_force(pa);
      }
    } else {
      const auto& Sj = data.joint_S[i];
      data.U[i] = data.Ia[i] * Sj;
      typename DataTpl<S>::MatrixDof D = Sj.transpose() * data.U[i];
      D.diagonal() += model.armature.segment(iv, nvi);
      const Eigen::PartialPivLU<typename DataTpl<S>::MatrixDof> lu(D);
      if (!(value_of(lu.determinant()) > 0)) data.status |= kStatusSingularInertia;
      data.Dinv[i] = lu.inverse();
      data.u[i] = tau.segment(iv, nvi) - Sj.transpose() * data.pA[i];
      if (p >= 0) {
        const Matrix6X<S> UD = data.U[i] * data.Dinv[i];
        const Matrix6<S> Ia_a = data.Ia[i] - UD * data.U[i].transpose();
        const Vector6<S> pa = data.pA[i] + Ia_a * data.c[i] + UD * data.u[i];
        data.Ia[p] += transform_inertia_to_parent<S>(data.liMi[i], Ia_a);
        data.pA[p] += data.liMi[i].act_force(pa);
      }
    }
  }

  // Pass 3 (root to leaves): accelerations. Gravity enters as an upward world acceleration.
  Vector6<S> a_world = Vector6<S>::Zero();
  a_world.template tail<3>() = -model.gravity;
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    const Vector6<S> a_in = data.liMi[i].act_inv_motion(p >= 0 ? data.a[p] : a_world) + data.c[i];
    if (nvi == 1) {
      const S qdd = data.Dinv[i](0, 0) * (data.u[i](0) - data.U[i].col(0).dot(a_in));
      data.ddq[iv] = qdd;
      data.a[i] = a_in + data.joint_S[i].col(0) * qdd;
    } else {
      data.ddq.segment(iv, nvi) = data.Dinv[i] * (data.u[i] - data.U[i].transpose() * a_in);
      data.a[i] = a_in + data.joint_S[i] * data.ddq.segment(iv, nvi);
    }
  }
  return data.ddq;
}

#define GRADYN_INSTANTIATE(S)                                                                                 \
  template const VectorX<S>& aba<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,       \
                                    const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
