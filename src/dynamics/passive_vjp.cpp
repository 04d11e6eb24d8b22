// Reverse mode of the passive forces (dampers, springs through joint_difference) and of the
// forward dynamics a = aba(q, v, tau + passive(q, v)). Each joint kind's difference is differentiated
// exactly as it computes it (joints/<kind>.hpp; ambient coordinates, quaternions not renormalised).
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/dynamics/tendon.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

template <class S>
void passive_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& tau_passive_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        ModelTangentTpl<S>& model_bar) {
  (void)data;
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau_passive_bar", tau_passive_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  // tau_p = -damping v - stiffness (q (-) q_rest)
  model_bar.damping -= tau_passive_bar.cwiseProduct(v);
  v_bar -= tau_passive_bar.cwiseProduct(model.damping);
  for (int i = 0; i < model.nbodies(); ++i) {
    const int iv = model.idx_v[i], nvi = model.joint_nv(i), iq = model.idx_q[i], nqi = model.joint_nq(i);
    if (nvi == 0) continue;
    // The stiffness adjoint is -tau_bar d even where the stiffness is zero (passive_forces skips
    // those joints, but the force is still linear in the stiffness): a fit that starts from no
    // spring must see its gradient.
    Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d(nvi);
    joint_difference<S>(model.joint_type[i], model.q_rest.segment(iq, nqi), q.segment(iq, nqi), d);
    model_bar.stiffness.segment(iv, nvi) -= tau_passive_bar.segment(iv, nvi).cwiseProduct(d);
    bool has_spring = false;
    for (int k = 0; k < nvi; ++k) has_spring |= value_of(model.stiffness[iv + k]) != 0.0;
    if (!has_spring) continue;  // no spring force: no q or q_rest adjoint
    const Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1> d_bar =
        -model.stiffness.segment(iv, nvi).cwiseProduct(tau_passive_bar.segment(iv, nvi));
    joint_difference_vjp<S>(model.joint_type[i], model.q_rest.segment(iq, nqi), q.segment(iq, nqi), d_bar,
                            model_bar.q_rest.segment(iq, nqi), q_bar.segment(iq, nqi));
  }
  // tau_p -= J^T (k (J q - L0) + b J v), J constant; the stiffness and damping adjoints even where
  // they are zero (as the joints')
  for (size_t t = 0; t < model.tendons.size(); ++t) {
    const FixedTendon& tendon = model.tendons[t];
    S tension_bar = S(0);
    for (size_t k = 0; k < tendon.joints.size(); ++k)
      tension_bar -= tendon.coefs[k] * tau_passive_bar[model.idx_v[tendon.joints[k]]];
    const S stretch = tendon_length<S>(model, tendon, q) - tendon.spring_length;
    model_bar.tendon_spring[t] += Vector3<S>(tension_bar * stretch, tension_bar * tendon_rate<S>(model, tendon, v),
                                             -tendon.stiffness * tension_bar);
    for (size_t k = 0; k < tendon.joints.size(); ++k) {
      q_bar[model.idx_q[tendon.joints[k]]] += tendon.stiffness * tendon.coefs[k] * tension_bar;
      v_bar[model.idx_v[tendon.joints[k]]] += tendon.damping * tendon.coefs[k] * tension_bar;
    }
  }
}

template <class S>
void forward_dynamics_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& tau, const VecRef<S>& ddq_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                          VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current) {
  check_size("tau", tau.size(), model.nv);
  if (!forward_is_current) {  // forward_dynamics left tau + passive in data.tau_total
    passive_forces<S>(model, data, q, v);
    data.tau_total.noalias() = tau + data.tau_passive;
  }
  aba_vjp<S>(model, data, q, v, data.tau_total, ddq_bar, q_bar, v_bar, tau_bar, model_bar, forward_is_current);
  // aba_vjp left tau_total's adjoint, M^-1 ddq_bar, in data.adj_mu.
  passive_forces_vjp<S>(model, data, q, v, data.adj_mu, q_bar, v_bar, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void passive_forces_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,     \
                                      const VecRef<S>&, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);            \
  template void forward_dynamics_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,   \
                                        const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>,   \
                                        ModelTangentTpl<S>&, bool);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
