// Adjoint of integrate (q_out = q (+) dv), joint by joint. Each kind's kernel (joints/<kind>.hpp)
// reverses the exact arithmetic of its integrate, including the small-angle Taylor branches and the
// renormalisation of the output quaternion, so that q adjoints are ambient: the gradient of the
// computed function of the raw q numbers (q need not be unit).
#include "gradyn/autodiff.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

template <class S>
void integrate_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& dv, const VecRef<S>& q_out_bar,
                   VecOut<S> q_bar, VecOut<S> dv_bar) {
  check_size("q", q.size(), model.nq);
  check_size("dv", dv.size(), model.nv);
  check_size("q_out_bar", q_out_bar.size(), model.nq);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("dv_bar", dv_bar.size(), model.nv);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    const int nqi = model.joint_nq(i), nvi = model.joint_nv(i);
    joint_integrate_vjp<S>(model.joint_type[i], q.segment(iq, nqi), dv.segment(iv, nvi), q_out_bar.segment(iq, nqi),
                           q_bar.segment(iq, nqi), dv_bar.segment(iv, nvi));
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                 \
  template void integrate_vjp<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                                 VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
