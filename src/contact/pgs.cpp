#include "gradyn/contact/pgs.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {

std::string shape_message(const char* what, long expected_rows, long expected_cols, long rows, long cols) {
  return std::string("BoxedLcp: ") + what + " has shape " + std::to_string(rows) + "x" + std::to_string(cols) +
         ", expected " + std::to_string(expected_rows) + "x" + std::to_string(expected_cols);
}

// Bounds of row i given the current iterate (friction rows read their normal row's impulse now).
template <class S, class Lambda>
void row_bounds(const BoxedLcpTpl<S>& problem, const Lambda& lambda, int i, S& lo, S& hi) {
  const int normal = problem.normal_row[static_cast<size_t>(i)];
  if (normal < 0) {
    lo = problem.lo(i);
    hi = problem.hi(i);
  } else {
    hi = problem.mu(i) * lambda(normal);
    lo = -hi;
  }
}

// Unprojected Gauss-Seidel value of row i: -(b_i + sum_{j != i} A_ij lambda_j) / (A_ii + cfm).
template <class S, class Lambda>
S unprojected(const BoxedLcpTpl<S>& problem, const Lambda& lambda, const S& inv_diagonal, int i) {
  S sum = problem.b(i);
  const int n = problem.size();
  for (int j = 0; j < n; ++j)
    if (j != i) sum += problem.A(i, j) * lambda(j);
  return -sum * inv_diagonal;
}

// Rows whose diagonal A_ii + cfm is below this fraction of the largest are inert: their Jacobian row
// is (numerically) zero, so their impulse moves nothing (a friction direction the mechanism cannot
// move in). Dividing by such a diagonal gives inf/NaN; an inert row takes u_i = 0 instead.
constexpr double kInertDiagonal = 1e-12;

template <class S>
double largest_diagonal(const BoxedLcpTpl<S>& problem) {
  double largest = 0.0;
  for (int i = 0; i < problem.size(); ++i)
    largest = std::max(largest, std::abs(value_of(problem.A(i, i)) + problem.cfm));
  return largest;
}

template <class S>
bool inert_row(const BoxedLcpTpl<S>& problem, int i, double largest) {
  return !(value_of(problem.A(i, i)) + problem.cfm > kInertDiagonal * largest);
}

// Branch of the clamp: -1 lower bound taken, +1 upper bound taken, 0 free. The forward pass and its
// reverse both decide with this, so they follow the same branch.
template <class S>
int clamp_branch(const S& u, const S& lo, const S& hi) {
  if (u < lo) return -1;
  if (u > hi) return 1;
  return 0;
}

}  // namespace

template <class S>
void BoxedLcpTpl<S>::check() const {
  // Exact shapes without `rows`; with it, storage at least rows x rows.
  const long n = size();
  const bool exact = rows < 0;
  auto fits = [&](long actual) { return exact ? actual == n : actual >= n; };
  const char* note = exact ? "" : " (at least)";
  auto fail = [&](const char* what, long expected_cols, long r, long c) {
    throw ArgumentError(shape_message(what, n, expected_cols, r, c) + note);
  };
  if (!exact && n > b.size()) fail("b", 1, b.size(), 1);
  if (!fits(A.rows()) || !fits(A.cols())) fail("A", n, A.rows(), A.cols());
  if (!fits(lo.size())) fail("lo", 1, lo.size(), 1);
  if (!fits(hi.size())) fail("hi", 1, hi.size(), 1);
  if (!fits(mu.size())) fail("mu", 1, mu.size(), 1);
  if (!fits(static_cast<long>(normal_row.size()))) fail("normal_row", 1, static_cast<long>(normal_row.size()), 1);
  for (long i = 0; i < n; ++i) {
    const int normal = normal_row[static_cast<size_t>(i)];
    if (normal >= n || normal == i || normal < -1)
      throw ArgumentError("BoxedLcp: normal_row[" + std::to_string(i) + "] = " + std::to_string(normal) +
                          ", expected -1 (box row) or another row in [0, " + std::to_string(n) + ")");
    if (normal >= 0 && normal_row[static_cast<size_t>(normal)] >= 0)
      throw ArgumentError("BoxedLcp: friction row " + std::to_string(i) + " refers to row " +
                          std::to_string(normal) + ", which is itself a friction row");
  }
}

