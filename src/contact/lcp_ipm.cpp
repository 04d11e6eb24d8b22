#include "gradyn/contact/lcp_ipm.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "gradyn/model/errors.hpp"

namespace gradyn {

template <class S>
MixedLcpTpl<S>::MixedLcpTpl(Eigen::Index n_x, Eigen::Index n_eq, Eigen::Index n_ineq)
    : M(MatrixX<S>::Zero(n_x, n_x)),
      G(MatrixX<S>::Zero(n_ineq, n_x)),
      F(MatrixX<S>::Zero(n_ineq, n_ineq)),
      A(MatrixX<S>::Zero(n_eq, n_x)),
      q(VectorX<S>::Zero(n_x)),
      m(VectorX<S>::Zero(n_ineq)),
      b(VectorX<S>::Zero(n_eq)) {}

template <class S>
IpmWorkspaceTpl<S>::IpmWorkspaceTpl(Eigen::Index nx, Eigen::Index ne, Eigen::Index ni)
    : n_x(nx), n_eq(ne), n_ineq(ni),
      x(VectorX<S>::Zero(nx)), z(VectorX<S>::Zero(ni)), y(VectorX<S>::Zero(ne)), s(VectorX<S>::Zero(ni)),
      dx(VectorX<S>::Zero(nx)), dz(VectorX<S>::Zero(ni)), dy(VectorX<S>::Zero(ne)), ds(VectorX<S>::Zero(ni)),
      dz_aff(VectorX<S>::Zero(ni)), ds_aff(VectorX<S>::Zero(ni)),
      r_dual(VectorX<S>::Zero(nx)), r_ineq(VectorX<S>::Zero(ni)), r_eq(VectorX<S>::Zero(ne)),
      r_comp(VectorX<S>::Zero(ni)),
      rhs(VectorX<S>::Zero(nx + ni + ne)), sol(VectorX<S>::Zero(nx + ni + ne)),
      K(MatrixX<S>::Zero(nx + ni + ne, nx + ni + ne)),
      lu(nx + ni + ne),
      mass_llt(nx),
      minv_BT(MatrixX<S>::Zero(nx, ni + ne)),
      schur_static(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur_pivots(Eigen::VectorXi::Zero(ni + ne)),
      rhs_x(VectorX<S>::Zero(nx)),
      rhs_w(VectorX<S>::Zero(ni + ne)) {}

namespace {

void check_shape(const char* what, Eigen::Index rows, Eigen::Index cols, Eigen::Index want_rows,
                 Eigen::Index want_cols) {
  if (rows != want_rows || cols != want_cols)
    throw ArgumentError(std::string("mixed LCP: ") + what + " is " + std::to_string(rows) + "x" +
                        std::to_string(cols) + ", expected " + std::to_string(want_rows) + "x" +
                        std::to_string(want_cols) + " (workspace n_x, n_eq, n_ineq)");
}

template <class S>
void check_problem(const MixedLcpTpl<S>& p, const IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nx = ws.n_x, ne = ws.n_eq, ni = ws.n_ineq;
  check_shape("M", p.M.rows(), p.M.cols(), nx, nx);
  check_shape("q", p.q.rows(), p.q.cols(), nx, 1);
  check_shape("G", p.G.rows(), p.G.cols(), ni, nx);
  check_shape("F", p.F.rows(), p.F.cols(), ni, ni);
  check_shape("m", p.m.rows(), p.m.cols(), ni, 1);
  check_shape("A", p.A.rows(), p.A.cols(), ne, nx);
  check_shape("b", p.b.rows(), p.b.cols(), ne, 1);
}

// Largest alpha in (0, 1] with v + alpha dv >= 0 (v > 0).
template <class S>
S max_step(const VectorX<S>& v, const VectorX<S>& dv) {
  S alpha(1);
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (dv[i] < S(0)) alpha = std::min(alpha, -v[i] / dv[i]);
  return alpha;
}

template <class S>
void compute_residuals(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const S& kappa) {
  ws.r_dual.noalias() = p.M * ws.x;
  ws.r_dual.noalias() += p.G.transpose() * ws.z;
  ws.r_dual.noalias() += p.A.transpose() * ws.y;
  ws.r_dual += p.q;
  ws.r_ineq.noalias() = p.G * ws.x;
  ws.r_ineq.noalias() += p.F * ws.z;
  ws.r_ineq += ws.s - p.m;
  ws.r_eq.noalias() = p.A * ws.x;
  ws.r_eq -= p.b;
  ws.r_comp = ws.s.cwiseProduct(ws.z).array() - kappa;
}

template <class S>
S inf_norm(const VectorX<S>& v) {
  return v.size() == 0 ? S(0) : v.template lpNorm<Eigen::Infinity>();
}

// Dense LU with partial pivoting, in place, for the small Schur complements of the iterations
// (a few dozen rows): plain column-oriented loops, which beat Eigen's blocked PartialPivLU at these
// sizes. A = P^T L U with L unit lower and U upper stored in A; pivots[k] is the row swapped with k
// at step k. A zero pivot is left as is (the solves then give inf / NaN, like PartialPivLU).
template <class S>
void lu_in_place(MatrixX<S>& A, Eigen::VectorXi& pivots) {
  using std::abs;
  const Eigen::Index n = A.rows();
  S* a = A.data();
  for (Eigen::Index k = 0; k < n; ++k) {
    S* col_k = a + k * n;
    Eigen::Index p = k;
    S largest = abs(col_k[k]);
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (abs(col_k[i]) > largest) largest = abs(col_k[i]), p = i;
    pivots[k] = static_cast<int>(p);
    if (p != k)
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[j * n + k], a[j * n + p]);
    if (col_k[k] != S(0)) {
      const S inv = S(1) / col_k[k];
      for (Eigen::Index i = k + 1; i < n; ++i) col_k[i] *= inv;
    }
    for (Eigen::Index j = k + 1; j < n; ++j) {
      S* col_j = a + j * n;
      const S f = col_j[k];
      if (f == S(0)) continue;
      for (Eigen::Index i = k + 1; i < n; ++i) col_j[i] -= f * col_k[i];
    }
  }
}

// x = A^-1 x with lu_in_place's factors.
template <class S>
void lu_solve_in_place(const MatrixX<S>& LU, const Eigen::VectorXi& pivots, VectorX<S>& x) {
  const Eigen::Index n = LU.rows();
  const S* a = LU.data();
  for (Eigen::Index k = 0; k < n; ++k) std::swap(x[k], x[pivots[k]]);
  for (Eigen::Index k = 0; k < n; ++k) {  // L y = P x
    const S xk = x[k];
    if (xk == S(0)) continue;
    const S* col = a + k * n;
    for (Eigen::Index i = k + 1; i < n; ++i) x[i] -= xk * col[i];
  }
  for (Eigen::Index k = n - 1; k >= 0; --k) {  // U x = y
    const S* col = a + k * n;
    x[k] /= col[k];
    const S xk = x[k];
    for (Eigen::Index i = 0; i < k; ++i) x[i] -= xk * col[i];
  }
}

// x = A^-T x with lu_in_place's factors (A^T = U^T L^T P).
template <class S>
void lu_solve_transposed_in_place(const MatrixX<S>& LU, const Eigen::VectorXi& pivots, VectorX<S>& x) {
  const Eigen::Index n = LU.rows();
  const S* a = LU.data();
  for (Eigen::Index k = 0; k < n; ++k) {  // U^T y = x
    const S* col = a + k * n;
    S sum = x[k];
    for (Eigen::Index i = 0; i < k; ++i) sum -= col[i] * x[i];
    x[k] = sum / col[k];
  }
  for (Eigen::Index k = n - 1; k >= 0; --k) {  // L^T z = y
    const S* col = a + k * n;
    S sum = x[k];
    for (Eigen::Index i = k + 1; i < n; ++i) sum -= col[i] * x[i];
    x[k] = sum;
  }
  for (Eigen::Index k = n - 1; k >= 0; --k) std::swap(x[k], x[pivots[k]]);  // x = P^T z
}

// M exactly symmetric (crba's is bit for bit) and positive definite: then the Schur path applies.
template <class S>
bool exactly_symmetric(const MatrixX<S>& M) {
  for (Eigen::Index c = 0; c < M.cols(); ++c)
    for (Eigen::Index r = c + 1; r < M.rows(); ++r)
      if (M(r, c) != M(c, r)) return false;
  return true;
}

// The parts of K that stay fixed over the iterations: the Schur path's LLT of M, M^-1 B^T and
// B M^-1 B^T - [F 0; 0 0], or the full path's constant blocks of K. Picks the path.
template <class S>
void prepare_kkt(const MixedLcpTpl<S>& p, bool allow_schur, IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  ws.use_schur = false;
  if (allow_schur && exactly_symmetric(p.M)) {
    ws.mass_llt.compute(p.M);
    ws.use_schur = ws.mass_llt.info() == Eigen::Success;
  }
  if (ws.use_schur) {
    ws.minv_BT.leftCols(ni) = p.G.transpose();
    ws.minv_BT.rightCols(ne) = p.A.transpose();
    ws.mass_llt.solveInPlace(ws.minv_BT);
    ws.schur_static.topRows(ni).noalias() = p.G * ws.minv_BT;
    ws.schur_static.bottomRows(ne).noalias() = p.A * ws.minv_BT;
    ws.schur_static.topLeftCorner(ni, ni) -= p.F;
    return;
  }
  ws.K.setZero();
  ws.K.topLeftCorner(nx, nx) = p.M;
  ws.K.block(0, nx, nx, ni) = p.G.transpose();
  ws.K.block(0, nx + ni, nx, ne) = p.A.transpose();
  ws.K.block(nx, 0, ni, nx) = p.G;
  ws.K.block(nx + ni, 0, ne, nx) = p.A;
}

// Factors K with D = diag(d_scale) (the s / z ratios).
template <class S>
void factor_with(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const VectorX<S>& d_scale) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq;
  if (ws.use_schur) {
    ws.schur = ws.schur_static;
    ws.schur.topLeftCorner(ni, ni).diagonal() += d_scale;
    lu_in_place(ws.schur, ws.schur_pivots);
    return;
  }
  ws.K.block(nx, nx, ni, ni) = p.F;
  ws.K.block(nx, nx, ni, ni).diagonal() -= d_scale;
  ws.lu.compute(ws.K);
}

// sol = K^-1 rhs (transposed: K^-T rhs) with the current factorisation; sol may be rhs.
template <class S>
void solve_factored(IpmWorkspaceTpl<S>& ws, const VectorX<S>& rhs, VectorX<S>& sol, bool transposed) {
  if (!ws.use_schur) {
    if (transposed)
      sol = ws.lu.transpose().solve(rhs);
    else
      sol = ws.lu.solve(rhs);
    return;
  }
  // K = [M B^T; B C] (M symmetric): with t = M^-1 r_x, (B M^-1 B^T - C) w = B t - r_w, x = t - M^-1 B^T w;
  // K^T = [M B^T; B C^T] the same with the Schur complement transposed.
  const Eigen::Index nx = ws.n_x, nw = ws.n_ineq + ws.n_eq;
  ws.rhs_w.noalias() = ws.minv_BT.transpose() * rhs.head(nx);  // B M^-1 r_x
  ws.rhs_w -= rhs.tail(nw);
  ws.rhs_x = rhs.head(nx);
  ws.mass_llt.solveInPlace(ws.rhs_x);
  if (transposed)
    lu_solve_transposed_in_place(ws.schur, ws.schur_pivots, ws.rhs_w);
  else
    lu_solve_in_place(ws.schur, ws.schur_pivots, ws.rhs_w);
  sol.tail(nw) = ws.rhs_w;
  sol.head(nx) = ws.rhs_x;
  sol.head(nx).noalias() -= ws.minv_BT * sol.tail(nw);
}

// Newton direction (dx, dz, dy, ds) for the current residuals with the complementarity residual
// comp (rows of Z ds + S dz = -comp); K must be factored at the current iterate.
template <class S>
void newton_direction(IpmWorkspaceTpl<S>& ws, const VectorX<S>& comp) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  ws.rhs.head(nx) = -ws.r_dual;
  ws.rhs.segment(nx, ni) = comp.cwiseQuotient(ws.z) - ws.r_ineq;
  ws.rhs.tail(ne) = -ws.r_eq;
  solve_factored(ws, ws.rhs, ws.sol, false);
  ws.dx = ws.sol.head(nx);
  ws.dz = ws.sol.segment(nx, ni);
  ws.dy = ws.sol.tail(ne);
  // ds = -(comp + S dz) / z
  ws.ds = -(comp + ws.s.cwiseProduct(ws.dz)).cwiseQuotient(ws.z);
}

