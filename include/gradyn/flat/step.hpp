// One semi-implicit Euler step of one world, on a flat model (flat/flat_model.hpp): the same
// stages and the same numbers as gradyn::step with penalty contact (or none), written on plain
// arrays so that g++ and nvcc compile the one source: the CPU batch (flat/export.hpp) and the
// CUDA backend (cuda/) run it, one world per thread.
//
// Stages, in step()'s order: forward kinematics and the velocity pass (ABA's pass 1), collision
// of the geom pairs with penalty contact forces (contact/penalty.hpp) and the joint-limit springs
// (contact/joint_limits.hpp), actuators (dynamics/actuation.hpp), passive forces, ABA's passes 2
// and 3 (world frame, as dynamics/aba.cpp), then v+ = v + dt a and q+ = q (+) dt v+.
#pragma once

#include "gradyn/flat/geometry.hpp"

namespace gradyn::flat {

/// Scratch of one world's step, sized for at most MaxBodies bodies and MaxDofs DoFs. On a GPU it
/// lives in the thread's local memory.
template <class S, int MaxBodies, int MaxDofs>
struct StepWorkspace {
  S R[MaxBodies][9], p[MaxBodies][3];  // body poses in the world
  S Sm[MaxBodies][6];                  // world motion subspace of a 1-DoF joint
  S ov[MaxBodies][6], oc[MaxBodies][6], oa[MaxBodies][6];
  S Ia[MaxBodies][36], pA[MaxBodies][6];  // articulated inertia and bias force (world frame)
  S U[MaxBodies][6], Dinv[MaxBodies], u[MaxBodies];
  S F[MaxBodies][6];  // contact forces on the bodies, then their subtree sums
  S tau[MaxDofs], qdd[MaxDofs];
  std::uint32_t status;
};

namespace detail {

// World motion of column k of a free joint's subspace (v: linear velocity first, in the body frame).
template <class S> GRADYN_HD void free_column(const S* R, const S* p, int k, S* out) {
  if (k < 3) {
    out[0] = out[1] = out[2] = S(0);
    col3(R, k, out + 3);
  } else {
    col3(R, k - 3, out);
    cross3(p, out, out + 3);
  }
}

// Body i's world inertia (about the origin) as a row-major 6x6 matrix.
template <class S, class M>
GRADYN_HD void world_inertia(const M& m, int i, const S* R, const S* p, S* I6) {
  const S mass = m.mass(i);
  S c[3];
  mul3(R, m.com(i), c);
  c[0] += p[0], c[1] += p[1], c[2] += p[2];
  S RI[9], RIRt[9], Rt[9];
  matmul3(R, m.inertia_com(i), RI);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) Rt[3 * r + k] = R[3 * k + r];
  matmul3(RI, Rt, RIRt);
  const S cx[9] = {S(0), -c[2], c[1], c[2], S(0), -c[0], -c[1], c[0], S(0)};
  S cxcx[9];
  matmul3(cx, cx, cxcx);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      I6[6 * r + k] = RIRt[3 * r + k] - mass * cxcx[3 * r + k];
      I6[6 * r + 3 + k] = mass * cx[3 * r + k];
      I6[6 * (r + 3) + k] = -mass * cx[3 * r + k];
      I6[6 * (r + 3) + 3 + k] = r == k ? mass : S(0);
    }
}

// Solves D x = b for a symmetric positive definite 6x6 D (Cholesky, in place on a copy).
// Returns false when D is not positive definite.
template <class S> GRADYN_HD bool solve6(const S* D_in, const S* b, S* x) {
  S L[36];
  for (int k = 0; k < 36; ++k) L[k] = D_in[k];
  for (int j = 0; j < 6; ++j) {
    S d = L[6 * j + j];
    for (int k = 0; k < j; ++k) d -= L[6 * j + k] * L[6 * j + k];
    if (!(d > S(0))) return false;
    d = fsqrt(d);
    L[6 * j + j] = d;
    for (int i = j + 1; i < 6; ++i) {
      S s = L[6 * i + j];
      for (int k = 0; k < j; ++k) s -= L[6 * i + k] * L[6 * j + k];
      L[6 * i + j] = s / d;
    }
  }
  S y[6];
  for (int i = 0; i < 6; ++i) {
    S s = b[i];
    for (int k = 0; k < i; ++k) s -= L[6 * i + k] * y[k];
    y[i] = s / L[6 * i + i];
  }
  for (int i = 5; i >= 0; --i) {
    S s = y[i];
    for (int k = i + 1; k < 6; ++k) s -= L[6 * k + i] * x[k];
    x[i] = s / L[6 * i + i];
  }
  return true;
}

// Spatial force on a body from force f at world point x: [x x f; f], added (sign +1) or removed.
template <class S> GRADYN_HD void add_point_force(S* F, const S* x, const S* f, S sign) {
  S n[3];
  cross3(x, f, n);
  for (int k = 0; k < 3; ++k) F[k] += sign * n[k], F[3 + k] += sign * f[k];
}

