// Reverse mode of one flat step (flat/step.hpp): given the adjoints of (q+, v+), the adjoints of
// q (ambient: quaternion components are plain coordinates), v, tau and ctrl. The same numbers as
// gradyn::step_vjp with penalty or PGS contact (or none), on plain arrays for g++ and nvcc alike.
// PGS's part is in flat/pgs_vjp.hpp.
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

#include "gradyn/flat/pgs_vjp.hpp"
#include "gradyn/flat/step.hpp"

namespace gradyn::flat {

template <class S, int MaxBodies, int MaxDofs, int MaxRows = 0>
struct StepVjpWorkspace {
  StepWorkspace<S, MaxBodies, MaxDofs, MaxRows> fw;  // the forward step, recomputed (PGS from a cold start)
  S q_next[MaxDofs + MaxBodies], v_next[MaxDofs];
  S psi[MaxBodies][6];   // sum over the path to the root of S_k w_k: the adjoint of a body's force
  S ovb[MaxBodies][6], oab[MaxBodies][6];  // adjoints of the world velocities and accelerations
  S g[MaxBodies][6];     // adjoint of a rigid motion of the body (then of its subtree)
  S Fr[MaxBodies][6];    // RNEA's body forces, then their subtree sums
  S w[MaxDofs], vnb[MaxDofs];
  PgsVjpBuffers<S, MaxBodies, MaxDofs, MaxRows> pgsb;  // PGS's reverse (flat/pgs_vjp.hpp)
};

namespace detail {

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
template <class S, int MaxBodies, int MaxDofs, int MaxRows>
GRADYN_HD void step_vjp(const FlatModel<S>& m, StepVjpWorkspace<S, MaxBodies, MaxDofs, MaxRows>& ws, const S* q, int qs,
                        const S* v, int vs, const S* tau, int ts, const S* ctrl, int cs, S dt, const S* qnb, int qbs,
                        const S* vnb_in, int vbs, S* q_bar, S* v_bar, S* tau_bar, int tbs, S* ctrl_bar, int cbs) {
  auto& fw = ws.fw;
  // PGS: the step is differentiated as a function of (q, v, tau, ctrl) alone, from a cold start,
  // as the engine's step_vjp does (converged solves agree to the PGS tolerance either way)
  reset_warm_start(fw);
  step(m, fw, q, qs, v, vs, tau, ts, ctrl, cs, dt, ws.q_next, 1, ws.v_next, 1);
  constexpr bool pgs_kernels = decltype(ws.pgsb)::enabled;
  bool impulses = false;
  if constexpr (pgs_kernels) impulses = m.pgs_on() && fw.pgs.n > 0;
  const int nb = m.nb, nv = m.nv;
  for (int k = 0; k < m.nq; ++k) q_bar[k * qbs] = S(0);
  for (int k = 0; k < nv; ++k) v_bar[k * vbs] = S(0);
  for (int i = 0; i < nb; ++i)
    for (int c = 0; c < 6; ++c) ws.ovb[i][c] = ws.oab[i][c] = ws.g[i][c] = S(0);

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
  // --- PGS: the impulses' adjoint through the rows (adds J^T b_bar to vnb) ---
  if constexpr (pgs_kernels)
    if (impulses) detail::pgs_rows_vjp(m, ws, q, qs, dt, q_bar, qbs, v_bar, vbs);
  // --- v+ = v + dt qdd ---
  for (int k = 0; k < nv; ++k) v_bar[k * vbs] += ws.vnb[k];
  // --- w = M^-1 (dt vnb), with ABA's factorisation ---
  for (int k = 0; k < nv; ++k) ws.w[k] = dt * ws.vnb[k];
  detail::minv_apply(m, fw, ws.w, ws.w);
  if constexpr (pgs_kernels)
    if (impulses) detail::pgs_reverse_forces(m, ws, dt);
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
    if (!m.penalty_on()) continue;
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
  if constexpr (pgs_kernels)
    if (impulses) detail::pgs_contacts_vjp(m, ws, dt);
  if (m.penalty_on())
    for (int k = 0; k < m.npairs; ++k) {
      const int ba = m.geom_body(m.pair_a(k)), bb = m.geom_body(m.pair_b(k));
      const S mu = m.pair_friction(k);
      auto bar = [&](const S* x, const S* n, S d, S* xb, S* nb, S& db) {
        return detail::penalty_contact_vjp(m, ws, ba, bb, mu, x, n, d, xb, nb, db);
      };
      detail::collide_pair_vjp(m, ws, k, bar);
    }
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
      if constexpr (pgs_kernels)
        if (impulses)  // the rows' Jacobian: b_bar's forces against v+, restitution's against v
          for (int k = 0; k < 6; ++k)
            sbar[k] += ws.v_next[iv + c] * ws.pgsb.F2[i][k] + v[(iv + c) * vs] * ws.pgsb.F3[i][k];
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
