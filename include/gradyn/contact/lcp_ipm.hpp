// Primal-dual interior-point solver for the mixed LCP of Belbute-Peres et al. 2018 ("End-to-end
// differentiable physics for learning and control", lcp-physics), and its backward pass.
// A numerical stage on dense matrices; ContactModel::Ipm (contact/ipm_contact.hpp) calls it per step.
//
// Problem (the paper's Eq. 2, with an equality right-hand side b added; the paper has b = 0):
//
//     M x + G^T z + A^T y = -q          (n_x rows)
//     G x + F z + s       =  m          (n_ineq rows)
//     A x                 =  b          (n_eq rows)
//     s >= 0,  z >= 0,  s_i z_i = kappa (kappa = 0: the exact LCP)
//
// Mapping to the paper's Eq. 1 (velocity-level contact dynamics): x = -v_{t+dt}, y = lambda_e,
// z = [lambda_c; lambda_f; gamma], s = [a; sigma; zeta], q = -M v_t - dt f_t, A = J_e,
// G = [J_c 0; J_f 0; 0 0], F = [0 0 0; 0 0 E; mu -E^T 0], m = [c; 0; 0]. In the usual QP notation
// (G x + s = h, as in Mattingley & Boyd) h is the paper's m. With F = 0 and M symmetric positive definite it is the KKT
// system of  min 1/2 x^T M x + q^T x  s.t.  A x = b, G x <= m.
//
// Forward (Mattingley & Boyd 2012, CVXGEN; Mehrotra predictor-corrector): every iteration eliminates
// ds from the linearised KKT system, which leaves the reduced matrix
//     K = [M  G^T  A^T; G  F - D  0; A  0  0],  D = diag(s / z),
// solves once for the affine direction and once for the centred-corrected one. Converged when all
// residuals and |s.z - kappa| are <= tolerance.
// K is solved by one of two paths, chosen per solve:
//  * Schur (M exactly symmetric and positive definite, as every mass matrix): x is eliminated for
//    good. With B = [G; A], w = [z; y], C = [F 0; 0 0], x(w) = -M^-1 (q + B^T w) satisfies the dual
//    rows exactly, so the iterations run on w and s alone (x is formed once, at the end), and each
//    Newton step solves  S dw = r,  S = B M^-1 B^T - C + diag(D, 0).  M is factored once per solve
//    (LLT; on a kinematic tree the caller names, IpmWorkspace::mass_parent, LTL without fill-in). S is factored in a basis that exposes its structure: an orthogonal T of the inequality
//    rows (IpmWorkspace::row_basis, from the caller; the identity by default) makes some rows of
//    T^T G zero (a contact's N friction rows span only its 2 tangents: N - 2 of them; and the
//    friction cone's gamma row). Such "local" rows of T^T S T couple only to rows of their block
//    (rows coupled by F or T), through T_b^T (D_b - F_b) T_b; the others ("core", with A's rows) also
//    through W = B_c M^-1 B_c^T, formed once per solve (B_c: the core rows of [T^T G; A]). Per
//    iteration every block eliminates its local rows (a few dense updates each) and the core LU is
//    dense with partial pivoting: for contact problems 3 rows per contact instead of N + 2.
//    Two safeguards keep the factorisation accurate where D spans many orders of magnitude (near
//    the solution D -> 0 on active rows and -> infinity on inactive ones):
//     - a block takes T_b in an iteration only if the D of the rows T_b mixes are within
//       kRotationSpread (1e4) of each other; otherwise that iteration factors it in its own rows
//       (a sliding contact: mixing its huge and tiny D would cancel the tiny ones away);
//     - a local row is eliminated only where its pivot is at least a tenth of its remaining
//       couplings (threshold pivoting, the best candidate first); the others join the core LU
//       (a sliding contact's gamma, whose D tends to 0).
//    Rows of T^T G below 1e-12 of their block's largest G entry count as zero (rounding of T).
//    The factorisation at the solution (backward pass, forward-mode AD) is S itself in the original
//    basis (M^-1, M^-1 B^T, B M^-1 B^T - C formed then), LU-factored with pivoting over all rows.
//  * full: otherwise, K itself by partial-pivot LU, iterating on (x, w, s).
// Both solve the same linear systems (to rounding), so the iterates and the solution agree.
// The corrector's direction is the predictor's plus the response to the change of the complementarity
// residual alone (K is linear). The residuals' F z goes through F's nonzeros (collected once per solve).
// Initial point: the KKT system solved with D = I (s = -z), then s and z made positive: for kappa = 0
// s_i = z_i = max(|z_i|, mean |z| / 2), so that D is I again and the first iteration reuses the start's
// factorisation; for kappa > 0 by 1 + the most negative entry.
// Step length: a fraction of the step to the boundary, step_fraction (0.99) far from the solution and,
// for kappa = 0, 1 - sigma near it (sigma, Mehrotra's centring weight, -> 0 there): with a fixed
// fraction the active rows' s or z could only shrink 100x per iteration. The standing laikago of
// bench/compare_mujoco_contact.py takes 3 Newton iterations (bench/results/mujoco_contact.md).
//
// Relaxation kappa (Dojo-style smoothing, Howell et al. 2022): with kappa > 0 the solver stops on the
// central path point s_i z_i = kappa instead of the complementary point. The solution is then a
// smooth function of the data even where the active set changes (a constraint with s = z = 0), so
// gradients stay finite and continuous; kappa -> 0 recovers the exact LCP and its one-sided gradients.
//
// Backward (the paper's Eq. 3, Amos & Kolter 2017): differentiate the residual R(w, data) = 0,
// w = (x, z, y, s), at the returned point. With lambda = J^{-T} g (J = dR/dw, g the cotangent of w),
//     dl/dq = -lambda_x          dl/dM = -lambda_x x^T         dl/dm = lambda_s   dl/db = lambda_y
//     dl/dG = -(lambda_s x^T + z lambda_x^T)   dl/dF = -lambda_s z^T   dl/dA = -(lambda_y x^T + y lambda_x^T)
// (the paper writes the symmetrised dl/dM for a symmetric M; symmetrise if M is parameterised so).
// J^T reduces, by eliminating lambda for the complementarity rows, to exactly K^T at the solution.
// (Schur path: D at the returned point floored at 1e-14 of S's largest diagonal entry, which keeps
// the system regular where the multipliers are not unique; kIpmBackwardDiagonalFloor.)
// K is factored at the returned point on the first backward call (mixed_lcp_kkt_solve or
// mixed_lcp_vjp) and every later one reuses that factorisation; a forward-only solve skips it.
// Accurate when the solution is strictly complementary (kappa = 0) or kappa > 0.
#pragma once

