// Adjoint of actuator_torques: the servo law backwards, DoF by DoF, through the same branches.
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/actuators.hpp"
#include "gradyn/dynamics/detail/servo.hpp"

namespace gradyn {

template <class S>
void actuator_torques_vjp(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings, const VecRef<S>& q,
                          const VecRef<S>& v, const VecRef<S>& u, const VecRef<S>& tau_bar, VecOut<S> q_bar,
                          VecOut<S> v_bar, VecOut<S> u_bar) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("u", u.size(), model.nv);
  check_size("tau_bar", tau_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  check_size("u_bar", u_bar.size(), model.nv);
  check_servo_settings(model, settings);
  for (int j = 0; j < model.nbodies(); ++j) {
    for (int d = 0; d < model.joint_nv(j); ++d) {
      const int dof = model.idx_v[j] + d;
      const ServoSettings& s = settings[dof];
      const S effort = detail::servo_effort_limit(model, s, dof);
      const S& g = tau_bar[dof];
      if (s.kind == ServoKind::Torque) {
        if (detail::within<S>(u[dof], effort)) u_bar[dof] += g;
        continue;
      }
      const S velocity = detail::servo_velocity_limit(model, s, dof);
      const int iq = model.idx_q[j];
      const S v_raw = s.kind == ServoKind::Position ? S(S(s.kp) * (u[dof] - q[iq])) : S(u[dof]);
      const S v_target = detail::clip<S>(v_raw, velocity);
      if (!detail::within<S>(S(S(s.kv) * (v_target - v[dof])), effort)) continue;  // saturated torque
      const S v_target_bar = S(s.kv) * g;
      v_bar[dof] -= v_target_bar;
      if (!detail::within<S>(v_raw, velocity)) continue;  // saturated commanded velocity
      if (s.kind == ServoKind::Velocity) {
        u_bar[dof] += v_target_bar;
      } else {
        const S error_bar = S(s.kp) * v_target_bar;
        u_bar[dof] += error_bar;
        q_bar[iq] -= error_bar;
      }
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                     \
  template void actuator_torques_vjp<S>(const ModelTpl<S>&, const std::vector<ServoSettings>&, const VecRef<S>&,   \
                                        const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, \
                                        VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
