// Differentiable parameters. Every analytical parameter of a Model has a stable name and index in
// a flat vector (DESIGN principle 4, docs/references.md); gradients come back in the same layout.
//
// Two views of the same parameters:
//  * ModelTangentTpl<S>: one adjoint per Model field, in the Model's own representation (a 3x3
//    rotation matrix for a joint placement, a 3x3 inertia matrix). The hand-written VJPs
//    accumulate into it, stage by stage.
//  * the flat vector: the user's view (names in param_names()). params_gradient() applies the
//    chain rule from the tangent to the flat layout (e.g. rotation matrix -> roll, pitch, yaw).
//
// Flat layout, in this order (names in quotes, <b> a body name, <j> its joint's name):
//   for each body b, in body order:
//     "<b>.mass"; "<b>.com.x|y|z" (body frame); "<b>.inertia.ixx|iyy|izz|ixy|ixz|iyz" (about the
//     centre of mass, body frame);
//     "<j>.origin.x|y|z", "<j>.origin.roll|pitch|yaw" (joint frame in the parent body frame);
//     revolute/continuous/prismatic only: "<j>.axis.x|y|z" (joint frame; normalised by with_params);
//     per DoF k of the joint, interleaved (suffix "[k]" only when the joint has several DoFs):
//       "<j>.damping[k]", "<j>.armature[k]", "<j>.stiffness[k]";
//     scalar-coordinate joints only (revolute, continuous, prismatic, planar), per coordinate k
//     (suffix "[k]" for the planar joint's 3): "<j>.rest" (spring rest position, model.q_rest);
//     per DoF k with dry friction (model.frictionloss[k] > 0: the DoFs that have a friction row),
//     "<j>.frictionloss[k]" (suffix as for damping)
//   then "gravity.x|y|z";
//   then for each geom g, in model.geoms order (<g> its name):
//     "<g>.friction", "<g>.restitution";
//     "<g>.size[k]" for the size entries its type uses (geom_size_count: plane none, sphere 1,
//     capsule and cylinder 2, box 3, convex hull 3: its scale along x, y, z, 1 as loaded; the
//     hull's vertices are not parameters; see collision/geometry.hpp);
//     "<g>.origin.x|y|z", "<g>.origin.roll|pitch|yaw" (geom frame in its body frame, URDF rpy);
//   then the contact settings (model.contact, always present): "contact.stiffness",
//     "contact.exponent", "contact.damping", "contact.velocity_scale",
//     "contact.static_friction_ratio", "contact.viscous_friction", "contact.erp", "contact.slop",
//     "contact.cfm";
//   then for each actuator a, in model.actuators order (<a> its name; dynamics/actuation.hpp):
//     by kind: motor none; position "<a>.kp", "<a>.kv"; velocity "<a>.kv"; general "<a>.gain[0|1|2]",
//     "<a>.bias[0|1|2]"; servo "<a>.kp", "<a>.kv", "<a>.velocity_limit";
//     then "<a>.gear"; "<a>.ctrlrange.lower|upper" when it is ctrl-limited; "<a>.forcerange.lower|upper"
//     when it is force-limited (a clamp's bound has a gradient where the clamp is active).
//   then for each joint coupling c (<c> its name; contact/joint_constraints.hpp): "<c>.polycoef[0..4]";
//   then for each body connection c (<c> its name): "<c>.anchor1.x|y|z" (body1's frame),
//     "<c>.anchor2.x|y|z" (body2's frame, the world's without body2), and for a weld
//     "<c>.rotation.roll|pitch|yaw" (body2's orientation in body1's frame, URDF rpy);
//   then for each fixed tendon t (<t> its name; model.hpp): "<t>.stiffness", "<t>.damping",
//     "<t>.spring_length";
//   last, for each network n, in model.networks order (<n> its name; model/network.hpp), layer
//     after layer: "<n>.layer<l>.weight[i,j]" (row-major: output i, input j), then "<n>.layer<l>.bias[i]".
// Bodies merged from several links (fixed joints) have the merged inertia's parameters.
// Notes:
//  * inertia: the 6 numbers fill the symmetric matrix [[ixx, ixy, ixz], [ixy, iyy, iyz],
//    [ixz, iyz, izz]]; an off-diagonal parameter sets two entries, so its gradient is the sum
//    of the two entries' adjoints.
//  * origin roll/pitch/yaw: URDF convention, R = rpy_to_matrix(rpy) = Rz(yaw) Ry(pitch) Rx(roll).
//    get_params returns pitch in [-pi/2, pi/2], roll and yaw in (-pi, pi]; rpy_to_matrix of them
//    gives back the model's R to rounding, also at pitch = +-pi/2 (gimbal lock), where only
//    roll -+ yaw is determined and yaw = 0 is chosen. The rpy gradient there is that of this
//    chart (one of its directions is lost at the lock).
//  * axis: a direction. with_params normalises the three numbers (any non-zero vector is valid),
//    and params_gradient returns the gradient at the model's unit axis, tangent to the unit sphere
//    (exact for p's axis entries when they are unit, as get_params gives them; for a non-unit
//    entry the true gradient is this one divided by its norm).
//  * q_rest entries of spherical and free joints (identity quaternions) are not parameters;
//    params_gradient ignores their adjoints. Limits, q0 and frames are not parameters either.
//  * contact settings: ContactSettings holds doubles, so with_params<ADScalar> keeps only their
//    values (forward mode cannot see them; their gradients come from the hand-written VJPs, in
//    ModelTangentTpl::contact). The geom parameters are ordinary Model fields. The couplings',
//    connections' and tendons' parameters are doubles too (double_valued_params lists them all).
//  * a weld's anchors: any pair that meets where the weld holds is the same constraint
//    (ModelBuilder moves them to a well-conditioned pair); the gradient is that of the pair kept.
//  * tendon coefficients and ranges, like joint limits, are not parameters.
//  * geom placement rotations: geom_placement_R may hold only the component of the adjoint
//    tangent to the rotations (collide_vjp gives that one: the narrowphase reads R as a rotation);
//  * actuator kp, kv: a position actuator's kp sets gain[0] = kp and bias[1] = -kp, its kv bias[2] = -kv
//    (a velocity actuator's kv: gain[0] = kv, bias[2] = -kv), so their gradients sum those entries'.
//    the rpy chain rule only sees that component, so the flat gradient is the same either way.
#pragma once

