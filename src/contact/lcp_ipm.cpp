#include "gradyn/contact/lcp_ipm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "gradyn/contact/detail/small_lu.hpp"
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
      mass_ltl(MatrixX<S>::Zero(nx, nx)),
      mass_scratch(Eigen::VectorXi::Zero(nx)),
      block_start(Eigen::VectorXi::Zero(ni + 1)),
      block_row(Eigen::VectorXi::Zero(ni)),
      block_entry(Eigen::VectorXi::Zero(ni + 1)),
      block_of_row(Eigen::VectorXi::Zero(ni)),
      block_basis(VectorX<S>::Zero(ni * ni)),
      block_static(VectorX<S>::Zero(ni * ni)),
      block_static_plain(VectorX<S>::Zero(ni * ni)),
      block_h(VectorX<S>::Zero(ni * ni)),
      block_rotated(Eigen::VectorXi::Zero(ni)),
      basis_start(Eigen::VectorXi::Zero(ni + 1)),
      basis_col(Eigen::VectorXi::Zero(ni * ni)),
      basis_value(VectorX<S>::Zero(ni * ni)),
      core_index(Eigen::VectorXi::Zero(ni)),
      plain_core(Eigen::VectorXi::Zero(ni)),
      lu_combo_start(Eigen::VectorXi::Zero(ni + ne + 1)),
      lu_combo_index(Eigen::VectorXi::Zero(ni * (ni + ne) + ne)),
      lu_combo_weight(VectorX<S>::Zero(ni * (ni + ne) + ne)),
      elim_step(Eigen::VectorXi::Zero(ni)),
      elim_order(Eigen::VectorXi::Zero(ni)),
      block_n_elim(Eigen::VectorXi::Zero(ni)),
      lu_index(Eigen::VectorXi::Zero(ni)),
      core_B(MatrixX<S>::Zero(ni + ne, nx)),
      core_X(MatrixX<S>::Zero(nx, ni + ne)),
      core_X_first(Eigen::VectorXi::Zero(ni + ne)),
      core_W(MatrixX<S>::Zero(ni + ne, ni + ne)),
      core_c(VectorX<S>::Zero(ni + ne)),
      mass_q(VectorX<S>::Zero(nx)),
      core_w(VectorX<S>::Zero(ni + ne)),
      core_g(VectorX<S>::Zero(ni + ne)),
      basis_w(VectorX<S>::Zero(ni + ne)),
      minv(MatrixX<S>::Zero(nx, nx)),
      minv_BT(MatrixX<S>::Zero(nx, ni + ne)),
      schur_static(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur(MatrixX<S>::Zero(ni + ne, ni + ne)),
      schur_pivots(Eigen::VectorXi::Zero(ni + ne)),
      rhs_x(VectorX<S>::Zero(nx)),
      rhs_w(VectorX<S>::Zero(ni + ne)),
      rhs_kept(VectorX<S>::Zero(ni + ne)),
      f_row(Eigen::VectorXi::Zero(ni * ni)),
      f_col(Eigen::VectorXi::Zero(ni * ni)),
      f_value(VectorX<S>::Zero(ni * ni)),
      structure_F(MatrixX<S>::Zero(ni, ni)) {}

using detail::lu_in_place;
using detail::lu_solve_in_place;
using detail::lu_solve_transposed_in_place;

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
  if (ws.row_basis.size() != 0) check_shape("the workspace's row_basis", ws.row_basis.rows(), ws.row_basis.cols(), ni, ni);
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
S inf_norm(const VectorX<S>& v) {
  return v.size() == 0 ? S(0) : v.template lpNorm<Eigen::Infinity>();
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

// Rows of T^T G below this fraction of their block's largest G entry count as zero (local): an
// orthogonal T built from cosines leaves rounding there (cos(pi / 2) = 6e-17), not structure.
constexpr double kLocalRowTolerance = 1e-12;

// A local row leaves the core LU only where its pivot is at least this fraction of its remaining
// couplings (threshold pivoting: the updates grow entries by at most 1 / kEliminationThreshold).
constexpr double kEliminationThreshold = 0.1;

// A block takes its rotated basis in an iteration only where the D of the rows T_b mixes lie within
// this factor of each other: mixing rows costs ~ spread x rounding of the smallest D, which matters
// where W is singular (more contact rows than unknowns) and the small D decide the null space.
constexpr double kRotationSpread = 1e4;

// The steps keep at least this fraction of the distance to the boundary s, z > 0 (the bound on the
// adaptive step fraction of iterate: the reduction of a blocking s_i or z_i per iteration is at most 1e8).
constexpr double kMinBoundaryGap = 1e-8;


// ---- M's factorisation, M = F F^T: F the dense Cholesky factor L, or L^T of the tree's M = L^T L ----

// M keeps to the tree of mass_parent (parents first): M(i, j) = 0 unless i and j lie on one path to
// a root. scratch: n ints.
template <class S>
bool keeps_to_mass_tree(const MatrixX<S>& M, const Eigen::VectorXi& parent, int* scratch) {
  const Eigen::Index n = M.rows();
  if (parent.size() != n) return false;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (parent[j] >= j || parent[j] < -1) return false;
    scratch[j] = static_cast<int>(j);  // scratch[i] == j: i is j's ancestor (or j)
    for (int i = parent[j]; i >= 0; i = parent[i]) scratch[i] = static_cast<int>(j);
    for (Eigen::Index i = 0; i < j; ++i)
      if (scratch[i] != j && M(i, j) != S(0)) return false;
  }
  return true;
}

// Featherstone's LTL (RBDA 6.5): M = L^T L, L lower with the tree's pattern (no fill-in), eliminated
// from the last unknown up; a row's updates reach only its ancestors. False if M is not positive definite.
template <class S>
bool ltl_factor(const MatrixX<S>& M, const Eigen::VectorXi& parent, MatrixX<S>& L) {
  using std::sqrt;
  const Eigen::Index n = M.rows();
  L.template triangularView<Eigen::Lower>() = M.template triangularView<Eigen::Lower>();
  for (Eigen::Index k = n - 1; k >= 0; --k) {
    if (!(L(k, k) > S(0))) return false;
    const S d = sqrt(L(k, k));
    L(k, k) = d;
    for (int i = parent[k]; i >= 0; i = parent[i]) L(k, i) /= d;
    for (int i = parent[k]; i >= 0; i = parent[i]) {
      const S l_ki = L(k, i);
      for (int j = i; j >= 0; j = parent[j]) L(i, j) -= l_ki * L(k, j);
    }
  }
  return true;
}

// Factors M (symmetric): on the tree where the caller gave one and M keeps to it, else dense.
template <class S>
bool factor_mass(const MatrixX<S>& M, IpmWorkspaceTpl<S>& ws) {
  ws.mass_tree = keeps_to_mass_tree(M, ws.mass_parent, ws.mass_scratch.data());
  if (ws.mass_tree) return ltl_factor(M, ws.mass_parent, ws.mass_ltl);
  ws.mass_llt.compute(M);
  return ws.mass_llt.info() == Eigen::Success;
}

// x <- F^-1 x (tree: L^-T x, from the leaves up; a zero entry passes nothing to its ancestors).
template <class S>
void mass_half_solve(const IpmWorkspaceTpl<S>& ws, S* x) {
  const Eigen::Index n = ws.n_x;
  if (!ws.mass_tree) {
    Eigen::Map<VectorX<S>> v(x, n);
    ws.mass_llt.matrixL().solveInPlace(v);
    return;
  }
  const MatrixX<S>& L = ws.mass_ltl;
  for (Eigen::Index k = n - 1; k >= 0; --k) {
    if (x[k] == S(0)) continue;
    const S xk = x[k] /= L(k, k);
    for (int i = ws.mass_parent[k]; i >= 0; i = ws.mass_parent[i]) x[i] -= L(k, i) * xk;
  }
}

// x <- F^-T x (tree: L^-1 x, from the roots down).
template <class S>
void mass_half_solve_transposed(const IpmWorkspaceTpl<S>& ws, VectorX<S>& x) {
  const Eigen::Index n = ws.n_x;
  if (!ws.mass_tree) {
    ws.mass_llt.matrixU().solveInPlace(x);
    return;
  }
  const MatrixX<S>& L = ws.mass_ltl;
  for (Eigen::Index k = 0; k < n; ++k) {
    S sum = x[k];
    for (int i = ws.mass_parent[k]; i >= 0; i = ws.mass_parent[i]) sum -= L(k, i) * x[i];
    x[k] = sum / L(k, k);
  }
}

// ---- The Schur path: row blocks, the core, and the factorisation of T^T S T ----------------------

int find_root(Eigen::VectorXi& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// Blocks: connected components of the inequality rows under F's and T's couplings; positions
// grouped by block (ascending rows within one, blocks ordered by their first row).
template <class S>
void find_row_blocks(IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index ni = ws.n_ineq;
  Eigen::VectorXi& parent = ws.elim_order;  // scratch: a union-find forest whose roots are smallest rows
  for (Eigen::Index r = 0; r < ni; ++r) parent[r] = static_cast<int>(r);
  auto join = [&](int a, int b) {
    a = find_root(parent, a), b = find_root(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  for (Eigen::Index k = 0; k < ws.f_nnz; ++k) join(ws.f_row[k], ws.f_col[k]);
  if (ws.row_basis.size() != 0)
    for (Eigen::Index c = 0; c < ni; ++c)
      for (Eigen::Index r = 0; r < ni; ++r)
        if (r != c && ws.row_basis(r, c) != S(0)) join(static_cast<int>(r), static_cast<int>(c));
  Eigen::VectorXi& size = ws.block_n_elim;  // scratch: rows per block
  ws.n_blocks = 0;
  for (Eigen::Index r = 0; r < ni; ++r) {
    const int root = find_root(parent, static_cast<int>(r));
    if (root == r) size[ws.n_blocks] = 0, ws.block_of_row[r] = static_cast<int>(ws.n_blocks++);
    else ws.block_of_row[r] = ws.block_of_row[root];  // root < r: numbered already
    ++size[ws.block_of_row[r]];
  }
  ws.block_start[0] = 0;
  ws.block_entry[0] = 0;
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) {
    ws.block_start[b + 1] = ws.block_start[b] + size[b];
    ws.block_entry[b + 1] = ws.block_entry[b] + size[b] * size[b];
    size[b] = ws.block_start[b];  // now: the next free position of block b
  }
  for (Eigen::Index r = 0; r < ni; ++r) ws.block_row[size[ws.block_of_row[r]]++] = static_cast<int>(r);
}

// The parts of the Schur path fixed over a solve: blocks, T_b, T_b^T (-F_b) T_b, the core rows
// B_c of [T^T G; A], L^-1 B_c^T, W = B_c M^-1 B_c^T, B_c M^-1 q and L^-1 q (M = L L^T factored).
// The blocks' setup (find_row_blocks, T_b and its nonzeros by row, -F_b and T_b^T (-F_b) T_b) depends
// on F and the row basis only: kept from the last solve where both are unchanged (same_structure).
template <class S>
void prepare_blocks(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, bool same_structure) {
  using std::abs;
  const Eigen::Index ne = ws.n_eq;
  if (!same_structure) find_row_blocks(ws);
  ws.n_core_ineq = 0;
  ws.basis_start[0] = 0;
  for (Eigen::Index b = 0; !same_structure && b < ws.n_blocks; ++b) {
    const int first = ws.block_start[b], nb = ws.block_start[b + 1] - first;
    S* T = ws.block_basis.data() + ws.block_entry[b];
    S* H = ws.block_static.data() + ws.block_entry[b];
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < nb; ++i)
        T[i + j * nb] = ws.row_basis.size() != 0 ? ws.row_basis(ws.block_row[first + i], ws.block_row[first + j])
                                                 : S(i == j ? 1 : 0);
    for (int i = 0; i < nb; ++i) {  // T_b's nonzeros by row
      int n = ws.basis_start[first + i];
      for (int j = 0; j < nb; ++j)
        if (T[i + j * nb] != S(0)) ws.basis_col[n] = j, ws.basis_value[n++] = T[i + j * nb];
      ws.basis_start[first + i + 1] = n;
    }
    S* H_plain = ws.block_static_plain.data() + ws.block_entry[b];
    for (int j = 0; j < nb; ++j)
      for (int i = 0; i < nb; ++i) H_plain[i + j * nb] = -p.F(ws.block_row[first + i], ws.block_row[first + j]);
    // H = T^T (-F_b) T: (-F_b) T into H's storage first, then T^T times it column by column.
    S* column = ws.block_h.data() + ws.block_entry[b];  // scratch: one column of (-F_b) T
    for (int j = 0; j < nb; ++j) {
      for (int l = 0; l < nb; ++l) column[l] = S(0);
      for (int k = 0; k < nb; ++k) {
        const S t_kj = T[k + j * nb];
        if (t_kj == S(0)) continue;
        for (int l = 0; l < nb; ++l) column[l] += H_plain[l + k * nb] * t_kj;
      }
      for (int i = 0; i < nb; ++i) {
        S sum(0);
        for (int l = 0; l < nb; ++l) sum += T[l + i * nb] * column[l];
        H[i + j * nb] = sum;
      }
    }
  }
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) {
    const int first = ws.block_start[b], nb = ws.block_start[b + 1] - first;
    // T^T G_b (into core_X's storage, as scratch: nb x n_x), column by column; its rows that are not
    // zero are core rows (rows of B_c).
    const Eigen::Index nx = ws.n_x;
    S* Gt = ws.core_X.data();
    S largest(0);
    for (Eigen::Index c = 0; c < nx; ++c) {  // column c of T^T G_b = sum over T's rows i of T(i, :)^T G(i, c)
      S* column = Gt + c * nb;
      for (int j = 0; j < nb; ++j) column[j] = S(0);
      for (int i = 0; i < nb; ++i) {
        const S g_ic = p.G(ws.block_row[first + i], c);
        largest = std::max(largest, abs(g_ic));
        if (g_ic == S(0)) continue;
        for (int k = ws.basis_start[first + i]; k < ws.basis_start[first + i + 1]; ++k)
          column[ws.basis_col[k]] += ws.basis_value[k] * g_ic;
      }
    }
    const S cutoff = S(kLocalRowTolerance) * largest;
    for (int i = 0; i < nb; ++i) {
      S row_largest(0);
      for (Eigen::Index c = 0; c < nx; ++c) row_largest = std::max(row_largest, abs(p.G(ws.block_row[first + i], c)));
      ws.plain_core[first + i] = largest > S(0) && row_largest > cutoff;
    }
    for (int j = 0; j < nb; ++j) {
      S row_largest(0);
      for (Eigen::Index c = 0; c < nx; ++c) row_largest = std::max(row_largest, abs(Gt[j + c * nb]));
      const bool core = largest > S(0) && row_largest > cutoff;
      ws.core_index[first + j] = core ? static_cast<int>(ws.n_core_ineq) : -1;
      if (core)
        for (Eigen::Index c = 0; c < nx; ++c) ws.core_B(ws.n_core_ineq, c) = Gt[j + c * nb];
      ws.n_core_ineq += core;
    }
  }
  ws.n_core = ws.n_core_ineq + ne;
  const Eigen::Index nc = ws.n_core;
  ws.core_B.middleRows(ws.n_core_ineq, ne) = p.A;
  auto X = ws.core_X.leftCols(nc);
  X = ws.core_B.topRows(nc).transpose();
  ws.mass_q = p.q;
  mass_half_solve(ws, ws.mass_q.data());
  if (!ws.mass_tree) {
    ws.mass_llt.matrixL().solveInPlace(X);
    ws.core_W.topLeftCorner(nc, nc).noalias() = X.transpose() * X;
    ws.core_c.head(nc).noalias() = X.transpose() * ws.mass_q;
    return;
  }
  // On the tree a column of X is zero off the paths of its row's unknowns: W's entries (its upper
  // triangle, mirrored) run over the rows past both columns' first nonzero only.
  const Eigen::Index nx = ws.n_x;
  for (Eigen::Index c = 0; c < nc; ++c) {
    S* x = &ws.core_X(0, c);
    mass_half_solve(ws, x);
    Eigen::Index first = 0;
    while (first < nx && x[first] == S(0)) ++first;
    ws.core_X_first[c] = static_cast<int>(first);
  }
  for (Eigen::Index c = 0; c < nc; ++c) {
    const S* xc = &ws.core_X(0, c);
    for (Eigen::Index r = 0; r <= c; ++r) {
      const S* xr = &ws.core_X(0, r);
      S sum(0);
      for (Eigen::Index k = std::max(ws.core_X_first[c], ws.core_X_first[r]); k < nx; ++k) sum += xr[k] * xc[k];
      ws.core_W(r, c) = ws.core_W(c, r) = sum;
    }
    S sum(0);
    for (Eigen::Index k = ws.core_X_first[c]; k < nx; ++k) sum += xc[k] * ws.mass_q[k];
    ws.core_c[c] = sum;
  }
}

// f.template operator()<NB>() with NB = nb for the common block sizes (a limit row; a contact with 3
// to 6 friction directions), else NB = 0 (the size at run time): fixed-size loops for the blocks'
// small dense work.
template <class F>
void with_block_size(int nb, F&& f) {
  switch (nb) {
    case 1: f.template operator()<1>(); break;
    case 5: f.template operator()<5>(); break;
    case 6: f.template operator()<6>(); break;
    case 7: f.template operator()<7>(); break;
    case 8: f.template operator()<8>(); break;
    default: f.template operator()<0>(); break;
  }
}

// One block's change of basis, its size NB fixed (0: nb at run time): o = T_b^T in (in's values at
// the block's rows, o by position), and out = T_b t (t by position, out at the block's rows).
template <int NB, class S, class In>
void block_to_basis(const S* T, int nb, const In& in, const int* rows, S* o) {
  const int n = NB > 0 ? NB : nb;
  for (int j = 0; j < n; ++j) o[j] = S(0);
  for (int i = 0; i < n; ++i) {
    const S v = in[rows[i]];
    for (int j = 0; j < n; ++j) o[j] += T[i + j * n] * v;
  }
}

template <int NB, class S, class Out>
void block_from_basis(const S* T, int nb, const S* t, const int* rows, Out&& out) {
  const int n = NB > 0 ? NB : nb;
  for (int i = 0; i < n; ++i) {
    S sum(0);
    for (int j = 0; j < n; ++j) sum += T[i + j * n] * t[j];
    out[rows[i]] = sum;
  }
}

// out = T^T in (from_block_basis: out = T in) on the inequality rows: `in` by row, `out` by position.
template <class S>
void to_block_basis(const IpmWorkspaceTpl<S>& ws, const VectorX<S>& in, VectorX<S>& out) {
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) with_block_size(ws.block_start[b + 1] - ws.block_start[b], [&]<int NB>() {
    const int first = ws.block_start[b];
    block_to_basis<NB>(ws.block_basis.data() + ws.block_entry[b], ws.block_start[b + 1] - first, in,
                       ws.block_row.data() + first, out.data() + first);
  });
}

