// Articulated-body helpers of the flat kernels: a free joint's subspace columns, world inertias,
// the 6x6 solve of a free root, point forces and velocities, and M^-1 applied with the articulated
// inertias of a step's pass 2 (dynamics/aba.hpp's minv_solve). Shared by the step (flat/step.hpp),
// PGS contact (flat/pgs.hpp) and their reverses.
#pragma once

#include "gradyn/flat/math.hpp"

namespace gradyn::flat::detail {

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

// Velocity of the material point x of body b minus that of body a under the world twists
// [angular; linear] of the bodies (v_O + w x x each; -1: the world).
template <class S>
GRADYN_HD void relative_velocity_at(const S (*twists)[6], int body_a, int body_b, const S* x, S* u) {
  S t[3];
  u[0] = u[1] = u[2] = S(0);
  if (body_b >= 0) {
    cross3(twists[body_b], x, t);
    for (int k = 0; k < 3; ++k) u[k] += twists[body_b][3 + k] + t[k];
  }
  if (body_a >= 0) {
    cross3(twists[body_a], x, t);
    for (int k = 0; k < 3; ++k) u[k] -= twists[body_a][3 + k] + t[k];
  }
}

// The same with the step's body velocities.
template <class S, class W>
GRADYN_HD void relative_point_velocity(const W& ws, int body_a, int body_b, const S* x, S* u) {
  relative_velocity_at<S>(ws.ov, body_a, body_b, x, u);
}

// x = M^-1 r (nv entries each) with the articulated inertias of the step's pass 2 (ws.Ia, U, Dinv,
// Sm; a free root's 6x6 block formed again): pass 2 without bias forces, then pass 3 from rest.
// Uses ws.minv_pA, minv_a and minv_u as scratch; r and x may alias.
template <class S, class M, class W>
GRADYN_HD void minv_apply(const M& m, W& ws, const S* r, S* x) {
  const int nb = m.nb;
  for (int i = 0; i < nb; ++i)
    for (int k = 0; k < 6; ++k) ws.minv_pA[i][k] = S(0);
  for (int i = nb - 1; i >= 0; --i) {
    const int iv = m.iv(i), par = m.parent(i);
    if (m.joint(i) == kFree) {  // a root (flat/export.hpp)
      S Scol[6][6], U[6][6], D[36], rhs[6];
      for (int c = 0; c < 6; ++c) {
        free_column(ws.R[i], ws.p[i], c, Scol[c]);
        mul6(ws.Ia[i], Scol[c], U[c]);
      }
      for (int a = 0; a < 6; ++a)
        for (int c = 0; c < 6; ++c) D[6 * a + c] = dot6(Scol[a], U[c]) + (a == c ? m.armature(iv + a) : S(0));
      for (int c = 0; c < 6; ++c) rhs[c] = r[iv + c] - dot6(Scol[c], ws.minv_pA[i]);
      solve6(D, rhs, x + iv);
      for (int k = 0; k < 6; ++k) {
        ws.minv_a[i][k] = S(0);
        for (int c = 0; c < 6; ++c) ws.minv_a[i][k] += Scol[c][k] * x[iv + c];
      }
      continue;
    }
    const S u = r[iv] - dot6(ws.Sm[i], ws.minv_pA[i]);
    ws.minv_u[i] = u;
    if (par >= 0)
      for (int k = 0; k < 6; ++k) ws.minv_pA[par][k] += ws.minv_pA[i][k] + ws.U[i][k] * ws.Dinv[i] * u;
  }
  for (int i = 0; i < nb; ++i) {
    if (m.joint(i) == kFree) continue;
    const int iv = m.iv(i), par = m.parent(i);
    for (int k = 0; k < 6; ++k) ws.minv_a[i][k] = par >= 0 ? ws.minv_a[par][k] : S(0);
    const S xi = ws.Dinv[i] * (ws.minv_u[i] - dot6(ws.U[i], ws.minv_a[i]));
    x[iv] = xi;
    for (int k = 0; k < 6; ++k) ws.minv_a[i][k] += ws.Sm[i][k] * xi;
  }
}

}  // namespace gradyn::flat::detail
