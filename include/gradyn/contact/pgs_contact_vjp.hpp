// Reverse mode of velocity-level PGS contact (contact/pgs_contact.hpp):
//   v+ = v_free + X lambda,  X = M^-1 J^T,  lambda = PGS(A = J X, b = J v_free - target, mu, cfm).
//
// lambda's adjoint goes through the boxed LCP by one of the two VJPs of contact/pgs.hpp, chosen by
// ContactSettings::pgs_gradient:
//   Implicit (default)  implicit differentiation of the converged active set (Nimble): exact where
//                       the active set is stable; independent of the iteration count and warm start.
//                       Where its system is singular (redundant rows: the impulses are not unique,
//                       v+ is) the least-norm solution, as step_jacobian's (sim/step_jacobian.hpp).
//   Sweeps              the reverse of the PGS sweeps as they ran (Qiao et al. 2021, paper 003): the
//                       exact derivative of the lambda PGS returned, converged or not. The warm start
//                       (step_vjp starts PGS cold) is held constant.
// Then, with the LCP adjoints (A_bar, b_bar, mu_bar, cfm_bar):
//   J appears in y = J^T lambda, b = J v_free, A = J X and the approach velocity J_n v; each use
//   adds a rank-one term a z^T to J_bar, whose effect on the contact geometry and the body poses is
//   found with one world_velocities pass under z (the row velocities) and its adjoint.
//   M appears in X: d(M^-1) = -M^-1 dM M^-1, so -y_bar^T dM x (y_bar = M^-1 v+_bar, x = X lambda)
//   and -sum_rs sym(A_bar)_rs x_r^T dM x_s.
//   The implicit adjoint's A_bar is rank one, -u lambda^T: its J terms are -lambda (X u)^T, folded
//   into y's (y_bar -= X u), and -u (X lambda)^T; its M term folds into y's bilinear one. So the whole
//   backward pass is three or four world-velocity passes and one bilinear mass form, whatever the row
//   count. The sweeps' A_bar is general: one rank-one term per column of A and sym(A_bar)'s
//   eigenvectors, one mass_quadratic_vjp per nonzero eigenvalue.
//   target (Baumgarte erp/dt (depth - slop), or restitution -e J_n v): the branch the forward took.
// Cost: implicit O(nv n_rows + n_rows^3) (the active-set solve) on top of the forward step; sweeps
// O((nv + n_rows) n_rows) passes more. Double only (the LCP adjoints are).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// Adjoint of pgs_contact_velocity given v_next_bar: accumulates q_bar (nq, ambient), v_bar,
/// a_free_bar and model_bar. Needs pgs_contact_velocity(q, v, a_free, dt) to be the last contact
/// call on data, with the world kinematics of forward_dynamics at q (Sweeps replays its solve from
/// the warm start it recorded). Joint-limit rows: their targets depend on q, and a planar joint's
/// rows on its angle. step_vjp runs the forward from a cold start. double only: forward mode
/// through the PGS step needs no adjoint.
void pgs_contact_velocity_vjp(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                              double dt, const VecRef<double>& v_next_bar, VecOut<double> q_bar, VecOut<double> v_bar,
                              VecOut<double> a_free_bar, ModelTangent& model_bar);

}  // namespace gradyn