template <class S, class Out>
void from_block_basis(const IpmWorkspaceTpl<S>& ws, const VectorX<S>& in, Out&& out) {
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) with_block_size(ws.block_start[b + 1] - ws.block_start[b], [&]<int NB>() {
    const int first = ws.block_start[b];
    block_from_basis<NB>(ws.block_basis.data() + ws.block_entry[b], ws.block_start[b + 1] - first,
                         in.data() + first, ws.block_row.data() + first, out);
  });
}

// The core multipliers w_c (the core rows of [T^T z; y]) and g = B_c x(w) = -B_c M^-1 q - W w_c.
template <class S>
void core_product(IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nc = ws.n_core;
  to_block_basis(ws, ws.z, ws.basis_w);
  for (Eigen::Index pos = 0; pos < ws.n_ineq; ++pos)
    if (ws.core_index[pos] >= 0) ws.core_w[ws.core_index[pos]] = ws.basis_w[pos];
  ws.core_w.segment(ws.n_core_ineq, ws.n_eq) = ws.y;
  ws.core_g.head(nc).noalias() = -ws.core_W.topLeftCorner(nc, nc) * ws.core_w.head(nc);
  ws.core_g.head(nc) -= ws.core_c.head(nc);
}

// x = x(w) = -M^-1 (q + B_c^T w_c) = -F^-T (F^-1 q + X w_c), with core_w current.
template <class S>
void recover_x(IpmWorkspaceTpl<S>& ws) {
  ws.x = ws.mass_q;
  ws.x.noalias() += ws.core_X.leftCols(ws.n_core) * ws.core_w.head(ws.n_core);
  mass_half_solve_transposed(ws, ws.x);
  ws.x = -ws.x;
}

