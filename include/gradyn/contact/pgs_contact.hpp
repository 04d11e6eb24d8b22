// Velocity-level contact and joint limits (ContactModel::Pgs): the contacts collide() finds and the
// active joint limits become a boxed LCP on impulses, solved by projected Gauss-Seidel
// (contact/pgs.hpp), inside the semi-implicit Euler step
//   a_free = forward_dynamics(q, v, tau),  v_free = v + dt a_free,
//   v+ = v_free + M^-1 J^T lambda,         q+ = q (+) dt v+.
//
// Row layout (n = 3 nc + nl + nf + ncouplings rows; pgs_data(data).problem.rows = n):
//   rows [0, 3 nc): contacts, three each, in collide()'s order (contact k: rows 3k, 3k+1, 3k+2);
//   rows [3 nc, 3 nc + nl): joint limits, one per active limit, by coordinate index, a lower limit
//                   before an upper one; row 3 nc + l is the limit of coordinate pgs_data(data).limit_coord[l]
//                   on side pgs_data(data).limit_side[l] (+1 lower, -1 upper);
//   then the dry-friction rows (one per DoF with frictionloss > 0, in DoF order: J = e_k, impulse in
//   [-frictionloss dt, frictionloss dt], b = J v_free) and one bilateral row per joint coupling
//   (impulse unbounded, b = J v_free + erp / dt g), then three per connection along the world axes
//   or, where it leaves a direction out, the rest (pgs_data(data).connection_axes; a zero, inert row);
//   contact/joint_constraints.hpp. They are in every step (pgs_data(data).njoint_rows of them) and start
//   from the last step's impulses.
//
// Contact rows (normal n from geom a to geom b, tangents t1, t2 = the contact frame's columns 1, 2):
//   one normal row along n, lambda_n in [0, inf);
//   two friction rows along t1 and t2, each in [-mu lambda_n, mu lambda_n]: the four faces +-t1, +-t2 of
//   the friction pyramid (the +- of a face is the sign of its two-sided row, so the pyramid needs two
//   rows, not four; four two-sided rows would double the friction bound). mu: the larger of the two
//   geoms' friction (MuJoCo's rule), as the penalty model.
//   A row's Jacobian J_r (1 x nv) gives the relative velocity of b's material point minus a's along
//   the row's direction d: J_r v = d . (v_b(p) - v_a(p)). Column j of joint i (an ancestor of the body)
//   contributes S_j^world . [p x d; d] (world-frame motion subspace about the world origin).
// Limit rows (contact/joint_limits.hpp: gap g = s (q_k - bound), rate row r_k, side s; selected and
// targeted by its helpers, which the interior-point model shares):
//   J_r = s r_k on the joint's columns (+e_k for a lower limit of a scalar joint, -e_k for an upper
//   one), lambda in [0, inf) (a generalised impulse along the coordinate: N m s or N s), mu 0.
//   Active (a row exists) when min(g, g + dt J_r v_free) < limit_margin: nearly or already violated, or
//   about to be crossed by the free motion.
// Delassus A = J M^-1 J^T with M^-1 J^T from minv_solve (the O(n) solve reusing the articulated
// inertias of the forward_dynamics call at q; no CRBA, no dense factorisation). For a limit row of
// a scalar joint, J M^-1 J^T is the entry (M^-1)_kk.
// Right-hand side (w = A lambda + b is the row velocity after the impulses):
//   contact normal rows  b = J v_free - target, with the separation velocity
//                        target = max(erp / dt * max(depth - slop, 0),  -e u_n  when u_n < -restitution_threshold)
//                        (Baumgarte stabilisation; restitution e = the larger geom restitution, u_n = J_n v
//                        the approach velocity before the step)
//   friction rows        b = J v_free (a friction row the mechanism cannot move along, J_r = 0, is inert:
//                        its impulse stays 0; pgs.hpp)
//   limit rows           b = J v_free - erp / dt * max(-g - slop, 0)   when violated (g < 0): Baumgarte as
//                        for contacts, restitution 0;
//                        b = J v_free + g / dt                        when g >= 0: the row may close the
//                        gap within the step but not cross it (no sticking short of the limit).
// Warm start: each contact starts from the impulse (as a world vector, re-projected on the new
// frame) of the last step's contact of the same geom pair nearest to it, if closer than 1 cm (so box
// manifolds that change order or size keep their impulses); each limit from the last impulse of the
// same coordinate and side; anything else from 0. pgs_data(data).warm_start holds what the solve began
// from. The solve does not record iterates (the adjoint replays them; pgs_contact_vjp.hpp).
// Status: kStatusSolverNotConverged in data.status when PGS stops at pgs_iterations sweeps before
// pgs_tolerance (the impulses of the last sweep are used; never throws).
// Allocation: none in the steady state. J, M^-1 J^T, the row bookkeeping and the warm start memory
// live in Data sized from model.max_contacts and the joints; the LCP and the PGS workspace are
// capacity-sized (BoxedLcpTpl::rows) and grow only when a step needs more rows than any before it
// (geometrically, capped at the model's maximum row count), so a simulation allocates there a few
// times at most.
#pragma once

#include <cstdint>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Which term sets a PGS contact's normal-row target (the separation velocity it must reach).
enum class PgsTargetBranch : std::uint8_t {
  Zero,         // depth <= slop and no bounce: 0
  Baumgarte,    // erp / dt (depth - slop)
  Capped,       // max_correction_velocity: a deep contact's Baumgarte target, capped
  Restitution,  // -e J_n v, the approach J_n v faster than restitution_threshold and the larger
};

/// The rule pgs_contact_velocity applies (and its VJP and the step Jacobian differentiate): the
/// larger of Baumgarte and restitution, for a contact with this depth, approach J_n v before the step
/// and restitution e (the pair's larger).
inline PgsTargetBranch pgs_target_branch(const ContactSettings& settings, double depth, double approach, double e,
                                         double dt) {
  const double excess = depth - settings.slop;
  const double raw = excess > 0.0 ? settings.erp / dt * excess : 0.0;
  const bool capped = raw > settings.max_correction_velocity;
  const double baumgarte = capped ? settings.max_correction_velocity : raw;
  if (approach < -settings.restitution_threshold && -e * approach > baumgarte) return PgsTargetBranch::Restitution;
  if (capped) return PgsTargetBranch::Capped;
  return excess > 0.0 ? PgsTargetBranch::Baumgarte : PgsTargetBranch::Zero;
}

/// Velocity after the contact and joint-limit impulses: v_next = v + dt a_free + M^-1 J^T lambda,
/// lambda in pgs_data(data).lambda (leading pgs_data(data).problem.rows entries). Needs forward_dynamics(q, v, tau)
/// to be the last dynamics call on data (its kinematics and articulated inertias are used). Runs
/// collide() at q itself. v_next may alias v.
/// Forgets the warm start the last step left (impulses keyed by contact and limit), so that the next
/// pgs_contact_velocity starts from zero impulses: step_vjp differentiates a step as a function of
/// (q, v, tau) alone.
template <class S>
void pgs_forget_warm_start(DataTpl<S>& data);

template <class S>
void pgs_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& a_free, const NoDeduce<S>& dt, VecOut<S> v_next);

}  // namespace gradyn
