// Loading models from files: URDF and MJCF. Every error names the file, the line and the element.
#pragma once

#include <string>
#include <vector>

#include "gradyn/model/builder.hpp"

namespace gradyn {

struct LoadOptions {
  // URDF: add a free joint between the world and the root link. MJCF models declare their
  // free joints themselves, and this must then be false.
  bool floating_base = false;
  // Receives warnings (e.g. a mesh file that does not exist). Null: warnings go to std::cerr.
  std::vector<std::string>* warnings = nullptr;
  // URDF: every revolute, continuous or prismatic joint with a positive finite <limit effort> gets a
  // motor actuator named after the joint (gear 1, forcerange +-effort), in joint order. False: none.
  bool urdf_effort_motors = true;
  // An inertia tensor no rigid body has (a negative principal moment, or A + B < C): Strict refuses
  // the file (ModelError naming the link and these options), Repair replaces the moments by their
  // mean (MuJoCo's balanceinertia; an MJCF <compiler balanceinertia="true"> asks for it too),
  // Accept keeps the tensor as written (as Pinocchio does). Both warn, once per load. Zero and
  // positive-semidefinite tensors (point masses, frames) load under every policy.
  InertiaPolicy inertia = InertiaPolicy::Strict;
};

/// Parses a URDF file into a builder (links, joints, inertials, origins with rpy, axes,
/// limits, dynamics damping). `package://name/...` mesh paths are resolved by searching the
/// file's ancestor directories for `name` and ROS_PACKAGE_PATH; relative paths against the
/// file's directory; a missing mesh only warns (the dynamics come from <inertial>). Collision meshes
/// become convex hulls (ConvexHull geoms); an unreadable collision mesh file is a ModelError. What the
/// file holds and gradyn does not simulate (<mimic>, <transmission>, <gazebo>, dry friction, unknown
/// elements) warns, once per kind and load.
ModelBuilder parse_urdf(const std::string& path, const LoadOptions& options = {});
ModelBuilder parse_urdf_string(const std::string& xml, const std::string& source_name = "<string>",
                               const LoadOptions& options = {});
Model load_urdf(const std::string& path, const LoadOptions& options = {});

/// Parses an MJCF (MuJoCo XML) file: body tree, hinge/slide/ball/free joints, default classes,
/// compiler angle units and euler sequence, inertia from geoms when a body has no <inertial>,
/// armature, damping, stiffness and springref; <actuator> motor, position, velocity, damper and
/// general (no activation dynamics) on hinge and slide joints, with gear, ctrlrange/ctrllimited and
/// forcerange/forcelimited (others are skipped with a warning). Bodies with several joints become chains of
/// massless bodies; bodies without joints are welded to their parent. A missing mesh file is a
/// ModelError (meshes give bodies their mass, as in MuJoCo). What the file holds and gradyn does not
/// simulate (<equality>, <tendon>, <sensor>, frictionloss, ...) warns, once per kind and load.
ModelBuilder parse_mjcf(const std::string& path, const LoadOptions& options = {});
ModelBuilder parse_mjcf_string(const std::string& xml, const std::string& source_name = "<string>",
                               const LoadOptions& options = {});
Model load_mjcf(const std::string& path, const LoadOptions& options = {});

/// URDF or MJCF by extension (.urdf; .xml or .mjcf). Throws ModelError for other extensions.
Model load(const std::string& path, const LoadOptions& options = {});

}  // namespace gradyn