// Eliminates the local rows (is_core false) of one block's dense n x n matrix h in place, the best
// candidate first, while one's pivot is at least kEliminationThreshold of its couplings to the rows
// left: h then holds the eliminated rows' U rows and L columns and the reduced matrix of the rest.
// step[i] is set to the step that eliminated row i (rows left keep the caller's value); order gets
// the eliminated rows in order; left and row are scratch (nb ints each). Returns how many.
template <int NB, class S, class IsCore>
int eliminate_local_rows(S* h, int nb_runtime, const IsCore& is_core, int* step, int* order, int* left, int* row) {
  using std::abs;
  const int nb = NB > 0 ? NB : nb_runtime;  // a compile-time size where the caller has one
  int n_left = nb;
  for (int i = 0; i < nb; ++i) left[i] = i;
  int n_elim = 0;
  for (;;) {
    int best = -1;
    S best_ratio(0);
    for (int a = 0; a < n_left; ++a) {
      const int e = left[a];
      if (is_core(e)) continue;
      const S pivot = abs(h[e + e * nb]);
      if (pivot == S(0)) continue;
      S coupling(0);
      for (int c = 0; c < n_left; ++c) {
        const int i = left[c];
        if (i == e) continue;
        coupling = std::max(coupling, std::max(abs(h[i + e * nb]), abs(h[e + i * nb])));
      }
      if (pivot < S(kEliminationThreshold) * coupling) continue;
      const S ratio = coupling == S(0) ? std::numeric_limits<S>::infinity() : pivot / coupling;
      if (best < 0 || ratio > best_ratio) best = a, best_ratio = ratio;
    }
    if (best < 0) return n_elim;
    const int e = left[best];
    left[best] = left[--n_left];
    step[e] = n_elim;
    order[n_elim++] = e;
    const S inv = S(1) / h[e + e * nb];
    // The pivot row's nonzeros among the rows left: their offsets in h (a column's start; in `row`)
    // and values (in u: fixed-size blocks keep them in registers), then the update of the rows left.
    int n_row = 0;
    constexpr int kValues = NB > 0 ? NB : 1;
    S u[kValues];
    for (int c = 0; c < n_left; ++c) {
      const S value = h[e + left[c] * nb];
      if (value == S(0)) continue;
      if constexpr (NB > 0) u[n_row] = value;
      row[n_row++] = left[c] * nb;
    }
    for (int a = 0; a < n_left; ++a) {
      const int i = left[a];
      S& l = h[i + e * nb];
      if (l == S(0)) continue;
      l *= inv;
      S* h_i = h + i;
      if constexpr (NB > 0)
        for (int c = 0; c < n_row; ++c) h_i[row[c]] -= l * u[c];
      else
        for (int c = 0; c < n_row; ++c) h_i[row[c]] -= l * h[e + row[c]];
    }
  }
}