// Factors K at the point the last solve returned (once; later calls reuse it).
template <class S>
void factor_at_solution(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  if (ws.factored_at_solution) return;
  ws.ds_aff = ws.s.cwiseQuotient(ws.z);
  factor_with(p, ws, ws.ds_aff);
  ws.factored_at_solution = true;
}

}  // namespace

namespace {

// Initial point (Mattingley & Boyd): solve the KKT system with D = I, i.e. s = -z, then shift s and z
// into the positive orthant.
template <class S>
void cold_start(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  ws.s.setOnes();
  factor_with(p, ws, ws.s);
  ws.rhs.head(nx) = -p.q;
  ws.rhs.segment(nx, ni) = p.m;
  ws.rhs.tail(ne) = p.b;
  solve_factored(ws, ws.rhs, ws.sol, false);
  ws.x = ws.sol.head(nx);
  ws.z = ws.sol.segment(nx, ni);
  ws.y = ws.sol.tail(ne);
  ws.s = -ws.z;
  if (ni > 0) {
    const S shift_s = -ws.s.minCoeff(), shift_z = -ws.z.minCoeff();
    if (shift_s >= S(0)) ws.s.array() += S(1) + shift_s;
    if (shift_z >= S(0)) ws.z.array() += S(1) + shift_z;
  }
}

// Warm start from the multipliers (z, y) the workspace holds: z raised to at least `floor`, x from
// the dual rows (r_dual = 0: x = -M^-1 (q + G^T z + A^T y), Schur path only; the full path keeps the
// old x), s from the inequality rows (r_ineq = 0) raised to at least `floor`. Only the raised entries
// leave residuals; for a problem close to the last one the iteration starts next to its solution.
template <class S>
void warm_start(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const S& floor) {
  ws.z = ws.z.cwiseMax(floor);
  if (ws.use_schur) {
    ws.rhs_x = -p.q;
    ws.rhs_x.noalias() -= p.G.transpose() * ws.z;
    ws.rhs_x.noalias() -= p.A.transpose() * ws.y;
    ws.mass_llt.solveInPlace(ws.rhs_x);
    ws.x = ws.rhs_x;
  }
  ws.s = p.m;
  ws.s.noalias() -= p.G * ws.x;
  ws.s.noalias() -= p.F * ws.z;
  ws.s = ws.s.cwiseMax(floor);
}

// Mehrotra predictor-corrector iterations from the point in ws, at most max_iterations Newton steps.
template <class S>
LcpIpmResult iterate(const MixedLcpTpl<S>& p, const LcpIpmSettings<S>& settings, const S& tolerance,
                     int max_iterations, IpmWorkspaceTpl<S>& ws) {
  using std::pow;
  const S kappa = settings.kappa;
  LcpIpmResult result;
  const S n_comp = S(std::max<Eigen::Index>(ws.n_ineq, 1));
  for (int iteration = 0;; ++iteration) {
    compute_residuals(p, ws, kappa);
    const S primal = std::max(inf_norm(ws.r_ineq), inf_norm(ws.r_eq));
    const S dual = inf_norm(ws.r_dual);
    const S comp = inf_norm(ws.r_comp);
    result.iterations = iteration;
    result.primal_residual = double(primal);
    result.dual_residual = double(dual);
    result.complementarity_residual = double(comp);
    if (primal <= tolerance && dual <= tolerance && comp <= tolerance) {
      result.converged = true;
      break;
    }
    if (iteration >= max_iterations) break;

    ws.ds_aff = ws.s.cwiseQuotient(ws.z);  // D, as scratch
    factor_with(p, ws, ws.ds_aff);
    const S mu = ws.s.dot(ws.z) / n_comp;

    // Predictor: straight to the target s.z = kappa.
    newton_direction(ws, ws.r_comp);
    const S alpha_aff = std::min(max_step(ws.s, ws.ds), max_step(ws.z, ws.dz));
    const S mu_aff = (ws.s + alpha_aff * ws.ds).dot(ws.z + alpha_aff * ws.dz) / n_comp;
    const S excess = mu - kappa;
    S sigma(0);
    if (excess > S(0)) sigma = pow(std::clamp((mu_aff - kappa) / excess, S(0), S(1)), 3);
    const S target = kappa + sigma * std::max(excess, S(0));

    // Corrector: centre (sigma) and correct the second-order term ds_aff . dz_aff.
    ws.ds_aff = ws.ds;
    ws.dz_aff = ws.dz;
    ws.r_comp = ws.s.cwiseProduct(ws.z) + ws.ds_aff.cwiseProduct(ws.dz_aff);
    ws.r_comp.array() -= target;
    newton_direction(ws, ws.r_comp);
    const S alpha = std::min(S(1), settings.step_fraction * std::min(max_step(ws.s, ws.ds), max_step(ws.z, ws.dz)));
    ws.x += alpha * ws.dx;
    ws.z += alpha * ws.dz;
    ws.y += alpha * ws.dy;
    ws.s += alpha * ws.ds;
  }
  return result;
}

}  // namespace

