// The shipped laikago (a free base and 12 hinges) standing on its four toe spheres over a ground
// plane, shared by the tests that need a real robot in contact.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn::test {

struct LaikagoScene {
  Model model;
  Eigen::VectorXd q;  // standing, toes 0.1 mm deep
};

inline LaikagoScene laikago_standing(ContactModel contact) {
  std::vector<std::string> warnings;  // its mesh files are not shipped
  LoadOptions options;
  options.warnings = &warnings;
  options.floating_base = true;
  options.urdf_effort_motors = false;  // the scene of the reference hashes, recorded before actuators existed
  LaikagoScene s{load_urdf(std::string(GRADYN_MODELS) + "/laikago/laikago_toes_zup.urdf", options), {}};
  Geom ground;
  ground.name = "ground";
  ground.type = GeomType::Plane;
  ground.body = -1;
  s.model.geoms.push_back(ground);
  s.model.contact.model = contact;
  s.q = neutral_configuration<double>(s.model);
  for (const std::string leg : {"FR", "FL", "RR", "RL"}) {
    s.q[s.model.idx_q[s.model.joint_id(leg + "_upper_leg_2_hip_motor_joint")]] = -0.1;
    s.q[s.model.idx_q[s.model.joint_id(leg + "_lower_leg_2_upper_leg_joint")]] = -0.45;
  }
  Data d(s.model);
  forward_kinematics<double>(s.model, d, s.q);
  double lowest = 1e9;  // the lowest toe centre
  for (const Geom& g : s.model.geoms)
    if (g.body >= 0) lowest = std::min(lowest, (d.oMi[g.body].R * g.placement.p + d.oMi[g.body].p)[2]);
  s.q[2] -= lowest - 0.03 + 1e-4;  // toes of radius 3 cm, slightly deep
  return s;
}

}  // namespace gradyn::test
