// Reverse mode of the flat PGS stage (flat/pgs.hpp): the engine's implicit PGS adjoint
// (contact/pgs_contact_vjp.cpp, PgsGradient::Implicit) folded into the flat step's reverse
// (flat/step_vjp.hpp).
//
// With y = M^-1 v+_bar, the impulses' adjoint is lambda_bar = J y. Differentiating the solution's
// active set (free rows: (A lambda + b)_i = 0, clamped rows: lambda_i = its bound) gives
// b_bar = -z on the free rows, z = system^-T lambda_bar, and A_bar = -z lambda^T there. Then, with
// v_free = v + dt a_free and A = J M^-1 J^T, everything folds into the shape of the penalty step's
// reverse:
//   - the adjoint of v+ seen by a_free, v and tau becomes v+_bar + J^T b_bar, so that
//     w = M^-1 dt (v+_bar + J^T b_bar) = dt (y + M^-1 J^T b_bar);
//   - the mass matrix's q-dependence (in a_free, in M^-1 J^T lambda and in A) is that of
//     -w . RNEA(q, v, qdd) at the effective acceleration qdd = a_free + M^-1 J^T lambda / dt;
//   - the Jacobian's q-dependence is that of three sets of point forces held fixed, each paired
//     with a generalised velocity: the impulses lambda / dt with w (as penalty forces are), the
//     row adjoints b_bar with v+, and the restitution targets' adjoints with v;
//   - the targets: Baumgarte's depth, restitution's approach J_n v, the joint limits' gaps.
// Where the active-set system is singular (redundant free rows: the impulses are not unique, v+ is)
// both take the least-norm solution (here by a Jacobi SVD, the engine's by a complete orthogonal
// decomposition).
#pragma once

#include "gradyn/flat/pgs.hpp"
#include "gradyn/flat/collide_vjp.hpp"