// The core LU's matrix (ws.schur, compact n_lu x n_lu): the W part of the rows left (combinations of
// core_W's rows, lu_combo_*) plus each block's reduced matrix among its rows left.
template <class S>
void assemble_core_matrix(IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index n = ws.n_lu;
  S* a = ws.schur.data();  // compact n x n, column-major
  bool single = true;      // every row one core row of weight 1 (all blocks rotated): a gather
  for (Eigen::Index r = 0; single && r < n; ++r)
    single = ws.lu_combo_start[r + 1] == ws.lu_combo_start[r] ||
             (ws.lu_combo_start[r + 1] == ws.lu_combo_start[r] + 1 && ws.lu_combo_weight[ws.lu_combo_start[r]] == S(1));
  if (single) {
    for (Eigen::Index c = 0; c < n * n; ++c) a[c] = S(0);
    for (Eigen::Index c = 0; c < n; ++c) {
      if (ws.lu_combo_start[c + 1] == ws.lu_combo_start[c]) continue;
      const S* w_col = &ws.core_W(0, ws.lu_combo_index[ws.lu_combo_start[c]]);
      for (Eigen::Index r = 0; r < n; ++r)
        if (ws.lu_combo_start[r + 1] > ws.lu_combo_start[r]) a[r + c * n] = w_col[ws.lu_combo_index[ws.lu_combo_start[r]]];
    }
  } else {
    for (Eigen::Index c = 0; c < n; ++c)
      for (Eigen::Index r = 0; r < n; ++r) {
        S sum(0);
        for (int kc = ws.lu_combo_start[c]; kc < ws.lu_combo_start[c + 1]; ++kc)
          for (int kr = ws.lu_combo_start[r]; kr < ws.lu_combo_start[r + 1]; ++kr)
            sum += ws.lu_combo_weight[kr] * ws.core_W(ws.lu_combo_index[kr], ws.lu_combo_index[kc]) * ws.lu_combo_weight[kc];
        a[r + c * n] = sum;
      }
  }
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) {
    const int first = ws.block_start[b], nb = ws.block_start[b + 1] - first;
    const S* h = ws.block_h.data() + ws.block_entry[b];
    for (int j = 0; j < nb; ++j) {
      const int c = ws.lu_index[first + j];
      if (c < 0) continue;
      for (int i = 0; i < nb; ++i) {
        const int r = ws.lu_index[first + i];
        if (r >= 0) a[r + c * n] += h[i + j * nb];
      }
    }
  }
}