#include <Eigen/Dense>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

/// The backward pass's D = s / z is at least this fraction of S's largest diagonal entry (Schur path;
/// the step Jacobian's response, contact/ipm_impulse_jacobian.cpp, the same). At the solution an
/// active row's D is ~0; where the multipliers are not unique (a sticking contact whose N friction
/// directions span only 2 tangents) S restricted to the active rows is singular, and an iteration that
/// converged far past the tolerance (D ~ 1e-17) leaves the implicit system as singular as rounding
/// allows: its solution then carries a large null-space part whose rounding reaches the velocities'
/// derivatives (a bouncing ball's 40-step rollout_vjp was 3e-3 off central differences, its step
/// Jacobian up to 58). The floor makes it a regularised solve; where S is regular it moves the
/// derivatives by ~1e-14 (relative).
inline constexpr double kIpmBackwardDiagonalFloor = 1e-14;

/// The data of one mixed LCP (shapes: M n_x x n_x, q n_x, G n_ineq x n_x, F n_ineq x n_ineq, m n_ineq,
/// A n_eq x n_x, b n_eq). Also holds the gradient w.r.t. each field in mixed_lcp_vjp.
template <class S>
struct MixedLcpTpl {
  MatrixX<S> M, G, F, A;
  VectorX<S> q, m, b;

  MixedLcpTpl() = default;
  /// All fields zero with the shapes of a problem with these sizes.
  MixedLcpTpl(Eigen::Index n_x, Eigen::Index n_eq, Eigen::Index n_ineq);
  Eigen::Index n_x() const { return M.rows(); }
  Eigen::Index n_eq() const { return A.rows(); }
  Eigen::Index n_ineq() const { return G.rows(); }
};
using MixedLcp = MixedLcpTpl<double>;

template <class S>
struct LcpIpmSettings {
  int max_iterations = 50;
  S tolerance = S(1e-10);  ///< on the infinity norms of all residuals and of s.z - kappa
  S kappa = S(0);          ///< complementarity target s_i z_i = kappa (0: exact LCP)
  /// Fraction of the step to the boundary s, z > 0 far from the solution; near it (kappa = 0) the
  /// fraction rises to 1 - sigma (Mehrotra's centring weight, -> 0 there), so the local convergence is
  /// not held to a factor 1 / (1 - step_fraction) per iteration.
  S step_fraction = S(0.99);
  bool schur = true;          ///< take the Schur path when M allows it (false: always the full K)
  /// Start from the solution the workspace holds (the last converged solve of a problem of the same
  /// shape, e.g. the previous time step's): z kept, x from the dual rows, s from the inequality rows,
  /// s and z raised to at least warm_start_floor. That run aims at tolerance / 100, so that where it
  /// stops (which depends on where it started) moves the solution by far less than the tolerance; it
  /// counts as converged at tolerance. If it does not converge within max_iterations the solve
  /// restarts from the cold initial point (result.iterations counts both runs).
  bool warm_start = false;
  S warm_start_floor = S(1e-10);
};

