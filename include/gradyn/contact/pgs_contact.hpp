// Velocity-level contact (ContactModel::Pgs): the contacts collide() finds become a boxed LCP on
// impulses, solved by projected Gauss-Seidel (contact/pgs.hpp), inside the semi-implicit Euler step
//   a_free = forward_dynamics(q, v, tau),  v_free = v + dt a_free,
//   v+ = v_free + M^-1 J^T lambda,         q+ = q (+) dt v+.
//
// Rows, per contact (normal n from geom a to geom b, tangents t1, t2 = the contact frame's columns 1, 2):
//   one normal row along n, lambda_n in [0, inf);
//   two friction rows along t1 and t2, each in [-mu lambda_n, mu lambda_n]: the four faces +-t1, +-t2 of
//   the friction pyramid (the +- of a face is the sign of its two-sided row, so the pyramid needs two
//   rows, not four; four two-sided rows would double the friction bound). mu: the larger of the two
//   geoms' friction (MuJoCo's rule), as the penalty model.
// A row's Jacobian J_r (1 x nv) gives the relative velocity of b's material point minus a's along
// the row's direction d: J_r v = d . (v_b(p) - v_a(p)). Column j of joint i (an ancestor of the body)
// contributes S_j^world . [p x d; d] (world-frame motion subspace about the world origin).
// Delassus A = J M^-1 J^T with M^-1 J^T from minv_solve (the O(n) solve reusing the articulated
// inertias of the forward_dynamics call at q; no CRBA, no dense factorisation).
// Right-hand side (w = A lambda + b is the row velocity after the impulses):
//   b = J v_free - target on normal rows, J v_free on friction rows, with the separation velocity
//   target = max(erp / dt * max(depth - slop, 0),  -e u_n  when u_n < -restitution_threshold)
//   (Baumgarte stabilisation; restitution e = the larger geom restitution, u_n = J_n v the approach
//   velocity before the step).
// Warm start: the previous step's impulses when the contact count is unchanged (collide() reports
// contacts in a deterministic order, so the same count almost always means the same contacts); zero
// otherwise. The solve does not record iterates (forward only: step_vjp refuses contact models).
// Allocation: J, M^-1 J^T and the vectors live in Data sized from model.max_contacts; the LCP's
// A, b, bounds and the PGS workspace are re-sized (allocated) only when the contact count changes.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Velocity after the contact impulses: v_next = v + dt a_free + M^-1 J^T lambda, lambda in
/// data.pgs_lambda. Needs forward_dynamics(q, v, tau) to be the last dynamics call on data (its
/// a_free, kinematics and articulated inertias are used). Runs collide() at q itself.
template <class S>
void pgs_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& v, const VecRef<S>& a_free,
                          const NoDeduce<S>& dt, VecOut<S> v_next);

}  // namespace gradyn