// Factors T^T S T with D = diag(d_scale), per block in the basis chosen for this iteration (rotated:
// T_b^T (D_b - F_b) T_b; plain: D_b - F_b): its local rows eliminated (threshold pivoting, the best
// candidate first), then the core LU over the rows left, whose W part combines core_W's rows.
template <class S>
void factor_blocks(IpmWorkspaceTpl<S>& ws, const VectorX<S>& d_scale) {
  using std::abs;
  const int never = static_cast<int>(ws.n_ineq);
  const bool has_basis = ws.row_basis.size() != 0;
  ws.n_lu = 0;
  int n_combo = 0;
  ws.lu_combo_start[0] = 0;
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) with_block_size(ws.block_start[b + 1] - ws.block_start[b], [&]<int NB>() {
    const int first = ws.block_start[b], nb = NB > 0 ? NB : ws.block_start[b + 1] - first;
    const S* T = ws.block_basis.data() + ws.block_entry[b];
    // Rotate only where the D of the rows T_b mixes are of one magnitude (see kRotationSpread).
    S d_min = std::numeric_limits<S>::infinity(), d_max(0);
    for (int i = 0; has_basis && i < nb; ++i) {
      if (ws.basis_start[first + i + 1] - ws.basis_start[first + i] < 2) continue;  // T_b does not mix row i
      const S d = d_scale[ws.block_row[first + i]];
      d_min = std::min(d_min, d), d_max = std::max(d_max, d);
    }
    const bool rotated = has_basis && d_max <= S(kRotationSpread) * d_min;
    ws.block_rotated[b] = rotated;
    const int* core = rotated ? ws.core_index.data() + first : ws.plain_core.data() + first;  // >= 0 / 1: core
    auto is_core = [&](int i) { return rotated ? core[i] >= 0 : core[i] != 0; };
    S* h = ws.block_h.data() + ws.block_entry[b];
    if (rotated) {
      std::copy_n(ws.block_static.data() + ws.block_entry[b], nb * nb, h);
      for (int i = 0; i < nb; ++i) {  // h += T^T diag(d) T: d_i t_i t_i^T over T's rows t_i
        const S d = d_scale[ws.block_row[first + i]];
        for (int a = 0; a < nb; ++a) {
          const S t_a = T[i + a * nb];
          if (t_a == S(0)) continue;
          const S dt = d * t_a;
          S* h_col = h + a * nb;
          for (int c = 0; c < nb; ++c) h_col[c] += dt * T[i + c * nb];
        }
      }
    } else {
      std::copy_n(ws.block_static_plain.data() + ws.block_entry[b], nb * nb, h);
      for (int i = 0; i < nb; ++i) h[i + i * nb] += d_scale[ws.block_row[first + i]];
    }
    int* step = ws.elim_step.data() + first;
    for (int i = 0; i < nb; ++i) step[i] = never;
    // scratch: lu_index until the core LU's numbering below; lu_combo_index past the combinations so far
    ws.block_n_elim[b] = eliminate_local_rows<NB>(h, nb, is_core, step, ws.elim_order.data() + first,
                                              ws.lu_index.data() + first,
                                              ws.lu_combo_index.data() + ws.lu_combo_start[ws.n_lu]);
    // The rows left join the core LU; a core row's W part: rotated, its own row of core_W; plain, row
    // i of T_b times the block's rotated core rows (G_i = sum_j T(i, j) (T^T G)_j).
    for (int i = 0; i < nb; ++i) {
      if (step[i] != never) {
        ws.lu_index[first + i] = -1;
        continue;
      }
      ws.lu_index[first + i] = static_cast<int>(ws.n_lu++);
      if (is_core(i)) {
        if (rotated) {
          ws.lu_combo_index[n_combo] = core[i], ws.lu_combo_weight[n_combo++] = S(1);
        } else {
          for (int j = 0; j < nb; ++j)
            if (ws.core_index[first + j] >= 0 && T[i + j * nb] != S(0))
              ws.lu_combo_index[n_combo] = ws.core_index[first + j], ws.lu_combo_weight[n_combo++] = T[i + j * nb];
        }
      }
      ws.lu_combo_start[ws.n_lu] = n_combo;
    }
  });
  for (Eigen::Index e = 0; e < ws.n_eq; ++e) {  // A's rows, last
    ws.lu_combo_index[n_combo] = static_cast<int>(ws.n_core_ineq + e), ws.lu_combo_weight[n_combo++] = S(1);
    ws.lu_combo_start[++ws.n_lu] = n_combo;
  }
  assemble_core_matrix(ws);
  lu_in_place(ws.schur.data(), ws.n_lu, ws.schur_pivots.data());
}

