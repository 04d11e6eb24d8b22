// ModelBuilder: describe a robot as links joined by joints (the URDF view), then build() a Model.
// Loaders (URDF, MJCF) and the Python API all go through here, so every model gets the same
// checks: physical inertias, moving bodies that carry inertia along their joints, one root, no
// cycles, known parents.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "gradyn/model/detail/grouped_warnings.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn {

struct LinkSpec {
  std::string name;
  // Inertia in the link frame. A link without inertia (std::nullopt) is massless: fine for
  // frames and welded links, but a moving body whose whole subtree is massless is rejected.
  // Zero or positive-semidefinite rotational inertia is fine (point masses, frames): build()
  // checks, after merging the links welded by fixed joints, that every moving joint carries inertia.
  std::optional<Inertia<double>> inertia;
  SourceLocation where;
  // Collision geometry, placed in the link frame. Unnamed geoms are called "<link>/collision<k>".
  std::vector<GeomSpec> collisions;
  // Where the inertia is written (a URDF <inertia>, an MJCF <inertial>), for its messages; empty:
  // the link's `where`.
  SourceLocation inertia_where;
};

struct JointSpec {
  std::string name;
  JointType type = JointType::Fixed;
  std::string parent;  // parent link name
  std::string child;   // child link name
  Pose<double> origin;  // joint frame in the parent link frame
  // Child link frame in the joint's moved frame (identity for URDF; MJCF joint anchors and
  // reference angles use it).
  Pose<double> child_offset;
  Vector3<double> axis = Vector3<double>(1, 0, 0);  // joint frame; normalised by build()
  // Per DoF (broadcast when a single value is given for a multi-DoF joint).
  double damping = 0, armature = 0, stiffness = 0;
  double frictionloss = 0;  // dry friction bound [N m | N] (MJCF frictionloss, URDF <dynamics friction>)
  double effort_limit = std::numeric_limits<double>::infinity();
  double velocity_limit = std::numeric_limits<double>::infinity();
  // Scalar joints only (revolute, prismatic): position limits, spring rest and reference value.
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double rest = 0;       // spring rest position
  double reference = 0;  // value of q in the model's reference configuration q0
  // Free joints only: their pose in q0 and q_rest (MJCF qpos0: the body's initial pose in the
  // world); none: the identity.
  std::optional<Pose<double>> free_pose;
  SourceLocation where;
};

/// An actuator on a named 1-DoF joint (model.hpp, ActuatorKind, for the force law). The kind's
/// gains: Position kp, kv; Velocity kv; General gain, bias; Servo kp, kv, velocity_limit.
struct ActuatorSpec {
  std::string name;   // empty: "<joint>" for the first actuator on a joint, then "<joint>/<kind><k>"
  ActuatorKind kind = ActuatorKind::Motor;
  std::string joint;  // the joint it drives: revolute, continuous or prismatic
  double gear = 1;
  double kp = 0, kv = 0;  // Position (MuJoCo's kp, kv), Velocity (kv), Servo (paper 002's gains)
  Vector3<double> gain = Vector3<double>(1, 0, 0), bias = Vector3<double>::Zero();  // General
  double velocity_limit = std::numeric_limits<double>::infinity();                 // Servo
  // Clamps: a control outside [ctrl_lower, ctrl_upper] is moved onto it, and so is the force.
  std::optional<std::pair<double, double>> ctrl_range, force_range;
  SourceLocation where;
};

/// A named frame fixed on a link: an MJCF <site> (kind Site), or a geom's frame that a sensor reads
/// (kind Geom). It becomes a model frame of that kind.
struct SiteSpec {
  std::string name;
  FrameKind kind = FrameKind::Site;  // Site, Geom or Camera (add_camera)
  std::string link;        // the link it is fixed on
  Pose<double> placement;  // in the link frame
  SourceLocation where;
};

/// A sensor (model.hpp, SensorKind). object names a joint (JointPos, JointVel: a 1-DoF joint) or a
/// frame: a site (object_kind Site), a geom's frame (Geom) or a link (Link: the link's own frame, MJCF
/// objtype "xbody").
/// Gyro, Accelerometer and Touch read sites. reference (frame sensors only; empty: the world) names
/// a frame the same way.
struct SensorSpec {
  std::string name;  // empty: "sensor<k>", k its index
  SensorKind kind = SensorKind::JointPos;
  std::string object;
  FrameKind object_kind = FrameKind::Site;
  std::string reference;
  FrameKind reference_kind = FrameKind::Site;
  double cutoff = 0, noise = 0;  // non-negative (model.hpp, Sensor)
  ZoneShape zone = ZoneShape::Sphere;  // Touch: the site's shape and size
  Vector3<double> zone_size = Vector3<double>::Zero();
  SourceLocation where;
};