template <class S>
void PgsWorkspaceTpl<S>::resize(int size, int max_iterations) {
  n = size;
  capacity = max_iterations;
  inv_diagonal.resize(size);
  iterates.resize(size, max_iterations + 1);
  recorded = -1;
  rows = 0;
}

template <class S>
void pgs_bounds(const BoxedLcpTpl<S>& problem, const VectorX<S>& lambda, VectorX<S>& lo, VectorX<S>& hi) {
  for (int i = 0; i < problem.size(); ++i) row_bounds(problem, lambda, i, lo(i), hi(i));
}

template <class S>
PgsResult pgs_solve(const BoxedLcpTpl<S>& problem, const PgsOptions& options, PgsWorkspaceTpl<S>& ws,
                    Eigen::Ref<VectorX<std::type_identity_t<S>>> lambda) {
  problem.check();
  const int n = problem.size();
  if (ws.n < n)
    throw ArgumentError("pgs_solve: workspace sized for " + std::to_string(ws.n) + " rows, problem has " + std::to_string(n));
  if (lambda.size() != n)
    throw ArgumentError("pgs_solve: lambda has " + std::to_string(lambda.size()) + " entries, expected " + std::to_string(n));
  if (options.max_iterations < 0 || (options.record_iterates && options.max_iterations > ws.capacity))
    throw ArgumentError("pgs_solve: max_iterations = " + std::to_string(options.max_iterations) +
                        ", expected 0.." + std::to_string(ws.capacity) + " (the workspace's capacity)");

  const double largest = largest_diagonal(problem);
  for (int i = 0; i < n; ++i)
    ws.inv_diagonal(i) = inert_row(problem, i, largest) ? S(0) : S(1.0) / (problem.A(i, i) + S(problem.cfm));
  if (options.record_iterates) ws.iterates.col(0).head(n) = lambda;
  ws.recorded = options.record_iterates ? 0 : -1;
  ws.rows = n;

  PgsResult result;
  for (int sweep = 1; sweep <= options.max_iterations; ++sweep) {
    double max_change = 0.0;
    for (int i = 0; i < n; ++i) {
      const S u = unprojected(problem, lambda, ws.inv_diagonal(i), i);
      S lo, hi;
      row_bounds(problem, lambda, i, lo, hi);
      const int branch = clamp_branch(u, lo, hi);
      const S next = branch < 0 ? lo : (branch > 0 ? hi : u);
      max_change = std::max(max_change, std::abs(value_of(next) - value_of(lambda(i))));
      lambda(i) = next;
    }
    if (options.record_iterates) {
      ws.iterates.col(sweep).head(n) = lambda;
      ws.recorded = sweep;
    }
    result.iterations = sweep;
    result.max_change = max_change;
    if (max_change <= options.tolerance) {
      result.converged = true;
      break;
    }
  }

  // Natural-map residual: zero exactly at a solution of the boxed LCP.
  double residual = 0.0;
  for (int i = 0; i < n; ++i) {
    double w = value_of(problem.b(i)) + problem.cfm * value_of(lambda(i));
    for (int j = 0; j < n; ++j) w += value_of(problem.A(i, j)) * value_of(lambda(j));
    S lo, hi;
    row_bounds(problem, lambda, i, lo, hi);
    const double li = value_of(lambda(i));
    const double projected = std::clamp(li - w, value_of(lo), std::max(value_of(lo), value_of(hi)));
    residual = std::max(residual, std::abs(li - projected));
  }
  result.residual = residual;
  return result;
}

void BoxedLcpAdjoint::resize(int n) {
  A.setZero(n, n);
  b.setZero(n);
  lo.setZero(n);
  hi.setZero(n);
  mu.setZero(n);
  lambda0.setZero(n);
  cfm = 0.0;
}

