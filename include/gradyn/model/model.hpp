// Model: everything that does not change during a simulation. Built once (by ModelBuilder or a
// loader), immutable afterwards. Bodies are numbered so that a parent always comes before its
// children; body i moves with joint i relative to body parent[i] (-1 is the world).
// Fixed joints never appear here: the builder merges the links they weld into their parent
// body and keeps each link as a Frame.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gradyn/collision/geometry.hpp"
#include "gradyn/model/joint.hpp"
#include "gradyn/model/network.hpp"

namespace gradyn {

// Geom: an MJCF geom's frame a sensor reads; Camera: an MJCF <camera>'s frame (model.cameras)
enum class FrameKind : std::uint8_t { Link, Joint, Site, Geom, Camera };

/// A named frame rigidly attached to a body (a URDF link, an MJCF body or site, a joint frame).
template <class S>
struct FrameTpl {
  std::string name;
  FrameKind kind = FrameKind::Link;
  int body = -1;          // -1: attached to the world
  Pose<S> placement;      // pose of the frame in its body's frame

  template <class T> FrameTpl<T> cast() const { return {name, kind, body, placement.template cast<T>()}; }
};

// --- contact models (contact/penalty.hpp, pgs_contact.hpp, ipm_contact.hpp, joint_limits.hpp) ---------------------------------------------------------
enum class ContactModel : std::uint8_t {
  None,     // contacts are neither detected nor applied by step(), and joint limits are not enforced
            // (step() is then the plain articulated dynamics checked against Pinocchio and MuJoCo;
            // contact/joint_limits.hpp says why)
  Penalty,  // Hunt-Crossley spring-damper normal force + smoothed friction, applied as forces
  Pgs,      // velocity-level impulses from a boxed LCP solved by PGS (contact/pgs_contact.hpp);
            // semi-implicit Euler only
  Ipm,      // velocity-level mixed LCP of paper 000 (docs/references.md; polyhedral friction cone) solved by a primal-dual
            // interior-point method (contact/ipm_contact.hpp); semi-implicit Euler only
};
// contact/contact_models.hpp registers each model's stages; a new model comes last and moves this.
inline constexpr ContactModel kLastContactModel = ContactModel::Ipm;  // the serialised format's range check
inline constexpr int kContactModelCount = static_cast<int>(kLastContactModel) + 1;
// How step_vjp differentiates PGS contact (contact/pgs_contact_vjp.hpp).
enum class PgsGradient : std::uint8_t {
  Implicit,  // implicit differentiation of the converged active set (Nimble); the default
  Sweeps,    // the reverse of the PGS sweeps as they ran (Qiao et al. 2021)
};

enum class FrictionModel : std::uint8_t {
  SmoothCoulomb,  // f_t = -mu f_n v_t / sqrt(|v_t|^2 + velocity_scale^2)
  Brown,          // Brown & McPhee's continuous velocity-based model (static peak, Stribeck, viscous)
};

/// Settings of every contact model (penalty, PGS, interior point) and of the joint limits; every number
/// must be finite and non-negative
/// (check_contact_settings). The defaults suit robots of tens of kilograms at dt ~ 1 ms.
struct ContactSettings {
  ContactModel model = ContactModel::None;
  double stiffness = 1e5;        // k in f_n = k d^p (1 + c d_dot)  [N / m^p]
  double exponent = 1.5;         // p: 1.5 is Hertz's sphere-on-plane law (Hunt & Crossley use it too); 1: linear spring
  double damping = 1.0;          // c  [s/m]: Hunt-Crossley damping. Restitution e at impact speed v: c = 1.5 (1 - e) / v
                                 // (Hunt & Crossley; good for e >= 0.8: e = 0.9 gives 0.909, e = 0.5 gives 0.66) or
                                 // c = 8 (1 - e) / (5 e v) (Flores et al. 2011; e = 0.5 gives 0.47, e = 0.3 gives 0.26).
                                 // (Restitutions of the 1-D impact with exponent 1.5; tests/contact/test_contact_physics.cpp)
  FrictionModel friction = FrictionModel::SmoothCoulomb;
  double velocity_scale = 1e-2;  // [m/s] SmoothCoulomb: regularisation eps; Brown: stiction velocity v_s
  double static_friction_ratio = 1.2;  // Brown: mu_static = ratio * mu (mu: the pair's Coulomb coefficient), >= 1
  double viscous_friction = 0.0; // Brown: viscous coefficient mu_v  [N s / m]
  double margin = 0.0;           // collide() margin [m]: pairs closer than this are reported (force 0 while apart)
  // --- Pgs (velocity-level) ---
  int pgs_iterations = 100;      // PGS sweeps per step, >= 1
  double pgs_tolerance = 1e-10;  // stop once a sweep changes no impulse by more than this [N s]
  PgsGradient pgs_gradient = PgsGradient::Implicit;  // how step_vjp differentiates the impulses
  double erp = 0.2;              // Baumgarte error reduction: fraction of (depth - slop) removed per step, in [0, 1]
  double slop = 1e-4;            // [m] penetration left uncorrected (avoids jitter at rest)
  double cfm = 0.0;              // constraint force mixing added to the Delassus diagonal [1/kg]
  double restitution_threshold = 0.1;  // [m/s] approach speeds below this bounce with restitution 0
  double max_correction_velocity = 0.5;  // [m/s] a contact's Baumgarte separation velocity is at most this
                                 // (Pgs, Ipm; Box2D and Bullet cap it too): a body started deep in
                                 // another rises out of it instead of being launched
  // --- joint limits (contact/joint_limits.hpp); units per coordinate: rad or m ---
  double limit_stiffness = 1e4;  // Penalty: k_l in f = max(0, k_l d + c_l d_dot), d the violation [N m/rad | N/m]
  double limit_damping = 20.0;   // Penalty: c_l [N m s/rad | N s/m]
  double limit_margin = 1e-3;    // Pgs, Ipm: a limit gets a row once its gap is below this [rad | m] (or would close this step)
  // --- Ipm (interior point, paper 000; contact/ipm_contact.hpp); erp, slop and restitution_threshold
  //     above act on its normal rows as on PGS's ---
  int ipm_iterations = 50;       // Newton (predictor-corrector) iterations per step at most, >= 1
  double ipm_tolerance = 1e-11;  // stop once every residual and |s z - kappa| is below this (SI units);
                                 // the iterations converge superlinearly at the end: 1e-11 costs the
                                 // standing laikago no iteration over 1e-10 and cut the solver noise
                                 // that central differences of a rollout see 7x (a gradcheck's fd_error
                                 // 1.4e-4 -> 1.9e-5, tests/python/test_joint_constraints.py)
  double ipm_kappa = 0.0;        // complementarity relaxation s z = kappa [m/s * N s]: 0 the exact LCP,
                                 // > 0 a slightly soft contact with smooth gradients (Dojo)
  int ipm_friction_directions = 4;  // N >= 3 directions spanning the friction cone per contact (evenly
                                    // spaced from tangent1; 4: +-t1, +-t2; 8: a rounder cone, bigger LCP)
  bool ipm_warm_start = false;    // start each solve from the last one's solution when its rows are the
                                 // same (fewer Newton iterations; contact/ipm_contact.hpp). Off by default:
                                 // step() then depends on the previous step, not on (q, v, tau) alone:
                                 // repeated evaluations differ by ~ipm_tolerance, gradients by ~1e-9 (relative)
  // --- all models ---
  double max_penetration = 0.05;  // [m] a deeper contact sets kStatusDeepPenetration in Data::status
};

/// The contact settings that are parameters of the model (Model.params(), ModelTangent::contact):
/// X(name) per field of ContactSettings, in the flat vector's order.
#define GRADYN_DIFFERENTIABLE_CONTACT_SETTINGS(X) \
  X(stiffness) X(exponent) X(damping) X(velocity_scale) X(static_friction_ratio) X(viscous_friction) X(erp) X(slop) X(cfm)

/// The registered name ("none", "penalty", "pgs", "ipm"; contact/contact_models.hpp).
const char* contact_model_name(ContactModel model);
/// True for the contact models that act through velocity-level impulses (Pgs, Ipm): the constraints
/// stage solves an LCP (sim/stages.hpp), and only the semi-implicit Euler step is defined for them.
bool has_impulses(ContactModel model);
const char* friction_model_name(FrictionModel model);
/// Throws ModelError (element "contact settings") naming the bad field unless all numbers are finite and
/// non-negative, exponent >= 1 and static_friction_ratio >= 1 (and velocity_scale > 0 when contact is on).
void check_contact_settings(const ContactSettings& settings);


// --- actuators (dynamics/actuation.hpp): part of the model, run inside every step -----------------
// Each actuator drives one 1-DoF joint (revolute, continuous, prismatic) through a gear ratio,
// with MuJoCo's semantics (joint transmission): with its length L = gear q and velocity V = gear v,
// it makes a scalar force from its control u, clamped first to ctrlrange (when ctrl_limited):
enum class ActuatorKind : std::uint8_t {
  Motor,     // force = u                                    (MJCF <motor>; URDF joints' effort limit)
  Position,  // force = kp u - kp L - kv V                   (MJCF <position kp kv>)
  Velocity,  // force = kv u - kv V                          (MJCF <velocity kv>)
  General,   // force = (g0 + g1 L + g2 V) u + b0 + b1 L + b2 V   (MJCF <general>: affine gain and bias)
  Servo,     // paper 002's servo: force = kv (clip(kp (u - L), velocity_limit) - V)
};
// The force is then clamped to forcerange (when force_limited), and the joint receives gear * force.
// MuJoCo stores every affine kind as its gain and bias vectors, and so does gradyn (gain, bias); the
// kind says which of them are parameters (params.hpp: kp and kv for Position, all six for General).
template <class S>
struct ActuatorTpl {
  std::string name;
  ActuatorKind kind = ActuatorKind::Motor;
  int joint = -1;                // the body whose joint it drives (1 DoF: q index idx_q, v index idx_v)
  S gear = S(1);
  Vector3<S> gain = Vector3<S>(S(1), S(0), S(0));  // affine kinds: g0, g1, g2
  Vector3<S> bias = Vector3<S>::Zero();             // affine kinds: b0, b1, b2
  S servo_kp = S(0), servo_kv = S(0);               // Servo: [1/s], [force s / unit of V]
  S servo_velocity_limit = S(std::numeric_limits<double>::infinity());  // Servo: |target velocity| bound
  bool ctrl_limited = false;
  S ctrl_lower = S(-std::numeric_limits<double>::infinity()), ctrl_upper = S(std::numeric_limits<double>::infinity());
  bool force_limited = false;
  S force_lower = S(-std::numeric_limits<double>::infinity()), force_upper = S(std::numeric_limits<double>::infinity());
  SourceLocation where;  // the element it was read from, for messages

