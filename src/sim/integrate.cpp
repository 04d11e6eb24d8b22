#include "gradyn/sim/integrate.hpp"

#include "gradyn/autodiff.hpp"

namespace gradyn {

template <class S>
void integrate(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& dv, VecOut<S> q_out) {
  check_size("q", q.size(), model.nq);
  check_size("dv", dv.size(), model.nv);
  check_size("q_out", q_out.size(), model.nq);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iq = model.idx_q[i], nqi = model.joint_nq(i);
    joint_integrate<S>(model.joint_type[i], q.segment(iq, nqi), dv.segment(model.idx_v[i], model.joint_nv(i)),
                       q_out.segment(iq, nqi));
  }
}

template <class S>
void difference(const ModelTpl<S>& model, const VecRef<S>& q0, const VecRef<S>& q1, VecOut<S> d) {
  check_size("q0", q0.size(), model.nq);
  check_size("q1", q1.size(), model.nq);
  check_size("d", d.size(), model.nv);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iq = model.idx_q[i], nqi = model.joint_nq(i);
    joint_difference<S>(model.joint_type[i], q0.segment(iq, nqi), q1.segment(iq, nqi),
                        d.segment(model.idx_v[i], model.joint_nv(i)));
  }
}

template <class S>
VectorX<S> neutral_configuration(const ModelTpl<S>& model) {
  VectorX<S> q(model.nq);
  for (int i = 0; i < model.nbodies(); ++i)
    joint_neutral<S>(model.joint_type[i], q.segment(model.idx_q[i], model.joint_nq(i)));
  return q;
}

template <class S>
void normalize_configuration(const ModelTpl<S>& model, VecOut<S> q) {
  check_size("q", q.size(), model.nq);
  for (int i = 0; i < model.nbodies(); ++i) {
    joint_normalize<S>(model.joint_type[i], q.segment(model.idx_q[i], model.joint_nq(i)));
  }
}

#define GRADYN_INSTANTIATE(S)                                                                             \
  template void integrate<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>); \
  template void difference<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>); \
  template VectorX<S> neutral_configuration<S>(const ModelTpl<S>&);                                       \
  template void normalize_configuration<S>(const ModelTpl<S>&, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
