// Interior-point contact (ContactModel::Ipm): the contacts collide() finds and the active joint limits
// become the mixed LCP of Belbute-Peres et al. 2018 (paper 000, Eq. 1-2) in generalised coordinates,
// solved by the
// primal-dual interior-point method of contact/lcp_ipm.hpp, inside the semi-implicit Euler step
//   a_free = forward_dynamics(q, v, tau),  v_free = v + dt a_free,  v+ = the LCP's solution,
//   q+ = q (+) dt v+.
//
// Per contact k (normal n from geom a to geom b, tangents t1, t2 = the contact frame's columns 1, 2)
// with N = contact.ipm_friction_directions directions d_j = cos(2 pi j / N) t1 + sin(2 pi j / N) t2:
//   J_n, J_j  the relative-velocity Jacobian rows (1 x nv) along n and d_j (b's point minus a's),
//   lambda_n  normal impulse,  beta_j >= 0 the impulse along d_j,  gamma >= 0 (the sliding speed),
//   s_n   = J_n v+ - target + cfm lambda_n >= 0  _|_ lambda_n >= 0   (no approach faster than `target` allows)
//   sigma = J_j v+ + gamma + cfm beta_j     >= 0  _|_ beta_j   >= 0   (friction pushes against the slip)
//   zeta  = mu lambda_n - sum_j beta_j >= 0 _|_ gamma >= 0 (the polyhedral Coulomb cone)
//   M v+  = M v_free + J_n^T lambda_n + sum_j J_j^T beta_j
// with M the joint-space inertia (crba, armature included) and mu the larger friction of the two
// geoms. The N-gon cone is inscribed in Coulomb's circular one: along a d_j it is exact, half-way
// between two it holds cos(pi / N) of mu (N = 4: 71%, N = 8: 92%).
//
// Joint limits (contact/joint_limits.hpp; the rows PGS builds, chosen by the same rule): per active
// limit l (gap below limit_margin, or closed by the free motion within the step) one more row
//   s_l = J_l v+ - target_l + cfm lambda_l >= 0  _|_ lambda_l >= 0
// with J_l = side r_k on the joint's columns and target_l Baumgarte on the violation beyond the slop
// (erp / dt max(-g - slop, 0)) or, not yet violated, -g / dt (close the gap, do not cross it).
// The limit rows come after the contact rows (ipm_data(data).limit_coord / limit_side); with no
// contact they alone make the LCP.
//
// Dry joint friction, joint couplings and body connections (contact/joint_constraints.hpp), in every
// step: per DoF k with frictionloss f_k > 0, three more rows after the limit rows (all the beta+
// rows, then the beta- rows, then the gamma rows): a friction cone of directions +-e_k with the
// bound f_k dt in place of mu lambda_n (m = f_k dt on its gamma row); per coupling c one equality
// row A_c x = b_c, A_c = J_c, b_c = its target (the solver's A, b; y its multipliers, impulse -y);
// then per block of three connection rows (every connection's point rows, then every weld's
// rotation rows) its rows along the directions it keeps (joint_constraints.hpp,
// rotate_connection_rows: one the joints can hardly move has no row), ipm_data(data).eq_source naming each.
//
// In lcp_ipm's notation (M x + G^T z = -q, G x + F z + s = m, s, z >= 0, s.z = kappa), unknown
// x = v+ directly, z = [lambda_n (nc); beta (N nc, contact-major); gamma (nc); lambda_l (nl);
// joint friction (3 nf)],
//   q = -M v_free,   G = -[J_n; J_f; 0; J_l],   m = [-target; 0; 0; -target_l],
//   F = [-cfm I 0 0 0; 0 -cfm I -E 0; -mu E^T 0 0; 0 0 0 -cfm I]   (E = blockdiag of N x 1 columns of
//   ones, mu = diag(mu_k)).
// Signs: the paper prints x = -v+, G = [J_c; J_f; 0] with q = -M v - dt f, which do not go
// together (that q needs x = +v+); its code (lcp-physics) passes q = +M v_free and a solver with the
// opposite sign of F. The system here is the same LCP written with x = v+ and the physical signs.
//
// target (the separation velocity the normal row must reach), as PGS computes it in contact: with
// depth d >= 0, max(erp / dt * max(d - slop, 0),  -e u_n when u_n < -restitution_threshold)
// (Baumgarte stabilisation, or restitution e = the larger geom restitution with u_n = J_n v the
// approach velocity before the step). A contact still apart (d < 0, within the margin) gets d / dt:
// it may close the gap within the step but not more; if it does close (d - u_n dt > 0) at a bouncing
// speed, d / dt - e u_n (cross the gap, then rebound), which meets the in-contact target as d -> 0.
// Paper 000 uses restitution only (c = e J_c v) and a separate post-stabilisation solve; Baumgarte
// folds the position error into the same LCP.
//
// cfm = contact.cfm (constraint force mixing, PGS's setting, default 0) softens the normal and friction
// rows; cfm > 0 keeps the LCP solvable when contacts ask for separations no velocity gives (a body
// squeezed between two walls deeper than the slop), at the price of impulses ~ target / cfm there. A
// contact whose normal Jacobian is zero (no joint motion can open it, e.g. two geoms around one ball
// joint's centre) would make the LCP infeasible whatever cfm: its normal row is made inert (s_n = 1 m/s).
//
// kappa = contact.ipm_kappa > 0 stops the solver at s_i z_i = kappa instead of 0: every row becomes a
// slightly soft, smooth constraint (a resting contact keeps a separation velocity of about
// kappa / lambda_n that Baumgarte balances with a small extra depth; friction creeps). Units of kappa:
// (m/s)(N s).
//
// Not converged (ipm_iterations reached before ipm_tolerance): data.status |= kStatusSolverNotConverged,
// never an exception; v+ is the last iterate. The solve runs in double; ipm_data(data).workspace keeps its
// solution, and the factorisation of K at it once a backward pass (or forward-mode AD) asked for one
// (mixed_lcp_kkt_solve). For S = ADScalar the derivatives of the solution are those of the implicit
// function R(w, data) = 0 at the returned point, one solve with that factorisation per derivative
// direction: K [dx; dz] = -[dM x + dG^T z + dq; dG x + dF z - dm].
//
// Warm start (opt-in: contact.ipm_warm_start = true): when a step's rows are the last solve's (the same
// geom pairs in the same order, the same limit rows, and that solve converged), the solver starts from
// its solution (lcp_ipm.hpp, LcpIpmSettings::warm_start): a box resting on a plane then takes 1 Newton
// iteration instead of 2 (plus the cold start's factorisation), the standing quadruped of
// bench/compare_mujoco_contact.py 1.2 instead of 3 (aiming at ipm_tolerance / 100). The result is
// the same LCP solution to ipm_tolerance, but where the
// iteration stops now depends on the previous step, so step() is no longer a function of (q, v, tau)
// alone: repeated evaluations differ by ~ipm_tolerance in v+ and ~1e-9 (relative) in the implicit
// gradients (which depend on how close to the boundary the point stopped), and where the multipliers
// are not unique (opposite friction directions of a sticking contact) z may split differently. Off by
// default for that reason.
//
// Allocation: J^T and the limit-row bookkeeping live in Data sized from the contact capacity and the
// joints; the LCP (dense, nv + (N + 2) nc + nl unknowns) and the solver workspace are re-sized
// (allocated) only when the contact or limit-row count changes.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Friction direction j of N (the file comment's d_j): its weights (cos, sin) of tangent1 and tangent2.
inline Eigen::Vector2d ipm_friction_direction(int j, int N) {
  const double angle = 2.0 * std::numbers::pi * j / N;
  return {std::cos(angle), std::sin(angle)};
}

