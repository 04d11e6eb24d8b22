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
// G = [J_c 0; J_f 0; 0 0], F = [0 0 0; 0 0 E; mu -E^T 0], m = [c; 0; 0]. In the QP notation of the
// brief (G x + s = h) h is the paper's m. With F = 0 and M symmetric positive definite it is the KKT
// system of  min 1/2 x^T M x + q^T x  s.t.  A x = b, G x <= m.
//
// Forward (Mattingley & Boyd 2012, CVXGEN; Mehrotra predictor-corrector): every iteration eliminates
// ds from the linearised KKT system, which leaves the reduced matrix
//     K = [M  G^T  A^T; G  F - D  0; A  0  0],  D = diag(s / z),
// solves once for the affine direction and once for the centred-corrected one. Converged when all
// residuals and |s.z - kappa| are <= tolerance.
// K is solved by one of two paths, chosen per solve:
//  * Schur (M exactly symmetric and positive definite, as every mass matrix): M is constant over the
//    iterations, so it is factored once (LLT, then M^-1 formed explicitly: each solve is then products,
//    not triangular solves) and x eliminated: with B = [G; A] and C = [F - D, 0; 0, 0] the multipliers
//    w = [z; y] solve  (B M^-1 B^T - C) dw = B M^-1 r_x - r_w,  dx = M^-1 (r_x - B^T dw).
//    Per iteration only this (n_ineq + n_eq)-square Schur complement S is LU-factored (partial pivoting:
//    it is not symmetric when F is not); B M^-1 B^T - [F 0; 0 0] is formed once per solve.
//    Rows with G = 0 whose F block among themselves is diagonal (with F(e, e) <= 0; in contact problems
//    the friction cone's gamma rows) have the diagonal S(e, e) = D_e - F(e, e) > 0 and couple to the
//    others only through F's sparse entries; the iterations eliminate them first (one division and a
//    few sparse updates each), so the dense LU is n_w - n_elim square. Only where the pivot is at least
//    a tenth of the row's and column's couplings (threshold pivoting: a sliding contact's gamma has
//    D -> 0 and stays in the pivoted LU). The factorisation at the solution (the backward pass) pivots
//    over all of S.
//  * full: otherwise, K itself by partial-pivot LU.
// Both solve the same linear systems (to rounding), so the iterates and the solution agree.
// The corrector's direction is the predictor's plus the response to the change of the complementarity
// residual alone (K is linear; that right-hand side has no dual rows, which the Schur path's solve
// skips). The residuals' F z goes through F's nonzeros (collected once per solve).
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
// K is factored at the returned point on the first backward call (mixed_lcp_kkt_solve or
// mixed_lcp_vjp) and every later one reuses that factorisation; a forward-only solve skips it.
// Accurate when the solution is strictly complementary (kappa = 0) or kappa > 0.
#pragma once

#include <Eigen/Dense>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

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
  S step_fraction = S(0.99);  ///< fraction of the step to the boundary s, z > 0
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
  Eigen::LLT<MatrixX<S>> mass_llt;           // M = L L^T
  MatrixX<S> minv;                           // M^-1, explicit (one product per solve instead of two triangular solves)
  MatrixX<S> minv_BT;                        // M^-1 B^T (n_x x n_w)
  MatrixX<S> schur_static;                   // B M^-1 B^T - [F 0; 0 0] (n_w x n_w)
  MatrixX<S> schur;                          // schur_static + diag(D, 0), then its LU in place (unit L below U);
                                             // with rows eliminated, the reduced n_r x n_r one, stored compactly
  Eigen::VectorXi schur_pivots;              // row k of that LU was row schur_pivots[k] when step k began
  VectorX<S> rhs_x, rhs_w;                   // scratch of the elimination
  // Rows the iterations may eliminate from the Schur complement (see the file comment): inequality
  // rows with G = 0 whose F block among themselves is diagonal (the friction cone's gamma rows).
  Eigen::Index n_kept = 0, n_elim = 0;       // rows in the current (reduced) LU; candidates
  Eigen::VectorXi kept, elim;                // w rows kept (in order) and the candidates for elimination
  VectorX<S> elim_static;                    // -F(e, e) per candidate e
  VectorX<S> elim_pivot;                     // D_e - F(e, e) of the current factorisation (0: kept this time)
  Eigen::VectorXi elim_col_start, elim_col_index;  // per candidate e: the (w) rows i != e with S(i, e) != 0
  VectorX<S> elim_col_value;                 //   ... and S(i, e) = -F(i, e)
  Eigen::VectorXi elim_row_start, elim_row_index;  // per candidate e: the columns j != e with S(e, j) != 0
  VectorX<S> elim_row_value;                 //   ... and S(e, j) = -F(e, j)
  VectorX<S> rhs_kept;                       // the kept rows' right-hand side (n_kept used)
  bool schur_reduced = false;                // the current factorisation is the reduced one
  // F's nonzeros (F is sparse in contact problems: its products in the residuals go through these)
  Eigen::Index f_nnz = 0;
  Eigen::VectorXi f_row, f_col;
  VectorX<S> f_value;
  bool use_schur = false;                    // the path of the last solve
  bool has_solution = false;                 // a solve_mixed_lcp left its point here
  bool converged = false;                    // ... and it had converged (warm starts need one)
  bool factored_at_solution = false;         // the factorisation is the one at that point
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