// Velocity of the material point x of body b minus that of body a (v_O + w x x each; -1: the world).
template <class S, class W>
GRADYN_HD void relative_point_velocity(const W& ws, int body_a, int body_b, const S* x, S* u) {
  S t[3];
  u[0] = u[1] = u[2] = S(0);
  if (body_b >= 0) {
    cross3(ws.ov[body_b], x, t);
    for (int k = 0; k < 3; ++k) u[k] += ws.ov[body_b][3 + k] + t[k];
  }
  if (body_a >= 0) {
    cross3(ws.ov[body_a], x, t);
    for (int k = 0; k < 3; ++k) u[k] -= ws.ov[body_a][3 + k] + t[k];
  }
}

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

// Two spheres (collision/narrowphase.hpp's sphere_sphere): contact from a to b when within margin.
template <class S, class M, class W>
GRADYN_HD void sphere_sphere(const M& m, W& ws, int body_a, int body_b, S mu, const S* ca, S ra, const S* cb, S rb) {
  S x[3], n[3], depth, dist;
  if (geometry::sphere_contact(ca, ra, cb, rb, m.margin(), x, n, depth, dist))
    penalty_contact(m, ws, body_a, body_b, mu, x, n, depth);
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
template <class S, class M, class W>
GRADYN_HD void plane_point(const M& m, W& ws, int body_a, int body_b, S mu, const S* x, S h, const S* n) {
  const S point[3] = {x[0] - n[0] * h / S(2), x[1] - n[1] * h / S(2), x[2] - n[2] * h / S(2)};
  penalty_contact(m, ws, body_a, body_b, mu, point, n, -h);
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

// Collision of pair k and its penalty forces (collision/narrowphase_*.cpp's routines).
template <class S, class W>
GRADYN_HD void collide_pair(const FlatModel<S>& m, W& ws, int k) {
  const int a = m.pair_a(k), b = m.pair_b(k);
  const int ta = m.geom_type(a), tb = m.geom_type(b), ba = m.geom_body(a), bb = m.geom_body(b);
  const S mu = m.pair_friction(k);
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
      plane_point(m, ws, ba, bb, mu, x, h, n);
    } else if (tb == kCapsule) {
      for (int side = -1; side <= 1; side += 2) {
        S end[3];
        for (int i = 0; i < 3; ++i) end[i] = pB[i] + RB[3 * i + 2] * (sb[1] * S(side));
        const S h = geometry::plane_height(n, end, pA, sb[0]);
        if (h > margin) continue;
        for (int i = 0; i < 3; ++i) x[i] = end[i] - sb[0] * n[i];
        plane_point(m, ws, ba, bb, mu, x, h, n);
      }
    } else if (tb == kBox) {  // the corners below the margin, the 4 deepest
      S hs[8], xs[8][3];
      const int count = geometry::plane_box_corners(RB, pB, sb, n, pA, margin, xs, hs);
      for (int c = 0; c < count; ++c) plane_point(m, ws, ba, bb, mu, xs[c], hs[c], n);
    }
  } else if (ta == kSphere && tb == kSphere) {
    sphere_sphere(m, ws, ba, bb, mu, pA, sa[0], pB, sb[0]);
  } else if (ta == kSphere && tb == kCapsule) {
    S p0[3], D[3];
    geometry::capsule_segment(RB, pB, sb[1], p0, D);
    const S r[3] = {pA[0] - p0[0], pA[1] - p0[1], pA[2] - p0[2]};
    const S t = geometry::clamp01(dot3(D, r) / dot3(D, D));
    const S c[3] = {p0[0] + t * D[0], p0[1] + t * D[1], p0[2] + t * D[2]};
    sphere_sphere(m, ws, ba, bb, mu, pA, sa[0], c, sb[0]);
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
        sphere_sphere(m, ws, ba, bb, mu, pa, sa[0], pb, sb[0]);
      }
      return;
    }
    const geometry::Closest<S> c = geometry::closest_segments(a0, da, b0, db);
    const S pa[3] = {a0[0] + c.s * da[0], a0[1] + c.s * da[1], a0[2] + c.s * da[2]};
    const S pb[3] = {b0[0] + c.t * db[0], b0[1] + c.t * db[1], b0[2] + c.t * db[2]};
    sphere_sphere(m, ws, ba, bb, mu, pa, sa[0], pb, sb[0]);
  }
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
template <class S, int MaxBodies, int MaxDofs>
GRADYN_HD std::uint32_t step(const FlatModel<S>& m, StepWorkspace<S, MaxBodies, MaxDofs>& ws, const S* q, int qs,
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
  if (m.contact_on()) {
    for (int k = 0; k < m.npairs; ++k) detail::collide_pair(m, ws, k);
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
  // --- semi-implicit Euler: v+ = v + dt a, q+ = q (+) dt v+ ---
  for (int i = 0; i < nb; ++i) {
    const int iq = m.iq(i), iv = m.iv(i);
    if (m.joint(i) != kFree) {
      const S vn = v[iv * vs] + dt * ws.qdd[iv];
      v_next[iv * vns] = vn;
      q_next[iq * qns] = q[iq * qs] + dt * vn;
      continue;
    }
    S vn[6];
    for (int c = 0; c < 6; ++c) vn[c] = v[(iv + c) * vs] + dt * ws.qdd[iv + c];
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
