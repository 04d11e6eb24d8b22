#include "gradyn/dynamics/rnea.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"

namespace gradyn {

// Body-frame recursion: each body's inertia acts in its own frame, and only the 6-vector of
// joint force is carried to the parent.
template <class S>
const VectorX<S>& rnea(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("a", a.size(), model.nv);
  const int nb = model.nbodies();
  const Vector6<S> a_world = detail::world_acceleration(model);
  for (int i = 0; i < nb; ++i) {
    detail::rnea_forward_body(model, data, v, a, a_world, i,
                              joint_transform<S>(model.joint_type[i], model.joint_axis[i],
                                                 q.segment(model.idx_q[i], model.joint_nq(i))));
    const int p = model.parent[i];
    data.oMi[i] = p >= 0 ? data.oMi[p] * data.liMi[i] : data.liMi[i];
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    data.tau.segment(iv, nvi) =
        data.joint_S[i].transpose() * data.f[i] + model.armature.segment(iv, nvi).cwiseProduct(a.segment(iv, nvi));
    const int p = model.parent[i];
    if (p >= 0) data.f[p] += data.liMi[i].act_force(data.f[i]);
  }
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
