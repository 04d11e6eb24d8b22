#include "gradyn/dynamics/aba.hpp"

#include <Eigen/Cholesky>

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

namespace {
// Pass 2 for a joint of N > 1 DoFs (3: spherical, planar; 6: free), on fixed-size matrices.
template <int N, class S>
void backward_multi_dof(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& tau, int i) {
  using MatN = Eigen::Matrix<S, N, N>;
  using Mat6N = Eigen::Matrix<S, 6, N>;
  const int iv = model.idx_v[i], p = model.parent[i];
  const Mat6N Sj = data.oS[i];
  const Mat6N U = data.oIa[i] * Sj;
  MatN D = Sj.transpose() * U;
  D.diagonal() += model.armature.template segment<N>(iv);
  const Eigen::LLT<MatN> llt(D);  // D is symmetric positive definite for a physical model
  if (llt.info() != Eigen::Success) data.status |= kStatusSingularInertia;
  const MatN Dinv = llt.solve(MatN::Identity());
  const Eigen::Matrix<S, N, 1> u = tau.template segment<N>(iv) - Sj.transpose() * data.opA[i];
  data.U[i] = U;
  data.Dinv[i] = Dinv;
  data.u[i] = u;
  if (p >= 0) {
    const Mat6N UD = U * Dinv;
    data.oIa[i].noalias() -= UD * U.transpose();
    data.oIa[p] += data.oIa[i];
    data.opA[p] += data.opA[i] + data.oIa[i] * data.oc[i] + UD * u;
  }
}
}  // namespace

// Featherstone's three passes, written in the world frame: articulated inertias and bias forces
// of a child add straight into its parent's, with no change of frame.
template <class S>
const VectorX<S>& aba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                      const VecRef<S>& tau) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau", tau.size(), model.nv);
  const int nb = model.nbodies();

  // Pass 1 (root to leaves): poses, velocities, velocity-product accelerations, bias forces.
  for (int i = 0; i < nb; ++i) {
    detail::world_body_pose(model, data, q, i);
    const int p = model.parent[i];
    const Vector6<S> vj = model.joint_nv(i) == 1 ? Vector6<S>(data.oS[i].col(0) * v[model.idx_v[i]])
                                                 : Vector6<S>(data.oS[i] * v.segment(model.idx_v[i], model.joint_nv(i)));
    data.ov[i] = p >= 0 ? Vector6<S>(data.ov[p] + vj) : vj;
    data.oc[i] = cross_motion<S>(data.ov[i], vj);
    data.oI[i] = detail::world_inertia(model.body_inertia[i], data.oMi[i]);
    data.oIa[i] = data.oI[i];
    data.opA[i] = cross_force<S>(data.ov[i], Vector6<S>(data.oI[i] * data.ov[i]));
  }

  // Pass 2 (leaves to root): articulated inertias and bias forces.
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    if (nvi == 1) {  // fast path: every revolute and prismatic joint
      const Vector6<S> s = data.oS[i].col(0);
      const Vector6<S> U = data.oIa[i] * s;
      const S D = s.dot(U) + model.armature[iv];
      if (!(value_of(D) > 0)) data.status |= kStatusSingularInertia;
      const S Dinv = S(1) / D;
      data.U[i].col(0) = U;
      data.Dinv[i](0, 0) = Dinv;
      data.u[i](0) = tau[iv] - s.dot(data.opA[i]);
      if (p >= 0) {  // oIa[i] becomes the apparent inertia the parent sees through the joint
        const Vector6<S> UD = Dinv * U;
        data.oIa[i].noalias() -= UD * U.transpose();
        data.oIa[p] += data.oIa[i];
        data.opA[p] += data.opA[i] + data.oIa[i] * data.oc[i] + UD * data.u[i](0);
      }
    } else if (nvi == 6) {
      backward_multi_dof<6>(model, data, tau, i);
    } else {  // every other multi-DoF kind (spherical and planar: 3), at its own size
      visit_joint(model.joint_type[i], [&]<class J>(J) {
        if constexpr (J::nv > 1) backward_multi_dof<J::nv>(model, data, tau, i);
      });
    }
  }

  // Pass 3 (root to leaves): accelerations.
  const Vector6<S> a_world = detail::world_acceleration(model);
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    const int p = model.parent[i];
    data.oa[i] = (p >= 0 ? data.oa[p] : a_world) + data.oc[i];
    if (nvi == 1) {
      const S qdd = data.Dinv[i](0, 0) * (data.u[i](0) - data.U[i].col(0).dot(data.oa[i]));
      data.ddq[iv] = qdd;
      data.oa[i] += data.oS[i].col(0) * qdd;
    } else {
      data.ddq.segment(iv, nvi) = data.Dinv[i] * (data.u[i] - data.U[i].transpose() * data.oa[i]);
      data.oa[i] += data.oS[i] * data.ddq.segment(iv, nvi);
    }
  }
  return data.ddq;
}

#define GRADYN_INSTANTIATE(S)                                                                                 \
  template const VectorX<S>& aba<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,       \
                                    const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