void PgsAdjointWorkspace::resize(int n) {
  lambda_state.resize(n);
  lambda_bar.resize(n);
  system.resize(n, n);
  lu = Eigen::PartialPivLU<Eigen::MatrixXd>(n);
  rhs.resize(n);
  y.resize(n);
  active.assign(static_cast<size_t>(n), 0);
  cod = Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(n, n);
  least_norm.resize(n, 0);  // its columns: pgs_implicit_jvp_left's output count, at its first call
  reflector_scratch.resize(n);
  permuted.assign(static_cast<size_t>(n), 0);
}

namespace {

void require_adjoint_shapes(const char* function, int n, const Eigen::Ref<const Eigen::VectorXd>& lambda_bar,
                            const PgsAdjointWorkspace& aws, const BoxedLcpAdjoint& adjoint) {
  if (lambda_bar.size() != n || aws.lambda_bar.size() != n || adjoint.b.size() != n || adjoint.A.rows() != n ||
      adjoint.A.cols() != n || adjoint.lo.size() != n || adjoint.hi.size() != n || adjoint.mu.size() != n ||
      adjoint.lambda0.size() != n)
    throw ArgumentError(std::string(function) + ": lambda_bar, the adjoint workspace and the adjoint must all be sized for " +
                        std::to_string(n) + " rows (lambda_bar has " + std::to_string(lambda_bar.size()) + ")");
}

}  // namespace

void pgs_sweeps_vjp(const BoxedLcp& problem, const PgsWorkspace& ws, const Eigen::Ref<const Eigen::VectorXd>& lambda_bar,
                    PgsAdjointWorkspace& aws, BoxedLcpAdjoint& adjoint) {
  problem.check();
  const int n = problem.size();
  require_adjoint_shapes("pgs_sweeps_vjp", n, lambda_bar, aws, adjoint);
  if (ws.rows != n || ws.recorded < 0)
    throw ArgumentError("pgs_sweeps_vjp: the workspace holds no recorded sweeps of this problem "
                        "(run pgs_solve with options.record_iterates first)");

  aws.lambda_bar = lambda_bar;
  for (int sweep = ws.recorded; sweep >= 1; --sweep) {
    // Before row i of this sweep, the state is rows < i from this sweep and rows >= i from the last.
    aws.lambda_state = ws.iterates.col(sweep).head(n);
    for (int i = n - 1; i >= 0; --i) {
      aws.lambda_state(i) = ws.iterates(i, sweep - 1);  // rewind row i: the state row i saw
      const double& inv_d = ws.inv_diagonal(i);
      const double u = unprojected(problem, aws.lambda_state, inv_d, i);
      double lo, hi;
      row_bounds(problem, aws.lambda_state, i, lo, hi);
      const int branch = clamp_branch(u, lo, hi);

      const double g = aws.lambda_bar(i);
      aws.lambda_bar(i) = 0.0;  // the old lambda_i is overwritten and u_i does not read it
      if (g == 0.0) continue;
      const int normal = problem.normal_row[static_cast<size_t>(i)];
      if (branch == 0) {
        // u = -(b_i + sum_{j != i} A_ij x_j) * inv_d,  inv_d = 1 / (A_ii + cfm)
        const double s = -g * inv_d;
        adjoint.b(i) += s;
        for (int j = 0; j < n; ++j) {
          if (j == i) continue;
          adjoint.A(i, j) += s * aws.lambda_state(j);
          aws.lambda_bar(j) += s * problem.A(i, j);
        }
        const double d_bar = -g * u * inv_d;
        adjoint.A(i, i) += d_bar;
        adjoint.cfm += d_bar;
      } else if (normal < 0) {
        (branch < 0 ? adjoint.lo(i) : adjoint.hi(i)) += g;
      } else {
        // bound = branch * mu_i * lambda_n
        const double signed_g = branch * g;
        adjoint.mu(i) += signed_g * aws.lambda_state(normal);
        aws.lambda_bar(normal) += signed_g * problem.mu(i);
      }
    }
  }
  adjoint.lambda0 += aws.lambda_bar;
}

