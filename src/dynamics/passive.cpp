#include "gradyn/dynamics/passive.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/detail/spring.hpp"
#include "gradyn/dynamics/tendon.hpp"

namespace gradyn {

template <class S>
const VectorX<S>& passive_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                 const VecRef<S>& v) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  data.tau_passive = -model.damping.cwiseProduct(v);
  Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!detail::spring_displacement(model, q, i, d)) continue;
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    data.tau_passive.segment(iv, nvi) -= model.stiffness.segment(iv, nvi).cwiseProduct(d);
  }
  for (const FixedTendon& tendon : model.tendons) {
    if (tendon.stiffness == 0.0 && tendon.damping == 0.0) continue;
    const S tension = tendon.stiffness * (tendon_length<S>(model, tendon, q) - tendon.spring_length) +
                      tendon.damping * tendon_rate<S>(model, tendon, v);
    add_tendon_force<S>(model, tendon, S(-tension), data.tau_passive);
  }
  return data.tau_passive;
}

template <class S>
const VectorX<S>& forward_dynamics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                   const VecRef<S>& v, const VecRef<S>& tau) {
  check_size("tau", tau.size(), model.nv);
  data.tau_total = tau + passive_forces<S>(model, data, q, v);
  return aba<S>(model, data, q, v, data.tau_total);
}

#define GRADYN_INSTANTIATE(S)                                                                                 \
  template const VectorX<S>& passive_forces<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&,              \
                                               const VecRef<S>&);                                             \
  template const VectorX<S>& forward_dynamics<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&,            \
                                                 const VecRef<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
