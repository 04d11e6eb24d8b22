// Differentiable parameters. Every analytical parameter of a Model has a stable name and index in
// a flat vector (DESIGN principle 4); gradients come back in the same layout.
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
//     revolute/continuous/prismatic only: "<j>.axis.x|y|z" (joint frame; not renormalised);
//     per DoF k of the joint (suffix "[k]" only when the joint has several DoFs):
//       "<j>.damping", "<j>.armature", "<j>.stiffness";
//     scalar-coordinate joints only (revolute, continuous, prismatic, planar), per coordinate:
//       "<j>.rest" (spring rest position)
//   then "gravity.x|y|z".
// Bodies merged from several links (fixed joints) have the merged inertia's parameters.
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
};
using ModelTangent = ModelTangentTpl<double>;

/// Names of the flat parameter vector, in order (see the file comment).
std::vector<std::string> param_names(const Model& model);

/// The flat parameter vector of a model.
template <class S>
VectorX<S> get_params(const ModelTpl<S>& model);

/// A copy of the model with every parameter taken from the flat vector p.
/// Throws ArgumentError if p has the wrong size, ModelError if a mass becomes non-positive.
template <class S>
ModelTpl<S> with_params(const ModelTpl<S>& model, const VecRef<S>& p);

/// Chain rule from the Model-shaped adjoint to the flat layout: p_bar = (d model / d p)^T tangent.
template <class S>
VectorX<S> params_gradient(const ModelTpl<S>& model, const ModelTangentTpl<S>& tangent);

}  // namespace gradyn