struct LcpIpmResult {
  bool converged = false;
  int iterations = 0;                 ///< Newton iterations taken
  double primal_residual = 0;         ///< max(|G x + F z + s - m|_inf, |A x - b|_inf) at the returned point
  double dual_residual = 0;           ///< |M x + G^T z + A^T y + q|_inf
  double complementarity_residual = 0;  ///< |s.z - kappa|_inf
};

/// All storage of a solve and its backward pass, sized once for one problem size. solve_mixed_lcp
/// leaves the solution in x, z, y, s.
template <class S>
struct IpmWorkspaceTpl {
  IpmWorkspaceTpl(Eigen::Index n_x, Eigen::Index n_eq, Eigen::Index n_ineq);

  Eigen::Index n_x, n_eq, n_ineq;
  VectorX<S> x, z, y, s;                     // the iterate / solution
  VectorX<S> dx, dz, dy, ds;                 // a Newton direction
  VectorX<S> dz_aff, ds_aff;                 // the affine (predictor) direction
  VectorX<S> r_dual, r_ineq, r_eq, r_comp;   // residuals
  VectorX<S> rhs, sol;                       // reduced system right-hand side and solution
  // full path
  MatrixX<S> K;                              // reduced KKT matrix
  Eigen::PartialPivLU<MatrixX<S>> lu;        // its factorisation
  // Schur path (see the file comment); w = [z; y], n_w = n_ineq + n_eq
  /// Optional, set by the caller (it persists over solves; empty: M is treated as dense): per unknown
  /// x_k its parent in a tree, parents before children (-1: a root), where M(i, j) != 0 only for i, j
  /// on one path to a root: a kinematic tree's mass matrix (a dof's parent dof). Where a solve's M
  /// keeps to that pattern (checked), M = L^T L (Featherstone's LTL, no fill-in) and every solve with
  /// L touches a row's path only; otherwise M = L L^T, dense.
  Eigen::VectorXi mass_parent;
  Eigen::LLT<MatrixX<S>> mass_llt;           // M = L L^T (dense)
  MatrixX<S> mass_ltl;                       // M = L^T L (tree): L in the lower triangle
  Eigen::VectorXi mass_scratch;              // n_x ints (checking M's pattern)
  bool mass_tree = false;                    // the last solve factored M = L^T L
  // Below, F is M's half factor (M = F F^T): the dense L, or the tree's L^T.
  /// Optional orthogonal change of basis T of the inequality rows (n_ineq square; empty: identity),
  /// set by the caller (it persists over solves): the iterations factor T^T S T, whose rows with
  /// (T^T G)_r = 0 couple only within their block and are eliminated there (see the file comment).
  /// T must be orthogonal and couple only rows that F couples (into one block).
  MatrixX<S> row_basis;
  // Row blocks: connected components of the inequality rows under F's and T's couplings. Position p
  // (rows grouped by block, ascending within one) is inequality row block_row[p]; block b has the
  // positions [block_start[b], block_start[b + 1]) and its dense n_b x n_b matrices (column-major)
  // at block_entry[b] in block_basis (T_b), block_static (T_b^T (-F_b) T_b) and block_h (the current
  // T_b^T (D_b - F_b) T_b, after the elimination: its factors).
  // Per iteration a block is factored in T_b ("rotated") or, where the D of the rows T_b mixes
  // differ too much (see the file comment), in its own rows ("plain": block_static_plain = -F_b,
  // local rows those with G = 0).
  Eigen::Index n_blocks = 0;
  Eigen::VectorXi block_start, block_row, block_entry, block_of_row;
  VectorX<S> block_basis, block_static, block_static_plain, block_h;
  Eigen::VectorXi block_rotated;             // per block: this iteration's choice
  Eigen::VectorXi basis_start, basis_col;    // T_b's nonzeros by row: position p's at [basis_start[p],
  VectorX<S> basis_value;                    //   basis_start[p + 1]): its block columns and values
  Eigen::VectorXi core_index;                // per position: its core row (a row of core_B), -1: local
  Eigen::VectorXi plain_core;                // per position: row block_row[p]'s G row is not zero (1) or is (0)
  Eigen::VectorXi lu_combo_start, lu_combo_index;  // per core-LU row: the core rows (of core_B) it combines
  VectorX<S> lu_combo_weight;                //   ... and their weights (a plain row: its row of T_b)
  Eigen::VectorXi elim_step;                 // per position: the step (in its block) that eliminated it, else n_ineq
  Eigen::VectorXi elim_order;                // per block, at its first position: the eliminated positions in order
  Eigen::VectorXi block_n_elim;              // per block: how many
  Eigen::VectorXi lu_index;                  // per position: its row in the core LU, -1: eliminated
  Eigen::Index n_core_ineq = 0, n_core = 0;  // core rows: those of T^T G that are not zero, then A's
  Eigen::Index n_lu = 0;                     // rows of the core LU: the blocks' rows not eliminated, then A's
  MatrixX<S> core_B;                         // n_w x n_x: the core rows of [T^T G; A] (first n_core)
  MatrixX<S> core_X;                         // n_x x n_w: F^-1 core_B^T
  Eigen::VectorXi core_X_first;              // per column of core_X: its first row not zero
  MatrixX<S> core_W;                         // n_w x n_w: core_B M^-1 core_B^T
  VectorX<S> core_c;                         // core_B M^-1 q
  VectorX<S> mass_q;                         // F^-1 q
  VectorX<S> core_w, core_g, basis_w;        // scratch: core multipliers, core_B x, rows in the block basis
  // The backward pass's factorisation (at the solution, in the original basis), formed on demand
  MatrixX<S> minv;                           // M^-1, explicit
  MatrixX<S> minv_BT;                        // M^-1 B^T (n_x x n_w)
  MatrixX<S> schur_static;                   // B M^-1 B^T - [F 0; 0 0] (n_w x n_w)
  bool full_schur_ready = false;             // minv, minv_BT and schur_static are the current problem's
  MatrixX<S> schur;                          // the core LU (iterations; compact n_lu x n_lu) or that of
                                             // schur_static + diag(D, 0) (at the solution), in place (unit L below U)
  Eigen::VectorXi schur_pivots;              // row k of that LU was row schur_pivots[k] when step k began
  VectorX<S> rhs_x, rhs_w;                   // scratch of the elimination
  VectorX<S> rhs_kept;                       // the core LU's right-hand side
  // F's nonzeros (F is sparse in contact problems: its products in the residuals go through these)
  Eigen::Index f_nnz = 0;
  Eigen::VectorXi f_row, f_col;
  VectorX<S> f_value;
  // F and the row basis the blocks' setup and F's nonzeros were built for (kept over solves while
  // they stay the same)
  MatrixX<S> structure_F, structure_basis;
  bool structure_ready = false;
  bool use_schur = false;                    // the path of the last solve
  bool has_solution = false;                 // a solve_mixed_lcp left its point here
  bool converged = false;                    // ... and it had converged (warm starts need one)
  bool factored_at_solution = false;         // the factorisation is the one at that point
  bool factored_at_start = false;            // the factorisation is the one at the current iterate (the
                                             // cold start's, D = I, where it set s = z)
};
using IpmWorkspace = IpmWorkspaceTpl<double>;

