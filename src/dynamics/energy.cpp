#include "gradyn/dynamics/energy.hpp"
#include "gradyn/dynamics/tendon.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/spring.hpp"

namespace gradyn {

template <class S>
S kinetic_energy(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v) {
  forward_kinematics<S>(model, data, q, v);
  S e = S(0);
  for (int i = 0; i < model.nbodies(); ++i) e += data.v[i].dot(model.body_inertia[i] * data.v[i]);
  e += v.dot(model.armature.cwiseProduct(v));
  return S(0.5) * e;
}

template <class S>
S potential_energy(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  forward_kinematics<S>(model, data, q);
  S e = S(0);
  for (int i = 0; i < model.nbodies(); ++i) {
    const Inertia<S>& I = model.body_inertia[i];
    e -= I.mass * model.gravity.dot(data.oMi[i].act_point(I.com));
  }
  Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (!detail::spring_displacement(model, q, i, d)) continue;
    e += S(0.5) * d.dot(model.stiffness.segment(model.idx_v[i], model.joint_nv(i)).cwiseProduct(d));
  }
  for (const FixedTendon& tendon : model.tendons) {
    const S stretch = tendon_length<S>(model, tendon, q) - tendon.spring_length;
    e += S(0.5 * tendon.stiffness) * stretch * stretch;
  }
  return e;
}

template <class S>
S total_mass(const ModelTpl<S>& model) {
  S m = S(0);
  for (const auto& I : model.body_inertia) m += I.mass;
  return m;
}

template <class S>
Vector3<S> center_of_mass(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q) {
  forward_kinematics<S>(model, data, q);
  Vector3<S> c = Vector3<S>::Zero();
  for (int i = 0; i < model.nbodies(); ++i) {
    const Inertia<S>& I = model.body_inertia[i];
    c += I.mass * data.oMi[i].act_point(I.com);
  }
  return c / total_mass<S>(model);
}

template <class S>
Vector6<S> spatial_momentum(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v) {
  forward_kinematics<S>(model, data, q, v);
  Vector6<S> h = Vector6<S>::Zero();
  for (int i = 0; i < model.nbodies(); ++i) h += data.oMi[i].act_force(model.body_inertia[i] * data.v[i]);
  return h;
}

#define GRADYN_INSTANTIATE(S)                                                                                \
  template S kinetic_energy<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&);          \
  template S potential_energy<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);                          \
  template S total_mass<S>(const ModelTpl<S>&);                                                              \
  template Vector3<S> center_of_mass<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&);                   \
  template Vector6<S> spatial_momentum<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