// w = S^-1 w (original basis, w = [z rows; y rows]) with factor_blocks' factorisation.
template <class S>
void solve_blocks(IpmWorkspaceTpl<S>& ws, VectorX<S>& w) {
  VectorX<S>& t = ws.basis_w;  // by position, in each block's basis of this iteration
  S* y = ws.rhs_kept.data();
  const Eigen::Index eq_first = ws.n_lu - ws.n_eq;
  // t = T_b^T w_b, then L^-1 within the block
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) with_block_size(ws.block_start[b + 1] - ws.block_start[b], [&]<int NB>() {
    const int first = ws.block_start[b], nb = NB > 0 ? NB : ws.block_start[b + 1] - first;
    const S* h = ws.block_h.data() + ws.block_entry[b];
    const int* step = ws.elim_step.data() + first;
    const int* order = ws.elim_order.data() + first;
    S* tb = t.data() + first;
    if (ws.block_rotated[b]) {
      block_to_basis<NB>(ws.block_basis.data() + ws.block_entry[b], nb, w, ws.block_row.data() + first, tb);
    } else {
      for (int i = 0; i < nb; ++i) tb[i] = w[ws.block_row[first + i]];
    }
    for (int k = 0; k < ws.block_n_elim[b]; ++k) {
      const int e = order[k];
      const S te = tb[e];
      if (te == S(0)) continue;
      for (int i = 0; i < nb; ++i)
        if (step[i] > k) tb[i] -= h[i + e * nb] * te;
    }
    for (int i = 0; i < nb; ++i)
      if (ws.lu_index[first + i] >= 0) y[ws.lu_index[first + i]] = tb[i];
  });
  for (Eigen::Index e = 0; e < ws.n_eq; ++e) y[eq_first + e] = w[ws.n_ineq + e];
  lu_solve_in_place(ws.schur.data(), ws.n_lu, ws.schur_pivots.data(), y);
  for (Eigen::Index e = 0; e < ws.n_eq; ++e) w[ws.n_ineq + e] = y[eq_first + e];
  // U^-1 of the eliminated rows, then w_b = T_b t
  for (Eigen::Index b = 0; b < ws.n_blocks; ++b) with_block_size(ws.block_start[b + 1] - ws.block_start[b], [&]<int NB>() {
    const int first = ws.block_start[b], nb = NB > 0 ? NB : ws.block_start[b + 1] - first;
    const S* h = ws.block_h.data() + ws.block_entry[b];
    const int* step = ws.elim_step.data() + first;
    const int* order = ws.elim_order.data() + first;
    S* tb = t.data() + first;
    for (int i = 0; i < nb; ++i)
      if (ws.lu_index[first + i] >= 0) tb[i] = y[ws.lu_index[first + i]];
    for (int k = ws.block_n_elim[b] - 1; k >= 0; --k) {
      const int e = order[k];
      S sum = tb[e];
      for (int j = 0; j < nb; ++j)
        if (step[j] > k) sum -= h[e + j * nb] * tb[j];
      tb[e] = sum / h[e + e * nb];
    }
    if (ws.block_rotated[b]) {
      block_from_basis<NB>(ws.block_basis.data() + ws.block_entry[b], nb, tb, ws.block_row.data() + first, w);
    } else {
      for (int i = 0; i < nb; ++i) w[ws.block_row[first + i]] = tb[i];
    }
  });
}

// ---- Residuals, factorisations and Newton directions of either path -----------------------------

template <class S>
void compute_residuals(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const S& kappa) {
  if (ws.use_schur) {  // x = x(w): the dual rows hold exactly; G x = T [g_core; 0]
    core_product(ws);
    ws.r_dual.setZero();
    ws.basis_w.setZero();
    for (Eigen::Index pos = 0; pos < ws.n_ineq; ++pos)
      if (ws.core_index[pos] >= 0) ws.basis_w[pos] = ws.core_g[ws.core_index[pos]];
    from_block_basis(ws, ws.basis_w, ws.r_ineq);
    ws.r_eq = ws.core_g.segment(ws.n_core_ineq, ws.n_eq) - p.b;
  } else {
    ws.r_dual.noalias() = p.M * ws.x;
    ws.r_dual.noalias() += p.G.transpose() * ws.z;
    ws.r_dual.noalias() += p.A.transpose() * ws.y;
    ws.r_dual += p.q;
    ws.r_ineq.noalias() = p.G * ws.x;
    ws.r_eq.noalias() = p.A * ws.x;
    ws.r_eq -= p.b;
  }
  for (Eigen::Index k = 0; k < ws.f_nnz; ++k) ws.r_ineq[ws.f_row[k]] += ws.f_value[k] * ws.z[ws.f_col[k]];
  ws.r_ineq += ws.s - p.m;
  ws.r_comp = ws.s.cwiseProduct(ws.z).array() - kappa;
}

// The report's residuals with the problem as given (the Schur path's iterations drop the rounding
// rows of T^T G; this is the solution's own test), x current.
template <class S>
void report_residuals(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const S& kappa, LcpIpmResult& result) {
  const bool schur = ws.use_schur;
  ws.use_schur = false;
  compute_residuals(p, ws, kappa);
  ws.use_schur = schur;
  result.primal_residual = double(std::max(inf_norm(ws.r_ineq), inf_norm(ws.r_eq)));
  result.dual_residual = double(inf_norm(ws.r_dual));
  result.complementarity_residual = double(inf_norm(ws.r_comp));
}

// M^-1, M^-1 B^T and B M^-1 B^T - [F 0; 0 0] in the original basis (the factorisation at the
// solution), once per solve.
template <class S>
void prepare_full_schur(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  if (ws.full_schur_ready) return;
  const Eigen::Index ni = ws.n_ineq, ne = ws.n_eq;
  ws.minv.setIdentity();
  for (Eigen::Index c = 0; c < ws.n_x; ++c) {
    mass_half_solve(ws, &ws.minv(0, c));
    ws.rhs_x = ws.minv.col(c);
    mass_half_solve_transposed(ws, ws.rhs_x);
    ws.minv.col(c) = ws.rhs_x;
  }
  ws.minv_BT.leftCols(ni).noalias() = ws.minv * p.G.transpose();
  ws.minv_BT.rightCols(ne).noalias() = ws.minv * p.A.transpose();
  ws.schur_static.topRows(ni).noalias() = p.G * ws.minv_BT;
  ws.schur_static.bottomRows(ne).noalias() = p.A * ws.minv_BT;
  ws.schur_static.topLeftCorner(ni, ni) -= p.F;
  ws.full_schur_ready = true;
}

