#include "gradyn/dynamics/crba.hpp"

#include "gradyn/autodiff.hpp"

namespace gradyn {

template <class S>
const MatrixX<S>& crba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  forward_kinematics<S>(model, data, q);
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) data.Ic[i] = model.body_inertia[i].matrix();
  for (int i = nb - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) data.Ic[p] += transform_inertia_to_parent<S>(data.liMi[i], data.Ic[i]);
  }
  data.M.setZero();
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    // F: the composite inertia's force response to the joint's motion, carried up the tree.
    Matrix6X<S> F = data.Ic[i] * data.joint_S[i];
    data.M.block(iv, iv, nvi, nvi) = data.joint_S[i].transpose() * F;
    data.M.block(iv, iv, nvi, nvi).diagonal() += model.armature.segment(iv, nvi);
    int j = i;
    while (model.parent[j] >= 0) {
      for (int k = 0; k < nvi; ++k) F.col(k) = data.liMi[j].act_force(Vector6<S>(F.col(k)));
      j = model.parent[j];
      const int jv = model.idx_v[j], nvj = model.joint_nv(j);
      data.M.block(jv, iv, nvj, nvi) = data.joint_S[j].transpose() * F;
      data.M.block(iv, jv, nvi, nvj) = data.M.block(jv, iv, nvj, nvi).transpose();
    }
  }
  return data.M;
}

#define GRADYN_INSTANTIATE(S) \
  template const MatrixX<S>& crba<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