namespace gradyn::flat {

template <class S, int MB, int MD, int MR>
struct PgsVjpBuffers {
  static constexpr bool enabled = true;
  static constexpr int MC = MR / 3;
  S y[MD], lambda_bar[MR], b_bar[MR], system[MR * MR];
  S V[MR * MR];  // the least-norm solve's (a singular active-set system)
  int perm[MR];
  signed char active[MR];  // 0 free, -1 at its lower bound, +1 at its upper one, 2 inert
  S approach_bar[MC], depth_bar[MC], x_bar[MC][3], n_bar[MC][3];
  S F2[MB][6], F3[MB][6];  // b_bar's and restitution's point forces on the bodies, then subtree sums
  S ovp[MB][6];            // world twists of the bodies under v+
  int next_contact;        // collide_pair_vjp's visit of the contacts
};
template <class S, int MB, int MD>
struct PgsVjpBuffers<S, MB, MD, 0> {
  static constexpr bool enabled = false;
};

namespace detail {

// LU with partial pivoting of the n x n row-major matrix a (in place; perm: row i of P a is row
// perm[i] of a). False when a pivot is below floor.
template <class S>
GRADYN_HD bool lu_factor(S* a, int n, int* perm, S floor) {
  for (int i = 0; i < n; ++i) perm[i] = i;
  bool regular = true;
  for (int k = 0; k < n; ++k) {
    int p = k;
    S best = a[k * n + k] < S(0) ? -a[k * n + k] : a[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const S v = a[i * n + k] < S(0) ? -a[i * n + k] : a[i * n + k];
      if (v > best) best = v, p = i;
    }
    if (!(best > floor)) {
      regular = false;
      if (best == S(0)) continue;
    }
    if (p != k) {
      for (int j = 0; j < n; ++j) {
        const S t = a[k * n + j];
        a[k * n + j] = a[p * n + j], a[p * n + j] = t;
      }
      const int t = perm[k];
      perm[k] = perm[p], perm[p] = t;
    }
    for (int i = k + 1; i < n; ++i) {
      const S f = a[i * n + k] / a[k * n + k];
      a[i * n + k] = f;
      for (int j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return regular;
}

// z = a^-T r from lu_factor's factors (P a = L U: a^T = U^T L^T P); r is overwritten.
template <class S>
GRADYN_HD void lu_solve_transposed(const S* lu, int n, const int* perm, S* r, S* z) {
  for (int i = 0; i < n; ++i) {  // U^T s = r
    S s = r[i];
    for (int k = 0; k < i; ++k) s -= lu[k * n + i] * r[k];
    r[i] = s / lu[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T t = s (unit diagonal)
    S s = r[i];
    for (int k = i + 1; k < n; ++k) s -= lu[k * n + i] * r[k];
    r[i] = s;
  }
  for (int i = 0; i < n; ++i) z[perm[i]] = r[i];
}

// The least-norm z of a^T z = r (a: n x n row-major, rank-deficient; overwritten) by one-sided Jacobi SVD:
// the columns of W = a^T V are made orthogonal by plane rotations (V accumulates them), so that
// a^T = U s V^T with U = W / s, and z = V s^+ U^T r, dropping singular values below n eps s_max
// (the rank rule of Eigen's CompleteOrthogonalDecomposition, which the engine uses here).
template <class S>
GRADYN_HD void least_norm_solve_transposed(S* a, int n, S* V, const S* r, S* z) {
  S* W = a;  // W = a^T, in place
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (j > i) {
        const S t = W[i * n + j];
        W[i * n + j] = W[j * n + i], W[j * n + i] = t;
      }
      V[i * n + j] = S(i == j);
    }
  const S eps = sizeof(S) == 4 ? S(1.2e-7) : S(2.3e-16);
  for (int sweep = 0; sweep < 60; ++sweep) {
    bool rotated = false;
    for (int p = 0; p + 1 < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        S alpha = S(0), beta = S(0), gamma = S(0);
        for (int i = 0; i < n; ++i) {
          const S wp = W[i * n + p], wq = W[i * n + q];
          alpha += wp * wp, beta += wq * wq, gamma += wp * wq;
        }
        const S agamma = gamma < S(0) ? -gamma : gamma;
        if (!(agamma > eps * fsqrt(alpha * beta))) continue;
        rotated = true;
        const S zeta = (beta - alpha) / (S(2) * gamma);
        const S azeta = zeta < S(0) ? -zeta : zeta;
        const S t = (zeta < S(0) ? S(-1) : S(1)) / (azeta + fsqrt(S(1) + zeta * zeta));
        const S c = S(1) / fsqrt(S(1) + t * t), s = c * t;
        for (int i = 0; i < n; ++i) {
          const S wp = W[i * n + p], wq = W[i * n + q];
          W[i * n + p] = c * wp - s * wq, W[i * n + q] = s * wp + c * wq;
          const S vp = V[i * n + p], vq = V[i * n + q];
          V[i * n + p] = c * vp - s * vq, V[i * n + q] = s * vp + c * vq;
        }
      }
    if (!rotated) break;
  }
  S largest = S(0);
  for (int j = 0; j < n; ++j) {
    S s2 = S(0);
    for (int i = 0; i < n; ++i) s2 += W[i * n + j] * W[i * n + j];
    if (s2 > largest) largest = s2;
  }
  for (int i = 0; i < n; ++i) z[i] = S(0);
  const S floor = S(n) * eps * fsqrt(largest);
  for (int j = 0; j < n; ++j) {
    S s2 = S(0), along = S(0);
    for (int i = 0; i < n; ++i) s2 += W[i * n + j] * W[i * n + j], along += W[i * n + j] * r[i];
    if (!(fsqrt(s2) > floor)) continue;
    for (int i = 0; i < n; ++i) z[i] += along / s2 * V[i * n + j];
  }
}

// The active set of the solution P.lambda and the Jacobian of its residual, row by row (contact/
// pgs.cpp's factor_active_set_system, tolerance 1e-9; 1e-5 in float): a free row (A lambda + b)_i (+ eps on its
// diagonal), a clamped row lambda_i - bound_i, an inert row lambda_i. Returns its largest entry.
template <class S, class P, class G>
GRADYN_HD S active_set_system(const FlatModel<S>& m, const P& pgs, G& gb, S eps) {
  const int n = pgs.n;
  // a friction bound mu lambda_n is read after its row was clamped: float rounds it off by ~1e-7
  const S tolerance = sizeof(S) == 4 ? S(1e-5) : S(1e-9);
  S largest = S(0);
  for (int i = 0; i < n; ++i) {
    S lo = S(0), hi = S(0);
    const bool friction = friction_bounds(pgs, pgs.lambda, i, lo, hi);
    const S li = pgs.lambda[i];
    signed char state = 0;
    const S dlo = li - lo < S(0) ? lo - li : li - lo, alo = lo < S(0) ? -lo : lo;
    if (dlo <= tolerance * (S(1) + alo)) {
      state = -1;
    } else if (friction) {  // (a box row's upper bound is infinite: never active)
      const S dhi = li - hi < S(0) ? hi - li : li - hi, ahi = hi < S(0) ? -hi : hi;
      if (dhi <= tolerance * (S(1) + ahi)) state = 1;
    }
    if (state == 0 && pgs.inv_diagonal[i] == S(0)) state = 2;
    gb.active[i] = state;
    S* row = gb.system + i * n;
    for (int j = 0; j < n; ++j) row[j] = S(0);
    if (state == 0) {
      for (int j = 0; j < n; ++j) row[j] = pgs.A[i * n + j];
      row[i] += m.cfm() + eps;
    } else {
      row[i] = S(1);
      if (state != 2 && friction) row[pgs.normal_row[i]] = -S(state) * pgs.mu[i];
    }
    for (int j = 0; j < n; ++j) {
      const S a = row[j] < S(0) ? -row[j] : row[j];
      if (a > largest) largest = a;
    }
  }
  return largest;
}

// The implicit adjoint of the impulses (contact/pgs.hpp's pgs_implicit_vjp): gb.b_bar from
// gb.lambda_bar (overwritten) at the solution P.lambda; b_bar is zero on clamped and inert rows.
template <class S, class P, class G>
GRADYN_HD void pgs_implicit_b_bar(const FlatModel<S>& m, const P& pgs, G& gb) {
  const int n = pgs.n;
  const S largest = active_set_system(m, pgs, gb, S(0));
  const S scale = largest > S(1) ? largest : S(1);
  if (lu_factor(gb.system, n, gb.perm, S(1e-13) * scale)) {
    lu_solve_transposed(gb.system, n, gb.perm, gb.lambda_bar, gb.b_bar);
  } else {  // redundant free rows: the least-norm solution
    active_set_system(m, pgs, gb, S(0));
    least_norm_solve_transposed(gb.system, n, gb.V, gb.lambda_bar, gb.b_bar);
  }
  for (int i = 0; i < n; ++i) gb.b_bar[i] = gb.active[i] == 0 ? -gb.b_bar[i] : S(0);
}

// Adjoint of t1 = (n x e_k) / |n x e_k|, t2 = n x t1 (contact_frame) into n_bar.
template <class S>
GRADYN_HD void contact_frame_vjp(const S* frame, const S* t1_bar_in, const S* t2_bar, S* n_bar) {
  const S* n = frame;
  const S* t1 = frame + 3;
  S t[3], t1_bar[3];
  cross3(t1, t2_bar, t);  // t2 = n x t1
  for (int k = 0; k < 3; ++k) n_bar[k] += t[k];
  cross3(t2_bar, n, t);
  for (int k = 0; k < 3; ++k) t1_bar[k] = t1_bar_in[k] + t[k];
  S unused[9];
  const int axis = contact_frame(n, unused);
  const S e[3] = {S(axis == 0), S(axis == 1), S(axis == 2)};
  S raw[3];
  cross3(n, e, raw);
  const S norm = fsqrt(dot3(raw, raw)), along = dot3(t1, t1_bar);
  S raw_bar[3];
  for (int k = 0; k < 3; ++k) raw_bar[k] = (t1_bar[k] - t1[k] * along) / norm;
  cross3(e, raw_bar, t);  // d(n x e) = dn x e
  for (int k = 0; k < 3; ++k) n_bar[k] += t[k];
}

/// The rows' adjoints, from ws.vnb (the adjoint of v+): b_bar by the implicit adjoint, the
/// targets' adjoints (the contacts' depth_bar, restitution's approach into v_bar, the joint limits'
/// gaps into q_bar), and then ws.vnb += J^T b_bar (v_free's adjoint, which a_free, v and tau see).
template <class S, class W>
GRADYN_HD void pgs_rows_vjp(const FlatModel<S>& m, W& ws, const S* q, int qs, S dt, S* q_bar, int qbs, S* v_bar,
                            int vbs) {
  auto& fw = ws.fw;
  auto& P = fw.pgs;
  auto& G = ws.pgsb;
  const int n = P.n, nv = m.nv, nc = P.nc;
  minv_apply(m, fw, ws.vnb, G.y);
  for (int r = 0; r < n; ++r) {
    S s = S(0);
    for (int k = 0; k < nv; ++k) s += P.J[r * nv + k] * G.y[k];
    G.lambda_bar[r] = s;
  }
  pgs_implicit_b_bar(m, P, G);
  for (int c = 0; c < nc; ++c) {
    const int rn = 3 * c;
    G.depth_bar[c] = G.approach_bar[c] = S(0);
    if (P.c_branch[c] == kTargetBaumgarte) {
      G.depth_bar[c] = -G.b_bar[rn] * m.erp() / dt;
    } else if (P.c_branch[c] == kTargetRestitution) {  // b_n += e J_n v
      G.approach_bar[c] = m.pair_restitution(P.c_pair[c]) * G.b_bar[rn];
      for (int k = 0; k < nv; ++k) v_bar[k * vbs] += G.approach_bar[c] * P.J[rn * nv + k];
    }
  }
  for (int l = 0; l < P.nl; ++l) {  // b -= target(q_k): limit_target's slope on its branch
    const int iq = P.l_iq[l], side = P.l_side[l];
    const S gap = S(side) * (q[iq * qs] - (side > 0 ? m.lower(iq) : m.upper(iq)));
    S slope = S(0);
    if (gap >= S(0)) slope = -S(side) / dt;
    else if (-gap - m.slop() > S(0)) slope = -m.erp() / dt * S(side);
    q_bar[iq * qbs] -= G.b_bar[3 * nc + l] * slope;
  }
  for (int k = 0; k < nv; ++k) {
    S s = S(0);
    for (int r = 0; r < n; ++r) s += P.J[r * nv + k] * G.b_bar[r];
    ws.vnb[k] += s;
  }
}

/// After w = M^-1 dt (v+_bar + J^T b_bar): the effective accelerations (fw.qdd, fw.oa), the
/// impulses as forces lambda / dt (fw.F), the b_bar and restitution forces (F2, F3), each summed
/// over subtrees, and the bodies' twists under v+.
template <class S, class W>
GRADYN_HD void pgs_reverse_forces(const FlatModel<S>& m, W& ws, S dt) {
  auto& fw = ws.fw;
  auto& P = fw.pgs;
  auto& G = ws.pgsb;
  const int n = P.n, nv = m.nv, nb = m.nb;
  for (int k = 0; k < nv; ++k) {
    S s = S(0);
    for (int r = 0; r < n; ++r) s += P.X[r * nv + k] * P.lambda[r];
    fw.qdd[k] += s / dt;
  }
  const S a_world[6] = {S(0), S(0), S(0), -m.gravity()[0], -m.gravity()[1], -m.gravity()[2]};
  for (int i = 0; i < nb; ++i) {
    const int par = m.parent(i), iv = m.iv(i);
    const bool free = m.joint(i) == kFree;
    for (int k = 0; k < 6; ++k) {
      fw.oa[i][k] = (par >= 0 ? fw.oa[par][k] : a_world[k]) + fw.oc[i][k];
      G.ovp[i][k] = par >= 0 ? G.ovp[par][k] : S(0);
      fw.F[i][k] = G.F2[i][k] = G.F3[i][k] = S(0);
    }
    for (int c = 0; c < (free ? 6 : 1); ++c) {
      S col[6];
      if (free) free_column(fw.R[i], fw.p[i], c, col);
      else
        for (int k = 0; k < 6; ++k) col[k] = fw.Sm[i][k];
      for (int k = 0; k < 6; ++k) fw.oa[i][k] += col[k] * fw.qdd[iv + c], G.ovp[i][k] += col[k] * ws.v_next[iv + c];
    }
  }
  for (int c = 0; c < P.nc; ++c) {
    const S* fr = P.c_frame[c];
    S f1[3], f2[3], f3[3];
    for (int k = 0; k < 3; ++k) {
      f1[k] = (P.lambda[3 * c] * fr[k] + P.lambda[3 * c + 1] * fr[3 + k] + P.lambda[3 * c + 2] * fr[6 + k]) / dt;
      f2[k] = G.b_bar[3 * c] * fr[k] + G.b_bar[3 * c + 1] * fr[3 + k] + G.b_bar[3 * c + 2] * fr[6 + k];
      f3[k] = G.approach_bar[c] * fr[k];
    }
    for (int side = 0; side < 2; ++side) {
      const int body = side == 0 ? P.c_body_b[c] : P.c_body_a[c];
      if (body < 0) continue;
      const S sign = side == 0 ? S(1) : S(-1);
      add_point_force(fw.F[body], P.c_point[c], f1, sign);
      add_point_force(G.F2[body], P.c_point[c], f2, sign);
      add_point_force(G.F3[body], P.c_point[c], f3, sign);
    }
  }
  for (int i = nb - 1; i >= 0; --i) {
    const int par = m.parent(i);
    if (par >= 0)
      for (int k = 0; k < 6; ++k) fw.F[par][k] += fw.F[i][k], G.F2[par][k] += G.F2[i][k], G.F3[par][k] += G.F3[i][k];
  }
}

/// The contacts' feature adjoints (point; normal, through the frame; depth) of the three force
/// sets with their velocities (lambda / dt with psi, b_bar with v+, restitution with v), then the
/// geometry's through collide_pair_vjp, contact by contact in the forward's order.
template <class S, class W>
GRADYN_HD void pgs_contacts_vjp(const FlatModel<S>& m, W& ws, S dt) {
  auto& fw = ws.fw;
  auto& P = fw.pgs;
  auto& G = ws.pgsb;
  for (int c = 0; c < P.nc; ++c) {
    const S* x = P.c_point[c];
    const S* fr = P.c_frame[c];
    const int ba = P.c_body_a[c], bb = P.c_body_b[c];
    S up[3], uv[3], u0[3];
    relative_velocity_at<S>(ws.psi, ba, bb, x, up);
    relative_velocity_at<S>(G.ovp, ba, bb, x, uv);
    relative_velocity_at<S>(fw.ov, ba, bb, x, u0);
    const S l[3] = {P.lambda[3 * c] / dt, P.lambda[3 * c + 1] / dt, P.lambda[3 * c + 2] / dt};
    const S* bbar = G.b_bar + 3 * c;
    const S a = G.approach_bar[c];
    S t1_bar[3], t2_bar[3];
    for (int k = 0; k < 3; ++k) {
      G.x_bar[c][k] = S(0);
      G.n_bar[c][k] = l[0] * up[k] + bbar[0] * uv[k] + a * u0[k];
      t1_bar[k] = l[1] * up[k] + bbar[1] * uv[k];
      t2_bar[k] = l[2] * up[k] + bbar[2] * uv[k];
    }
    contact_frame_vjp(fr, t1_bar, t2_bar, G.n_bar[c]);
    for (int side = 0; side < 2; ++side) {  // f . (v_O + w x x): x_bar = f x w, b's minus a's
      const int body = side == 0 ? bb : ba;
      if (body < 0) continue;
      const S sign = side == 0 ? S(1) : S(-1);
      for (int k = 0; k < 3; ++k) {
        const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        S sum = S(0);
        for (int set = 0; set < 3; ++set) {
          const S* w = set == 0 ? ws.psi[body] : set == 1 ? G.ovp[body] : fw.ov[body];
          S f[3];
          for (int j = 0; j < 3; ++j)
            f[j] = set == 0 ? l[0] * fr[j] + l[1] * fr[3 + j] + l[2] * fr[6 + j]
                 : set == 1 ? bbar[0] * fr[j] + bbar[1] * fr[3 + j] + bbar[2] * fr[6 + j]
                            : a * fr[j];
          sum += f[k1] * w[k2] - f[k2] * w[k1];
        }
        G.x_bar[c][k] += sign * sum;
      }
    }
  }
  G.next_contact = 0;
  auto bar = [&](const S*, const S*, S, S* xb, S* nb, S& db) {
    if (G.next_contact >= P.nc) return false;  // dropped beyond the capacity, as in the forward
    const int c = G.next_contact++;
    for (int k = 0; k < 3; ++k) xb[k] += G.x_bar[c][k], nb[k] += G.n_bar[c][k];
    db += G.depth_bar[c];
    return true;
  };
  for (int k = 0; k < m.npairs; ++k) collide_pair_vjp(m, ws, k, bar);
}

}  // namespace detail

}  // namespace gradyn::flat
