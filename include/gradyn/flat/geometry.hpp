// Contact geometry of the flat kernels' pair routines (collision/narrowphase_*.cpp's formulas),
// shared by the forward step (flat/step.hpp) and its reverse (flat/step_vjp.hpp) so that both take
// the same branches: spheres, a box's corners under a plane, capsule segments and their closest
// points.
#pragma once

#include "gradyn/flat/math.hpp"

namespace gradyn::flat::geometry {

template <class S> GRADYN_HD S clamp01(S x) { return x < S(0) ? S(0) : x > S(1) ? S(1) : x; }

/// Two spheres: the contact point x, normal n (from a to b; +z when the centres coincide), depth
/// and centre distance; false when they are farther apart than the margin.
template <class S>
GRADYN_HD bool sphere_contact(const S* ca, S ra, const S* cb, S rb, S margin, S* x, S* n, S& depth, S& dist) {
  const S d[3] = {cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]};
  const S dist2 = dot3(d, d);
  const S reach = ra + rb + margin;
  if (dist2 > reach * reach) return false;
  n[0] = S(0), n[1] = S(0), n[2] = S(1), dist = S(0);
  if (dist2 > S(1e-24)) {
    dist = fsqrt(dist2);
    for (int k = 0; k < 3; ++k) n[k] = d[k] / dist;
  }
  for (int k = 0; k < 3; ++k) x[k] = (ca[k] + ra * n[k] + cb[k] - rb * n[k]) / S(2);
  depth = ra + rb - dist;
  return true;
}

/// Height of point x over the plane through P with unit normal n, less r (a sphere's radius).
template <class S> GRADYN_HD S plane_height(const S* n, const S* x, const S* P, S r) {
  const S d[3] = {x[0] - P[0], x[1] - P[1], x[2] - P[2]};
  return dot3(n, d) - r;
}

/// The corners of a box (rotation RB, centre pB, half-extents h) within the margin of a plane
/// (normal n through P), the four deepest when more: their world points xs and heights hs.
template <class S>
GRADYN_HD int plane_box_corners(const S* RB, const S* pB, const S* h, const S* n, const S* P, S margin, S (*xs)[3],
                                S* hs) {
  int count = 0;
  for (int corner = 0; corner < 8; ++corner) {
    S local[3];
    for (int i = 0; i < 3; ++i) local[i] = h[i] * ((corner >> i) & 1 ? S(1) : S(-1));
    mul3(RB, local, xs[count]);
    for (int i = 0; i < 3; ++i) xs[count][i] += pB[i];
    const S d[3] = {xs[count][0] - P[0], xs[count][1] - P[1], xs[count][2] - P[2]};
    hs[count] = dot3(n, d);
    if (hs[count] > margin) continue;
    ++count;
  }
  while (count > 4) {  // drop the highest
    int hi = 0;
    for (int c = 1; c < count; ++c)
      if (hs[c] > hs[hi]) hi = c;
    hs[hi] = hs[count - 1];
    copy3(xs[count - 1], xs[hi]);
    --count;
  }
  return count;
}

/// A capsule's segment (rotation R, centre p, half-length hl along its z): start a0, direction da.
template <class S> GRADYN_HD void capsule_segment(const S* R, const S* p, S hl, S* a0, S* da) {
  for (int i = 0; i < 3; ++i) a0[i] = p[i] - R[3 * i + 2] * hl, da[i] = (p[i] + R[3 * i + 2] * hl) - a0[i];
}

/// Two nearly parallel segments a0 + t da, b0 + u db: the parameters t0, t1 of b's ends on a, and
/// the overlap [lo, hi] (clamped to a); parallel is false when they are not nearly parallel.
template <class S>
struct Overlap {
  bool parallel = false;
  S t0 = S(0), t1 = S(0), lo = S(0), hi = S(0);
};
template <class S>
GRADYN_HD Overlap<S> parallel_overlap(const S* a0, const S* da, const S* b0, const S* db) {
  Overlap<S> o;
  S cr[3];
  cross3(da, db, cr);
  const S aa = dot3(da, da), ee = dot3(db, db);
  if (!(dot3(cr, cr) / (aa * ee) < S(1e-8))) return o;
  const S r0[3] = {b0[0] - a0[0], b0[1] - a0[1], b0[2] - a0[2]};
  const S r1[3] = {b0[0] + db[0] - a0[0], b0[1] + db[1] - a0[1], b0[2] + db[2] - a0[2]};
  o.t0 = dot3(da, r0) / aa, o.t1 = dot3(da, r1) / aa;
  o.lo = clamp01(o.t0 < o.t1 ? o.t0 : o.t1), o.hi = clamp01(o.t0 < o.t1 ? o.t1 : o.t0);
  o.parallel = o.hi - o.lo > S(1e-9);
  return o;
}

/// Closest points a0 + s da, b0 + t db of two segments (Ericson 5.1.9), with the branch taken:
/// s_raw before its clamp (s_moves: strictly inside [0, 1] on the first formula), t_case 0 when t
/// follows s, -1 or +1 when t was clamped at 0 or 1 and s recomputed (s2_raw before its clamp).
template <class S>
struct Closest {
  S s = S(0), t = S(0), s_raw = S(0), s2_raw = S(0);
  bool s_moves = false;
  int t_case = 0;
};
template <class S>
GRADYN_HD Closest<S> closest_segments(const S* a0, const S* da, const S* b0, const S* db) {
  Closest<S> c;
  const S aa = dot3(da, da), ee = dot3(db, db);
  const S r[3] = {a0[0] - b0[0], a0[1] - b0[1], a0[2] - b0[2]};
  const S f = dot3(db, r), cc = dot3(da, r), bd = dot3(da, db);
  const S denom = aa * ee - bd * bd;
  const bool s_free = denom > S(1e-12) * (aa * ee);
  c.s_raw = s_free ? (bd * f - cc * ee) / denom : S(0);
  c.s = s_free ? clamp01(c.s_raw) : S(0);
  c.s_moves = s_free && c.s_raw > S(0) && c.s_raw < S(1);
  c.t = (bd * c.s + f) / ee;
  if (c.t < S(0)) {
    c.t = S(0), c.t_case = -1;
    c.s2_raw = -cc / aa;
    c.s = clamp01(c.s2_raw);
  } else if (c.t > S(1)) {
    c.t = S(1), c.t_case = 1;
    c.s2_raw = (bd - cc) / aa;
    c.s = clamp01(c.s2_raw);
  }
  return c;
}

}  // namespace gradyn::flat::geometry