template <class S>
LcpIpmResult solve_mixed_lcp(const MixedLcpTpl<S>& p, const LcpIpmSettings<S>& settings, IpmWorkspaceTpl<S>& ws) {
  check_problem(p, ws);
  const bool warm = settings.warm_start && ws.has_solution && ws.converged && ws.n_ineq > 0 &&
                    ws.z.allFinite() && ws.y.allFinite();
  ws.factored_at_solution = false;
  ws.has_solution = false;
  ws.converged = false;
  prepare_kkt(p, settings.schur, ws);

  LcpIpmResult result;
  int warm_iterations = 0;
  if (warm) {
    // To tolerance / 100: where the iteration stops depends on where it started, so a warm-started
    // solution differs from the cold one by up to ~tolerance / |K^-1|; the extra accuracy keeps that
    // history dependence well below the tolerance (finite differences of the step stay smooth).
    warm_start(p, ws, settings.warm_start_floor);
    result = iterate(p, settings, S(1e-2) * settings.tolerance, settings.max_iterations, ws);
    warm_iterations = result.iterations;
    if (std::max({result.primal_residual, result.dual_residual, result.complementarity_residual}) <=
        double(settings.tolerance))
      result.converged = true;  // short of tolerance / 100 (rounding may not allow it), but converged
  }
  if (!result.converged) {  // no warm start, or it failed: from the cold initial point
    cold_start(p, ws);
    result = iterate(p, settings, settings.tolerance, settings.max_iterations, ws);
    result.iterations += warm_iterations;
  }

  // K at the returned point (J^T reduces to K^T there) is factored by the first backward call.
  ws.has_solution = true;
  ws.converged = result.converged;
  return result;
}

