// Velocity-level contact and joint limits by projected Gauss-Seidel on a flat model: the same rows,
// targets, warm start and sweeps as the engine's ContactModel::Pgs (contact/pgs_contact.hpp and
// contact/pgs.hpp; read them for the model), on fixed-size buffers for g++ and nvcc alike.
//
//   v_free = v + dt a_free,   v+ = v_free + M^-1 J^T lambda,
// lambda solving the boxed LCP  w = (J M^-1 J^T + cfm I) lambda + b  with b = J v_free - target.
// Rows: three per contact (normal, tangent1, tangent2: the contact frame of
// collision/narrowphase.hpp's contact_frame), in collide()'s order, then one per active joint limit.
// A pair's geom order is its routine's (lower type first), not the engine's (lower index first):
// when they differ the engine's normal is this one reversed and its second tangent row changes
// sign, which maps the problem and its PGS sweeps onto each other exactly (lambda_t2 changes sign;
// the pyramid is symmetric), so the impulses applied are the same.
//
// Capacity: MR rows (MR / 3 contacts); the model's own bound (flat/export.hpp) is used when smaller.
// Contacts beyond it are dropped and flagged (kFlatContactOverflow), as collide() does beyond
// Data::contacts.
#pragma once

#include "gradyn/flat/articulated.hpp"
#include "gradyn/flat/collide.hpp"

