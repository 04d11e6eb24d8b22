// Reverse-mode building blocks for everything that depends on where bodies are and how fast they
// move (contact forces, contact Jacobians, the mass matrix in the contact solvers).
//
// Pose adjoints are WRENCHES. A perturbation of body i's world pose is the world-frame twist
// xi_i = [dtheta; dp0] with  d oMi = xi_i^ oMi  (dR = [dtheta]x R, dp = dtheta x p + dp0): a point x
// fixed on the body moves by dtheta x x + dp0, a direction d by dtheta x d. The adjoint of the pose
// is the 6-vector pose_bar_i = [torque; force] with dL = sum_i pose_bar_i . xi_i; a point adjoint
// x_bar contributes [x x x_bar; x_bar], a direction adjoint d_bar contributes [d x d_bar; 0].
//
// World velocities: ow_i = sum_{j ancestor-or-self of i} oS_j w_j, the spatial velocity [omega; v0]
// of body i in the world frame about the world origin under generalised velocity w (w = v gives
// data.ov). A point x on body i moves with v0 + omega x x.
//
// All functions need the world-frame kinematics of the configuration q current in data: data.oMi
// and data.oS, as aba()/forward_dynamics() leave them. All *_vjp functions ACCUMULATE (+=).
#pragma once

#include <vector>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// ow[i] = world spatial velocity of body i under generalised velocity w (see the file comment).
/// ow must have nbodies entries. O(n).
template <class S>
void world_velocities(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& w,
                      std::vector<Vector6<S>>& ow);

/// Adjoint of ow = world_velocities(q, w): given ow_bar (nbodies), accumulates w_bar (nv) and the
/// pose adjoints pose_bar (nbodies; the q-dependence of oS, as wrenches). oS of a revolute or
/// prismatic joint also depends on its axis (S = [a; 0] or [0; a] in the body frame): pass
/// model_bar to accumulate that into model_bar->axis (leave it null when no model gradient is
/// wanted). O(n).
template <class S>
void world_velocities_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& w,
                          const std::vector<Vector6<S>>& ow_bar, VecOut<S> w_bar,
                          std::vector<Vector6<S>>& pose_bar, ModelTangentTpl<S>* model_bar = nullptr);

/// Adjoint of the body poses oMi(q, model): pose adjoints (wrenches, nbodies) -> q_bar (nq, ambient:
/// one per number in q, quaternions read normalised as joint_transform reads them) and model_bar
/// (placement_R, placement_p, axis). O(n). pose_bar is read only.
/// Only rigid changes of the model move the poses rigidly, so the model adjoints are exact along
/// the model's manifold and carry nothing across it: placement_R is the tangent form 0.5 [g]x R
/// (g: the parent-frame rotation adjoint; <0.5 [g]x R, [phi]x R> = g . phi), and a revolute axis'
/// adjoint is tangent to the unit sphere (a prismatic axis' is exact in every direction).
/// params_gradient needs nothing more.
template <class S>
void body_poses_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& q,
                    const std::vector<Vector6<S>>& pose_bar, VecOut<S> q_bar, ModelTangentTpl<S>& model_bar);

/// Adjoint of the quadratic form  weight * y^T M(q) y  (M with armature) at fixed y: accumulates the
/// pose adjoints (wrenches) and model_bar (mass, com, inertia_com, armature, and the revolute and
/// prismatic axes through the joint subspaces). Bilinear forms z^T M x follow by polarisation. O(n).
template <class S>
void mass_quadratic_vjp(const ModelTpl<S>& model, const DataTpl<S>& data, const VecRef<S>& y,
                        const NoDeduce<S>& weight, std::vector<Vector6<S>>& pose_bar,
                        ModelTangentTpl<S>& model_bar);

}  // namespace gradyn
