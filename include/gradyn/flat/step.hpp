// One semi-implicit Euler step of one world, on a flat model (flat/flat_model.hpp): the same
// stages and the same numbers as gradyn::step with penalty or PGS contact (or none), written on plain
// arrays so that g++ and nvcc compile the one source: the CPU batch (flat/export.hpp) and the
// CUDA backend (cuda/) run it, one world per thread.
//
// Stages, in step()'s order: forward kinematics and the velocity pass (ABA's pass 1), collision
// of the geom pairs with penalty contact forces (contact/penalty.hpp) and the joint-limit springs
// (contact/joint_limits.hpp), actuators (dynamics/actuation.hpp), passive forces, ABA's passes 2
// and 3 (world frame, as dynamics/aba.cpp), then v+ = v + dt a and q+ = q (+) dt v+. Under PGS
// contact (flat/pgs.hpp) the contact forces and limit springs give way to impulses applied to v+.
#pragma once

#include "gradyn/flat/pgs.hpp"

namespace gradyn::flat {

/// Scratch of one world's step, sized for at most MaxBodies bodies and MaxDofs DoFs, and for
/// MaxRows rows of PGS contact (0: a workspace for penalty contact or none). On a GPU it lives in
/// the thread's local memory.
template <class S, int MaxBodies, int MaxDofs, int MaxRows = 0>
struct StepWorkspace {
  S R[MaxBodies][9], p[MaxBodies][3];  // body poses in the world
  S Sm[MaxBodies][6];                  // world motion subspace of a 1-DoF joint
  S ov[MaxBodies][6], oc[MaxBodies][6], oa[MaxBodies][6];
  S Ia[MaxBodies][36], pA[MaxBodies][6];  // articulated inertia and bias force (world frame)
  S U[MaxBodies][6], Dinv[MaxBodies], u[MaxBodies];
  S F[MaxBodies][6];  // contact forces on the bodies, then their subtree sums
  S tau[MaxDofs], qdd[MaxDofs];
  S vplus[MaxDofs];   // PGS: the velocity after the impulses
  S minv_pA[MaxBodies][6], minv_a[MaxBodies][6], minv_u[MaxBodies];  // scratch of detail::minv_apply
  PgsBuffers<S, MaxDofs, MaxRows> pgs;
  std::uint32_t status;
};

namespace detail {

// Hunt-Crossley normal force and smoothed Coulomb friction at one contact (contact/penalty.cpp),
// applied to the bodies of geoms a (-f) and b (+f). normal: from a to b.
template <class S, class M, class W>
GRADYN_HD void penalty_contact(const M& m, W& ws, int body_a, int body_b, S mu, const S* point, const S* normal,
                               S depth) {
  if (depth > m.max_penetration()) ws.status |= kFlatDeepPenetration;
  if (!(depth > S(0))) return;
  S u[3];
  relative_point_velocity(ws, body_a, body_b, point, u);
  const S un = dot3(u, normal);
  S fn = m.contact_stiffness() * fpow(depth, m.contact_exponent()) * (S(1) + m.contact_damping() * (-un));
  if (!(fn > S(0))) return;
  S vt[3] = {u[0] - un * normal[0], u[1] - un * normal[1], u[2] - un * normal[2]};
  const S vs = m.velocity_scale();
  const S scale = -mu * fn / fsqrt(dot3(vt, vt) + vs * vs);
  S f[3];
  for (int k = 0; k < 3; ++k) f[k] = fn * normal[k] + scale * vt[k];
  if (body_b >= 0) add_point_force(ws.F[body_b], point, f, S(1));
  if (body_a >= 0) add_point_force(ws.F[body_a], point, f, S(-1));
}

// The joint-limit spring-damper of coordinate iq on one side (+1 lower, -1 upper bound): its push
// f = k_l violation - c_l side v when beyond the bound and pushing (contact/joint_limits.cpp), else 0.
template <class S>
GRADYN_HD S limit_push(const FlatModel<S>& m, int iq, int side, S q, S v) {
  const S bound = side > 0 ? m.lower(iq) : m.upper(iq);
  if (!finite(bound)) return S(0);
  const S violation = S(side) * (bound - q);
  if (!(violation > S(0))) return S(0);
  const S f = m.limit_stiffness() * violation - m.limit_damping() * S(side) * v;
  return f > S(0) ? f : S(0);
}

// One actuator's force (dynamics/detail/actuator_law.hpp's law, forward only).
template <class S>
GRADYN_HD S actuator_force(const std::int32_t* ai, const S* ar, S ctrl, S L, S V) {
  S u = ctrl;
  if (ai[3]) u = u < ar[10] ? ar[10] : u > ar[11] ? ar[11] : u;
  S f;
  if (ai[0] == kServo) {
    S x = ar[7] * (u - L);
    if (x > ar[9]) x = ar[9];
    else if (x < -ar[9]) x = -ar[9];
    f = ar[8] * (x - V);
  } else {
    const S gain = ar[1] + ar[2] * L + ar[3] * V;
    const S bias = ar[4] + ar[5] * L + ar[6] * V;
    f = gain * u + bias;
  }
  if (ai[4] && (f < ar[12] || f > ar[13])) f = f < ar[12] ? ar[12] : ar[13];
  return f;
}

}  // namespace detail

/// One step of one world. q, v: its state (nq, nv entries, read with strides qs and vs between
/// consecutive entries); tau (nv, stride ts) and ctrl (nu, stride cs) may be null (zeros). Writes
/// q_next and v_next (strides qns, vns; they may alias q and v). Returns the status bits.
template <class S, int MaxBodies, int MaxDofs, int MaxRows>
GRADYN_HD std::uint32_t step(const FlatModel<S>& m, StepWorkspace<S, MaxBodies, MaxDofs, MaxRows>& ws, const S* q, int qs,
                             const S* v, int vs, const S* tau, int ts, const S* ctrl, int cs, S dt, S* q_next,
                             int qns, S* v_next, int vns) {
  const int nb = m.nb, nv = m.nv;
  ws.status = 0;
  // --- pass 1 (root to leaves): poses, velocities, bias accelerations and forces ---
  for (int i = 0; i < nb; ++i) {
    const int par = m.parent(i), iq = m.iq(i), iv = m.iv(i), type = m.joint(i);
    S Rl[9], pl[3];
    if (type == kFree) {
      const S x = q[(iq + 3) * qs], y = q[(iq + 4) * qs], z = q[(iq + 5) * qs], w = q[(iq + 6) * qs];
      const S n = fsqrt(x * x + y * y + z * z + w * w);
      S Rj[9];
      quat_to_matrix(x / n, y / n, z / n, w / n, Rj);
      const S pj[3] = {q[iq * qs], q[(iq + 1) * qs], q[(iq + 2) * qs]};
      compose(m.placement_R(i), m.placement_p(i), Rj, pj, Rl, pl);
    } else if (type == kHinge) {
      S Rj[9];
      axis_angle(m.axis(i), q[iq * qs], Rj);
      matmul3(m.placement_R(i), Rj, Rl);
      copy3(m.placement_p(i), pl);
    } else {  // slide
      const S* a = m.axis(i);
      const S pj[3] = {a[0] * q[iq * qs], a[1] * q[iq * qs], a[2] * q[iq * qs]};
      for (int k = 0; k < 9; ++k) Rl[k] = m.placement_R(i)[k];
      mul3(m.placement_R(i), pj, pl);
      for (int k = 0; k < 3; ++k) pl[k] += m.placement_p(i)[k];
    }
    if (par >= 0) {
      compose(ws.R[par], ws.p[par], Rl, pl, ws.R[i], ws.p[i]);
    } else {
      for (int k = 0; k < 9; ++k) ws.R[i][k] = Rl[k];
      copy3(pl, ws.p[i]);
    }
    S vj[6];
    if (type == kFree) {
      for (int k = 0; k < 6; ++k) vj[k] = S(0);
      for (int c = 0; c < 6; ++c) {
        S col[6];
        detail::free_column(ws.R[i], ws.p[i], c, col);
        const S vc = v[(iv + c) * vs];
        for (int k = 0; k < 6; ++k) vj[k] += col[k] * vc;
      }
    } else {
      S* s = ws.Sm[i];
      mul3(ws.R[i], m.axis(i), type == kHinge ? s : s + 3);
      if (type == kHinge) cross3(ws.p[i], s, s + 3);
      else s[0] = s[1] = s[2] = S(0);
      for (int k = 0; k < 6; ++k) vj[k] = s[k] * v[iv * vs];
    }
    for (int k = 0; k < 6; ++k) ws.ov[i][k] = par >= 0 ? ws.ov[par][k] + vj[k] : vj[k];
    cross_motion(ws.ov[i], vj, ws.oc[i]);
    detail::world_inertia(m, i, ws.R[i], ws.p[i], ws.Ia[i]);
    S h[6];
    mul6(ws.Ia[i], ws.ov[i], h);
    cross_force(ws.ov[i], h, ws.pA[i]);
    for (int k = 0; k < 6; ++k) ws.F[i][k] = S(0);
  }
  // --- generalised forces: tau + actuators + contact and joint limits + passive ---
  for (int k = 0; k < nv; ++k) ws.tau[k] = tau ? tau[k * ts] : S(0);
  for (int k = 0; k < m.nu; ++k) {
    const std::int32_t* ai = m.actuator_ints(k);
    const S* ar = m.actuator_reals(k);
    const S gear = ar[0];
    const S f = detail::actuator_force(ai, ar, ctrl ? ctrl[k * cs] : S(0), gear * q[ai[1] * qs], gear * v[ai[2] * vs]);
    ws.tau[ai[2]] += gear * f;
  }
  if (m.penalty_on()) {
    for (int k = 0; k < m.npairs; ++k) {
      const int ba = m.geom_body(m.pair_a(k)), bb = m.geom_body(m.pair_b(k));
      const S mu = m.pair_friction(k);
      auto emit = [&](const S* x, const S* n, S depth) { detail::penalty_contact(m, ws, ba, bb, mu, x, n, depth); };
      detail::collide_pair(m, ws, k, emit);
    }
    for (int i = nb - 1; i >= 0; --i) {  // tau_c = J^T F: each joint carries its subtree's forces
      const int iv = m.iv(i);
      if (m.joint(i) == kFree) {
        for (int c = 0; c < 6; ++c) {
          S col[6];
          detail::free_column(ws.R[i], ws.p[i], c, col);
          ws.tau[iv + c] += dot6(col, ws.F[i]);
        }
      } else {
        ws.tau[iv] += dot6(ws.Sm[i], ws.F[i]);
      }
      const int par = m.parent(i);
      if (par >= 0)
        for (int k = 0; k < 6; ++k) ws.F[par][k] += ws.F[i][k];
    }
    for (int i = 0; i < nb; ++i) {  // joint limits: a spring-damper pushing back beyond each bound
      if (m.joint(i) == kFree) continue;
      const int iq = m.iq(i), iv = m.iv(i);
      for (int side = 1; side >= -1; side -= 2) ws.tau[iv] += S(side) * detail::limit_push(m, iq, side, q[iq * qs], v[iv * vs]);
    }
  }
  for (int i = 0; i < nb; ++i) {  // passive: damping, and springs on 1-DoF joints
    const int iv = m.iv(i), iq = m.iq(i);
    if (m.joint(i) == kFree) {
      for (int c = 0; c < 6; ++c) ws.tau[iv + c] -= m.damping(iv + c) * v[(iv + c) * vs];
    } else {
      ws.tau[iv] -= m.damping(iv) * v[iv * vs];
      if (m.stiffness(iv) != S(0)) ws.tau[iv] -= m.stiffness(iv) * (q[iq * qs] - m.q_rest(iq));
    }
  }
  // --- pass 2 (leaves to root): articulated inertias and bias forces ---
  S a_world[6] = {S(0), S(0), S(0), -m.gravity()[0], -m.gravity()[1], -m.gravity()[2]};
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = m.iv(i), par = m.parent(i);
    if (m.joint(i) == kFree) {  // a free joint is a root (flat/export.hpp): its accelerations now
      S Scol[6][6], U[6][6], D[36], rhs[6], a0[6];
      for (int c = 0; c < 6; ++c) {
        detail::free_column(ws.R[i], ws.p[i], c, Scol[c]);
        mul6(ws.Ia[i], Scol[c], U[c]);
      }
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) D[6 * r + c] = dot6(Scol[r], U[c]) + (r == c ? m.armature(iv + r) : S(0));
      for (int k = 0; k < 6; ++k) a0[k] = a_world[k] + ws.oc[i][k];
      for (int c = 0; c < 6; ++c) rhs[c] = ws.tau[iv + c] - dot6(Scol[c], ws.pA[i]) - dot6(U[c], a0);
      if (!detail::solve6(D, rhs, ws.qdd + iv)) {
        ws.status |= kFlatSingularInertia;
        for (int c = 0; c < 6; ++c) ws.qdd[iv + c] = S(0) / S(0);
      }
      for (int k = 0; k < 6; ++k) {
        ws.oa[i][k] = a0[k];
        for (int c = 0; c < 6; ++c) ws.oa[i][k] += Scol[c][k] * ws.qdd[iv + c];
      }
      continue;
    }
    const S* s = ws.Sm[i];
    mul6(ws.Ia[i], s, ws.U[i]);
    const S D = dot6(s, ws.U[i]) + m.armature(iv);
    if (!(D > S(0))) ws.status |= kFlatSingularInertia;
    ws.Dinv[i] = S(1) / D;
    ws.u[i] = ws.tau[iv] - dot6(s, ws.pA[i]);
    if (par >= 0) {
      S UD[6], t[6];
      for (int k = 0; k < 6; ++k) UD[k] = ws.Dinv[i] * ws.U[i][k];
      for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 6; ++c) ws.Ia[i][6 * r + c] -= UD[r] * ws.U[i][c];
      for (int k = 0; k < 36; ++k) ws.Ia[par][k] += ws.Ia[i][k];
      mul6(ws.Ia[i], ws.oc[i], t);
      for (int k = 0; k < 6; ++k) ws.pA[par][k] += ws.pA[i][k] + t[k] + UD[k] * ws.u[i];
    }
  }
  // --- pass 3 (root to leaves): accelerations ---
  for (int i = 0; i < nb; ++i) {
    if (m.joint(i) == kFree) continue;
    const int iv = m.iv(i), par = m.parent(i);
    for (int k = 0; k < 6; ++k) ws.oa[i][k] = (par >= 0 ? ws.oa[par][k] : a_world[k]) + ws.oc[i][k];
    const S qdd = ws.Dinv[i] * (ws.u[i] - dot6(ws.U[i], ws.oa[i]));
    ws.qdd[iv] = qdd;
    for (int k = 0; k < 6; ++k) ws.oa[i][k] += ws.Sm[i][k] * qdd;
  }
  // --- PGS: the impulses of the contacts and joint limits, at the velocity level ---
  const bool impulses = m.pgs_on();
  if (impulses) {
    if constexpr (decltype(ws.pgs)::enabled) {
      detail::pgs_velocity(m, ws, q, qs, v, vs, dt);
    } else {  // a launcher gave a PGS model a workspace without rows: never silently skip contact
      for (int k = 0; k < nv; ++k) ws.vplus[k] = S(0) / S(0);
      ws.status |= kFlatContactOverflow;
    }
  }
  // --- semi-implicit Euler: v+ = v + dt a (or PGS's), q+ = q (+) dt v+ ---
  for (int i = 0; i < nb; ++i) {
    const int iq = m.iq(i), iv = m.iv(i);
    if (m.joint(i) != kFree) {
      const S vn = impulses ? ws.vplus[iv] : v[iv * vs] + dt * ws.qdd[iv];
      v_next[iv * vns] = vn;
      q_next[iq * qns] = q[iq * qs] + dt * vn;
      continue;
    }
    S vn[6];
    for (int c = 0; c < 6; ++c) vn[c] = impulses ? ws.vplus[iv + c] : v[(iv + c) * vs] + dt * ws.qdd[iv + c];
    const S lin[3] = {dt * vn[0], dt * vn[1], dt * vn[2]}, ang[3] = {dt * vn[3], dt * vn[4], dt * vn[5]};
    const S x = q[(iq + 3) * qs], y = q[(iq + 4) * qs], z = q[(iq + 5) * qs], w = q[(iq + 6) * qs];
    // position: p + R(q normalised) V(ang) lin, V = I + a K + b K^2 (SE(3) exponential)
    const S t2 = dot3(ang, ang);
    S ca, cb;
    if (t2 < S(1e-10)) {
      ca = S(0.5) - t2 / S(24), cb = S(1) / S(6) - t2 / S(120);
    } else {
      const S t = fsqrt(t2);
      ca = (S(1) - fcos(t)) / t2, cb = (t - fsin(t)) / (t2 * t);
    }
    S k1[3], k2[3], Vl[3];
    cross3(ang, lin, k1);
    cross3(ang, k1, k2);
    for (int k = 0; k < 3; ++k) Vl[k] = lin[k] + ca * k1[k] + cb * k2[k];
    const S n = fsqrt(x * x + y * y + z * z + w * w);
    S Rq[9], dp[3];
    quat_to_matrix(x / n, y / n, z / n, w / n, Rq);
    mul3(Rq, Vl, dp);
    // orientation: q * exp(ang), renormalised
    S hs, c;
    const S th2 = t2;
    if (th2 < S(1e-12)) {
      hs = S(0.5) - th2 / S(48), c = S(1) - th2 / S(8);
    } else {
      const S th = fsqrt(th2);
      hs = fsin(th / S(2)) / th, c = fcos(th / S(2));
    }
    const S ex = hs * ang[0], ey = hs * ang[1], ez = hs * ang[2];
    S qw = w * c - (x * ex + y * ey + z * ez);
    S qx = w * ex + c * x + (y * ez - z * ey);
    S qy = w * ey + c * y + (z * ex - x * ez);
    S qz = w * ez + c * z + (x * ey - y * ex);
    const S nn = fsqrt(qw * qw + qx * qx + qy * qy + qz * qz);
    qw /= nn, qx /= nn, qy /= nn, qz /= nn;
    for (int k = 0; k < 3; ++k) q_next[(iq + k) * qns] = q[(iq + k) * qs] + dp[k];
    q_next[(iq + 3) * qns] = qx, q_next[(iq + 4) * qns] = qy, q_next[(iq + 5) * qns] = qz, q_next[(iq + 6) * qns] = qw;
    for (int c2 = 0; c2 < 6; ++c2) v_next[(iv + c2) * vns] = vn[c2];
  }
  for (int k = 0; k < m.nq; ++k)
    if (!finite(q_next[k * qns])) ws.status |= kFlatNonFinite;
  for (int k = 0; k < nv; ++k)
    if (!finite(v_next[k * vns])) ws.status |= kFlatNonFinite;
  return ws.status;
}

}  // namespace gradyn::flat