namespace gradyn::flat {

/// PGS buffers of one world: the step's rows and solve, and the warm-start memory that the next
/// step of the same world reads (reset_warm_start clears it).
template <class S, int MD, int MR>
struct PgsBuffers {
  static constexpr bool enabled = true;
  static constexpr int MC = MR / 3;  // contacts at most
  static constexpr int rows = MR;
  int nc, nl, n;                     // contacts, limit rows, rows (3 nc + nl)
  // contacts: the pair, the bodies of its geoms a and b (-1: world), the normal row's target branch
  int c_pair[MC], c_body_a[MC], c_body_b[MC], c_branch[MC];
  S c_point[MC][3], c_frame[MC][9], c_depth[MC];  // frame: normal, tangent1, tangent2 (3 each)
  // limit rows: coordinate, DoF and side (+1 lower bound, -1 upper)
  int l_iq[MR], l_iv[MR], l_side[MR];
  S J[MR * MD];   // row r: J[r * nv + k]
  S X[MR * MD];   // row r: M^-1 J_r^T
  S A[MR * MR];   // n x n, row stride n
  S b[MR], mu[MR], lambda[MR], inv_diagonal[MR];
  int normal_row[MR];  // a friction row's normal row; -1 for a box row ([0, inf))
  S v_free[MD];
  bool converged;
  // warm start: last step's contacts (pair, point, world impulse) and limit impulses (2 per DoF)
  int mem_n;
  int mem_pair[MC];
  S mem_point[MC][3], mem_impulse[MC][3], mem_limit[2 * MD];
};
template <class S, int MD>
struct PgsBuffers<S, MD, 0> {  // a workspace for penalty contact only
  static constexpr bool enabled = false;
};

/// Which term sets a contact's normal-row target (contact/pgs_contact.hpp's PgsTargetBranch).
enum FlatTargetBranch : int { kTargetZero = 0, kTargetBaumgarte = 1, kTargetCapped = 2, kTargetRestitution = 3 };

namespace detail {

// contact/pgs_contact.hpp's pgs_target_branch.
template <class S>
GRADYN_HD int target_branch(const FlatModel<S>& m, S depth, S approach, S e, S dt) {
  const S excess = depth - m.slop();
  const S raw = excess > S(0) ? m.erp() / dt * excess : S(0);
  const bool capped = raw > m.max_correction_velocity();
  const S baumgarte = capped ? m.max_correction_velocity() : raw;
  if (approach < -m.restitution_threshold() && -e * approach > baumgarte) return kTargetRestitution;
  if (capped) return kTargetCapped;
  return excess > S(0) ? kTargetBaumgarte : kTargetZero;
}

// collision/narrowphase.hpp's contact_frame: rows n, t1 = n x e_k / |n x e_k| (e_k the world axis
// least aligned with n), t2 = n x t1.
template <class S>
GRADYN_HD int contact_frame(const S* n, S* frame) {
  int k = 0;
  const S a[3] = {n[0] < S(0) ? -n[0] : n[0], n[1] < S(0) ? -n[1] : n[1], n[2] < S(0) ? -n[2] : n[2]};
  if (a[1] < a[k]) k = 1;
  if (a[2] < a[k]) k = 2;
  const S e[3] = {S(k == 0), S(k == 1), S(k == 2)};
  S t1[3];
  cross3(n, e, t1);
  const S norm = fsqrt(dot3(t1, t1));
  for (int i = 0; i < 3; ++i) frame[i] = n[i], frame[3 + i] = t1[i] / norm;
  cross3(frame, frame + 3, frame + 6);
  return k;
}

// The joint-limit row's target (contact/joint_limits.hpp's joint_limit_target).
template <class S>
GRADYN_HD S limit_target(const FlatModel<S>& m, int iq, int side, S q, S dt) {
  const S gap = S(side) * (q - (side > 0 ? m.lower(iq) : m.upper(iq)));
  if (gap >= S(0)) return -gap / dt;
  const S excess = -gap - m.slop();
  return excess > S(0) ? m.erp() / dt * excess : S(0);
}

// Adds sign * (the rows of body's material point x along the contact's frame) into rows row0..row0+2.
template <class S, class M, class W>
GRADYN_HD void add_point_rows(const M& m, const W& ws, int body, const S* x, const S* frame, S sign, S* J, int row0) {
  const int nv = m.nv;
  for (int i = body; i >= 0; i = m.parent(i)) {
    const int iv = m.iv(i);
    const int ncols = m.joint(i) == kFree ? 6 : 1;
    for (int j = 0; j < ncols; ++j) {
      S col[6], velocity[3];
      if (ncols == 6) free_column(ws.R[i], ws.p[i], j, col);
      else
        for (int k = 0; k < 6; ++k) col[k] = ws.Sm[i][k];
      cross3(col, x, velocity);
      for (int k = 0; k < 3; ++k) velocity[k] = sign * (col[3 + k] + velocity[k]);
      for (int r = 0; r < 3; ++r) J[(row0 + r) * nv + iv + j] += dot3(frame + 3 * r, velocity);
    }
  }
}

// Bounds of row i at lambda: box rows [0, inf), friction rows [-mu lambda_n, mu lambda_n].
template <class S, class P>
GRADYN_HD bool friction_bounds(const P& pgs, const S* lambda, int i, S& lo, S& hi) {
  const int normal = pgs.normal_row[i];
  if (normal < 0) return false;
  hi = pgs.mu[i] * lambda[normal];
  lo = -hi;
  return true;
}

// The sweeps of contact/pgs.hpp's pgs_solve from the warm start in pgs.lambda. Returns converged.
template <class S, class P>
GRADYN_HD bool pgs_sweeps(const FlatModel<S>& m, P& pgs) {
  const int n = pgs.n;
  const S cfm = m.cfm();
  S largest = S(0);
  for (int i = 0; i < n; ++i) {
    const S d = pgs.A[i * n + i] + cfm;
    const S ad = d < S(0) ? -d : d;
    if (ad > largest) largest = ad;
  }
  for (int i = 0; i < n; ++i) {  // an inert row (a direction the mechanism cannot move in) keeps 0
    const S d = pgs.A[i * n + i] + cfm;
    pgs.inv_diagonal[i] = !(d > S(1e-12) * largest) ? S(0) : S(1) / d;
  }
  const int iterations = m.pgs_iterations();
  const S tolerance = m.pgs_tolerance();
  for (int sweep = 1; sweep <= iterations; ++sweep) {
    S max_change = S(0);
    for (int i = 0; i < n; ++i) {
      S sum = pgs.b[i];
      for (int j = 0; j < n; ++j)
        if (j != i) sum += pgs.A[i * n + j] * pgs.lambda[j];
      const S u = -sum * pgs.inv_diagonal[i];
      S lo = S(0), hi = S(0);
      const bool friction = friction_bounds(pgs, pgs.lambda, i, lo, hi);
      S next = u;
      if (friction ? u < lo : u < S(0)) next = friction ? lo : S(0);
      else if (friction && u > hi) next = hi;
      const S change = next - pgs.lambda[i];
      const S abs_change = change < S(0) ? -change : change;
      if (abs_change > max_change) max_change = abs_change;
      pgs.lambda[i] = next;
    }
    if (max_change <= tolerance) return true;
  }
  return false;
}

}  // namespace detail

/// Forgets the impulses the last step left, so that the next PGS step starts from zero (every
/// rollout starts so, as the engine's; the reverse step recomputes its forward step so too).
template <class W>
GRADYN_HD void reset_warm_start(W& ws) {
  if constexpr (decltype(ws.pgs)::enabled) {
    ws.pgs.mem_n = 0;
    for (auto& x : ws.pgs.mem_limit) x = 0;
  }
}

namespace detail {

/// The PGS stage: from the free accelerations ws.qdd of the step at (q, v), the velocity after the
/// contact and joint-limit impulses into ws.vplus. Flags overflow, deep contacts and a solve that
/// stopped before its tolerance in ws.status.
template <class S, class W>
GRADYN_HD void pgs_velocity(const FlatModel<S>& m, W& ws, const S* q, int qs, const S* v, int vs, S dt) {
  auto& P = ws.pgs;
  using Buffers = decltype(ws.pgs);
  constexpr int MC = Buffers::MC, MR = Buffers::rows;
  const int nv = m.nv;
  for (int k = 0; k < nv; ++k) P.v_free[k] = v[k * vs] + dt * ws.qdd[k];
  // --- contacts, in collide()'s order ---
  const int capacity = m.max_contacts() < MC ? m.max_contacts() : MC;
  P.nc = 0;
  for (int k = 0; k < m.npairs; ++k) {
    auto emit = [&](const S* x, const S* normal, S depth) {
      if (P.nc == capacity) {
        ws.status |= kFlatContactOverflow;
        return;
      }
      const int c = P.nc++;
      P.c_pair[c] = k;
      P.c_body_a[c] = m.geom_body(m.pair_a(k));
      P.c_body_b[c] = m.geom_body(m.pair_b(k));
      copy3(x, P.c_point[c]);
      contact_frame(normal, P.c_frame[c]);
      P.c_depth[c] = depth;
      if (depth > m.max_penetration()) ws.status |= kFlatDeepPenetration;
    };
    collide_pair(m, ws, k, emit);
  }
  const int nc = P.nc;
  // --- joint limits: active when nearly or already violated, or crossed by the free motion ---
  P.nl = 0;
  for (int i = 0; i < m.nb; ++i) {
    if (m.joint(i) == kFree) continue;
    const int iq = m.iq(i), iv = m.iv(i);
    const S lower = m.lower(iq), upper = m.upper(iq);
    const bool has_lower = finite(lower), has_upper = finite(upper);
    if (!has_lower && !has_upper) continue;
    const S rate = P.v_free[iv], qk = q[iq * qs];
    for (int side = 1; side >= -1; side -= 2) {
      if (side > 0 ? !has_lower : !has_upper) continue;
      const S gap = S(side) * (qk - (side > 0 ? lower : upper));
      const S moved = gap + dt * S(side) * rate;
      if ((gap < moved ? gap : moved) >= m.limit_margin()) continue;
      if (3 * nc + P.nl == MR) {
        ws.status |= kFlatContactOverflow;
        continue;
      }
      P.l_iq[P.nl] = iq, P.l_iv[P.nl] = iv, P.l_side[P.nl] = side;
      ++P.nl;
    }
  }
  const int n = 3 * nc + P.nl;
  P.n = n;
  if (n == 0) {
    for (int k = 0; k < nv; ++k) ws.vplus[k] = P.v_free[k];
    P.converged = true;
    reset_warm_start(ws);
    return;
  }
  // --- rows: J, X = M^-1 J^T, A = J X, b = J v_free - target ---
  for (int r = 0; r < n * nv; ++r) P.J[r] = S(0);
  for (int c = 0; c < nc; ++c) {
    if (P.c_body_b[c] >= 0) add_point_rows(m, ws, P.c_body_b[c], P.c_point[c], P.c_frame[c], S(1), P.J, 3 * c);
    if (P.c_body_a[c] >= 0) add_point_rows(m, ws, P.c_body_a[c], P.c_point[c], P.c_frame[c], S(-1), P.J, 3 * c);
  }
  for (int l = 0; l < P.nl; ++l) P.J[(3 * nc + l) * nv + P.l_iv[l]] = S(P.l_side[l]);
  for (int r = 0; r < n; ++r) minv_apply(m, ws, P.J + r * nv, P.X + r * nv);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      S s = S(0);
      for (int k = 0; k < nv; ++k) s += P.J[i * nv + k] * P.X[j * nv + k];
      P.A[i * n + j] = s;
    }
    S s = S(0);
    for (int k = 0; k < nv; ++k) s += P.J[i * nv + k] * P.v_free[k];
    P.b[i] = s;
    P.normal_row[i] = -1;
    P.mu[i] = S(0);
  }
  for (int c = 0; c < nc; ++c) {
    const int rn = 3 * c;
    S approach = S(0);  // the normal velocity before the step
    for (int k = 0; k < nv; ++k) approach += P.J[rn * nv + k] * v[k * vs];
    const S e = m.pair_restitution(P.c_pair[c]);
    const int branch = target_branch(m, P.c_depth[c], approach, e, dt);
    P.c_branch[c] = branch;
    if (branch == kTargetBaumgarte) P.b[rn] -= m.erp() / dt * (P.c_depth[c] - m.slop());
    else if (branch == kTargetCapped) P.b[rn] -= m.max_correction_velocity();
    else if (branch == kTargetRestitution) P.b[rn] += e * approach;
    for (int r = 1; r < 3; ++r) P.normal_row[rn + r] = rn, P.mu[rn + r] = m.pair_friction(P.c_pair[c]);
  }
  for (int l = 0; l < P.nl; ++l)
    P.b[3 * nc + l] -= limit_target(m, P.l_iq[l], P.l_side[l], q[P.l_iq[l] * qs], dt);
  // --- warm start: the nearest impulse of the same pair within 1 cm, re-projected on the new frame ---
  for (int c = 0; c < nc; ++c) {
    int best = -1;
    S best_distance2 = S(1e-4);
    for (int j = 0; j < P.mem_n; ++j) {
      if (P.mem_pair[j] != P.c_pair[c]) continue;
      const S d[3] = {P.mem_point[j][0] - P.c_point[c][0], P.mem_point[j][1] - P.c_point[c][1],
                      P.mem_point[j][2] - P.c_point[c][2]};
      const S d2 = dot3(d, d);
      if (d2 < best_distance2) best_distance2 = d2, best = j;
    }
    for (int r = 0; r < 3; ++r) P.lambda[3 * c + r] = best < 0 ? S(0) : dot3(P.mem_impulse[best], P.c_frame[c] + 3 * r);
    if (!(P.lambda[3 * c] > S(0))) P.lambda[3 * c] = S(0);
  }
  for (int l = 0; l < P.nl; ++l) P.lambda[3 * nc + l] = P.mem_limit[2 * P.l_iv[l] + (P.l_side[l] > 0 ? 0 : 1)];
  // --- solve, apply ---
  P.converged = pgs_sweeps(m, P);
  if (!P.converged) ws.status |= kFlatSolverNotConverged;
  for (int k = 0; k < nv; ++k) {
    S s = S(0);
    for (int r = 0; r < n; ++r) s += P.X[r * nv + k] * P.lambda[r];
    ws.vplus[k] = P.v_free[k] + s;
  }
  // --- remember the impulses for the next step (not those of a step that diverged) ---
  reset_warm_start(ws);
  for (int r = 0; r < n; ++r)
    if (!finite(P.lambda[r])) return;
  for (int c = 0; c < nc; ++c) {
    P.mem_pair[c] = P.c_pair[c];
    copy3(P.c_point[c], P.mem_point[c]);
    for (int k = 0; k < 3; ++k)
      P.mem_impulse[c][k] = P.lambda[3 * c] * P.c_frame[c][k] + P.lambda[3 * c + 1] * P.c_frame[c][3 + k] +
                            P.lambda[3 * c + 2] * P.c_frame[c][6 + k];
  }
  P.mem_n = nc;
  for (int l = 0; l < P.nl; ++l) P.mem_limit[2 * P.l_iv[l] + (P.l_side[l] > 0 ? 0 : 1)] = P.lambda[3 * nc + l];
}

}  // namespace detail

}  // namespace gradyn::flat
