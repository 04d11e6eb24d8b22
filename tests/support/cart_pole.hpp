// A cart on a rail (prismatic x) carrying a pole on a hinge (about y), the cart driven by one motor:
// the small actuated system of the control tests (iLQR candidates, policies inside the rollout).
#pragma once

#include <optional>
#include <utility>

#include "gradyn/model/builder.hpp"

namespace gradyn::test {

struct CartPoleOptions {
  double pole_mass = 0.1, pole_inertia = 0.01, slider_damping = 0.0, gear = 1.0;
  std::optional<std::pair<double, double>> ctrl_range;  // the motor's clamp; none: unclamped
};

inline Model cart_pole(const CartPoleOptions& o = {}) {
  ModelBuilder b;
  b.add_link({"world", std::nullopt, {}, {}});
  b.add_link({"cart", Inertia<double>(1.0, Vector3<double>::Zero(), Matrix3<double>::Identity() * 0.01), {}, {}});
  b.add_link({"pole", Inertia<double>(o.pole_mass, Vector3<double>(0, 0, 0.5), Matrix3<double>::Identity() * o.pole_inertia),
              {}, {}});
  JointSpec slider;
  slider.name = "slider", slider.type = JointType::Prismatic, slider.parent = "world", slider.child = "cart";
  slider.damping = o.slider_damping;
  b.add_joint(slider);
  JointSpec hinge;
  hinge.name = "hinge", hinge.type = JointType::Continuous, hinge.parent = "cart", hinge.child = "pole";
  hinge.axis = Vector3<double>(0, 1, 0);
  b.add_joint(hinge);
  ActuatorSpec motor;
  motor.joint = "slider", motor.gear = o.gear, motor.ctrl_range = o.ctrl_range;
  b.add_actuator(motor);
  return b.build();
}

}  // namespace gradyn::test