// The parts of K that stay fixed over the iterations (the Schur path's blocks and core, or the full
// path's constant blocks of K). Picks the path.
template <class S>
void prepare_kkt(const MixedLcpTpl<S>& p, bool allow_schur, IpmWorkspaceTpl<S>& ws) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  // F's nonzeros and the blocks' setup are kept while F and the row basis stay as they were (a
  // contact problem's F holds cfm and the friction coefficients: it changes with the contact pairs).
  // (Compared bit for bit: a -0 for a 0 only rebuilds.)
  auto same_bits = [](const MatrixX<S>& a, const MatrixX<S>& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(S) * static_cast<size_t>(a.size())) == 0);
  };
  const bool same_structure = ws.structure_ready && same_bits(ws.structure_F, p.F) && same_bits(ws.structure_basis, ws.row_basis);
  if (!same_structure) collect_f_nonzeros(p, ws);
  ws.use_schur = false;
  ws.full_schur_ready = false;
  if (allow_schur && exactly_symmetric(p.M)) ws.use_schur = factor_mass(p.M, ws);
  if (ws.use_schur) {
    prepare_blocks(p, ws, same_structure);
    if (!same_structure) ws.structure_F = p.F, ws.structure_basis = ws.row_basis, ws.structure_ready = true;
    return;
  }
  if (!same_structure) ws.structure_ready = false;  // F's nonzeros are current, the blocks are not
  ws.K.setZero();
  ws.K.topLeftCorner(nx, nx) = p.M;
  ws.K.block(0, nx, nx, ni) = p.G.transpose();
  ws.K.block(0, nx + ni, nx, ne) = p.A.transpose();
  ws.K.block(nx, 0, ni, nx) = p.G;
  ws.K.block(nx + ni, 0, ne, nx) = p.A;
}

// Factors K with D = diag(d_scale): the iterations' (Schur path: factor_blocks), or, at_solution,
// the Schur complement in the original basis LU-factored with pivoting over all its rows (the
// backward pass: no threshold choices, and solves with K^T too).
template <class S>
void factor_with(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const VectorX<S>& d_scale, bool at_solution) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq;
  if (ws.use_schur) {
    if (!at_solution) {
      factor_blocks(ws, d_scale);
      return;
    }
    prepare_full_schur(p, ws);
    ws.schur = ws.schur_static;
    ws.schur.topLeftCorner(ni, ni).diagonal() += d_scale;
    lu_in_place(ws.schur.data(), ws.schur.rows(), ws.schur_pivots.data());
    return;
  }
  ws.K.block(nx, nx, ni, ni) = p.F;
  ws.K.block(nx, nx, ni, ni).diagonal() -= d_scale;
  ws.lu.compute(ws.K);
}

// sol = K^-1 rhs (transposed: K^-T rhs) with the factorisation at the solution; sol may be rhs.
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
  ws.rhs_x.noalias() = ws.minv * rhs.head(nx);
  if (transposed)
    lu_solve_transposed_in_place(ws.schur.data(), nw, ws.schur_pivots.data(), ws.rhs_w.data());
  else
    lu_solve_in_place(ws.schur.data(), nw, ws.schur_pivots.data(), ws.rhs_w.data());
  sol.tail(nw) = ws.rhs_w;
  sol.head(nx) = ws.rhs_x;
  sol.head(nx).noalias() -= ws.minv_BT * sol.tail(nw);
}

// The Newton direction (dx, dz, dy, ds) for the current residuals with the complementarity residual
// comp (rows of Z ds + S dz = -comp); K factored at the current iterate. Schur path: dw = S^-1
// [r_ineq - comp / z; r_eq] (the dual residual is zero), no dx.
template <class S>
void newton_direction(IpmWorkspaceTpl<S>& ws, const VectorX<S>& comp) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  if (ws.use_schur) {
    ws.rhs_w.head(ni) = ws.r_ineq - comp.cwiseQuotient(ws.z);
    ws.rhs_w.tail(ne) = ws.r_eq;
    solve_blocks(ws, ws.rhs_w);
    ws.dz = ws.rhs_w.head(ni);
    ws.dy = ws.rhs_w.tail(ne);
  } else {
    ws.rhs.head(nx) = -ws.r_dual;
    ws.rhs.segment(nx, ni) = comp.cwiseQuotient(ws.z) - ws.r_ineq;
    ws.rhs.tail(ne) = -ws.r_eq;
    ws.sol = ws.lu.solve(ws.rhs);
    ws.dx = ws.sol.head(nx);
    ws.dz = ws.sol.segment(nx, ni);
    ws.dy = ws.sol.tail(ne);
  }
  // ds = -(comp + S dz) / z
  ws.ds = -(comp + ws.s.cwiseProduct(ws.dz)).cwiseQuotient(ws.z);
}

// The Newton direction for complementarity residual comp, given (dx, dz, dy) of the same system
// with comp - delta: K is linear, so only [0; delta / z; 0] is solved for and added.
template <class S>
void corrected_direction(IpmWorkspaceTpl<S>& ws, const VectorX<S>& comp, const VectorX<S>& delta) {
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  if (ws.use_schur) {
    ws.rhs_w.head(ni) = -delta.cwiseQuotient(ws.z);
    ws.rhs_w.tail(ne).setZero();
    solve_blocks(ws, ws.rhs_w);
    ws.dz += ws.rhs_w.head(ni);
    ws.dy += ws.rhs_w.tail(ne);
  } else {
    ws.rhs.head(nx).setZero();
    ws.rhs.segment(nx, ni) = delta.cwiseQuotient(ws.z);
    ws.rhs.tail(ne).setZero();
    ws.sol = ws.lu.solve(ws.rhs);
    ws.dx += ws.sol.head(nx);
    ws.dz += ws.sol.segment(nx, ni);
    ws.dy += ws.sol.tail(ne);
  }
  ws.ds = -(comp + ws.s.cwiseProduct(ws.dz)).cwiseQuotient(ws.z);
}