  template <class T> ActuatorTpl<T> cast() const {
    ActuatorTpl<T> a;
    a.name = name, a.kind = kind, a.joint = joint, a.gear = T(gear);
    a.gain = gain.template cast<T>(), a.bias = bias.template cast<T>();
    a.servo_kp = T(servo_kp), a.servo_kv = T(servo_kv), a.servo_velocity_limit = T(servo_velocity_limit);
    a.ctrl_limited = ctrl_limited, a.ctrl_lower = T(ctrl_lower), a.ctrl_upper = T(ctrl_upper);
    a.force_limited = force_limited, a.force_lower = T(force_lower), a.force_upper = T(force_upper);
    a.where = where;
    return a;
  }
};
/// "motor", "position", "velocity", "general", "servo" (the MJCF element names; "servo" is paper 002's).
const char* actuator_kind_name(ActuatorKind kind);

// --- sensors (sensors/sensors.hpp): named observations, MuJoCo's <sensor> semantics ----------------
// Every sensor writes dim() consecutive entries of the readings vector, from `adr` on.
enum class SensorKind : std::uint8_t {
  JointPos,       // q of a 1-DoF joint (1)
  JointVel,       // v of a 1-DoF joint (1)
  FramePos,       // frame origin, world or reference frame (3)
  FrameQuat,      // frame orientation as a unit quaternion (w, x, y, z), w >= 0, world or reference (4)
  FrameLinVel,    // frame origin's velocity, world axes or relative to a moving reference frame (3)
  FrameAngVel,    // frame angular velocity, world axes or relative to a reference frame (3)
  Gyro,           // angular velocity in the frame's own axes (3)
  Accelerometer,  // proper linear acceleration of the frame's origin (gravity reads as +g up), own axes (3)
  Touch,          // sum of the normal contact forces on the frame's body inside the frame's zone (1)
};
/// "jointpos", "jointvel", "framepos", ... (the MJCF element names).
const char* sensor_kind_name(SensorKind kind);
/// Entries a sensor of this kind writes: 1, 3 or 4.
int sensor_kind_dim(SensorKind kind);
/// Acceleration-stage sensors read the accelerations (Accelerometer) or the contact forces
/// (Touch) of a step, besides (q, v).
inline bool sensor_needs_step(SensorKind kind) { return kind == SensorKind::Accelerometer || kind == SensorKind::Touch; }

/// The volume in which a Touch sensor counts contacts: a MuJoCo site's shape, in its frame
/// (sizes as MJCF's: sphere radius; capsule/cylinder radius, half-length along z; ellipsoid radii;
/// box half-sizes).
enum class ZoneShape : std::uint8_t { Sphere, Capsule, Ellipsoid, Cylinder, Box };

struct Sensor {
  std::string name;
  SensorKind kind = SensorKind::JointPos;
  int object = -1;     // JointPos, JointVel: the body whose (1-DoF) joint is read; others: a frame
                       // (model.frames index)
  int reference = -1;  // FramePos, FrameQuat, FrameLinVel, FrameAngVel: the frame the reading is
                       // expressed in (model.frames index), -1: the world
  int adr = 0;         // first entry in the readings
  double cutoff = 0;   // > 0: readings clamped to [-cutoff, cutoff] (Touch: to at most cutoff;
                       // FrameQuat: never), as MuJoCo does
  double noise = 0;    // MJCF noise: kept, not applied (MuJoCo does not apply it either)
  ZoneShape zone = ZoneShape::Sphere;              // Touch
  Vector3<double> zone_size = Vector3<double>::Zero();  // Touch
  SourceLocation where;
  int dim() const { return sensor_kind_dim(kind); }
};

// --- joint couplings (contact/joint_constraints.hpp): MJCF <equality><joint>, URDF <mimic> ---------
// Holds joint1 at a polynomial of joint2 (MuJoCo's rule, on the displacements from the reference
// configuration q0):
//   q1 - q1_ref = c0 + c1 (q2 - q2_ref) + c2 (q2 - q2_ref)^2 + c3 (...)^3 + c4 (...)^4,
// or q1 - q1_ref = c0 without joint2. Both joints have one DoF (revolute, continuous, prismatic).
// With tendons set (MJCF <equality><tendon>), joint1 and joint2 index model.tendons and q1, q2 are
// the two fixed tendons' lengths (their references: the lengths at q0).
// Pgs and Ipm enforce it as a bilateral constraint row, Penalty as a stiff spring-damper.
struct JointCoupling {
  std::string name;
  int joint1 = -1;  // the body whose joint follows (tendons: the tendon)
  int joint2 = -1;  // the body whose joint leads; -1: none (joint1 is held at q1_ref + c0)
  std::array<double, 5> polycoef{0.0, 1.0, 0.0, 0.0, 0.0};
  double q1_ref = 0.0, q2_ref = 0.0;  // MJCF: the joints' qpos0 (the tendons' lengths there); URDF <mimic>: 0
  SourceLocation where;
  bool tendons = false;  // joint1, joint2 index model.tendons
};

// --- fixed tendons (contact/joint_limits.hpp, dynamics/passive.hpp): MJCF <tendon><fixed> --------
// A length that is a linear combination of 1-DoF joint coordinates (revolute, continuous, prismatic):
//   L(q) = sum_i coefs[i] q[idx_q[joints[i]]],  L_dot = J v with J = coefs[i] on joints[i]'s DoF.
// Its range [lower, upper] holds as the joint limits do (one-sided rows under Pgs and Ipm, a one-sided
// spring-damper under Penalty, not enforced without a contact model); stiffness and damping pull it
// towards spring_length under every contact model (passive forces):
//   tau -= J^T (stiffness (L - spring_length) + damping L_dot).
// None of these numbers is a parameter of the flat vector (model/params.hpp).
struct FixedTendon {
  std::string name;
  std::vector<int> joints;     // bodies with 1-DoF joints, each once
  std::vector<double> coefs;   // one per joint, finite
  double lower = -std::numeric_limits<double>::infinity();  // -inf / inf: no limit on that side
  double upper = std::numeric_limits<double>::infinity();
  double stiffness = 0.0;      // N / m or N m / rad of L
  double damping = 0.0;
  double spring_length = 0.0;  // MJCF springlength, else L at the joints' spring rest q_rest (qpos_spring)
  SourceLocation where;
  bool limited() const { return std::isfinite(lower) || std::isfinite(upper); }
};

/// A camera declared with the model (MJCF <camera>): its frame, model.frames[frame] (kind Camera),
/// is the camera frame (it looks along its -z axis, x to the right of the image, y up), and fovy
/// its vertical field of view. The image size is the renderer's choice.
struct ModelCamera {
  std::string name;
  int frame = -1;
  double fovy = 45.0;  // degrees
  // What of the declaration gradyn's renderer does not reproduce (MJCF mode="trackcom", focal, ...),
  // said when the camera is used, not at load (cameras are drawing); empty: nothing.
  std::string unsupported;
  SourceLocation where;
};

// --- body connections (contact/joint_constraints.hpp): MJCF <equality><connect> and <weld> -------
// Holds a point of body1 on a point of body2 (or of the world), a ball joint that closes a loop:
//   oM(body1) anchor1 = oM(body2) anchor2  (three rows along the world axes);
// a weld also holds body2's orientation relative to body1 (three more rows, about the world axes):
//   R(body1) rotation = R(body2).
// Pgs and Ipm enforce them as bilateral constraint rows, Penalty as stiff spring-dampers.
struct BodyConnection {
  std::string name;
  int body1 = -1;  // a moving body
  int body2 = -1;  // -1: the world
  Vector3<double> anchor1 = Vector3<double>::Zero();  // in body1's frame
  Vector3<double> anchor2 = Vector3<double>::Zero();  // in body2's frame (the world's when body2 = -1)
  // A weld also holds the relative orientation: rotation is body2's orientation in body1's frame.
  // Its anchors are any pair that meets where it holds (ModelBuilder picks one for well-conditioned
  // rows; MJCF's anchor and relpose give an equivalent pair).
  bool weld = false;
  Matrix3<double> rotation = Matrix3<double>::Identity();
  SourceLocation where;
};

template <class S>
struct ModelTpl {
  using Scalar = S;

