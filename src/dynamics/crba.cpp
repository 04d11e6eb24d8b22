#include "gradyn/dynamics/crba.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

// Composite inertias in the world frame, about the world origin (Pinocchio's WORLD convention):
// a child's adds straight into its parent's, number by number (OriginInertia), and the force column
// F = Ic S needs no change of frame on its way up the tree. One pass from the leaves: when body i is
// reached, all its descendants have been added into oYc[i], so its column of M is complete.
namespace {
// Body i's diagonal block and its rows against every ancestor's DoFs, for a joint of N DoFs
// (1: revolute and prismatic; 3: spherical, planar; 6: free), on fixed-size matrices. F = Ic S.
template <int N, class S>
void crba_joint(const ModelTpl<S>& model, DataTpl<S>& data, int i) {
  using Mat6N = Eigen::Matrix<S, 6, N>;
  const int iv = model.idx_v[i];
  const OriginInertia<S>& Y = data.oYc[i];
  const Eigen::Map<const Mat6N> Si(data.oS[i].data());
  Mat6N F;
  for (int k = 0; k < N; ++k) F.col(k) = Y * Vector6<S>(Si.col(k));
  for (int r = 0; r < N; ++r) {  // bit-for-bit symmetric
    data.M(iv + r, iv + r) = Si.col(r).dot(F.col(r)) + model.armature[iv + r];
    for (int c = r + 1; c < N; ++c) data.M(iv + r, iv + c) = data.M(iv + c, iv + r) = Si.col(r).dot(F.col(c));
  }
  S* const M = data.M.data();  // column-major, nv x nv
  const Eigen::Index ld = data.M.rows();
  for (int j = model.parent[i]; j >= 0; j = model.parent[j]) {
    const int jv = model.idx_v[j], nvj = model.joint_nv(j);
    const S* Sj = data.oS[j].data();
    for (int k = 0; k < nvj; ++k) {
      const Eigen::Matrix<S, 1, N> m = Eigen::Map<const Vector6<S>>(Sj + 6 * k).transpose() * F;
      for (int c = 0; c < N; ++c) M[(iv + c) * ld + jv + k] = M[(jv + k) * ld + iv + c] = m[c];
    }
  }
}

template <class S>
void crba_passes(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) {
    detail::world_body_pose<S, false>(model, data, q, i);
    data.oYc[i] = OriginInertia<S>::from_body(model.body_inertia[i], data.oMi[i]);
  }
  // Only ancestor-descendant blocks are written: the others stay zero from Data's construction.
  for (int i = nb - 1; i >= 0; --i) {
    switch (model.joint_nv(i)) {
      case 1: crba_joint<1>(model, data, i); break;
      case 3: crba_joint<3>(model, data, i); break;
      case 6: crba_joint<6>(model, data, i); break;
      default: break;  // a fixed joint has no DoF
    }
    const int p = model.parent[i];
    if (p >= 0) data.oYc[p] += data.oYc[i];
  }
}

// For double, every helper is inlined into the two passes (the small fixed-size products then stay
// in registers instead of going through memory between calls). The AD scalar is left to the compiler.
[[gnu::flatten]] void crba_passes_double(const Model& model, Data& data, const VecRef<double>& q) {
  crba_passes<double>(model, data, q);
}
}  // namespace

template <class S>
const MatrixX<S>& crba(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  check_size("q", q.size(), model.nq);
  if constexpr (std::is_same_v<S, double>)
    crba_passes_double(model, data, q);
  else
    crba_passes<S>(model, data, q);
  return data.M;
}

#define GRADYN_INSTANTIATE(S) \
  template const MatrixX<S>& crba<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