/// A coupling of two 1-DoF joints (model.hpp, JointCoupling): joint1 - its reference =
/// polynomial of (joint2 - its reference); without joint2, joint1 is held at its reference + c0.
/// The references are the joints' values in q0 (JointSpec::reference), unless given.
struct JointCouplingSpec {
  std::string name;    // empty: "coupling<k>"
  std::string joint1;  // follows
  std::string joint2;  // leads; empty: none
  std::array<double, 5> polycoef{0.0, 1.0, 0.0, 0.0, 0.0};
  std::optional<double> q1_ref, q2_ref;  // URDF <mimic>: 0 (q1 = multiplier q2 + offset)
  SourceLocation where;
  // joint1 and joint2 name fixed tendons (add_tendon; MJCF <equality><tendon>): their lengths are
  // coupled, the references their lengths at q0 unless given
  bool tendons = false;
};

/// A fixed tendon (model.hpp, FixedTendon): the length sum_i coefs[i] q(joints[i]) over hinge and slide
/// joints (each once), with an optional range [lower, upper] and a spring-damper along it.
struct TendonSpec {
  std::string name;                 // empty: "tendon<k>"
  std::vector<std::string> joints;  // at least one
  std::vector<double> coefs;        // one finite coefficient per joint
  std::optional<double> lower, upper;  // none: no limit on that side
  double stiffness = 0.0, damping = 0.0;  // >= 0
  std::optional<double> spring_length;  // none: the length at the joints' spring rest (q_rest)
  SourceLocation where;
};

/// A point of one link held on a point of another (model.hpp, BodyConnection; MJCF <equality><connect>),
/// or, with weld, the two frames held together (MJCF <equality><weld>).
/// frame1, frame2 name links or sites (frame2 empty or "world": the world). anchor1 is in frame1;
/// anchor2 in frame2. The one not given is the point of its frame where the other one is in the
/// reference configuration q0 (MuJoCo's rule for connect's body form, and weld's anchor without
/// relpose); not giving either is an error. A weld's rotation is frame2's orientation in frame1's
/// frame, as in q0 when not given; its model anchors are then moved to an equivalent pair, the
/// centre of mass of the body that turns most easily and its mate (builder.cpp says why).
struct ConnectionSpec {
  std::string name;  // empty: "connection<k>" ("weld<k>" for a weld)
  std::string frame1, frame2;
  std::optional<Vector3<double>> anchor1, anchor2;
  bool weld = false;
  std::optional<Matrix3<double>> rotation;  // weld only
  SourceLocation where;
};

/// What add_link does with a rotational inertia that no rigid body has (a negative principal
/// moment, or moments that violate the triangle inequality A + B >= C).
enum class InertiaPolicy {
  Strict,  // ModelError naming the link, the moments and the two other policies (the default)
  Repair,  // replace the moments by their mean, as MuJoCo's compiler balanceinertia does; warn
  Accept,  // keep the tensor as written, as Pinocchio does; warn
};

struct BuildOptions {
  bool floating_base = false;  // put a free joint between the world and the root link
  std::string floating_base_name = "root";
};