  // --- sizes -------------------------------------------------------------------------------
  int nq = 0;  // configuration size
  int nv = 0;  // velocity (tangent) size
  int nbodies() const { return static_cast<int>(parent.size()); }
  int nu() const { return static_cast<int>(actuators.size()); }  // controls: one per actuator

  // --- topology, one entry per body (= per moving joint) -------------------------------------
  std::vector<int> parent;           // parent body, -1 for the world
  std::vector<JointType> joint_type;
  std::vector<int> idx_q, idx_v;     // first index of the joint's entries in q and v
  std::vector<int> joint_nq_, joint_nv_;
  std::vector<std::string> joint_names;
  std::vector<std::string> body_names;  // the link that starts each body
  std::vector<std::vector<int>> children;  // derived from parent

  // --- parameters, one entry per body ---------------------------------------------------------
  std::vector<Pose<S>> joint_placement;  // joint frame in the parent body frame
  std::vector<Vector3<S>> joint_axis;    // unit axis in the joint frame (revolute, prismatic)
  std::vector<Inertia<S>> body_inertia;  // in the body frame (= joint child frame)

  // --- per-DoF parameters (size nv) ------------------------------------------------------------
  VectorX<S> damping;         // viscous: tau = -damping * v
  VectorX<S> armature;        // rotor inertia added to the diagonal of M
  VectorX<S> stiffness;       // spring: tau = -stiffness * (q (-) q_rest)
  VectorX<S> effort_limit;    // |tau| bound (inf: none); enforced by actuators
  VectorX<S> velocity_limit;  // |v| bound (inf: none)
  VectorX<S> frictionloss;    // dry joint friction: |tau_friction| <= frictionloss [N m | N]
                              // (contact/joint_constraints.hpp; 0: none)

