// Projected Gauss-Seidel (PGS) for the velocity-level boxed LCP of contacts and joint limits
// (Heiden et al., "NeuralSim", and Qiao et al. 2021, section 4.1). A standalone numerical stage on
// matrices: the caller assembles the Delassus matrix A = J M^-1 J^T, the right-hand side b (the
// constraint-space velocity before impulses, plus Baumgarte/restitution terms) and the bounds.
//
// Problem: find lambda with  w = (A + cfm I) lambda + b  and, per row i,
//   lo_i < lambda_i < hi_i  and  w_i = 0,   or   lambda_i = lo_i and w_i >= 0,   or   lambda_i = hi_i and w_i <= 0.
// Row kinds: a box row has fixed bounds [lo_i, hi_i] (normal rows: [0, inf); joint limits: [0, inf)
// or two-sided). A friction row (pyramid friction: every contact has one normal row and 2N tangent
// rows) has bounds [-mu_i lambda_n, mu_i lambda_n] where n = normal_row[i] is its contact's normal row,
// read at the moment the row is updated (so this is an NCP solved by the usual fixed-point sweeps).
//
// One sweep updates the rows in order, i = 0..n-1:
//   u_i = -(b_i + sum_{j != i} A_ij lambda_j) / (A_ii + cfm),   lambda_i = clamp(u_i, lo_i, hi_i).
// An inert row, whose A_ii + cfm is below 1e-12 of the largest diagonal (its Jacobian row is zero: a
// friction direction the mechanism cannot move in), takes u_i = 0 instead of dividing by ~0.
// It stops once a whole sweep changed no lambda_i by more than `tolerance`, or after max_iterations
// sweeps (converged = false then; never throws for non-convergence).
//
// Gradients (double only; forward-mode AD through pgs_solve<ADScalar> is their reference):
//  * pgs_sweeps_vjp: the reverse of the sweeps exactly as they ran (Qiao et al.): replays the recorded
//    iterates backwards, row by row, through the same clamp branches. Exact derivative of the returned
//    lambda, converged or not, including its dependence on the warm start.
//  * pgs_implicit_vjp: implicit differentiation of the solution's active set (Nimble style): free rows
//    satisfy (A lambda + b)_i = 0, clamped rows lambda_i = bound_i (a fixed bound, or +-mu_i lambda_n);
//    one n x n solve with the transposed system. Ignores the warm start and the iteration count.
// Sizes: a problem may live in larger, pre-sized storage (BoxedLcpTpl::rows): then only the leading
// rows x rows block of A and the leading entries of the vectors are read, lambda may be a segment of
// a longer vector and the workspace may hold more rows, so one set of buffers serves every problem
// size without allocating (pgs_contact uses this: the contact count changes from step to step).
// They agree (up to the contraction factor of the sweep map to the power of the iteration count) when
// PGS has converged and the active set is stable: every free row strictly inside its bounds and every
// clamped row pushed strictly against its bound (w_i != 0), so small perturbations keep the same
// clamps. At a degenerate point (w_i = 0 on a bound, or lambda_n = 0 under a friction row) the map is
// only piecewise smooth; the sweep VJP then gives the derivative of the branch the iterations took, the
// implicit VJP that of the classification made with `active_tolerance`.
#pragma once

#include <type_traits>
#include <vector>

#include <Eigen/LU>
#include <Eigen/QR>

#include "gradyn/autodiff.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

/// The boxed LCP. Sizes: A n x n, b, lo, hi, mu n; normal_row n entries (-1 for a box row), where
/// n = b.size(); or, with rows >= 0, n = rows and the storage at least that large (see the file comment).
template <class S>
struct BoxedLcpTpl {
  MatrixX<S> A;
  VectorX<S> b;
  VectorX<S> lo;  ///< box rows only (friction rows ignore it)
  VectorX<S> hi;  ///< box rows only
  VectorX<S> mu;  ///< friction rows only: coefficient of the pyramid face
  std::vector<int> normal_row;  ///< friction row -> its normal row; -1 marks a box row
  double cfm = 0.0;             ///< constraint force mixing, added to the diagonal
  int rows = -1;                ///< rows in use; -1: all of b (the storage must then fit exactly)

  int size() const { return rows >= 0 ? rows : static_cast<int>(b.size()); }
  /// Throws ArgumentError naming the first wrong shape or index.
  void check() const;
};
using BoxedLcp = BoxedLcpTpl<double>;

struct PgsOptions {
  int max_iterations = 100;  ///< sweeps; must not exceed the workspace's capacity
  double tolerance = 1e-10;  ///< converged when a sweep changes no lambda_i by more than this
  bool record_iterates = true;  ///< keep every sweep's lambda for pgs_sweeps_vjp
};

struct PgsResult {
  int iterations = 0;          ///< sweeps run
  double max_change = 0.0;     ///< largest |change of lambda_i| in the last sweep
  double residual = 0.0;       ///< natural-map residual max_i |lambda_i - clamp(lambda_i - w_i, lo_i, hi_i)|
  bool converged = false;
};

/// Buffers of one problem size, allocated once.
template <class S>
struct PgsWorkspaceTpl {
  PgsWorkspaceTpl() = default;
  PgsWorkspaceTpl(int n, int max_iterations) { resize(n, max_iterations); }
  void resize(int n, int max_iterations);

