// Adjoint of actuation (dynamics/actuation.hpp), through the same force law and clamp branches.
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/actuation.hpp"
#include "gradyn/dynamics/detail/actuator_law.hpp"

namespace gradyn {

template <class S>
void actuation_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& ctrl,
                   const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> ctrl_bar,
                   ModelTangentTpl<S>& model_bar) {
  const bool zero_ctrl = ctrl.size() == 0;
  for (int k = 0; k < model.nu(); ++k) {
    const ActuatorTpl<S>& a = model.actuators[k];
    const int iq = model.idx_q[a.joint], iv = model.idx_v[a.joint];
    const S L = a.gear * q[iq], V = a.gear * v[iv];
    const auto law = detail::actuator_law<S, true>(a, zero_ctrl ? S(0) : S(ctrl[k]), L, V);
    // tau[iv] = gear f, with L = gear q and V = gear v
    const S t_bar = tau_bar[iv];
    const S f_bar = a.gear * t_bar;
    const S L_bar = f_bar * law.d_length, V_bar = f_bar * law.d_velocity;
    q_bar[iq] += a.gear * L_bar;
    v_bar[iv] += a.gear * V_bar;
    model_bar.actuator_gear[k] += law.force * t_bar + q[iq] * L_bar + v[iv] * V_bar;
    if (!zero_ctrl) ctrl_bar[k] += f_bar * law.d_ctrl;
    model_bar.actuator_gain[k] += f_bar * law.d_gain;
    model_bar.actuator_bias[k] += f_bar * law.d_bias;
    model_bar.actuator_servo[k] += f_bar * law.d_servo;
    model_bar.actuator_ctrl_range[k] += f_bar * Eigen::Matrix<S, 2, 1>(law.d_ctrl_lower, law.d_ctrl_upper);
    model_bar.actuator_force_range[k] += f_bar * Eigen::Matrix<S, 2, 1>(law.d_force_lower, law.d_force_upper);
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                   \
  template void actuation_vjp<S>(const ModelTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&,     \
                                 const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
