// Reverse mode of one flat step (flat/step.hpp): given the adjoints of (q+, v+), the adjoints of
// q (ambient: quaternion components are plain coordinates), v, tau and ctrl. The same numbers as
// gradyn::step_vjp with penalty contact (or none), on plain arrays for g++ and nvcc alike.
//
// How (no tape; one forward step is recomputed, then four sweeps over the tree):
// - the integrator is reversed joint by joint (the SE(3) and quaternion exponentials of a free joint);
// - qdd = M^-1 (tau_total(q, v) - b(q, v)) gives, with w = M^-1 qdd_bar (ABA's factorisation reused),
//   tau_bar = w and (q, v)_bar += d/d(q, v) [w . tau_total - w . RNEA(q, v, qdd)] at fixed w, qdd;
// - every q-dependence is through quantities attached to bodies (joint subspaces, world inertias,
//   contact features): a twist xi moving body k changes them by xi x (.), so their adjoints gather
//   into one 6-vector g_k per body (L changes by g_k . xi), and a joint's q_bar is its subspace
//   against the sum of g over its subtree;
// - velocities and accelerations are reversed through their recursions (leaves to root).
#pragma once

#include "gradyn/flat/step.hpp"

namespace gradyn::flat {

template <class S, int MaxBodies, int MaxDofs>
struct StepVjpWorkspace {
  StepWorkspace<S, MaxBodies, MaxDofs> fw;  // the forward step, recomputed
  S q_next[MaxDofs + MaxBodies], v_next[MaxDofs];
  S psi[MaxBodies][6];   // sum over the path to the root of S_k w_k: the adjoint of a body's force
  S ovb[MaxBodies][6], oab[MaxBodies][6];  // adjoints of the world velocities and accelerations
  S g[MaxBodies][6];     // adjoint of a rigid motion of the body (then of its subtree)
  S Fr[MaxBodies][6];    // RNEA's body forces, then their subtree sums
  S pAb[MaxBodies][6], ab[MaxBodies][6];  // scratch of the M^-1 solve
  S w[MaxDofs], vnb[MaxDofs];
};

namespace detail {

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

// Adjoint of raw quaternion entries (x, y, z, w) from the adjoint theta_bar of the rotation vector
// of a change of the normalised quaternion: dtheta = (2 / |q|) vec(dq (x) q^*).
template <class S> GRADYN_HD void quaternion_bar_from_rotation(const S* quat, const S* theta_bar, S* quat_bar) {
  const S n = fsqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
  const S x = quat[0] / n, y = quat[1] / n, z = quat[2] / n, w = quat[3] / n;
  const S v[3] = {x, y, z};
  S vt[3];
  cross3(v, theta_bar, vt);
  const S f = S(2) / n;
  for (int k = 0; k < 3; ++k) quat_bar[k] += f * (w * theta_bar[k] - vt[k]);
  quat_bar[3] += -f * dot3(v, theta_bar);
}

// Hamilton product in (w, x, y, z) order.
template <class S> GRADYN_HD void qmul(const S* a, const S* b, S* out) {
  out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// Reverse of penalty_contact: adjoints of the contact point x, normal n and depth d, and the world
// velocity adjoints of the two bodies, given psi (the adjoint of each body's force). Nothing when
// the contact pushes with no force (depth <= 0 or the force clamped at 0).
template <class S, class W>
GRADYN_HD bool penalty_contact_vjp(const FlatModel<S>& m, W& ws, int body_a, int body_b, S mu, const S* x,
                                   const S* n, S d, S* xb, S* nb, S& db) {
  auto& fw = ws.fw;
  if (!(d > S(0))) return false;
  S u[3], t[3];
  relative_point_velocity(fw, body_a, body_b, x, u);
  const S un = dot3(u, n);
  const S kd = m.contact_stiffness() * fpow(d, m.contact_exponent());
  const S rate = S(1) - m.contact_damping() * un;
  const S fn = kd * rate;
  if (!(fn > S(0))) return false;
  const S vt[3] = {u[0] - un * n[0], u[1] - un * n[1], u[2] - un * n[2]};
  const S vs = m.velocity_scale();
  const S gi = S(1) / fsqrt(dot3(vt, vt) + vs * vs);
  const S s = -mu * fn * gi;
  S f[3];
  for (int k = 0; k < 3; ++k) f[k] = fn * n[k] + s * vt[k];
  // f_bar: the adjoint twist field psi at x, b's minus a's; x_bar from the moment x x f
  S fb[3] = {S(0), S(0), S(0)};
  for (int side = 0; side < 2; ++side) {
    const int body = side == 0 ? body_b : body_a;
    if (body < 0) continue;
    const S sign = side == 0 ? S(1) : S(-1);
    const S* P = ws.psi[body];
    cross3(P, x, t);  // psi_ang x x
    for (int k = 0; k < 3; ++k) fb[k] += sign * (P[3 + k] + t[k]);
    cross3(f, P, t);  // d(psi_ang . (x x f))/dx = f x psi_ang
    for (int k = 0; k < 3; ++k) xb[k] += sign * t[k];
  }
  // f = fn n + s vt,  s = -mu fn g,  g = (|vt|^2 + vs^2)^-1/2
  const S vtf = dot3(vt, fb);
  S fnb = dot3(n, fb) - mu * gi * vtf;
  S vtb[3];
  for (int k = 0; k < 3; ++k) vtb[k] = s * fb[k] + mu * fn * gi * gi * gi * vtf * vt[k], nb[k] += fn * fb[k];
  // vt = u - un n
  S ub[3] = {vtb[0], vtb[1], vtb[2]};
  S unb = -dot3(n, vtb);
  for (int k = 0; k < 3; ++k) nb[k] -= un * vtb[k];
  // fn = k d^p (1 - c un)
  db += fnb * m.contact_stiffness() * m.contact_exponent() * fpow(d, m.contact_exponent() - S(1)) * rate;
  unb += fnb * kd * (-m.contact_damping());
  for (int k = 0; k < 3; ++k) ub[k] += unb * n[k], nb[k] += unb * u[k];
  // u = v_b(x) - v_a(x), v(x) = ov_lin + ov_ang x x
  for (int side = 0; side < 2; ++side) {
    const int body = side == 0 ? body_b : body_a;
    if (body < 0) continue;
    const S sign = side == 0 ? S(1) : S(-1);
    cross3(x, ub, t);
    for (int k = 0; k < 3; ++k) ws.ovb[body][3 + k] += sign * ub[k], ws.ovb[body][k] += sign * t[k];
    cross3(ub, fw.ov[body], t);
    for (int k = 0; k < 3; ++k) xb[k] += sign * t[k];
  }
  return true;
}

// Reverse of sphere_sphere: the centres' adjoints from those of the contact (x, n, depth).
template <class S, class M, class W>
GRADYN_HD void sphere_sphere_vjp(const M& m, W& ws, int body_a, int body_b, S mu, const S* ca, S ra, const S* cb,
                                 S rb, S* cab, S* cbb) {
  S x[3], n[3], depth, dist;
  if (!geometry::sphere_contact(ca, ra, cb, rb, m.margin(), x, n, depth, dist)) return;
  S xb[3] = {S(0), S(0), S(0)}, nbar[3] = {S(0), S(0), S(0)}, depthb = S(0);
  if (!penalty_contact_vjp(m, ws, body_a, body_b, mu, x, n, depth, xb, nbar, depthb)) return;
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
template <class S, class M, class W>
GRADYN_HD void plane_point_vjp(const M& m, W& ws, int body_a, int body_b, S mu, const S* xs, S r, const S* P,
                               const S* n, S* xsb, S* nb, S* Pb) {
  const S d[3] = {xs[0] - P[0], xs[1] - P[1], xs[2] - P[2]};
  const S h = geometry::plane_height(n, xs, P, r);
  if (h > m.margin()) return;
  S xo[3], pt[3];
  for (int k = 0; k < 3; ++k) xo[k] = xs[k] - r * n[k], pt[k] = xo[k] - n[k] * h / S(2);
  S ptb[3] = {S(0), S(0), S(0)}, nc[3] = {S(0), S(0), S(0)}, depthb = S(0);
  if (!penalty_contact_vjp(m, ws, body_a, body_b, mu, pt, n, -h, ptb, nc, depthb)) return;
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

// Reverse of collide_pair: the pair's features' adjoints gathered into g of its two bodies.
template <class S, class W>
GRADYN_HD void collide_pair_vjp(const FlatModel<S>& m, W& ws, int k) {
  auto& fw = ws.fw;
  const int a = m.pair_a(k), b = m.pair_b(k);
  const int ta = m.geom_type(a), tb = m.geom_type(b), ba = m.geom_body(a), bb = m.geom_body(b);
  const S mu = m.pair_friction(k);
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
      plane_point_vjp(m, ws, ba, bb, mu, pB, sb[0], pA, n, cbar, nbar, Pbar);
      if (gb) attached_point_bar(gb, pB, cbar);
    } else if (tb == kCapsule) {
      for (int side = -1; side <= 1; side += 2) {
        S end[3], ebar[3] = {S(0), S(0), S(0)};
        for (int i = 0; i < 3; ++i) end[i] = pB[i] + RB[3 * i + 2] * (sb[1] * S(side));
        plane_point_vjp(m, ws, ba, bb, mu, end, sb[0], pA, n, ebar, nbar, Pbar);
        if (gb) attached_point_bar(gb, end, ebar);
      }
    } else if (tb == kBox) {  // the same corners as the forward pass
      S hs[8], xs[8][3];
      const int count = geometry::plane_box_corners(RB, pB, sb, n, pA, m.margin(), xs, hs);
      for (int c = 0; c < count; ++c) {
        S xbar[3] = {S(0), S(0), S(0)};
        plane_point_vjp(m, ws, ba, bb, mu, xs[c], S(0), pA, n, xbar, nbar, Pbar);
        if (gb) attached_point_bar(gb, xs[c], xbar);
      }
    }
    if (ga) {
      attached_point_bar(ga, pA, Pbar);
      attached_direction_bar(ga, n, nbar);
    }
  } else if (ta == kSphere && tb == kSphere) {
    S cab[3] = {S(0), S(0), S(0)}, cbb[3] = {S(0), S(0), S(0)};
    sphere_sphere_vjp(m, ws, ba, bb, mu, pA, sa[0], pB, sb[0], cab, cbb);
    if (ga) attached_point_bar(ga, pA, cab);
    if (gb) attached_point_bar(gb, pB, cbb);
  } else if (ta == kSphere && tb == kCapsule) {
    S p0[3], D[3];
    geometry::capsule_segment(RB, pB, sb[1], p0, D);
    const S r[3] = {pA[0] - p0[0], pA[1] - p0[1], pA[2] - p0[2]};
    const S t = geometry::clamp01(dot3(D, r) / dot3(D, D));
    const S c[3] = {p0[0] + t * D[0], p0[1] + t * D[1], p0[2] + t * D[2]};
    S cab[3] = {S(0), S(0), S(0)}, ccb[3] = {S(0), S(0), S(0)};
    sphere_sphere_vjp(m, ws, ba, bb, mu, pA, sa[0], c, sb[0], cab, ccb);
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
        sphere_sphere_vjp(m, ws, ba, bb, mu, pa, ra, pb, rb, pab, pbb);
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
      sphere_sphere_vjp(m, ws, ba, bb, mu, pa, ra, pb, rb, pab, pbb);
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

// The adjoint of an actuator's force: d f / d (ctrl, L, V) on the branch the force took.
template <class S>
GRADYN_HD void actuator_partials(const std::int32_t* ai, const S* ar, S ctrl, S L, S V, S& f_u, S& f_L, S& f_V) {
  S u = ctrl, du = S(1);
  if (ai[3]) {
    if (ctrl < ar[10]) u = ar[10], du = S(0);
    else if (ctrl > ar[11]) u = ar[11], du = S(0);
  }
  S f;
  if (ai[0] == kServo) {
    const S x = ar[7] * (u - L);
    S inner = x, dx = S(1);
    if (x > ar[9]) inner = ar[9], dx = S(0);
    else if (x < -ar[9]) inner = -ar[9], dx = S(0);
    f = ar[8] * (inner - V);
    f_u = ar[8] * dx * ar[7] * du;
    f_L = -ar[8] * dx * ar[7];
    f_V = -ar[8];
  } else {
    const S gain = ar[1] + ar[2] * L + ar[3] * V;
    f = gain * u + ar[4] + ar[5] * L + ar[6] * V;
    f_u = gain * du;
    f_L = ar[2] * u + ar[5];
    f_V = ar[3] * u + ar[6];
  }
  if (ai[4] && (f < ar[12] || f > ar[13])) f_u = f_L = f_V = S(0);
}

// The adjoint of a subspace column of body i, DoF k: from vj = S v, from S qdd in oa, and from
// tau_k = S . F of the contact forces (plus) and of RNEA (minus) over the subtree.
template <class S, class W>
GRADYN_HD void column_bar(const W& ws, int i, S vk, S qddk, S wk, const S* vjb, S* sbar) {
  for (int c = 0; c < 6; ++c)
    sbar[c] = vjb[c] * vk + ws.oab[i][c] * qddk + wk * (ws.fw.F[i][c] - ws.Fr[i][c]);
}

}  // namespace detail

/// Reverse of step(): recomputes the forward step from (q, v, tau, ctrl), then, given q_next_bar
/// and v_next_bar (strides qbs, vbs), writes q_bar (nq, ambient) and v_bar (nv) (strides as the
/// adjoints of the next state), and tau_bar (nv) and ctrl_bar (nu) when they are not null.
template <class S, int MaxBodies, int MaxDofs>
GRADYN_HD void step_vjp(const FlatModel<S>& m, StepVjpWorkspace<S, MaxBodies, MaxDofs>& ws, const S* q, int qs,
                        const S* v, int vs, const S* tau, int ts, const S* ctrl, int cs, S dt, const S* qnb, int qbs,
                        const S* vnb_in, int vbs, S* q_bar, S* v_bar, S* tau_bar, int tbs, S* ctrl_bar, int cbs) {
  auto& fw = ws.fw;
  step(m, fw, q, qs, v, vs, tau, ts, ctrl, cs, dt, ws.q_next, 1, ws.v_next, 1);
  const int nb = m.nb, nv = m.nv;
  for (int k = 0; k < m.nq; ++k) q_bar[k * qbs] = S(0);
  for (int k = 0; k < nv; ++k) v_bar[k * vbs] = S(0);
  for (int i = 0; i < nb; ++i)
    for (int c = 0; c < 6; ++c) ws.ovb[i][c] = ws.oab[i][c] = ws.g[i][c] = ws.pAb[i][c] = S(0);

  // --- the integrator, reversed: vnb = adjoint of v+ ---
  for (int i = 0; i < nb; ++i) {
    const int iq = m.iq(i), iv = m.iv(i);
    if (m.joint(i) != kFree) {
      q_bar[iq * qbs] += qnb[iq * qbs];
      ws.vnb[iv] = vnb_in[iv * vbs] + dt * qnb[iq * qbs];
      continue;
    }
    S vn[6];
    for (int c = 0; c < 6; ++c) vn[c] = ws.v_next[iv + c];
    const S lin[3] = {dt * vn[0], dt * vn[1], dt * vn[2]}, ang[3] = {dt * vn[3], dt * vn[4], dt * vn[5]};
    const S quat[4] = {q[(iq + 3) * qs], q[(iq + 4) * qs], q[(iq + 5) * qs], q[(iq + 6) * qs]};
    S quat_bar[4] = {S(0), S(0), S(0), S(0)};
    // position: p+ = p + R(q^) y, y = lin + a (ang x lin) + b (ang x (ang x lin))
    const S t2 = dot3(ang, ang);
    S ca, cb, dca, dcb;
    if (t2 < S(1e-10)) {
      ca = S(0.5) - t2 / S(24), cb = S(1) / S(6) - t2 / S(120), dca = S(-1) / S(24), dcb = S(-1) / S(120);
    } else {
      const S t = fsqrt(t2), c = fcos(t), s = fsin(t);
      ca = (S(1) - c) / t2, cb = (t - s) / (t2 * t);
      dca = (s / t2 - S(2) * (S(1) - c) / (t2 * t)) / (S(2) * t);
      dcb = ((S(1) - c) / (t2 * t) - S(3) * (t - s) / (t2 * t2)) / (S(2) * t);
    }
    S k1[3], k2[3], y[3];
    cross3(ang, lin, k1);
    cross3(ang, k1, k2);
    for (int k = 0; k < 3; ++k) y[k] = lin[k] + ca * k1[k] + cb * k2[k];
    const S nq_ = fsqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
    S Rq[9], dp[3], pb[3], yb[3], th[3];
    quat_to_matrix(quat[0] / nq_, quat[1] / nq_, quat[2] / nq_, quat[3] / nq_, Rq);
    mul3(Rq, y, dp);
    for (int k = 0; k < 3; ++k) pb[k] = qnb[(iq + k) * qbs], q_bar[(iq + k) * qbs] += pb[k];
    mul3t(Rq, pb, yb);
    cross3(dp, pb, th);  // d(R y) = dtheta x (R y)
    detail::quaternion_bar_from_rotation(quat, th, quat_bar);
    S linb[3], angb[3], t1[3], t3[3];
    cross3(ang, yb, t1);
    cross3(ang, t1, t3);
    for (int k = 0; k < 3; ++k) linb[k] = yb[k] - ca * t1[k] + cb * t3[k];
    cross3(lin, yb, t1);
    const S wu = dot3(ang, lin), yw = dot3(yb, ang), yu = dot3(yb, lin);
    const S t2b = dot3(yb, k1) * dca + dot3(yb, k2) * dcb;
    for (int k = 0; k < 3; ++k)
      angb[k] = ca * t1[k] + cb * (yb[k] * wu + lin[k] * yw - S(2) * yu * ang[k]) + S(2) * t2b * ang[k];
    // orientation: q+ = r / |r|, r = quat (x) e, e = (c, hs ang)
    S hs, c, dhs, dc;
    if (t2 < S(1e-12)) {
      hs = S(0.5) - t2 / S(48), c = S(1) - t2 / S(8), dhs = S(-1) / S(48), dc = S(-1) / S(8);
    } else {
      const S t = fsqrt(t2), sh = fsin(t / S(2)), ch = fcos(t / S(2));
      hs = sh / t, c = ch;
      dc = -sh / (S(4) * t);
      dhs = (t * ch - S(2) * sh) / (S(4) * t2 * t);
    }
    const S a[4] = {quat[3], quat[0], quat[1], quat[2]};  // (w, x, y, z)
    const S e[4] = {c, hs * ang[0], hs * ang[1], hs * ang[2]};
    S r[4];
    detail::qmul(a, e, r);
    const S rn = fsqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
    const S ob[4] = {qnb[(iq + 6) * qbs], qnb[(iq + 3) * qbs], qnb[(iq + 4) * qbs], qnb[(iq + 5) * qbs]};
    S oo = S(0);
    for (int k = 0; k < 4; ++k) oo += r[k] / rn * ob[k];
    S rb[4];
    for (int k = 0; k < 4; ++k) rb[k] = (ob[k] - r[k] / rn * oo) / rn;
    const S ec[4] = {e[0], -e[1], -e[2], -e[3]}, ac[4] = {a[0], -a[1], -a[2], -a[3]};
    S abar[4], ebar[4];
    detail::qmul(rb, ec, abar);
    detail::qmul(ac, rb, ebar);
    quat_bar[3] += abar[0], quat_bar[0] += abar[1], quat_bar[1] += abar[2], quat_bar[2] += abar[3];
    const S eva = ebar[1] * ang[0] + ebar[2] * ang[1] + ebar[3] * ang[2];
    for (int k = 0; k < 3; ++k) angb[k] += hs * ebar[1 + k] + S(2) * ang[k] * (ebar[0] * dc + eva * dhs);
    for (int k = 0; k < 4; ++k) q_bar[(iq + 3 + k) * qbs] += quat_bar[k];
    for (int k = 0; k < 3; ++k) {
      ws.vnb[iv + k] = vnb_in[(iv + k) * vbs] + dt * linb[k];
      ws.vnb[iv + 3 + k] = vnb_in[(iv + 3 + k) * vbs] + dt * angb[k];
    }
  }
  // --- v+ = v + dt qdd ---
  for (int k = 0; k < nv; ++k) v_bar[k * vbs] += ws.vnb[k];
  // --- w = M^-1 (dt vnb), with ABA's factorisation (pass 2 without bias, pass 3 from rest) ---
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = m.iv(i), par = m.parent(i);
    if (m.joint(i) == kFree) {
      S Scol[6][6], U[6][6], D[36], rhs[6];
      for (int c = 0; c < 6; ++c) {
        detail::free_column(fw.R[i], fw.p[i], c, Scol[c]);
        mul6(fw.Ia[i], Scol[c], U[c]);
      }
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) D[6 * r + c] = dot6(Scol[r], U[c]) + (r == c ? m.armature(iv + r) : S(0));
      for (int c = 0; c < 6; ++c) rhs[c] = dt * ws.vnb[iv + c] - dot6(Scol[c], ws.pAb[i]);
      detail::solve6(D, rhs, ws.w + iv);
      for (int k = 0; k < 6; ++k) {
        ws.ab[i][k] = S(0);
        for (int c = 0; c < 6; ++c) ws.ab[i][k] += Scol[c][k] * ws.w[iv + c];
      }
      continue;
    }
    const S u = dt * ws.vnb[iv] - dot6(fw.Sm[i], ws.pAb[i]);
    fw.u[i] = u;  // (the forward's u is spent: reuse the slot)
    if (par >= 0)
      for (int k = 0; k < 6; ++k) ws.pAb[par][k] += ws.pAb[i][k] + fw.U[i][k] * fw.Dinv[i] * u;
  }
  for (int i = 0; i < nb; ++i) {
    if (m.joint(i) == kFree) continue;
    const int iv = m.iv(i), par = m.parent(i);
    for (int k = 0; k < 6; ++k) ws.ab[i][k] = par >= 0 ? ws.ab[par][k] : S(0);
    const S wi = fw.Dinv[i] * (fw.u[i] - dot6(fw.U[i], ws.ab[i]));
    ws.w[iv] = wi;
    for (int k = 0; k < 6; ++k) ws.ab[i][k] += fw.Sm[i][k] * wi;
  }
  if (tau_bar)
    for (int k = 0; k < nv; ++k) tau_bar[k * tbs] = ws.w[k];
  // --- generalised forces: actuators, passive, joint limits (tau_total's direct terms) ---
  for (int k = 0; k < m.nu; ++k) {
    const std::int32_t* ai = m.actuator_ints(k);
    const S* ar = m.actuator_reals(k);
    const S gear = ar[0], wk = ws.w[ai[2]];
    S f_u, f_L, f_V;
    detail::actuator_partials(ai, ar, ctrl ? ctrl[k * cs] : S(0), gear * q[ai[1] * qs], gear * v[ai[2] * vs], f_u,
                              f_L, f_V);
    if (ctrl_bar) ctrl_bar[k * cbs] = gear * f_u * wk;
    q_bar[ai[1] * qbs] += gear * gear * f_L * wk;
    v_bar[ai[2] * vbs] += gear * gear * f_V * wk;
  }
  for (int i = 0; i < nb; ++i) {
    const int iv = m.iv(i), iq = m.iq(i);
    if (m.joint(i) == kFree) {
      for (int c = 0; c < 6; ++c) v_bar[(iv + c) * vbs] -= m.damping(iv + c) * ws.w[iv + c];
      continue;
    }
    v_bar[iv * vbs] -= m.damping(iv) * ws.w[iv];
    if (m.stiffness(iv) != S(0)) q_bar[iq * qbs] -= m.stiffness(iv) * ws.w[iv];
    if (!m.contact_on()) continue;
    for (int side = 1; side >= -1; side -= 2) {  // d(side f)/dq = -k_l, d(side f)/dv = -c_l while pushing
      if (!(detail::limit_push(m, iq, side, q[iq * qs], v[iv * vs]) > S(0))) continue;
      q_bar[iq * qbs] -= m.limit_stiffness() * ws.w[iv];
      v_bar[iv * vbs] -= m.limit_damping() * ws.w[iv];
    }
  }
  // --- psi_i = sum over the path of S_k w_k (root to leaves) ---
  for (int i = 0; i < nb; ++i) {
    const int iv = m.iv(i), par = m.parent(i);
    for (int k = 0; k < 6; ++k) ws.psi[i][k] = par >= 0 ? ws.psi[par][k] : S(0);
    if (m.joint(i) == kFree) {
      for (int c = 0; c < 6; ++c) {
        S col[6];
        detail::free_column(fw.R[i], fw.p[i], c, col);
        for (int k = 0; k < 6; ++k) ws.psi[i][k] += col[k] * ws.w[iv + c];
      }
    } else {
      for (int k = 0; k < 6; ++k) ws.psi[i][k] += fw.Sm[i][k] * ws.w[iv];
    }
  }
  // --- RNEA's body forces f = I oa + ov x* (I ov), at fixed qdd; their adjoint is -psi ---
  for (int i = 0; i < nb; ++i) {
    S I6[36], Ioa[6], h[6], bias[6], fb[6], Ifb[6], hb[6], Ihb[6], t[6];
    detail::world_inertia(m, i, fw.R[i], fw.p[i], I6);
    mul6(I6, fw.oa[i], Ioa);
    mul6(I6, fw.ov[i], h);
    cross_force(fw.ov[i], h, bias);
    for (int k = 0; k < 6; ++k) ws.Fr[i][k] = Ioa[k] + bias[k], fb[k] = -ws.psi[i][k];
    mul6(I6, fb, Ifb);
    for (int k = 0; k < 6; ++k) ws.oab[i][k] += Ifb[k];
    // bias = ov x* h: h_bar = -(ov x fb); ov_bar += [n x fb_a + f x fb_l; f x fb_a]
    cross_motion(fw.ov[i], fb, t);
    for (int k = 0; k < 6; ++k) hb[k] = -t[k];
    S c1[3], c2[3];
    cross3(h, fb, c1);
    cross3(h + 3, fb + 3, c2);
    for (int k = 0; k < 3; ++k) ws.ovb[i][k] += c1[k] + c2[k];
    cross3(h + 3, fb, c1);
    for (int k = 0; k < 3; ++k) ws.ovb[i][3 + k] += c1[k];
    mul6(I6, hb, Ihb);
    for (int k = 0; k < 6; ++k) ws.ovb[i][k] += Ihb[k];
    // I moves with the body: y^T dI x = -(cross_force(y, I x) + cross_force(x, I y)) . xi
    cross_force(fb, Ioa, t);
    for (int k = 0; k < 6; ++k) ws.g[i][k] -= t[k];
    cross_force(fw.oa[i], Ifb, t);
    for (int k = 0; k < 6; ++k) ws.g[i][k] -= t[k];
    cross_force(hb, h, t);
    for (int k = 0; k < 6; ++k) ws.g[i][k] -= t[k];
    cross_force(fw.ov[i], Ihb, t);
    for (int k = 0; k < 6; ++k) ws.g[i][k] -= t[k];
  }
  for (int i = nb - 1; i >= 0; --i) {  // RNEA's subtree sums (fw.F holds the contact forces' already)
    const int par = m.parent(i);
    if (par >= 0)
      for (int k = 0; k < 6; ++k) ws.Fr[par][k] += ws.Fr[i][k];
  }
  // --- contact forces (their points, normals, depths and velocities) ---
  if (m.contact_on())
    for (int k = 0; k < m.npairs; ++k) detail::collide_pair_vjp(m, ws, k);
  // --- the velocity and acceleration recursions (leaves to root), subspaces, then q_bar ---
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = m.iv(i), iq = m.iq(i), par = m.parent(i);
    const bool free = m.joint(i) == kFree;
    const int ncols = free ? 6 : 1;
    S cols[6][6], vj[6] = {S(0), S(0), S(0), S(0), S(0), S(0)};
    for (int c = 0; c < ncols; ++c) {
      if (free) detail::free_column(fw.R[i], fw.p[i], c, cols[c]);
      else
        for (int k = 0; k < 6; ++k) cols[c][k] = fw.Sm[i][k];
      for (int k = 0; k < 6; ++k) vj[k] += cols[c][k] * v[(iv + c) * vs];
    }
    // oa_i = oa_p + ov_i x vj + S qdd;  ov_i = ov_p + vj
    S vjb[6], t[6];
    cross_force(vj, ws.oab[i], t);  // oc = ov x vj: ov's part first, then all of ov_bar reaches vj
    for (int k = 0; k < 6; ++k) ws.ovb[i][k] += t[k];
    cross_force(fw.ov[i], ws.oab[i], t);
    for (int k = 0; k < 6; ++k) vjb[k] = -t[k] + ws.ovb[i][k];
    if (par >= 0)
      for (int k = 0; k < 6; ++k) ws.oab[par][k] += ws.oab[i][k], ws.ovb[par][k] += ws.ovb[i][k];
    // vj = S v: v_bar; each column's adjoint moves with the body
    for (int c = 0; c < ncols; ++c) {
      v_bar[(iv + c) * vbs] += dot6(cols[c], vjb);
      S sbar[6];
      detail::column_bar(ws, i, v[(iv + c) * vs], fw.qdd[iv + c], ws.w[iv + c], vjb, sbar);
      cross_force(cols[c], sbar, t);
      for (int k = 0; k < 6; ++k) ws.g[i][k] += t[k];
    }
    // g over the subtree (the children's are in already) -> this joint's q_bar
    const S* G = ws.g[i];
    if (!free) {
      q_bar[iq * qbs] += dot6(fw.Sm[i], G);
    } else {
      // xi = [dtheta_w; p x dtheta_w + P.R dp]: dp_bar = P.R^T G_lin, theta_bar = P.R^T (G_ang + G_lin x p)
      const S* PR = m.placement_R(i);
      S pbar[3], thw[3], thj[3];
      mul3t(PR, G + 3, pbar);
      cross3(G + 3, fw.p[i], thw);
      for (int k = 0; k < 3; ++k) thw[k] += G[k];
      mul3t(PR, thw, thj);
      for (int k = 0; k < 3; ++k) q_bar[(iq + k) * qbs] += pbar[k];
      const S quat[4] = {q[(iq + 3) * qs], q[(iq + 4) * qs], q[(iq + 5) * qs], q[(iq + 6) * qs]};
      S quat_bar[4] = {S(0), S(0), S(0), S(0)};
      detail::quaternion_bar_from_rotation(quat, thj, quat_bar);
      for (int k = 0; k < 4; ++k) q_bar[(iq + 3 + k) * qbs] += quat_bar[k];
    }
    if (par >= 0)
      for (int k = 0; k < 6; ++k) ws.g[par][k] += G[k];
  }
}

}  // namespace gradyn::flat