namespace {

// The active set of the solution lambda and the Jacobian of its residual F(lambda, theta) = 0, row by row:
//   free row:            ((A + cfm I) lambda + b)_i
//   clamped box row:     lambda_i - bound_i
//   clamped friction:    lambda_i - s_i mu_i lambda_n   (s_i = -1 or +1)
//   inert row (pgs_solve's u_i = 0, see kInertDiagonal) inside its bounds: lambda_i - 0
// into aws.active and aws.system = dF/dlambda, factored into aws.lu. False when it is singular.
bool factor_active_set_system(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                              PgsAdjointWorkspace& aws, double active_tolerance) {
  const int n = problem.size();
  aws.system.setZero();
  const double largest = largest_diagonal(problem);
  for (int i = 0; i < n; ++i) {
    double lo, hi;
    row_bounds(problem, lambda, i, lo, hi);
    const double li = lambda(i);
    const int normal = problem.normal_row[static_cast<size_t>(i)];
    signed char state = 0;
    // (an infinite bound is never active: inf <= tol * inf would say it is)
    if (std::isfinite(lo) && std::abs(li - lo) <= active_tolerance * (1.0 + std::abs(lo)))
      state = -1;
    else if (std::isfinite(hi) && std::abs(li - hi) <= active_tolerance * (1.0 + std::abs(hi)))
      state = 1;
    if (state == 0 && inert_row(problem, i, largest)) state = 2;
    aws.active[static_cast<size_t>(i)] = state;
    if (state == 2) {
      aws.system(i, i) = 1.0;
    } else if (state == 0) {
      aws.system.row(i) = problem.A.row(i).head(n);
      aws.system(i, i) += problem.cfm;
    } else {
      aws.system(i, i) = 1.0;
      if (normal >= 0) aws.system(i, normal) = -state * problem.mu(i);
    }
  }
  aws.lu.compute(aws.system);
  const double pivot_floor = 1e-13 * std::max(1.0, aws.system.cwiseAbs().maxCoeff());
  return !(aws.lu.matrixLU().diagonal().cwiseAbs().array() <= pivot_floor).any();
}

// X <- P X (rows) or X P (columns), in place: Eigen's in-place permutation product (the same
// swaps, following P's cycles) with the caller's mask instead of one allocated per call.
enum class PermuteSide { Rows, Columns };
template <PermuteSide side>
void permute_in_place(const Eigen::PermutationMatrix<Eigen::Dynamic>& P, Eigen::Ref<Eigen::MatrixXd> X,
                      std::vector<char>& visited) {
  const Eigen::Index n = P.size();
  std::fill(visited.begin(), visited.begin() + n, 0);
  for (Eigen::Index seed = 0; seed < n; ++seed) {
    if (visited[static_cast<size_t>(seed)]) continue;
    visited[static_cast<size_t>(seed)] = 1;
    Eigen::Index previous = seed;
    for (Eigen::Index k = P.indices()(seed); k != seed; k = P.indices()(k)) {
      if constexpr (side == PermuteSide::Rows)
        X.row(k).swap(X.row(seed));
      else
        X.col(k).swap(X.col(previous));
      visited[static_cast<size_t>(k)] = 1;
      previous = k;
    }
  }
}

// c <- y where x = P y is the least-norm solution of (cod's matrix) x = c, column by column
// (P = cod.colsPermutation(), left to the caller). Eigen's CompleteOrthogonalDecomposition::solve
// step for step (the same values: c = Q^* rhs, T z = c(top rank), y = Z^* [z; 0]), in place and with
// the caller's scratch (at least c.cols() entries) instead of its per-call copies and workspaces.
// Allocation-free below rank 48, where Eigen applies Q's reflectors one at a time (by blocks, with
// temporaries, from 48 on).
void least_norm_solve_unpermuted(const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>& cod,
                                 Eigen::Ref<Eigen::MatrixXd> c, Eigen::RowVectorXd& scratch) {
  const Eigen::Index rank = cod.rank(), n = cod.cols();
  if (rank == 0) {
    c.setZero();
    return;
  }
  Eigen::Map<Eigen::RowVectorXd> workspace(scratch.data(), c.cols());
  auto Q = cod.householderQ();
  Q.setLength(rank).adjoint().applyThisOnTheLeft(c, workspace);
  cod.matrixT().topLeftCorner(rank, rank).triangularView<Eigen::Upper>().solveInPlace(c.topRows(rank));
  if (rank < n) {  // Z^* [z; 0]: Eigen's applyZAdjointOnTheLeftInPlace
    c.bottomRows(n - rank).setZero();
    for (Eigen::Index k = 0; k < rank; ++k) {
      if (k != rank - 1) c.row(k).swap(c.row(rank - 1));
      c.middleRows(rank - 1, n - rank + 1)
          .applyHouseholderOnTheLeft(cod.matrixQTZ().row(k).tail(n - rank).adjoint(), cod.zCoeffs()(k),
                                     scratch.data());
      if (k != rank - 1) c.row(k).swap(c.row(rank - 1));
    }
  }
}

}  // namespace

