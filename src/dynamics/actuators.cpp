#include "gradyn/dynamics/actuators.hpp"

#include <cmath>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/servo.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

[[noreturn]] void bad_servo(const std::string& joint, int dof, const std::string& what) {
  throw ArgumentError("servo settings: DoF " + std::to_string(dof) + " (joint '" + joint + "'): " + what);
}

void check_nonnegative(const std::string& joint, int dof, const char* name, double x) {
  if (!(x >= 0.0)) bad_servo(joint, dof, std::string(name) + " must be >= 0, got " + std::to_string(x));
}

}  // namespace

template <class S>
void check_servo_settings(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings) {
  if (static_cast<int>(settings.size()) != model.nv)
    throw ArgumentError("servo settings: expected one per DoF (" + std::to_string(model.nv) + "), got " +
                        std::to_string(settings.size()));
  for (int j = 0; j < model.nbodies(); ++j) {
    for (int d = 0; d < model.joint_nv(j); ++d) {
      const int dof = model.idx_v[j] + d;
      const ServoSettings& s = settings[dof];
      const std::string& joint = model.joint_names[j];
      check_nonnegative(joint, dof, "kp", s.kp);
      check_nonnegative(joint, dof, "kv", s.kv);
      if (s.effort_limit) check_nonnegative(joint, dof, "effort_limit", *s.effort_limit);
      if (s.velocity_limit) check_nonnegative(joint, dof, "velocity_limit", *s.velocity_limit);
      if (s.kind == ServoKind::Position && (model.joint_nq(j) != 1 || model.joint_nv(j) != 1))
        bad_servo(joint, dof, "a position servo needs a 1-DoF joint (revolute, continuous, prismatic)");
    }
  }
}

template <class S>
void actuator_torques(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings, const VecRef<S>& q,
                      const VecRef<S>& v, const VecRef<S>& u, VecOut<S> tau_out) {
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("u", u.size(), model.nv);
  check_size("tau", tau_out.size(), model.nv);
  check_servo_settings(model, settings);
  for (int j = 0; j < model.nbodies(); ++j) {
    for (int d = 0; d < model.joint_nv(j); ++d) {
      const int dof = model.idx_v[j] + d;
      const ServoSettings& s = settings[dof];
      const S effort = detail::servo_effort_limit(model, s, dof);
      if (s.kind == ServoKind::Torque) {
        tau_out[dof] = detail::clip<S>(u[dof], effort);
        continue;
      }
      const S velocity = detail::servo_velocity_limit(model, s, dof);
      // Position servos: q and v of a 1-DoF joint share the joint's single entry.
      const S v_target = s.kind == ServoKind::Position
                             ? detail::clip<S>(S(s.kp) * (u[dof] - q[model.idx_q[j]]), velocity)
                             : detail::clip<S>(u[dof], velocity);
      tau_out[dof] = detail::clip<S>(S(s.kv) * (v_target - v[dof]), effort);
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                    \
  template void check_servo_settings<S>(const ModelTpl<S>&, const std::vector<ServoSettings>&);                  \
  template void actuator_torques<S>(const ModelTpl<S>&, const std::vector<ServoSettings>&, const VecRef<S>&,      \
                                    const VecRef<S>&, const VecRef<S>&, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