  // --- per-coordinate parameters (size nq) -----------------------------------------------------
  VectorX<S> q_rest;          // spring rest configuration
  VectorX<S> lower_limit;     // position limits (-inf/inf where none, e.g. quaternions)
  VectorX<S> upper_limit;
  VectorX<S> q0;              // reference configuration (identity quaternions, MJCF qpos0)

  Vector3<S> gravity = Vector3<S>(S(0), S(0), S(-9.81));

  std::vector<FrameTpl<S>> frames;

  // Cameras declared with the model (MJCF <camera>), for render (render/camera.hpp).
  std::vector<ModelCamera> cameras;

  // --- joint couplings (contact/joint_constraints.hpp) ------------------------------------------
  std::vector<JointCoupling> joint_couplings;
  std::vector<BodyConnection> body_connections;
  std::vector<FixedTendon> tendons;
  // Their row blocks of three in the constraint stage: one per connection, one more per weld.
  int connection_blocks() const {
    int n = static_cast<int>(body_connections.size());
    for (const BodyConnection& c : body_connections) n += c.weld ? 1 : 0;
    return n;
  }

  // --- actuators (dynamics/actuation.hpp), in control order ---------------------------------------
  std::vector<ActuatorTpl<S>> actuators;

  // --- networks inside the dynamics (model/network.hpp; hybrid models, paper 001) ------------------
  std::vector<NetworkTpl<S>> networks;