bool pgs_implicit_vjp(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                      const Eigen::Ref<const Eigen::VectorXd>& lambda_bar,
                      PgsAdjointWorkspace& aws, BoxedLcpAdjoint& adjoint, double active_tolerance,
                      bool least_norm_if_singular) {
  problem.check();
  const int n = problem.size();
  require_adjoint_shapes("pgs_implicit_vjp", n, lambda_bar, aws, adjoint);
  if (lambda.size() != n)
    throw ArgumentError("pgs_implicit_vjp: lambda has " + std::to_string(lambda.size()) + " entries, expected " +
                        std::to_string(n));
  // dF/dlambda = system; theta_bar = -(dF/dtheta)^T system^-T lambda_bar.
  const bool regular = factor_active_set_system(problem, lambda, aws, active_tolerance);
  if (!regular && !least_norm_if_singular) return false;
  aws.rhs = lambda_bar;
  if (regular) {
    // y = system^-T lambda_bar: Eigen's PartialPivLU::transpose().solve step for step, its last
    // (in-place) permutation into y instead (Eigen's allocates a mask).
    aws.lu.matrixLU().triangularView<Eigen::Upper>().transpose().solveInPlace(aws.rhs);
    aws.lu.matrixLU().triangularView<Eigen::UnitLower>().transpose().solveInPlace(aws.rhs);
    aws.y = aws.lu.permutationP().transpose() * aws.rhs;
  } else {  // the least-norm y of system^T y = lambda_bar
    aws.cod.compute(aws.system.transpose());
    Eigen::Map<Eigen::MatrixXd> column(aws.rhs.data(), n, 1);
    least_norm_solve_unpermuted(aws.cod, column, aws.reflector_scratch);
    permute_in_place<PermuteSide::Rows>(aws.cod.colsPermutation(), column, aws.permuted);
    aws.y = aws.rhs;
  }

  for (int i = 0; i < n; ++i) {
    const double yi = aws.y(i);
    const signed char state = aws.active[static_cast<size_t>(i)];
    const int normal = problem.normal_row[static_cast<size_t>(i)];
    if (state == 2) continue;  // inert: lambda_i = 0 whatever the inputs
    if (state == 0) {
      adjoint.b(i) -= yi;
      adjoint.A.row(i) -= yi * lambda.transpose();
      adjoint.cfm -= yi * lambda(i);
    } else if (normal < 0) {
      (state < 0 ? adjoint.lo(i) : adjoint.hi(i)) += yi;
    } else {
      adjoint.mu(i) += yi * state * lambda(normal);
    }
  }
  return regular;
}