/// Which term set a contact's normal-row target (recorded per contact in ipm_data(data).target_branch for
/// the backward pass).
enum IpmTargetBranch : std::uint8_t {
  kIpmTargetZero = 0,     // depth <= slop and no bounce: target 0
  kIpmTargetBaumgarte,    // erp / dt (depth - slop)
  kIpmTargetRestitution,  // -e J_n v
  kIpmTargetGap,          // depth / dt (depth < 0, within the margin)
  kIpmTargetGapBounce,    // depth / dt - e J_n v (the gap closes within the step at a bouncing speed)
  kIpmTargetInert,        // J_n = 0: the row is inert (m = 1)
  kIpmTargetCapped,       // max_correction_velocity: a deep contact's Baumgarte target, capped
};

/// Velocity after the contact and joint-limit impulses: v_next = the mixed LCP's v+ (see the file
/// comment); z (impulses and gamma) in ipm_data(data).z, the solver's report in ipm_data(data).result. Needs forward_dynamics(q, v, tau)
/// to be the last dynamics call on data with a_free its result (kinematics at q are used); runs
/// collide() and crba() at q itself. v_next may alias v.
template <class S>
void ipm_contact_velocity(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& a_free, const NoDeduce<S>& dt, VecOut<S> v_next);

}  // namespace gradyn