/// Solves the mixed LCP; the solution is left in ws.x, ws.z, ws.y, ws.s. Never throws on
/// non-convergence (the result says so; the last iterate stays in ws). Throws ArgumentError when the
/// problem's shapes do not match the workspace. No allocation.
template <class S>
LcpIpmResult solve_mixed_lcp(const MixedLcpTpl<S>& problem, const LcpIpmSettings<S>& settings,
                             IpmWorkspaceTpl<S>& ws);

/// Solves K sol = rhs (transposed: K^T sol = rhs) with K, the reduced KKT matrix of the file comment,
/// at the point the last solve_mixed_lcp left in ws (same problem): the implicit-function systems of
/// the solution's derivatives (forward: K dw = -dR/dp dp; reverse: K^T lambda = g). Factors K there on
/// the first call after the solve. rhs and sol have n_x + n_ineq + n_eq entries ([x; z; y] order);
/// sol may be rhs (ws.rhs and ws.sol are fine too). Throws ArgumentError when ws holds no solution or
/// a shape does not match. No allocation.
template <class S>
void mixed_lcp_kkt_solve(const MixedLcpTpl<S>& problem, IpmWorkspaceTpl<S>& ws, const VectorX<S>& rhs,
                         VectorX<S>& sol, bool transposed);

/// Vector-Jacobian product of the solution (x, z, y, s) w.r.t. all problem data, at the point the
/// last solve_mixed_lcp left in ws (same problem). Cotangents of unused outputs may be empty vectors.
/// ACCUMULATES (+=) into grad, which must have the problem's shapes (MixedLcpTpl(n_x, n_eq, n_ineq)).
/// Uses ws.rhs / ws.sol as scratch; no allocation.
template <class S>
void mixed_lcp_vjp(const MixedLcpTpl<S>& problem, IpmWorkspaceTpl<S>& ws, const VectorX<S>& grad_x,
                   const VectorX<S>& grad_z, const VectorX<S>& grad_y, const VectorX<S>& grad_s,
                   MixedLcpTpl<S>& grad);

}  // namespace gradyn