#include <string>
#include <vector>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Adjoints of every Model parameter, in the Model's own representation. All zero on creation.
template <class S>
struct ModelTangentTpl {
  explicit ModelTangentTpl(const ModelTpl<S>& model);
  void setZero();

  std::vector<S> mass;                    // per body
  std::vector<Vector3<S>> com;            // per body
  std::vector<Matrix3<S>> inertia_com;    // per body: d/d(each of the 9 entries); symmetrised by params_gradient
  std::vector<Matrix3<S>> placement_R;    // per body: d/d(joint_placement.R entries)
  std::vector<Vector3<S>> placement_p;    // per body
  std::vector<Vector3<S>> axis;           // per body
  VectorX<S> damping, armature, stiffness;  // nv
  VectorX<S> q_rest;                      // nq
  Vector3<S> gravity;
  // collision geometry, per geom (model.geoms)
  std::vector<Vector3<S>> geom_size;
  std::vector<Matrix3<S>> geom_placement_R;  // d/d(placement.R entries), geom frame in its body frame
  std::vector<Vector3<S>> geom_placement_p;
  VectorX<S> geom_friction, geom_restitution;
  // contact settings (model.contact holds doubles; these are their adjoints)
  struct ContactSettingsBar {  // one entry per GRADYN_DIFFERENTIABLE_CONTACT_SETTINGS (model.hpp)
#define GRADYN_CONTACT_SETTING_ADJOINT(name) S name = S(0);
    GRADYN_DIFFERENTIABLE_CONTACT_SETTINGS(GRADYN_CONTACT_SETTING_ADJOINT)
#undef GRADYN_CONTACT_SETTING_ADJOINT
  } contact;
  // actuators, per actuator (model.actuators)
  VectorX<S> actuator_gear;
  std::vector<Vector3<S>> actuator_gain, actuator_bias;  // d/d(gain), d/d(bias) entries
  std::vector<Vector3<S>> actuator_servo;                // d/d(servo_kp, servo_kv, servo_velocity_limit)
  std::vector<Eigen::Matrix<S, 2, 1>> actuator_ctrl_range, actuator_force_range;  // d/d(lower, upper)
  // networks, per network (model.networks): d/d(weights), in nn/dense.hpp's layout
  std::vector<VectorX<S>> network_weights;
  // dry joint friction, per DoF (nv): d/d(frictionloss)
  VectorX<S> frictionloss;
  // joint couplings, per coupling: d/d(polycoef)
  std::vector<Eigen::Matrix<S, 5, 1>> coupling_polycoef;
  // body connections, per connection: d/d(anchor1), d/d(anchor2), d/d(rotation entries) (welds)
  std::vector<Vector3<S>> connection_anchor1, connection_anchor2;
  std::vector<Matrix3<S>> connection_rotation;
  // fixed tendons, per tendon: d/d(stiffness, damping, spring_length)
  std::vector<Vector3<S>> tendon_spring;
};
using ModelTangent = ModelTangentTpl<double>;

