// Servo actuators (Degrave et al., "A differentiable physics engine for deep learning in robotics",
// paper 002) as a map alone: each DoF is driven by a torque motor, a position servo or a velocity
// servo with a gain, a torque (effort) limit and a velocity limit. Actuators that are part of the
// model and run inside every step (MuJoCo's kinds, and this servo as ActuatorKind::Servo) are in
// dynamics/actuation.hpp; here the model stays untouched, and the servos are a separate list of
// per-DoF settings that map the controls u to joint torques, once per step, by the caller:
//
//     std::vector<ServoSettings> servos(model.nv, ServoSettings{ServoKind::Position, 30.0, 5.0});
//     for (int t = 0; t < T; ++t) {
//       actuator_torques(model, servos, q, v, u_t, tau);    // u_t: position targets
//       step(model, data, q, v, tau, dt, Integrator::SemiImplicitEuler, q, v);
//     }
//
// and backwards: actuator_torques_vjp(model, servos, q, v, u_t, tau_bar, q_bar, v_bar, u_bar) with
// the tau_bar that step_vjp returned.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

enum class ServoKind : std::uint8_t {
  Torque,    // u is the torque:              tau = clip(u, effort)
  Position,  // u is the target position:     v_target = clip(kp (u - q), velocity), tau = clip(kv (v_target - v), effort)
  Velocity,  // u is the target velocity:     v_target = clip(u, velocity),          tau = clip(kv (v_target - v), effort)
};

/// One DoF's motor. clip(x, L) = min(max(x, -L), L). Position servos need a 1-DoF joint
/// (revolute, continuous, prismatic), whose q entry is its angle or displacement.
struct ServoSettings {
  ServoKind kind = ServoKind::Torque;
  double kp = 0.0;  // position gain [1/s]: velocity commanded per unit of position error
  double kv = 0.0;  // velocity gain [N m s / rad or N s / m]: torque per unit of velocity error
  std::optional<double> effort_limit;    // |tau| bound; unset: model.effort_limit of the DoF
  std::optional<double> velocity_limit;  // |v_target| bound; unset: model.velocity_limit of the DoF
};

/// Throws ArgumentError naming the DoF (index and joint) unless settings has model.nv entries with
/// non-negative, non-NaN gains and limits, and position servos sit on 1-DoF joints.
template <class S>
void check_servo_settings(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings);

/// Joint torques (size nv) of the servos under controls u (size nv). Never allocates.
/// Validates settings on each call (cheap; throws ArgumentError as check_servo_settings).
template <class S>
void actuator_torques(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings, const VecRef<S>& q,
                      const VecRef<S>& v, const VecRef<S>& u, VecOut<S> tau_out);

/// Adjoint of actuator_torques: accumulates into q_bar (nq, ambient), v_bar and u_bar (nv) given
/// tau_bar. The clips are piecewise linear: where a clip is active (|x| > L strictly) the derivative
/// through it is zero (a limit taken from the model is treated as a constant); at |x| == L exactly
/// the unclipped branch is taken, as in the forward pass. Never allocates.
template <class S>
void actuator_torques_vjp(const ModelTpl<S>& model, const std::vector<ServoSettings>& settings, const VecRef<S>& q,
                          const VecRef<S>& v, const VecRef<S>& u, const VecRef<S>& tau_bar, VecOut<S> q_bar,
                          VecOut<S> v_bar, VecOut<S> u_bar);

}  // namespace gradyn