class ModelBuilder {
 public:
  ModelBuilder& add_link(LinkSpec link);
  ModelBuilder& add_joint(JointSpec joint);
  /// Actuators get controls in the order they are added. build() checks that the joint exists
  /// and has one DoF, and that gains, gear and ranges are finite (ModelError naming the actuator).
  ModelBuilder& add_actuator(ActuatorSpec actuator);
  /// Sites become frames (kind Site) after the links' frames; names are unique among sites.
  ModelBuilder& add_site(SiteSpec site);
  /// Sensors write the readings in the order they are added. build() checks that what they read
  /// exists (ModelError naming the sensor's element).
  ModelBuilder& add_sensor(SensorSpec sensor);
  /// Joint couplings in the order they are added. build() checks that both joints exist, have one
  /// DoF and differ, and that the coefficients are finite (ModelError naming the element).
  ModelBuilder& add_joint_coupling(JointCouplingSpec coupling);
  /// Fixed tendons in the order they are added. build() checks that the joints exist, have one DoF
  /// (hinge or slide) and appear once, and the numbers (ModelError naming the element).
  ModelBuilder& add_tendon(TendonSpec tendon);
  /// Body connections in the order they are added. build() checks that the frames exist, that
  /// frame1 moves and that the two are not on one body (ModelError naming the element).
  ModelBuilder& add_connection(ConnectionSpec connection);
  ModelBuilder& set_gravity(const Vector3<double>& g) { gravity_ = g; return *this; }
  ModelBuilder& set_name(std::string name) { name_ = std::move(name); return *this; }
  ModelBuilder& set_source(std::string file) { source_ = std::move(file); return *this; }
  /// The geoms of these two links never collide with each other (MJCF <contact><exclude>).
  ModelBuilder& exclude_collision(std::string link_a, std::string link_b, SourceLocation where = {});
  /// Let the geoms of a body collide with those of its parent body (default: skipped).
  ModelBuilder& set_collide_parent_child(bool on) { collide_parent_child_ = on; return *this; }
  /// How add_link treats impossible inertia tensors (set it before adding links), and where the
  /// warnings of Repair and Accept go (null: std::cerr). add_link collects them; build() issues one
  /// warning per kind, naming how many links and where.
  ModelBuilder& set_inertia_policy(InertiaPolicy policy, std::vector<std::string>* warnings = nullptr) {
    inertia_policy_ = policy;
    warnings_ = warnings;
    return *this;
  }

  const std::vector<LinkSpec>& links() const { return links_; }
  const std::vector<JointSpec>& joints() const { return joints_; }
  const std::vector<ActuatorSpec>& actuators() const { return actuators_; }
  const std::vector<SiteSpec>& sites() const { return sites_; }
  /// A camera (ModelCamera): its frame at placement on link (it looks along its -z axis, x to the
  /// right of the image, y up) and its vertical field of view in degrees, in (0, 180).
  /// unsupported: what of the declaration the renderer does not reproduce (ModelCamera).
  ModelBuilder& add_camera(const std::string& name, const std::string& link, const Pose<double>& placement,
                           double fovy = 45.0, const SourceLocation& where = {}, const std::string& unsupported = "");
  const std::vector<SensorSpec>& sensors() const { return sensors_; }
  const std::vector<JointCouplingSpec>& joint_couplings() const { return couplings_; }
  const std::vector<ConnectionSpec>& connections() const { return connections_; }
  const std::vector<TendonSpec>& tendons() const { return tendons_; }

  /// Checks the description and builds the model. Throws ModelError naming the element.
  Model build(const BuildOptions& options = {}) const;

 private:
  std::vector<LinkSpec> links_;
  std::vector<JointSpec> joints_;
  std::vector<ActuatorSpec> actuators_;
  std::vector<SiteSpec> sites_;
  std::vector<std::pair<double, std::string>> cameras_;  // per site of kind Camera, in order: fovy, unsupported
  ModelBuilder& push_site(SiteSpec site);  // add_site's and add_camera's checks
  std::vector<SensorSpec> sensors_;
  std::vector<JointCouplingSpec> couplings_;
  std::vector<ConnectionSpec> connections_;
  std::vector<TendonSpec> tendons_;
  struct Exclusion {
    std::string a, b;
    SourceLocation where;
  };
  std::vector<Exclusion> exclusions_;
  bool collide_parent_child_ = false;
  InertiaPolicy inertia_policy_ = InertiaPolicy::Strict;
  std::vector<std::string>* warnings_ = nullptr;
  detail::GroupedWarnings inertia_warnings_;  // tensors repaired or accepted by add_link
  Vector3<double> gravity_ = Vector3<double>(0, 0, -9.81);
  std::string name_;
  std::string source_;
};

/// Throws ModelError unless the inertia is physical: a finite mass >= 0 and a symmetric
/// positive-semidefinite rotational inertia whose principal moments satisfy the triangle
/// inequality (relative tolerance 1e-6, for files written with rounded numbers). The message of
/// an impossible tensor names the load option that repairs or accepts it.
void check_inertia(const Inertia<double>& inertia, const SourceLocation& where);

}  // namespace gradyn