  // --- sensors (sensors/sensors.hpp), in readings order ------------------------------------------
  std::vector<Sensor> sensors;
  int nsensordata() const { return sensors.empty() ? 0 : sensors.back().adr + sensors.back().dim(); }

  // --- collision (collision/collide.hpp) --------------------------------------------------------
  std::vector<GeomTpl<S>> geoms;
  // Body pairs (a < b; -1 is the world) whose geoms never collide: MJCF <contact><exclude>, or the user.
  std::vector<std::pair<int, int>> excluded_pairs;
  // Geoms of a body and of its parent body are skipped (they overlap at the joint) unless this is
  // set; the world is never such a parent, so a floating base still touches the floor.
  bool collide_parent_child = false;
  // Capacity of Data::contacts; 0 picks 8 per geom (at least 32).
  int max_contacts = 0;
  int ngeoms() const { return static_cast<int>(geoms.size()); }
  // How step() treats contacts (None by default: no contact forces).
  ContactSettings contact;

  std::string name;
  std::string source;  // file the model was loaded from, if any

  // --- queries -------------------------------------------------------------------------------
  int joint_id(const std::string& joint_name) const;  // -1 if absent
  int body_id(const std::string& body_name) const;    // -1 if absent
  int frame_id(const std::string& frame_name) const;  // -1 if absent
  int geom_id(const std::string& geom_name) const;    // -1 if absent
  int actuator_id(const std::string& actuator_name) const;  // -1 if absent
  int sensor_id(const std::string& sensor_name) const;  // -1 if absent
  int joint_nq(int i) const { return joint_nq_[i]; }
  int joint_nv(int i) const { return joint_nv_[i]; }

