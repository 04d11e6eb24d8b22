#include "gradyn/dynamics/crba.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

// Composite inertias in the world frame: a child's adds straight into its parent's, and the
// force column F = Ic S needs no change of frame on its way up the tree.
template <class S>
const MatrixX<S>& crba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  check_size("q", q.size(), model.nq);
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    detail::world_body_pose(model, data, q, i);
    data.oIc[i] = detail::world_inertia(model.body_inertia[i], data.oMi[i]);
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int p = model.parent[i];
    if (p >= 0) data.oIc[p] += data.oIc[i];
  }
  // Only ancestor-descendant blocks are written: the others stay zero from Data's construction.
  for (int i = 0; i < nb; ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    if (nvi == 1) {  // fast path: revolute and prismatic joints
      const Vector6<S> s = data.oS[i].col(0);
      const Vector6<S> F = data.oIc[i] * s;
      data.M(iv, iv) = s.dot(F) + model.armature[iv];
      for (int j = model.parent[i]; j >= 0; j = model.parent[j]) {
        const int jv = model.idx_v[j];
        for (int k = 0; k < model.joint_nv(j); ++k) {
          const S m = data.oS[j].col(k).dot(F);
          data.M(jv + k, iv) = m;
          data.M(iv, jv + k) = m;
        }
      }
      continue;
    }
    const Matrix6X<S> F = data.oIc[i] * data.oS[i];
    auto block = data.M.block(iv, iv, nvi, nvi);
    block = data.oS[i].transpose() * F;
    for (int r = 0; r < nvi; ++r)  // bit-for-bit symmetric
      for (int c = r + 1; c < nvi; ++c) block(c, r) = block(r, c);
    block.diagonal() += model.armature.segment(iv, nvi);
    for (int j = model.parent[i]; j >= 0; j = model.parent[j]) {
      const int jv = model.idx_v[j], nvj = model.joint_nv(j);
      data.M.block(jv, iv, nvj, nvi) = data.oS[j].transpose() * F;
      data.M.block(iv, jv, nvi, nvj) = data.M.block(jv, iv, nvj, nvi).transpose();
    }
  }
  return data.M;
}

#define GRADYN_INSTANTIATE(S) \
  template const MatrixX<S>& crba<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