/// How many entries of GeomTpl::size a geom type uses (its size parameters): plane 0, sphere 1,
/// capsule and cylinder 2, box 3, convex hull 3 (its scale; the vertices are not parameters).
inline int geom_size_count(GeomType type) {
  switch (type) {
    case GeomType::Plane: return 0;
    case GeomType::Sphere: return 1;
    case GeomType::Capsule:
    case GeomType::Cylinder: return 2;
    case GeomType::Box:
    case GeomType::ConvexHull: return 3;
  }
  return 0;
}

/// Names of the flat parameter vector, in order (see the file comment).
std::vector<std::string> param_names(const Model& model);

/// Indices of the flat parameters the Model holds as doubles (the contact settings, the couplings',
/// connections' and tendons' numbers): with_params<ADScalar> drops their derivatives, so forward-mode
/// AD cannot check them (gradcheck compares them with finite differences only).
std::vector<int> double_valued_params(const Model& model);

/// The flat parameter vector of a model.
template <class S>
VectorX<S> get_params(const ModelTpl<S>& model);

/// A copy of the model with every parameter taken from the flat vector p; the Model's fields are
/// all that depends on them, and get_params(with_params(model, p)) == p (up to rounding, and to
/// the rpy chart at gimbal lock). A Data made for the old model is stale for the new one: its
/// joint_S (and oS) hold the OLD joint axes, so build a new Data from the returned model.
/// Throws ArgumentError if p has the wrong size, ModelError (naming the body) if a mass is
/// negative or not finite, or zero on a body that had mass (a body massless from the start, a
/// frame-only link, may stay massless); ModelError naming the geom and the parameter if a geom's
/// friction is negative or not finite, its restitution above 1 or not finite, or a size entry it
/// uses not positive and finite; and check_contact_settings' ModelError for bad settings when the
/// model's contact is on (with contact off the settings are inert and not checked, as in step()).
/// A restitution below 0 is accepted: the default 0 sits on that bound, and central differences
/// (gradcheck, the ML bridges' gradient checks) step below it; the solvers' bounce target
/// -e v_n continues smoothly there.
/// Inertia matrices are not checked (gradients may be taken anywhere); physical validity of the
/// rest is the caller's business.
template <class S>
ModelTpl<S> with_params(const ModelTpl<S>& model, const VecRef<S>& p);

/// Chain rule from the Model-shaped adjoint to the flat layout: p_bar = (d model / d p)^T tangent.
template <class S>
VectorX<S> params_gradient(const ModelTpl<S>& model, const ModelTangentTpl<S>& tangent);

}  // namespace gradyn