  /// The same model with every parameter converted to scalar T (e.g. a forward-mode AD type).
  template <class T> ModelTpl<T> cast() const;
};

using Model = ModelTpl<double>;
using Actuator = ActuatorTpl<double>;
using Frame = FrameTpl<double>;

template <class S>
int ModelTpl<S>::joint_id(const std::string& n) const {
  for (int i = 0; i < nbodies(); ++i)
    if (joint_names[i] == n) return i;
  return -1;
}
template <class S>
int ModelTpl<S>::body_id(const std::string& n) const {
  for (int i = 0; i < nbodies(); ++i)
    if (body_names[i] == n) return i;
  return -1;
}
template <class S>
int ModelTpl<S>::frame_id(const std::string& n) const {
  for (int i = 0; i < static_cast<int>(frames.size()); ++i)
    if (frames[i].name == n) return i;
  return -1;
}

template <class S>
int ModelTpl<S>::geom_id(const std::string& n) const {
  for (int i = 0; i < ngeoms(); ++i)
    if (geoms[i].name == n) return i;
  return -1;
}

template <class S>
int ModelTpl<S>::actuator_id(const std::string& n) const {
  for (int i = 0; i < nu(); ++i)
    if (actuators[i].name == n) return i;
  return -1;
}

template <class S>
int ModelTpl<S>::sensor_id(const std::string& n) const {
  for (int i = 0; i < static_cast<int>(sensors.size()); ++i)
    if (sensors[i].name == n) return i;
  return -1;
}

template <class S>
template <class T>
ModelTpl<T> ModelTpl<S>::cast() const {
  ModelTpl<T> m;
  m.nq = nq;
  m.nv = nv;
  m.parent = parent;
  m.joint_type = joint_type;
  m.idx_q = idx_q;
  m.idx_v = idx_v;
  m.joint_nq_ = joint_nq_;
  m.joint_nv_ = joint_nv_;
  m.joint_names = joint_names;
  m.body_names = body_names;
  m.children = children;
  for (const auto& x : joint_placement) m.joint_placement.push_back(x.template cast<T>());
  for (const auto& x : joint_axis) m.joint_axis.push_back(x.template cast<T>());
  for (const auto& x : body_inertia) m.body_inertia.push_back(x.template cast<T>());
  m.damping = damping.template cast<T>();
  m.armature = armature.template cast<T>();
  m.stiffness = stiffness.template cast<T>();
  m.effort_limit = effort_limit.template cast<T>();
  m.velocity_limit = velocity_limit.template cast<T>();
  m.frictionloss = frictionloss.template cast<T>();
  m.joint_couplings = joint_couplings;
  m.body_connections = body_connections;
  m.tendons = tendons;
  m.cameras = cameras;
  m.q_rest = q_rest.template cast<T>();
  m.lower_limit = lower_limit.template cast<T>();
  m.upper_limit = upper_limit.template cast<T>();
  m.q0 = q0.template cast<T>();
  m.gravity = gravity.template cast<T>();
  for (const auto& f : frames) m.frames.push_back(f.template cast<T>());
  for (const auto& a : actuators) m.actuators.push_back(a.template cast<T>());
  for (const auto& n : networks) m.networks.push_back(n.template cast<T>());
  m.sensors = sensors;
  for (const auto& g : geoms) m.geoms.push_back(g.template cast<T>());
  m.excluded_pairs = excluded_pairs;
  m.collide_parent_child = collide_parent_child;
  m.max_contacts = max_contacts;
  m.contact = contact;
  m.name = name;
  m.source = source;
  return m;
}

}  // namespace gradyn