  int n = 0;               ///< rows the buffers hold (problems of at most n rows fit)
  int capacity = 0;        ///< largest max_iterations the iterate record can hold
  VectorX<S> inv_diagonal;  ///< 1 / (A_ii + cfm), leading `rows` entries
  MatrixX<S> iterates;      ///< column k, leading `rows` entries: lambda after k sweeps (column 0: the warm start)
  int recorded = -1;        ///< sweeps in `iterates` (-1: none recorded)
  int rows = 0;             ///< size of the problem pgs_solve ran last
};
using PgsWorkspace = PgsWorkspaceTpl<double>;

/// Solves the problem by PGS. lambda (problem.size() entries): in = warm start (zero for a cold start),
/// out = solution. Never allocates; throws ArgumentError for wrong shapes, a workspace smaller than the
/// problem, or max_iterations > ws.capacity.
template <class S>
PgsResult pgs_solve(const BoxedLcpTpl<S>& problem, const PgsOptions& options, PgsWorkspaceTpl<S>& ws,
                    Eigen::Ref<VectorX<std::type_identity_t<S>>> lambda);

/// Bounds of every row at lambda: box rows their lo/hi, friction rows -+mu_i lambda_n.
template <class S>
void pgs_bounds(const BoxedLcpTpl<S>& problem, const VectorX<S>& lambda, VectorX<S>& lo, VectorX<S>& hi);

/// Adjoints of the problem's inputs. The *_vjp functions ACCUMULATE (+=) into them.
struct BoxedLcpAdjoint {
  Eigen::MatrixXd A;
  Eigen::VectorXd b, lo, hi, mu;
  Eigen::VectorXd lambda0;  ///< adjoint of the warm start
  double cfm = 0.0;
  explicit BoxedLcpAdjoint(int n = 0) { resize(n); }
  void resize(int n);  ///< sizes and zeroes everything
};

/// Buffers of the reverse passes, allocated once.
struct PgsAdjointWorkspace {
  PgsAdjointWorkspace() = default;
  explicit PgsAdjointWorkspace(int n) { resize(n); }
  void resize(int n);

  Eigen::VectorXd lambda_state;  ///< the iterate being rewound
  Eigen::VectorXd lambda_bar;    ///< adjoint of the iterate
  Eigen::MatrixXd system;        ///< implicit: active-set Jacobian
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  Eigen::VectorXd rhs, y;
  std::vector<signed char> active;  ///< implicit: 0 free, -1 at lower bound, +1 at upper bound, 2 inert
  // pgs_implicit_jvp(_left)'s least-norm branch (a singular active-set system) and the in-place
  // permutations, so that they allocate nothing once sized:
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;  ///< of system (jvp) or system^T (jvp_left)
  Eigen::MatrixXd least_norm;            ///< jvp_left: n x outputs, outputs^T solved in place
  Eigen::RowVectorXd reflector_scratch;  ///< Householder reflectors' workspace (max(n, columns))
  std::vector<char> permuted;            ///< in-place permutations: the rows / columns visited
};

/// Reverse of the sweeps pgs_solve ran last with `ws` (needs options.record_iterates):
/// lambda_bar (adjoint of the returned lambda) -> A, b, lo, hi, mu, cfm and warm-start adjoints.
void pgs_sweeps_vjp(const BoxedLcp& problem, const PgsWorkspace& ws, const Eigen::Ref<const Eigen::VectorXd>& lambda_bar,
                    PgsAdjointWorkspace& aws, BoxedLcpAdjoint& adjoint);

/// Implicit differentiation at the solution lambda over its active set. A row counts as clamped when
/// |lambda_i - bound| <= active_tolerance * (1 + |bound|). Returns false when the active-set system
/// is singular (redundant free rows: two contacts of a capsule lying on a plane share a friction
/// direction); it then adds nothing, or, with least_norm_if_singular, the adjoint of the least-norm
/// solution of the transposed system (the transpose of pgs_implicit_jvp's least-norm map, so that
/// step_vjp and step_jacobian agree there). A's adjoint is rank one, -u lambda^T with u_i = aws.y_i
/// on the free rows (aws.active_i == 0) and 0 elsewhere, which callers may exploit (pgs_contact_vjp does).
bool pgs_implicit_vjp(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                      const Eigen::Ref<const Eigen::VectorXd>& lambda_bar,
                      PgsAdjointWorkspace& aws, BoxedLcpAdjoint& adjoint, double active_tolerance = 1e-9,
                      bool least_norm_if_singular = false);

/// Forward mode of the implicit differentiation, for many directions at once (the step's analytical
/// Jacobian, sim/step_jacobian.hpp): on entry each column of `directions` (n x k) is a change of
/// A lambda + b with lambda held (dA lambda + db); on return it is the change of lambda. Bounds, mu
/// and cfm are held. Where the active-set system is singular (redundant rows: more free rows than
/// the mechanism can move) it returns the least-norm change and false.
bool pgs_implicit_jvp(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                      PgsAdjointWorkspace& aws, Eigen::Ref<Eigen::MatrixXd> directions, double active_tolerance = 1e-9);

/// The same map applied from the left, for many outputs at once: on return `outputs` (k x n) is
/// outputs_in * (the linear map of pgs_implicit_jvp), so that outputs D = outputs_in * dlambda for
/// every change D of A lambda + b. Cheaper than pgs_implicit_jvp when k is smaller than the number of
/// directions (the step's Jacobian: k = nv velocity rows). Same active set, tolerance and
/// least-norm fallback (returns false there).
bool pgs_implicit_jvp_left(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                           PgsAdjointWorkspace& aws, Eigen::Ref<Eigen::MatrixXd> outputs,
                           double active_tolerance = 1e-9);

}  // namespace gradyn
