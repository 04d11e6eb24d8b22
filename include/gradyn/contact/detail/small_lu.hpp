// Small dense LU with partial pivoting (a few dozen rows: the interior-point solver's Schur
// complements, the step Jacobian's impulse response). Plain column-oriented loops: at these sizes
// they beat Eigen's blocked PartialPivLU by about 2x. No allocation.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <utility>

namespace gradyn::detail {

/// Dense LU with partial pivoting, in place: a holds an n x n column-major matrix (leading
/// dimension n); afterwards A = P^T L U with L unit lower and U upper stored in a, pivots[k] the row
/// swapped with k at step k (if pivots is given) and order[i] the original row now at i (if order
/// is given). A zero pivot is left as is (the solves then give inf / NaN, like Eigen's PartialPivLU).
template <class S>
void lu_in_place(S* a, Eigen::Index n, int* pivots, int* order = nullptr) {
  using std::abs;
  if (order)
    for (Eigen::Index i = 0; i < n; ++i) order[i] = static_cast<int>(i);
  for (Eigen::Index k = 0; k < n; ++k) {
    S* col_k = a + k * n;
    Eigen::Index p = k;
    S largest = abs(col_k[k]);
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (abs(col_k[i]) > largest) largest = abs(col_k[i]), p = i;
    if (pivots) pivots[k] = static_cast<int>(p);
    if (p != k) {
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[j * n + k], a[j * n + p]);
      if (order) std::swap(order[k], order[p]);
    }
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

/// x = A^-1 x with lu_in_place's factors.
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

/// x = A^-T x with lu_in_place's factors (A^T = U^T L^T P).
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

}  // namespace gradyn::detail
