// Small fixed-size vector and matrix helpers on plain arrays for the per-world kernels
// (flat/step.hpp): 3-vectors, row-major 3x3 matrices, spatial 6-vectors [angular; linear] and
// row-major 6x6 matrices. Host and device functions alike (no Eigen: it does not compile for every
// device and CUDA release).
#pragma once

#include <cmath>

#include "gradyn/flat/flat_model.hpp"

namespace gradyn::flat {

template <class S> GRADYN_HD S fsqrt(S x) { return std::sqrt(x); }
template <class S> GRADYN_HD S fsin(S x) { return std::sin(x); }
template <class S> GRADYN_HD S fcos(S x) { return std::cos(x); }
template <class S> GRADYN_HD S fpow(S x, S y) { return std::pow(x, y); }
template <class S> GRADYN_HD bool finite(S x) { return std::isfinite(x); }

template <class S> GRADYN_HD S dot3(const S* a, const S* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
template <class S> GRADYN_HD void cross3(const S* a, const S* b, S* out) {
  const S x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  out[0] = x, out[1] = y, out[2] = z;
}
template <class S> GRADYN_HD void copy3(const S* a, S* out) { out[0] = a[0], out[1] = a[1], out[2] = a[2]; }
/// out = R x (R row-major 3x3).
template <class S> GRADYN_HD void mul3(const S* R, const S* x, S* out) {
  const S a = R[0] * x[0] + R[1] * x[1] + R[2] * x[2];
  const S b = R[3] * x[0] + R[4] * x[1] + R[5] * x[2];
  const S c = R[6] * x[0] + R[7] * x[1] + R[8] * x[2];
  out[0] = a, out[1] = b, out[2] = c;
}
/// out = R^T x.
template <class S> GRADYN_HD void mul3t(const S* R, const S* x, S* out) {
  const S a = R[0] * x[0] + R[3] * x[1] + R[6] * x[2];
  const S b = R[1] * x[0] + R[4] * x[1] + R[7] * x[2];
  const S c = R[2] * x[0] + R[5] * x[1] + R[8] * x[2];
  out[0] = a, out[1] = b, out[2] = c;
}
/// C = A B (3x3; C must not alias A or B).
template <class S> GRADYN_HD void matmul3(const S* A, const S* B, S* C) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) C[3 * r + c] = A[3 * r] * B[c] + A[3 * r + 1] * B[3 + c] + A[3 * r + 2] * B[6 + c];
}
/// Column c of R.
template <class S> GRADYN_HD void col3(const S* R, int c, S* out) { out[0] = R[c], out[1] = R[3 + c], out[2] = R[6 + c]; }

/// Pose composition: (R, p) = (Ra, pa) * (Rb, pb).
template <class S> GRADYN_HD void compose(const S* Ra, const S* pa, const S* Rb, const S* pb, S* R, S* p) {
  matmul3(Ra, Rb, R);
  mul3(Ra, pb, p);
  p[0] += pa[0], p[1] += pa[1], p[2] += pa[2];
}

/// R = I + sin(t) K + (1 - cos(t)) K^2, K = [axis]x: rotation by angle t about a unit axis.
template <class S> GRADYN_HD void axis_angle(const S* a, S t, S* R) {
  const S s = fsin(t), c1 = S(1) - fcos(t);
  // K = [[0, -z, y], [z, 0, -x], [-y, x, 0]]; K^2 = a a^T - |a|^2 I (written out as K*K)
  const S x = a[0], y = a[1], z = a[2];
  const S K[9] = {S(0), -z, y, z, S(0), -x, -y, x, S(0)};
  S K2[9];
  matmul3(K, K, K2);
  for (int k = 0; k < 9; ++k) R[k] = s * K[k] + c1 * K2[k];
  R[0] += S(1), R[4] += S(1), R[8] += S(1);
}

/// Rotation matrix of the unit quaternion (x, y, z, w).
template <class S> GRADYN_HD void quat_to_matrix(S x, S y, S z, S w, S* R) {
  const S xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
  R[0] = S(1) - S(2) * (yy + zz), R[1] = S(2) * (xy - wz), R[2] = S(2) * (xz + wy);
  R[3] = S(2) * (xy + wz), R[4] = S(1) - S(2) * (xx + zz), R[5] = S(2) * (yz - wx);
  R[6] = S(2) * (xz - wy), R[7] = S(2) * (yz + wx), R[8] = S(1) - S(2) * (xx + yy);
}

// --- spatial algebra: motion [w; v], force [n; f], about the world origin ---
/// out = [a]x b for motions (cross_motion).
template <class S> GRADYN_HD void cross_motion(const S* a, const S* b, S* out) {
  S t1[3], t2[3];
  cross3(a, b, out);          // w x w'
  cross3(a, b + 3, t1);       // w x v'
  cross3(a + 3, b, t2);       // v x w'
  out[3] = t1[0] + t2[0], out[4] = t1[1] + t2[1], out[5] = t1[2] + t2[2];
}
/// out = [a]x* f (cross_force).
template <class S> GRADYN_HD void cross_force(const S* a, const S* f, S* out) {
  S t1[3], t2[3];
  cross3(a, f, t1);           // w x n
  cross3(a + 3, f + 3, t2);   // v x f
  cross3(a, f + 3, out + 3);  // w x f
  out[0] = t1[0] + t2[0], out[1] = t1[1] + t2[1], out[2] = t1[2] + t2[2];
}
template <class S> GRADYN_HD S dot6(const S* a, const S* b) { return dot3(a, b) + dot3(a + 3, b + 3); }
/// out = M x (6x6 row-major).
template <class S> GRADYN_HD void mul6(const S* M, const S* x, S* out) {
  for (int r = 0; r < 6; ++r) {
    S s = S(0);
    for (int c = 0; c < 6; ++c) s += M[6 * r + c] * x[c];
    out[r] = s;
  }
}

}  // namespace gradyn::flat
