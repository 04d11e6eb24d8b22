// The per-DoF servo law shared by actuator_torques and its adjoint, so both take the same branches.
#pragma once

#include "gradyn/dynamics/actuators.hpp"

namespace gradyn::detail {

/// The limits of one DoF: the servo's own, else the model's.
template <class S>
S servo_effort_limit(const ModelTpl<S>& model, const ServoSettings& s, int dof) {
  return s.effort_limit ? S(*s.effort_limit) : model.effort_limit[dof];
}
template <class S>
S servo_velocity_limit(const ModelTpl<S>& model, const ServoSettings& s, int dof) {
  return s.velocity_limit ? S(*s.velocity_limit) : model.velocity_limit[dof];
}

/// True when clip(x, limit) leaves x unchanged (|x| <= limit; the boundary counts as unclipped).
template <class S>
bool within(const S& x, const S& limit) {
  return !(x > limit) && !(x < -limit);
}

template <class S>
S clip(const S& x, const S& limit) {
  if (x > limit) return limit;
  if (x < -limit) return -limit;
  return x;
}

}  // namespace gradyn::detail