bool pgs_implicit_jvp(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                      PgsAdjointWorkspace& aws, Eigen::Ref<Eigen::MatrixXd> directions, double active_tolerance) {
  problem.check();
  const int n = problem.size();
  if (lambda.size() != n || directions.rows() != n || aws.system.rows() != n)
    throw ArgumentError("pgs_implicit_jvp: lambda (" + std::to_string(lambda.size()) + "), the rows of directions (" +
                        std::to_string(directions.rows()) + ") and the workspace must all be sized for " +
                        std::to_string(n) + " rows");
  const bool regular = factor_active_set_system(problem, lambda, aws, active_tolerance);
  // d lambda = -system^-1 dF, dF = the free rows of directions (bounds and mu held).
  for (int i = 0; i < n; ++i)
    if (aws.active[static_cast<size_t>(i)] != 0) directions.row(i).setZero();
  if (aws.reflector_scratch.size() < directions.cols())
    aws.reflector_scratch.resize(directions.cols());  // allocates: more directions than before
  if (regular) {
    permute_in_place<PermuteSide::Rows>(aws.lu.permutationP(), directions, aws.permuted);
    aws.lu.matrixLU().triangularView<Eigen::UnitLower>().solveInPlace(directions);
    aws.lu.matrixLU().triangularView<Eigen::Upper>().solveInPlace(directions);
  } else {  // redundant rows: the least-norm change of lambda (v+ is unique even where lambda is not)
    aws.cod.compute(aws.system);
    least_norm_solve_unpermuted(aws.cod, directions, aws.reflector_scratch);
    permute_in_place<PermuteSide::Rows>(aws.cod.colsPermutation(), directions, aws.permuted);
  }
  directions = -directions;
  return regular;
}

bool pgs_implicit_jvp_left(const BoxedLcp& problem, const Eigen::Ref<const Eigen::VectorXd>& lambda,
                           PgsAdjointWorkspace& aws, Eigen::Ref<Eigen::MatrixXd> outputs, double active_tolerance) {
  problem.check();
  const int n = problem.size();
  if (lambda.size() != n || outputs.cols() != n || aws.system.rows() != n)
    throw ArgumentError("pgs_implicit_jvp_left: lambda (" + std::to_string(lambda.size()) + "), the columns of outputs (" +
                        std::to_string(outputs.cols()) + ") and the workspace must all be sized for " +
                        std::to_string(n) + " rows");
  const bool regular = factor_active_set_system(problem, lambda, aws, active_tolerance);
  // the least-norm branch's buffers, sized on either branch (a later call taking the other allocates nothing)
  const Eigen::Index k = outputs.rows();
  if (aws.least_norm.cols() != k) aws.least_norm.resize(n, k);  // allocates: a new output count
  if (aws.reflector_scratch.size() < k) aws.reflector_scratch.resize(k);
  // outputs <- -outputs system^-1 P_free, system = P^-1 L U: times U^-1, L^-1, then P.
  if (regular) {
    aws.lu.matrixLU().triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(outputs);
    aws.lu.matrixLU().triangularView<Eigen::UnitLower>().solveInPlace<Eigen::OnTheRight>(outputs);
    permute_in_place<PermuteSide::Columns>(aws.lu.permutationP(), outputs, aws.permuted);
  } else {  // the least-norm map pinv(system): outputs pinv(system) = (pinv(system^T) outputs^T)^T
    aws.cod.compute(aws.system.transpose());
    aws.least_norm = outputs.transpose();
    least_norm_solve_unpermuted(aws.cod, aws.least_norm, aws.reflector_scratch);
    outputs.transpose() = aws.cod.colsPermutation() * aws.least_norm;
  }
  for (int i = 0; i < n; ++i)
    if (aws.active[static_cast<size_t>(i)] != 0) outputs.col(i).setZero();
  outputs = -outputs;
  return regular;
}

#define GRADYN_INSTANTIATE(S)                                                                                   \
  template struct BoxedLcpTpl<S>;                                                                              \
  template struct PgsWorkspaceTpl<S>;                                                                          \
  template void pgs_bounds<S>(const BoxedLcpTpl<S>&, const VectorX<S>&, VectorX<S>&, VectorX<S>&);            \
  template PgsResult pgs_solve<S>(const BoxedLcpTpl<S>&, const PgsOptions&, PgsWorkspaceTpl<S>&,               \
                                  Eigen::Ref<VectorX<S>>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
