// One actuator's force law and its partial derivatives, shared by actuation, its adjoint and its
// Jacobian so that all three take the same branches at the clamps (dynamics/actuation.hpp).
#pragma once

#include "gradyn/model/model.hpp"

namespace gradyn::detail {

template <class S>
struct ActuatorLaw {
  S force = S(0);  // after both clamps
  // Partials of force (filled when asked for): with respect to the raw control, the length L and
  // velocity V, and the parameters (gain, bias; servo kp, kv, velocity_limit; the two ranges' bounds).
  S d_ctrl = S(0), d_length = S(0), d_velocity = S(0);
  Vector3<S> d_gain = Vector3<S>::Zero(), d_bias = Vector3<S>::Zero(), d_servo = Vector3<S>::Zero();
  S d_ctrl_lower = S(0), d_ctrl_upper = S(0), d_force_lower = S(0), d_force_upper = S(0);
};

template <class S, bool kPartials>
ActuatorLaw<S> actuator_law(const ActuatorTpl<S>& a, const S& ctrl, const S& L, const S& V) {
  ActuatorLaw<S> r;
  S u = ctrl, du = S(1);  // du: d u / d ctrl
  S du_lower = S(0), du_upper = S(0);
  if (a.ctrl_limited) {
    if (ctrl < a.ctrl_lower) u = a.ctrl_lower, du = S(0), du_lower = S(1);
    else if (ctrl > a.ctrl_upper) u = a.ctrl_upper, du = S(0), du_upper = S(1);
  }
  S f, df_du;
  if (a.kind == ActuatorKind::Servo) {
    const S x = a.servo_kp * (u - L);
    S inner = x, dinner_dx = S(1), dinner_dlimit = S(0);
    if (x > a.servo_velocity_limit) inner = a.servo_velocity_limit, dinner_dx = S(0), dinner_dlimit = S(1);
    else if (x < -a.servo_velocity_limit) inner = -a.servo_velocity_limit, dinner_dx = S(0), dinner_dlimit = S(-1);
    f = a.servo_kv * (inner - V);
    const S df_dx = a.servo_kv * dinner_dx;
    df_du = df_dx * a.servo_kp;
    if constexpr (kPartials) {
      r.d_length = -df_dx * a.servo_kp;
      r.d_velocity = -a.servo_kv;
      r.d_servo = Vector3<S>(df_dx * (u - L), inner - V, a.servo_kv * dinner_dlimit);
    }
  } else {  // MuJoCo's affine gain and bias (mj_fwdActuation's operation order)
    const S gain = a.gain[0] + a.gain[1] * L + a.gain[2] * V;
    const S bias = a.bias[0] + a.bias[1] * L + a.bias[2] * V;
    f = gain * u + bias;
    df_du = gain;
    if constexpr (kPartials) {
      r.d_length = a.gain[1] * u + a.bias[1];
      r.d_velocity = a.gain[2] * u + a.bias[2];
      r.d_gain = Vector3<S>(u, L * u, V * u);
      r.d_bias = Vector3<S>(S(1), L, V);
    }
  }
  r.force = f;
  if constexpr (kPartials) {
    r.d_ctrl = df_du * du;
    r.d_ctrl_lower = df_du * du_lower;
    r.d_ctrl_upper = df_du * du_upper;
  }
  if (a.force_limited && (f < a.force_lower || f > a.force_upper)) {
    const bool below = f < a.force_lower;
    r = ActuatorLaw<S>{};  // the clamped force depends on its bound alone
    r.force = below ? a.force_lower : a.force_upper;
    if constexpr (kPartials) (below ? r.d_force_lower : r.d_force_upper) = S(1);
  }
  return r;
}

}  // namespace gradyn::detail
