// Collision of the flat kernels' geom pairs (collision/narrowphase_*.cpp's routines, the pairs
// flat/export.hpp admits): each contact is handed to an emitter, so that penalty contact (forces at
// once, flat/step.hpp) and PGS (rows of a velocity-level problem, flat/pgs.hpp) share one source.
#pragma once

#include "gradyn/flat/geometry.hpp"

namespace gradyn::flat::detail {

// Two spheres (collision/narrowphase.hpp's sphere_sphere): contact from a to b when within margin.
template <class S, class M, class Emit>
GRADYN_HD void sphere_sphere(const M& m, const S* ca, S ra, const S* cb, S rb, Emit& emit) {
  S x[3], n[3], depth, dist;
  if (geometry::sphere_contact(ca, ra, cb, rb, m.margin(), x, n, depth, dist)) emit(x, n, depth);
}

// The world pose of geom g.
template <class S, class M, class W>
GRADYN_HD void geom_pose(const M& m, const W& ws, int g, S* R, S* p) {
  const int b = m.geom_body(g);
  if (b < 0) {
    for (int k = 0; k < 9; ++k) R[k] = m.geom_R(g)[k];
    copy3(m.geom_p(g), p);
  } else {
    compose(ws.R[b], ws.p[b], m.geom_R(g), m.geom_p(g), R, p);
  }
}

// A contact of a plane (normal n, through P) with a point x of the other geom at height h.
template <class S, class Emit>
GRADYN_HD void plane_point(const S* x, S h, const S* n, Emit& emit) {
  const S point[3] = {x[0] - n[0] * h / S(2), x[1] - n[1] * h / S(2), x[2] - n[2] * h / S(2)};
  emit(point, n, -h);
}

// The world poses of pair k's two geoms; false when one is not finite (a diverged state touches
// nothing, as collide_geoms).
template <class S, class W>
GRADYN_HD bool pair_poses(const FlatModel<S>& m, const W& ws, int k, S* RA, S* pA, S* RB, S* pB) {
  geom_pose(m, ws, m.pair_a(k), RA, pA);
  geom_pose(m, ws, m.pair_b(k), RB, pB);
  for (int i = 0; i < 3; ++i)
    if (!finite(pA[i]) || !finite(pB[i])) return false;
  return true;
}

// Collision of pair k (collision/narrowphase_*.cpp's routines): emit(point, normal, depth) for each
// contact, in the engine's order, the normal from the pair's geom a to its geom b.
template <class S, class W, class Emit>
GRADYN_HD void collide_pair(const FlatModel<S>& m, const W& ws, int k, Emit& emit) {
  const int a = m.pair_a(k), b = m.pair_b(k);
  const int ta = m.geom_type(a), tb = m.geom_type(b);
  S RA[9], pA[3], RB[9], pB[3];
  if (!pair_poses(m, ws, k, RA, pA, RB, pB)) return;
  const S* sa = m.geom_size(a);
  const S* sb = m.geom_size(b);
  const S margin = m.margin();
  if (ta == kPlane) {
    S n[3], x[3];
    col3(RA, 2, n);
    if (tb == kSphere) {
      const S h = geometry::plane_height(n, pB, pA, sb[0]);
      if (h > margin) return;
      for (int i = 0; i < 3; ++i) x[i] = pB[i] - sb[0] * n[i];
      plane_point(x, h, n, emit);
    } else if (tb == kCapsule) {
      for (int side = -1; side <= 1; side += 2) {
        S end[3];
        for (int i = 0; i < 3; ++i) end[i] = pB[i] + RB[3 * i + 2] * (sb[1] * S(side));
        const S h = geometry::plane_height(n, end, pA, sb[0]);
        if (h > margin) continue;
        for (int i = 0; i < 3; ++i) x[i] = end[i] - sb[0] * n[i];
        plane_point(x, h, n, emit);
      }
    } else if (tb == kBox) {  // the corners below the margin, the 4 deepest
      S hs[8], xs[8][3];
      const int count = geometry::plane_box_corners(RB, pB, sb, n, pA, margin, xs, hs);
      for (int c = 0; c < count; ++c) plane_point(xs[c], hs[c], n, emit);
    }
  } else if (ta == kSphere && tb == kSphere) {
    sphere_sphere(m, pA, sa[0], pB, sb[0], emit);
  } else if (ta == kSphere && tb == kCapsule) {
    S p0[3], D[3];
    geometry::capsule_segment(RB, pB, sb[1], p0, D);
    const S r[3] = {pA[0] - p0[0], pA[1] - p0[1], pA[2] - p0[2]};
    const S t = geometry::clamp01(dot3(D, r) / dot3(D, D));
    const S c[3] = {p0[0] + t * D[0], p0[1] + t * D[1], p0[2] + t * D[2]};
    sphere_sphere(m, pA, sa[0], c, sb[0], emit);
  } else if (ta == kCapsule && tb == kCapsule) {
    S a0[3], da[3], b0[3], db[3];
    geometry::capsule_segment(RA, pA, sa[1], a0, da);
    geometry::capsule_segment(RB, pB, sb[1], b0, db);
    const geometry::Overlap<S> o = geometry::parallel_overlap(a0, da, b0, db);
    if (o.parallel) {  // nearly parallel: contacts at both ends of the overlap
      for (int e = 0; e < 2; ++e) {
        const S t = e == 0 ? o.lo : o.hi;
        const S pa[3] = {a0[0] + t * da[0], a0[1] + t * da[1], a0[2] + t * da[2]};
        const S w[3] = {pa[0] - b0[0], pa[1] - b0[1], pa[2] - b0[2]};
        const S u = geometry::clamp01(dot3(db, w) / dot3(db, db));
        const S pb[3] = {b0[0] + u * db[0], b0[1] + u * db[1], b0[2] + u * db[2]};
        sphere_sphere(m, pa, sa[0], pb, sb[0], emit);
      }
      return;
    }
    const geometry::Closest<S> c = geometry::closest_segments(a0, da, b0, db);
    const S pa[3] = {a0[0] + c.s * da[0], a0[1] + c.s * da[1], a0[2] + c.s * da[2]};
    const S pb[3] = {b0[0] + c.t * db[0], b0[1] + c.t * db[1], b0[2] + c.t * db[2]};
    sphere_sphere(m, pa, sa[0], pb, sb[0], emit);
  }
}

}  // namespace gradyn::flat::detail
