#include "gradyn/dynamics/rnea.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

// Body-frame recursion (Pinocchio's two passes): each body's inertia acts in its own frame, and only
// the 6-vector of joint force is carried to the parent. No world poses are needed.
namespace {
template <class S>
void rnea_passes(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                 const VecRef<S>& a) {
  const int nb = model.nbodies();
  const Vector6<S> a_world = detail::world_acceleration(model);
  for (int i = 0; i < nb; ++i) {
    detail::joint_pose(model, q, i, data.liMi[i]);
    detail::rnea_forward_body(model, data, v, a, a_world, i);
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    if (nvi == 1) {
      data.tau[iv] = data.joint_S[i].col(0).dot(data.f[i]) + model.armature[iv] * a[iv];
    } else {
      data.tau.segment(iv, nvi).noalias() = data.joint_S[i].transpose() * data.f[i];
      data.tau.segment(iv, nvi) += model.armature.segment(iv, nvi).cwiseProduct(a.segment(iv, nvi));
    }
    const int p = model.parent[i];
    if (p >= 0) data.f[p] += data.liMi[i].act_force(data.f[i]);
  }
}

// For double, every helper is inlined into the two passes (as in crba.cpp).
[[gnu::flatten]] void rnea_passes_double(const Model& model, Data& data, const VecRef<double>& q,
                                         const VecRef<double>& v, const VecRef<double>& a) {
  rnea_passes<double>(model, data, q, v, a);
}
}  // namespace

template <class S>
const VectorX<S>& rnea(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("a", a.size(), model.nv);
  if constexpr (std::is_same_v<S, double>)
    rnea_passes_double(model, data, q, v, a);
  else
    rnea_passes<S>(model, data, q, v, a);
  return data.tau;
}

template <class S>
const VectorX<S>& nonlinear_effects(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                    const VecRef<S>& v) {
  data.dv_tmp.setZero();
  return rnea<S>(model, data, q, v, data.dv_tmp);
}

template <class S>
const VectorX<S>& generalized_gravity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  data.dv_tmp.setZero();
  return rnea<S>(model, data, q, data.dv_tmp, data.dv_tmp);
}

#define GRADYN_INSTANTIATE(S)                                                                                   \
  template const VectorX<S>& rnea<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,        \
                                     const VecRef<S>&);                                                         \
  template const VectorX<S>& nonlinear_effects<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&,             \
                                                  const VecRef<S>&);                                            \
  template const VectorX<S>& generalized_gravity<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
