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
      minv(MatrixX<S>::Zero(nx, nx)),
      minv_BT(MatrixX<S>::Zero(nx, ni + ne)),
      schur_static(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur_pivots(Eigen::VectorXi::Zero(ni + ne)),
      rhs_x(VectorX<S>::Zero(nx)),
      rhs_w(VectorX<S>::Zero(ni + ne)),
      kept(Eigen::VectorXi::Zero(ni + ne)),
      elim(Eigen::VectorXi::Zero(ni)),
      elim_static(VectorX<S>::Zero(ni)),
      elim_pivot(VectorX<S>::Zero(ni)),
      elim_col_start(Eigen::VectorXi::Zero(ni + 1)),
      elim_col_index(Eigen::VectorXi::Zero(ni * (ni + ne))),
      elim_col_value(VectorX<S>::Zero(ni * (ni + ne))),
      elim_row_start(Eigen::VectorXi::Zero(ni + 1)),
      elim_row_index(Eigen::VectorXi::Zero(ni * (ni + ne))),
      elim_row_value(VectorX<S>::Zero(ni * (ni + ne))),
      rhs_kept(VectorX<S>::Zero(ni + ne)),
      f_row(Eigen::VectorXi::Zero(ni * ni)),
      f_col(Eigen::VectorXi::Zero(ni * ni)),
      f_value(VectorX<S>::Zero(ni * ni)) {}

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
  for (Eigen::Index k = 0; k < ws.f_nnz; ++k) ws.r_ineq[ws.f_row[k]] += ws.f_value[k] * ws.z[ws.f_col[k]];
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
// sizes. a holds an n x n column-major matrix (leading dimension n). A = P^T L U with L unit lower
// and U upper stored in a; pivots[k] is the row swapped with k at step k. A zero pivot is left as is
// (the solves then give inf / NaN, like PartialPivLU).
template <class S>
void lu_in_place(S* a, Eigen::Index n, int* pivots) {
  using std::abs;
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
void lu_solve_in_place(const S* a, Eigen::Index n, const int* pivots, S* x) {
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
void lu_solve_transposed_in_place(const S* a, Eigen::Index n, const int* pivots, S* x) {
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

// F's nonzeros, for the residuals' F z.
template <class S>
void collect_f_nonzeros(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  ws.f_nnz = 0;
  for (Eigen::Index c = 0; c < ws.n_ineq; ++c)
    for (Eigen::Index r = 0; r < ws.n_ineq; ++r)
      if (p.F(r, c) != S(0)) {
        ws.f_row[ws.f_nnz] = static_cast<int>(r);
        ws.f_col[ws.f_nnz] = static_cast<int>(c);
        ws.f_value[ws.f_nnz] = p.F(r, c);
        ++ws.f_nnz;
      }
}

// The rows the iterations may eliminate from the Schur complement S = B M^-1 B^T - C + D: inequality
// rows e with G's row e zero and F(e, e) <= 0, provided F is diagonal among them. Then S(e, .) =
// -F(e, .) + D_e on the diagonal, S(., e) = -F(., e) + D_e, and S restricted to them is the diagonal
// D_e - F(e, e) > 0, so each leaves the LU by one division and a few sparse updates (the friction
// cone's gamma rows: S(gamma, gamma) = D_gamma). Records the candidates and their couplings (w row
// indices); factor_with eliminates those whose pivot is large enough at the current iterate.
template <class S>
void choose_eliminated_rows(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index ni = ws.n_ineq;
  ws.n_elim = 0;
  for (Eigen::Index r = 0; r < ni; ++r) {
    if (p.F(r, r) > S(0)) continue;
    bool zero_row = true;
    for (Eigen::Index c = 0; zero_row && c < ws.n_x; ++c) zero_row = p.G(r, c) == S(0);
    if (zero_row) ws.elim[ws.n_elim++] = static_cast<int>(r);
  }
  for (Eigen::Index a = 0; a < ws.n_elim; ++a)  // diagonal among themselves, or no elimination
    for (Eigen::Index b = 0; b < ws.n_elim; ++b)
      if (a != b && p.F(ws.elim[a], ws.elim[b]) != S(0)) ws.n_elim = 0;
  int n_col = 0, n_row = 0;
  for (Eigen::Index a = 0; a < ws.n_elim; ++a) {
    const int e = ws.elim[a];
    ws.elim_static[a] = -p.F(e, e);
    ws.elim_col_start[a] = n_col;
    ws.elim_row_start[a] = n_row;
    for (Eigen::Index i = 0; i < ni; ++i) {  // S(y, e) = A M^-1 G_e^T = 0: only inequality rows couple
      if (i == e) continue;
      if (p.F(i, e) != S(0)) ws.elim_col_index[n_col] = static_cast<int>(i), ws.elim_col_value[n_col++] = -p.F(i, e);
      if (p.F(e, i) != S(0)) ws.elim_row_index[n_row] = static_cast<int>(i), ws.elim_row_value[n_row++] = -p.F(e, i);
    }
  }
  ws.elim_col_start[ws.n_elim] = n_col;
  ws.elim_row_start[ws.n_elim] = n_row;
}

// The parts of K that stay fixed over the iterations: the Schur path's LLT of M, M^-1, M^-1 B^T,
// B M^-1 B^T - [F 0; 0 0] and the eliminated rows, or the full path's constant blocks of K. Picks
// the path.
template <class S>
void prepare_kkt(const MixedLcpTpl<S>& p, bool allow_schur, IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  collect_f_nonzeros(p, ws);
  ws.use_schur = false;
  ws.n_elim = 0;
  if (allow_schur && exactly_symmetric(p.M)) {
    ws.mass_llt.compute(p.M);
    ws.use_schur = ws.mass_llt.info() == Eigen::Success;
  }
  if (ws.use_schur) {
    ws.minv.setIdentity();
    ws.mass_llt.solveInPlace(ws.minv);
    ws.minv_BT.leftCols(ni).noalias() = ws.minv * p.G.transpose();
    ws.minv_BT.rightCols(ne).noalias() = ws.minv * p.A.transpose();
    ws.schur_static.topRows(ni).noalias() = p.G * ws.minv_BT;
    ws.schur_static.bottomRows(ne).noalias() = p.A * ws.minv_BT;
    ws.schur_static.topLeftCorner(ni, ni) -= p.F;
    choose_eliminated_rows(p, ws);
    return;
  }
  ws.K.setZero();
  ws.K.topLeftCorner(nx, nx) = p.M;
  ws.K.block(0, nx, nx, ni) = p.G.transpose();
  ws.K.block(0, nx + ni, nx, ne) = p.A.transpose();
  ws.K.block(nx, 0, ni, nx) = p.G;
  ws.K.block(nx + ni, 0, ne, nx) = p.A;
}

// Factors K with D = diag(d_scale) (the s / z ratios). reduce: the Schur path eliminates the rows
// choose_eliminated_rows picked first (the iterations); otherwise (the backward pass's factorisation
// at the solution, where a tiny D_e would make that elimination lose accuracy) the whole Schur
// complement is LU-factored with pivoting.
template <class S>
void factor_with(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const VectorX<S>& d_scale, bool reduce) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq;
  if (ws.use_schur) {
    ws.schur_reduced = reduce && ws.n_elim > 0;
    if (!ws.schur_reduced) {
      ws.schur = ws.schur_static;
      ws.schur.topLeftCorner(ni, ni).diagonal() += d_scale;
      lu_in_place(ws.schur.data(), ws.schur.rows(), ws.schur_pivots.data());
      return;
    }
    // Eliminate a candidate only where its pivot is at least a tenth of its couplings (threshold
    // pivoting: the updates grow entries by at most 10x); a sliding contact's gamma, whose D tends
    // to 0, stays in the pivoted LU. elim_pivot = 0 marks a candidate kept this time.
    const Eigen::Index nw = ws.n_ineq + ws.n_eq;
    Eigen::VectorXi& position = ws.schur_pivots;  // w row -> kept index (-1: eliminated), until the LU
    position.setZero();
    for (Eigen::Index e = 0; e < ws.n_elim; ++e) {
      const S pivot = d_scale[ws.elim[e]] + ws.elim_static[e];
      S coupling(0);
      for (int c = ws.elim_col_start[e]; c < ws.elim_col_start[e + 1]; ++c)
        coupling = std::max(coupling, std::abs(ws.elim_col_value[c]));
      for (int r = ws.elim_row_start[e]; r < ws.elim_row_start[e + 1]; ++r)
        coupling = std::max(coupling, std::abs(ws.elim_row_value[r]));
      const bool eliminate = pivot >= S(0.1) * coupling && pivot > S(0);
      ws.elim_pivot[e] = eliminate ? pivot : S(0);
      if (eliminate) position[ws.elim[e]] = -1;
    }
    ws.n_kept = 0;
    for (Eigen::Index r = 0; r < nw; ++r)
      if (position[r] == 0) position[r] = static_cast<int>(ws.n_kept), ws.kept[ws.n_kept++] = static_cast<int>(r);
      else position[r] = -1;
    for (Eigen::Index k = 0; k < ws.n_kept; ++k) position[ws.kept[k]] = static_cast<int>(k);
    const Eigen::Index nr = ws.n_kept;
    S* a = ws.schur.data();  // the reduced matrix, compact n_r x n_r (column-major)
    for (Eigen::Index c = 0; c < nr; ++c) {
      const S* column = ws.schur_static.data() + ws.kept[c] * nw;
      for (Eigen::Index r = 0; r < nr; ++r) a[r + c * nr] = column[ws.kept[r]];
    }
    for (Eigen::Index k = 0; k < nr; ++k)
      if (ws.kept[k] < ni) a[k + k * nr] += d_scale[ws.kept[k]];
    for (Eigen::Index e = 0; e < ws.n_elim; ++e) {  // S_kept -= S(:, e) S(e, :) / S(e, e)
      const S pivot = ws.elim_pivot[e];
      if (pivot == S(0)) continue;
      for (int c = ws.elim_col_start[e]; c < ws.elim_col_start[e + 1]; ++c) {
        const S factor = ws.elim_col_value[c] / pivot;
        const int i = position[ws.elim_col_index[c]];
        for (int r = ws.elim_row_start[e]; r < ws.elim_row_start[e + 1]; ++r)
          a[i + position[ws.elim_row_index[r]] * nr] -= factor * ws.elim_row_value[r];
      }
    }
    lu_in_place(a, nr, ws.schur_pivots.data());
    return;
  }
  ws.K.block(nx, nx, ni, ni) = p.F;
  ws.K.block(nx, nx, ni, ni).diagonal() -= d_scale;
  ws.lu.compute(ws.K);
}

// w = S^-1 w (transposed: S^-T w) with the Schur complement's current factorisation.
template <class S>
void solve_schur(IpmWorkspaceTpl<S>& ws, VectorX<S>& w, bool transposed) {
  if (!ws.schur_reduced) {
    if (transposed)
      lu_solve_transposed_in_place(ws.schur.data(), ws.schur.rows(), ws.schur_pivots.data(), w.data());
    else
      lu_solve_in_place(ws.schur.data(), ws.schur.rows(), ws.schur_pivots.data(), w.data());
    return;
  }
  // S = [S_kk S_ke; S_ek S_ee] with S_ee diagonal: the kept rows solve the reduced system
  // (S_kk - S_ke S_ee^-1 S_ek) w_k = r_k - S_ke S_ee^-1 r_e, then w_e = S_ee^-1 (r_e - S_ek w_k);
  // transposed, S_ke and S_ek trade places. (The couplings of an eliminated row are kept rows.)
  const Eigen::VectorXi& in_start = transposed ? ws.elim_row_start : ws.elim_col_start;
  const Eigen::VectorXi& in_index = transposed ? ws.elim_row_index : ws.elim_col_index;
  const VectorX<S>& in_value = transposed ? ws.elim_row_value : ws.elim_col_value;
  const Eigen::VectorXi& out_start = transposed ? ws.elim_col_start : ws.elim_row_start;
  const Eigen::VectorXi& out_index = transposed ? ws.elim_col_index : ws.elim_row_index;
  const VectorX<S>& out_value = transposed ? ws.elim_col_value : ws.elim_row_value;
  for (Eigen::Index e = 0; e < ws.n_elim; ++e) {
    if (ws.elim_pivot[e] == S(0)) continue;  // kept this time
    const S t = w[ws.elim[e]] / ws.elim_pivot[e];
    for (int c = in_start[e]; c < in_start[e + 1]; ++c) w[in_index[c]] -= in_value[c] * t;
  }
  const Eigen::Index nr = ws.n_kept;
  S* y = ws.rhs_kept.data();
  for (Eigen::Index k = 0; k < nr; ++k) y[k] = w[ws.kept[k]];
  if (transposed)
    lu_solve_transposed_in_place(ws.schur.data(), nr, ws.schur_pivots.data(), y);
  else
    lu_solve_in_place(ws.schur.data(), nr, ws.schur_pivots.data(), y);
  for (Eigen::Index k = 0; k < nr; ++k) w[ws.kept[k]] = y[k];
  for (Eigen::Index e = 0; e < ws.n_elim; ++e) {
    if (ws.elim_pivot[e] == S(0)) continue;
    S sum = w[ws.elim[e]];
    for (int c = out_start[e]; c < out_start[e + 1]; ++c) sum -= out_value[c] * w[out_index[c]];
    w[ws.elim[e]] = sum / ws.elim_pivot[e];
  }
}

// sol = K^-1 rhs (transposed: K^-T rhs) with the current factorisation; sol may be rhs.
// dual_rows_zero: rhs's first n_x entries are zero (the Schur path then skips M^-1 r_x).
template <class S>
void solve_factored(IpmWorkspaceTpl<S>& ws, const VectorX<S>& rhs, VectorX<S>& sol, bool transposed,
                    bool dual_rows_zero = false) {
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
  if (dual_rows_zero) {
    ws.rhs_w = -rhs.tail(nw);
    solve_schur(ws, ws.rhs_w, transposed);
    sol.tail(nw) = ws.rhs_w;
    sol.head(nx).noalias() = -(ws.minv_BT * ws.rhs_w);
    return;
  }
  ws.rhs_w.noalias() = ws.minv_BT.transpose() * rhs.head(nx);  // B M^-1 r_x
  ws.rhs_w -= rhs.tail(nw);
  ws.rhs_x.noalias() = ws.minv * rhs.head(nx);
  solve_schur(ws, ws.rhs_w, transposed);
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

// The Newton direction for complementarity residual comp, given (dx, dz, dy) of the same system
// with comp - delta: K is linear, so only [0; delta / z; 0] is solved for and added (the Schur
// path's solve then needs no M^-1 r_x).
template <class S>
void corrected_direction(IpmWorkspaceTpl<S>& ws, const VectorX<S>& comp, const VectorX<S>& delta) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  ws.rhs.head(nx).setZero();
  ws.rhs.segment(nx, ni) = delta.cwiseQuotient(ws.z);
  ws.rhs.tail(ne).setZero();
  solve_factored(ws, ws.rhs, ws.sol, false, true);
  ws.dx += ws.sol.head(nx);
  ws.dz += ws.sol.segment(nx, ni);
  ws.dy += ws.sol.tail(ne);
  ws.ds = -(comp + ws.s.cwiseProduct(ws.dz)).cwiseQuotient(ws.z);
}

// Factors K at the point the last solve returned (once; later calls reuse it).
template <class S>
void factor_at_solution(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  if (ws.factored_at_solution) return;
  ws.ds_aff = ws.s.cwiseQuotient(ws.z);
  factor_with(p, ws, ws.ds_aff, false);
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
  factor_with(p, ws, ws.s, true);
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
    ws.x.noalias() = ws.minv * ws.rhs_x;
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
    factor_with(p, ws, ws.ds_aff, true);
    const S mu = ws.s.dot(ws.z) / n_comp;

    // Predictor: straight to the target s.z = kappa.
    newton_direction(ws, ws.r_comp);
    const S alpha_aff = std::min(max_step(ws.s, ws.ds), max_step(ws.z, ws.dz));
    const S mu_aff = (ws.s + alpha_aff * ws.ds).dot(ws.z + alpha_aff * ws.dz) / n_comp;
    const S excess = mu - kappa;
    S sigma(0);
    if (excess > S(0)) {
      const S ratio = std::clamp((mu_aff - kappa) / excess, S(0), S(1));
      sigma = ratio * ratio * ratio;
    }
    const S target = kappa + sigma * std::max(excess, S(0));

    // Corrector: centre (sigma) and correct the second-order term ds_aff . dz_aff: the predictor's
    // direction plus the response to the change of the complementarity residual,
    // delta = ds_aff . dz_aff + kappa - target (held in dz_aff, as scratch).
    ws.ds_aff = ws.ds;
    ws.dz_aff = ws.ds_aff.cwiseProduct(ws.dz);
    ws.dz_aff.array() += kappa - target;
    ws.r_comp += ws.dz_aff;
    corrected_direction(ws, ws.r_comp, ws.dz_aff);
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