// Factors K at the point the last solve returned (once; later calls reuse it).
template <class S>
void factor_at_solution(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws) {
  if (ws.factored_at_solution) return;
  ws.ds_aff = ws.s.cwiseQuotient(ws.z);
  if (ws.use_schur && ws.n_ineq > 0) {  // D floored (see kIpmBackwardDiagonalFloor)
    prepare_full_schur(p, ws);
    const S floor = S(kIpmBackwardDiagonalFloor) * ws.schur_static.diagonal().head(ws.n_ineq).cwiseAbs().maxCoeff();
    ws.ds_aff = ws.ds_aff.cwiseMax(floor);
  }
  factor_with(p, ws, ws.ds_aff, true);
  ws.factored_at_solution = true;
}

// Initial point: solve the KKT system with D = I, i.e. s = -z (Mattingley & Boyd), then move s and z
// into the positive orthant. kappa = 0: s_i = z_i = max(|z_i|, half the mean |z|) (a row the D = I
// solution leaves with z_i > 0 looks active, one with s_i > 0 inactive; both start at that size). D is
// then I again, so the first iteration reuses this factorisation. kappa > 0 (or where z = 0): 1 + the
// most negative entry, which keeps the iterates away from the boundary the relaxed problem stops short of.
template <class S>
void cold_start(const MixedLcpTpl<S>& p, const S& kappa, IpmWorkspaceTpl<S>& ws) {
  using std::abs;
  const Eigen::Index nx = ws.n_x, ni = ws.n_ineq, ne = ws.n_eq;
  ws.s.setOnes();
  factor_with(p, ws, ws.s, false);
  if (ws.use_schur) {  // S w = -B M^-1 q - [m; b]
    ws.basis_w.setZero();
    for (Eigen::Index pos = 0; pos < ni; ++pos)
      if (ws.core_index[pos] >= 0) ws.basis_w[pos] = ws.core_c[ws.core_index[pos]];
    from_block_basis(ws, ws.basis_w, ws.rhs_w);
    ws.rhs_w.head(ni) += p.m;
    ws.rhs_w.tail(ne) = ws.core_c.segment(ws.n_core_ineq, ne) + p.b;
    ws.rhs_w = -ws.rhs_w;
    solve_blocks(ws, ws.rhs_w);
    ws.z = ws.rhs_w.head(ni);
    ws.y = ws.rhs_w.tail(ne);
  } else {
    ws.rhs.head(nx) = -p.q;
    ws.rhs.segment(nx, ni) = p.m;
    ws.rhs.tail(ne) = p.b;
    ws.sol = ws.lu.solve(ws.rhs);
    ws.x = ws.sol.head(nx);
    ws.z = ws.sol.segment(nx, ni);
    ws.y = ws.sol.tail(ne);
  }
  ws.s = -ws.z;
  if (ni == 0) return;
  if (kappa == S(0)) {
    const S floor = S(0.5) * ws.z.cwiseAbs().sum() / S(ni);
    if (floor > S(0)) {
      for (Eigen::Index i = 0; i < ni; ++i) ws.z[i] = ws.s[i] = std::max(abs(ws.z[i]), floor);
      ws.factored_at_start = true;
      return;
    }
  }
  const S shift_s = -ws.s.minCoeff(), shift_z = -ws.z.minCoeff();
  if (shift_s >= S(0)) ws.s.array() += S(1) + shift_s;
  if (shift_z >= S(0)) ws.z.array() += S(1) + shift_z;
  ws.factored_at_start = (ws.s.array() == ws.z.array()).all();
}

// Warm start from the multipliers (z, y) the workspace holds: z raised to at least `floor`, s from
// the inequality rows (r_ineq = 0) at x(w) (Schur path; the full path keeps the old x) raised to at
// least `floor`. Only the raised entries leave residuals; for a problem close to the last one the
// iteration starts next to its solution.
template <class S>
void warm_start(const MixedLcpTpl<S>& p, IpmWorkspaceTpl<S>& ws, const S& floor) {
  ws.z = ws.z.cwiseMax(floor);
  ws.s.setZero();
  compute_residuals(p, ws, S(0));  // r_ineq = G x + F z - m with s = 0
  ws.s = (-ws.r_ineq).cwiseMax(floor);
}

// Mehrotra predictor-corrector iterations from the point in ws, at most max_iterations Newton steps.
template <class S>
LcpIpmResult iterate(const MixedLcpTpl<S>& p, const LcpIpmSettings<S>& settings, const S& tolerance,
                     int max_iterations, IpmWorkspaceTpl<S>& ws) {
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

    if (!ws.factored_at_start) {
      ws.ds_aff = ws.s.cwiseQuotient(ws.z);  // D, as scratch
      factor_with(p, ws, ws.ds_aff, false);
    }
    ws.factored_at_start = false;
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
    // Fraction of the step to the boundary: step_fraction while the iterates are far from the solution;
    // 1 - sigma once the predictor nearly reaches the target alone (sigma -> 0: the local phase, where the
    // active rows' s or z go to 0 and a fixed 0.99 would cut every step to 1 / 100 of the remaining
    // distance: linear convergence at 0.01 where Newton's is quadratic). Kept below 1 so s, z stay > 0.
    // Only for the exact LCP: with kappa > 0 no s_i or z_i tends to 0, and a step that nearly reaches the
    // boundary leaves the central path the relaxed solution lies on.
    const S fraction = kappa == S(0) ? std::min(std::max(settings.step_fraction, S(1) - sigma), S(1) - S(kMinBoundaryGap))
                                     : settings.step_fraction;
    const S alpha = std::min(S(1), fraction * std::min(max_step(ws.s, ws.ds), max_step(ws.z, ws.dz)));
    if (!ws.use_schur) ws.x += alpha * ws.dx;
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
  ws.factored_at_start = false;
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
    cold_start(p, settings.kappa, ws);
    result = iterate(p, settings, settings.tolerance, settings.max_iterations, ws);
    result.iterations += warm_iterations;
  }
  if (ws.use_schur) {  // x(w) at the returned point, and the residuals of the problem as given
    core_product(ws);
    recover_x(ws);
    report_residuals(p, ws, settings.kappa, result);
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
