// Reverse of the flat collision routines (flat/collide.hpp): given each contact's adjoints (point,
// normal, depth), the adjoints of the pair's geometric features, gathered as rigid-motion adjoints
// g of the bodies that carry them (flat/step_vjp.hpp explains g). Penalty contact (flat/step_vjp.hpp)
// and PGS (flat/pgs_vjp.hpp) supply the contacts' adjoints.
#pragma once

#include "gradyn/flat/collide.hpp"

namespace gradyn::flat::detail {

// g += [P x P_bar; P_bar]: the adjoint of a world point P carried by the body (dP = v + omega x P).
template <class S> GRADYN_HD void attached_point_bar(S* g, const S* P, const S* Pb) {
  S t[3];
  cross3(P, Pb, t);
  for (int k = 0; k < 3; ++k) g[k] += t[k], g[3 + k] += Pb[k];
}
// g += [D x D_bar; 0]: the adjoint of a direction D turning with the body (dD = omega x D).
template <class S> GRADYN_HD void attached_direction_bar(S* g, const S* D, const S* Db) {
  S t[3];
  cross3(D, Db, t);
  for (int k = 0; k < 3; ++k) g[k] += t[k];
}

// Reverse of sphere_sphere: the centres' adjoints from those of the contact (x, n, depth).
// bar(x, n, depth, x_bar, n_bar, depth_bar) adds the contact's adjoints (false: none).
template <class S, class M, class Bar>
GRADYN_HD void sphere_sphere_vjp(const M& m, const S* ca, S ra, const S* cb, S rb, S* cab, S* cbb, Bar& bar) {
  S x[3], n[3], depth, dist;
  if (!geometry::sphere_contact(ca, ra, cb, rb, m.margin(), x, n, depth, dist)) return;
  S xb[3] = {S(0), S(0), S(0)}, nbar[3] = {S(0), S(0), S(0)}, depthb = S(0);
  if (!bar(x, n, depth, xb, nbar, depthb)) return;
  for (int k = 0; k < 3; ++k) cab[k] += xb[k] / S(2), cbb[k] += xb[k] / S(2), nbar[k] += (ra - rb) / S(2) * xb[k];
  if (dist > S(0)) {  // n = d / |d|, depth = ra + rb - |d| (d = cb - ca)
    const S nn = dot3(n, nbar);
    for (int k = 0; k < 3; ++k) {
      const S dbk = (nbar[k] - n[k] * nn) / dist - depthb * n[k];
      cbb[k] += dbk, cab[k] -= dbk;
    }
  }
}

// Reverse of a plane contact at the point xo of the other geom, height h over the plane (normal n
// through P): point = xo - n h / 2, depth = -h, h = n . (xo' - P) - r (xo' the geom's point before
// the radius; xo = xo' - r n). Adds to the adjoints of xo', n and P.
template <class S, class M, class Bar>
GRADYN_HD void plane_point_vjp(const M& m, const S* xs, S r, const S* P, const S* n, S* xsb, S* nb, S* Pb, Bar& bar) {
  const S d[3] = {xs[0] - P[0], xs[1] - P[1], xs[2] - P[2]};
  const S h = geometry::plane_height(n, xs, P, r);
  if (h > m.margin()) return;
  S xo[3], pt[3];
  for (int k = 0; k < 3; ++k) xo[k] = xs[k] - r * n[k], pt[k] = xo[k] - n[k] * h / S(2);
  S ptb[3] = {S(0), S(0), S(0)}, nc[3] = {S(0), S(0), S(0)}, depthb = S(0);
  if (!bar(pt, n, -h, ptb, nc, depthb)) return;
  // pt = xo - n h / 2 (xo = xs - r n), depth = -h
  const S hb = -dot3(ptb, n) / S(2) - depthb;
  for (int k = 0; k < 3; ++k) {
    xsb[k] += ptb[k] + hb * n[k];
    nb[k] += nc[k] - ptb[k] * h / S(2) - r * ptb[k] + hb * d[k];
    Pb[k] -= hb * n[k];
  }
}

// Adjoint of t = clamp01(D . (c - p0) / |D|^2) into D_bar, c_bar, p0_bar (nothing when clamped).
template <class S> GRADYN_HD void closest_on_segment_vjp(const S* p0, const S* D, const S* c, S tb, S* p0b, S* Db, S* cb) {
  const S r[3] = {c[0] - p0[0], c[1] - p0[1], c[2] - p0[2]};
  const S DD = dot3(D, D), t = dot3(D, r) / DD;
  if (!(t > S(0) && t < S(1))) return;
  for (int k = 0; k < 3; ++k) {
    Db[k] += tb * (r[k] - S(2) * t * D[k]) / DD;
    cb[k] += tb * D[k] / DD;
    p0b[k] -= tb * D[k] / DD;
  }
}

// Reverse of collide_pair: given each contact's adjoints (bar, as sphere_sphere_vjp's, called in
// collide_pair's order), the pair's features' adjoints gathered into g of its two bodies.
template <class S, class W, class Bar>
GRADYN_HD void collide_pair_vjp(const FlatModel<S>& m, W& ws, int k, Bar& bar) {
  auto& fw = ws.fw;
  const int a = m.pair_a(k), b = m.pair_b(k);
  const int ta = m.geom_type(a), tb = m.geom_type(b), ba = m.geom_body(a), bb = m.geom_body(b);
  S RA[9], pA[3], RB[9], pB[3];
  if (!pair_poses(m, fw, k, RA, pA, RB, pB)) return;
  const S* sa = m.geom_size(a);
  const S* sb = m.geom_size(b);
  S* ga = ba >= 0 ? ws.g[ba] : nullptr;
  S* gb = bb >= 0 ? ws.g[bb] : nullptr;
  if (ta == kPlane) {
    S n[3], nbar[3] = {S(0), S(0), S(0)}, Pbar[3] = {S(0), S(0), S(0)};
    col3(RA, 2, n);
    if (tb == kSphere) {
      S cbar[3] = {S(0), S(0), S(0)};
      plane_point_vjp(m, pB, sb[0], pA, n, cbar, nbar, Pbar, bar);
      if (gb) attached_point_bar(gb, pB, cbar);
    } else if (tb == kCapsule) {
      for (int side = -1; side <= 1; side += 2) {
        S end[3], ebar[3] = {S(0), S(0), S(0)};
        for (int i = 0; i < 3; ++i) end[i] = pB[i] + RB[3 * i + 2] * (sb[1] * S(side));
        plane_point_vjp(m, end, sb[0], pA, n, ebar, nbar, Pbar, bar);
        if (gb) attached_point_bar(gb, end, ebar);
      }
    } else if (tb == kBox) {  // the same corners as the forward pass
      S hs[8], xs[8][3];
      const int count = geometry::plane_box_corners(RB, pB, sb, n, pA, m.margin(), xs, hs);
      for (int c = 0; c < count; ++c) {
        S xbar[3] = {S(0), S(0), S(0)};
        plane_point_vjp(m, xs[c], S(0), pA, n, xbar, nbar, Pbar, bar);
        if (gb) attached_point_bar(gb, xs[c], xbar);
      }
    }
    if (ga) {
      attached_point_bar(ga, pA, Pbar);
      attached_direction_bar(ga, n, nbar);
    }
  } else if (ta == kSphere && tb == kSphere) {
    S cab[3] = {S(0), S(0), S(0)}, cbb[3] = {S(0), S(0), S(0)};
    sphere_sphere_vjp(m, pA, sa[0], pB, sb[0], cab, cbb, bar);
    if (ga) attached_point_bar(ga, pA, cab);
    if (gb) attached_point_bar(gb, pB, cbb);
  } else if (ta == kSphere && tb == kCapsule) {
    S p0[3], D[3];
    geometry::capsule_segment(RB, pB, sb[1], p0, D);
    const S r[3] = {pA[0] - p0[0], pA[1] - p0[1], pA[2] - p0[2]};
    const S t = geometry::clamp01(dot3(D, r) / dot3(D, D));
    const S c[3] = {p0[0] + t * D[0], p0[1] + t * D[1], p0[2] + t * D[2]};
    S cab[3] = {S(0), S(0), S(0)}, ccb[3] = {S(0), S(0), S(0)};
    sphere_sphere_vjp(m, pA, sa[0], c, sb[0], cab, ccb, bar);
    S p0b[3] = {ccb[0], ccb[1], ccb[2]}, Db[3] = {t * ccb[0], t * ccb[1], t * ccb[2]};
    closest_on_segment_vjp(p0, D, pA, dot3(ccb, D), p0b, Db, cab);
    if (ga) attached_point_bar(ga, pA, cab);
    if (gb) attached_point_bar(gb, p0, p0b), attached_direction_bar(gb, D, Db);
  } else if (ta == kCapsule && tb == kCapsule) {
    S a0[3], da[3], b0[3], db[3];
    geometry::capsule_segment(RA, pA, sa[1], a0, da);
    geometry::capsule_segment(RB, pB, sb[1], b0, db);
    S a0b[3] = {S(0), S(0), S(0)}, dab[3] = {S(0), S(0), S(0)}, b0b[3] = {S(0), S(0), S(0)},
      dbb[3] = {S(0), S(0), S(0)};
    const S ra = sa[0], rb = sb[0];
    const S aa = dot3(da, da), ee = dot3(db, db);
    const geometry::Overlap<S> o = geometry::parallel_overlap(a0, da, b0, db);
    if (o.parallel) {  // both ends of the overlap, as the forward pass
      for (int e = 0; e < 2; ++e) {
        // t is lo or hi: t0 or t1 (through b0, or b0 + db) unless clamped
        const bool is_t0 = (e == 0) == (o.t0 < o.t1);
        const S traw = is_t0 ? o.t0 : o.t1;
        const S t = e == 0 ? o.lo : o.hi;
        const S pa[3] = {a0[0] + t * da[0], a0[1] + t * da[1], a0[2] + t * da[2]};
        const S w[3] = {pa[0] - b0[0], pa[1] - b0[1], pa[2] - b0[2]};
        const S u = geometry::clamp01(dot3(db, w) / ee);
        const S pb[3] = {b0[0] + u * db[0], b0[1] + u * db[1], b0[2] + u * db[2]};
        S pab[3] = {S(0), S(0), S(0)}, pbb[3] = {S(0), S(0), S(0)};
        sphere_sphere_vjp(m, pa, ra, pb, rb, pab, pbb, bar);
        // pb = b0 + u db, u = closest on b's segment to pa
        for (int i = 0; i < 3; ++i) b0b[i] += pbb[i], dbb[i] += u * pbb[i];
        closest_on_segment_vjp(b0, db, pa, dot3(pbb, db), b0b, dbb, pab);
        // pa = a0 + t da, t = (da . (b0 [+ db] - a0)) / |da|^2 unless clamped
        for (int i = 0; i < 3; ++i) a0b[i] += pab[i], dab[i] += t * pab[i];
        const S tb = dot3(pab, da);
        if (traw > S(0) && traw < S(1)) {
          for (int i = 0; i < 3; ++i) {
            const S rr = b0[i] + (is_t0 ? S(0) : db[i]) - a0[i];
            dab[i] += tb * (rr - S(2) * traw * da[i]) / aa;
            const S rb_i = tb * da[i] / aa;  // adjoint of rr
            b0b[i] += rb_i, a0b[i] -= rb_i;
            if (!is_t0) dbb[i] += rb_i;
          }
        }
      }
    } else {
      // closest points (Ericson 5.1.9), as the forward pass takes them, and their reverse
      const geometry::Closest<S> c = geometry::closest_segments(a0, da, b0, db);
      const S r[3] = {a0[0] - b0[0], a0[1] - b0[1], a0[2] - b0[2]};
      const S f = dot3(db, r), cc = dot3(da, r), bd = dot3(da, db);
      const S denom = aa * ee - bd * bd;
      const S pa[3] = {a0[0] + c.s * da[0], a0[1] + c.s * da[1], a0[2] + c.s * da[2]};
      const S pb[3] = {b0[0] + c.t * db[0], b0[1] + c.t * db[1], b0[2] + c.t * db[2]};
      S pab[3] = {S(0), S(0), S(0)}, pbb[3] = {S(0), S(0), S(0)};
      sphere_sphere_vjp(m, pa, ra, pb, rb, pab, pbb, bar);
      for (int i = 0; i < 3; ++i) a0b[i] += pab[i], dab[i] += c.s * pab[i], b0b[i] += pbb[i], dbb[i] += c.t * pbb[i];
      S sb_ = dot3(pab, da), tb_ = dot3(pbb, db);
      S ab_ = S(0), eb = S(0), fb = S(0), cb_ = S(0), bb_ = S(0);
      if (c.t_case == 0) {  // t = (b s + f) / e
        sb_ += tb_ * bd / ee;
        bb_ += tb_ * c.s / ee;
        fb += tb_ / ee;
        eb -= tb_ * c.t / ee;
        if (c.s_moves) {  // s = (b f - c e) / denom, denom = a e - b^2
          const S Nb = sb_ / denom, Db_ = -sb_ * c.s_raw / denom;
          bb_ += Nb * f - S(2) * bd * Db_;
          fb += Nb * bd;
          cb_ -= Nb * ee;
          eb += -Nb * cc + Db_ * aa;
          ab_ += Db_ * ee;
        }
      } else if (c.s2_raw > S(0) && c.s2_raw < S(1)) {  // s = -c / a or (b - c) / a
        if (c.t_case > 0) bb_ += sb_ / aa;
        cb_ -= sb_ / aa;
        ab_ -= sb_ * c.s2_raw / aa;
      }
      // a = da.da, e = db.db, f = db.r, c = da.r, b = da.db, r = a0 - b0
      for (int i = 0; i < 3; ++i) {
        dab[i] += S(2) * ab_ * da[i] + cb_ * r[i] + bb_ * db[i];
        dbb[i] += S(2) * eb * db[i] + fb * r[i] + bb_ * da[i];
        const S rb_i = fb * db[i] + cb_ * da[i];
        a0b[i] += rb_i, b0b[i] -= rb_i;
      }
    }
    if (ga) attached_point_bar(ga, a0, a0b), attached_direction_bar(ga, da, dab);
    if (gb) attached_point_bar(gb, b0, b0b), attached_direction_bar(gb, db, dbb);
  }
}

}  // namespace gradyn::flat::detail