template <class S>
void mixed_lcp_kkt_solve(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const VectorX<S>& rhs, VectorX<S>& sol,
                         bool transposed) {
  check_problem(p, ws);
  if (!ws.has_solution)
    throw ArgumentError("mixed_lcp_kkt_solve: the workspace holds no solution (call solve_mixed_lcp first)");
  const Eigen::Index n = ws.n_x + ws.n_ineq + ws.n_eq;
  if (rhs.size() != n || sol.size() != n)
    throw ArgumentError("mixed_lcp_kkt_solve: rhs has " + std::to_string(rhs.size()) + " and sol " +
                        std::to_string(sol.size()) + " entries, expected " + std::to_string(n) +
                        " (n_x + n_ineq + n_eq)");
  factor_at_solution(p, ws);
  solve_factored(ws, rhs, sol, transposed);
}

template <class S>
void mixed_lcp_vjp(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const VectorX<S>& grad_x,
                   const VectorX<S>& grad_z, const VectorX<S>& grad_y, const VectorX<S>& grad_s,
                   MixedLcpTpl<S>& grad) {
  check_problem(p, ws);
  check_problem(grad, ws);
  if (!ws.has_solution)
    throw ArgumentError("mixed_lcp_vjp: the workspace holds no solution (call solve_mixed_lcp first)");
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  auto check_cotangent = [](const char* what, const VectorX<S>& g, Eigen::Index n) {
    if (g.size() != 0 && g.size() != n)
      throw ArgumentError(std::string("mixed_lcp_vjp: ") + what + " has " + std::to_string(g.size()) +
                          " entries, expected " + std::to_string(n) + " (or 0 for none)");
  };
  check_cotangent("grad_x", grad_x, nx);
  check_cotangent("grad_z", grad_z, ni);
  check_cotangent("grad_y", grad_y, ne);
  check_cotangent("grad_s", grad_s, ni);

  // K^T [lambda_x; lambda_s; lambda_y] = [g_x; g_z - D g_s; g_y]  (lambda of the complementarity rows
  // eliminated: lambda_c = (g_s - lambda_s) / z).
  ws.rhs.setZero();
  if (grad_x.size()) ws.rhs.head(nx) = grad_x;
  if (grad_z.size()) ws.rhs.segment(nx, ni) = grad_z;
  if (grad_s.size()) ws.rhs.segment(nx, ni) -= ws.s.cwiseQuotient(ws.z).cwiseProduct(grad_s);
  if (grad_y.size()) ws.rhs.tail(ne) = grad_y;
  factor_at_solution(p, ws);
  solve_factored(ws, ws.rhs, ws.sol, true);
  const auto lambda_x = ws.sol.head(nx);
  const auto lambda_s = ws.sol.segment(nx, ni);
  const auto lambda_y = ws.sol.tail(ne);

  grad.q -= lambda_x;
  grad.M.noalias() -= lambda_x * ws.x.transpose();
  grad.m += lambda_s;
  grad.b += lambda_y;
  grad.G.noalias() -= lambda_s * ws.x.transpose();
  grad.G.noalias() -= ws.z * lambda_x.transpose();
  grad.F.noalias() -= lambda_s * ws.z.transpose();
  grad.A.noalias() -= lambda_y * ws.x.transpose();
  grad.A.noalias() -= ws.y * lambda_x.transpose();
}

template struct MixedLcpTpl<double>;
template struct IpmWorkspaceTpl<double>;
template LcpIpmResult solve_mixed_lcp(const MixedLcpTpl<double>&, const LcpIpmSettings<double>&,
                                      IpmWorkspaceTpl<double>&);
template void mixed_lcp_kkt_solve(const MixedLcpTpl<double>&, IpmWorkspaceTpl<double>&, const VectorX<double>&,
                                  VectorX<double>&, bool);
template void mixed_lcp_vjp(const MixedLcpTpl<double>&, IpmWorkspaceTpl<double>&, const VectorX<double>&,
                            const VectorX<double>&, const VectorX<double>&, const VectorX<double>&,
                            MixedLcpTpl<double>&);

}  // namespace gradyn
