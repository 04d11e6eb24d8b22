// The Lie-group arithmetic the joints are built on: quaternions (stored x, y, z, w), the SO(3) and
// SE(3) exponentials and logarithm, and the SE(2) exponential's coefficients.
#pragma once

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

/// Unit quaternion (x, y, z, w coefficients) to rotation matrix.
template <class S>
Matrix3<S> quaternion_xyzw_to_matrix(const S& x, const S& y, const S& z, const S& w) {
  Matrix3<S> R;
  const S xx = x * x, yy = y * y, zz = z * z;
  const S xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
  R << S(1) - S(2) * (yy + zz), S(2) * (xy - wz), S(2) * (xz + wy),  //
      S(2) * (xy + wz), S(1) - S(2) * (xx + zz), S(2) * (yz - wx),   //
      S(2) * (xz - wy), S(2) * (yz + wx), S(1) - S(2) * (xx + yy);
  return R;
}

/// Exponential map of so(3): rotation vector -> unit quaternion. Exact, with a Taylor branch near 0.
template <class S>
Quaternion<S> quaternion_exp(const Vector3<S>& w) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S th2 = w.squaredNorm();
  S half_sinc, c;
  if (th2 < S(1e-12)) {  // sin(th/2)/th and cos(th/2) to fourth order
    half_sinc = S(0.5) - th2 / S(48);
    c = S(1) - th2 / S(8);
  } else {
    const S th = sqrt(th2);
    half_sinc = sin(th / S(2)) / th;
    c = cos(th / S(2));
  }
  return Quaternion<S>(c, half_sinc * w.x(), half_sinc * w.y(), half_sinc * w.z());
}

/// Logarithm of a unit quaternion -> rotation vector (shortest rotation).
template <class S>
Vector3<S> quaternion_log(const Quaternion<S>& q_in) {
  using std::atan2;
  using std::sqrt;
  Quaternion<S> q = q_in;
  if (q.w() < S(0)) q.coeffs() = -q.coeffs();
  const S sn2 = q.vec().squaredNorm();
  if (sn2 < S(1e-16)) return S(2) * q.vec() / q.w();
  const S sn = sqrt(sn2);
  return (S(2) * atan2(sn, q.w()) / sn) * q.vec();
}

/// SO(3) left Jacobian's translational part V(w) used by the SE(3) exponential:
/// exp([w, v]) = (exp(w), V(w) v), V = I + (1-cos t)/t^2 [w] + (t - sin t)/t^3 [w]^2.
template <class S>
Matrix3<S> se3_V(const Vector3<S>& w);

/// The coefficients of se3_V(w) = I + a K + b K^2 (K = [w]x) at t2 = |w|^2 = t^2:
/// a = (1 - cos t) / t^2, b = (t - sin t) / t^3 (Taylor series near 0), and, where da and db are
/// given, their derivatives with respect to t2 (for the adjoints of se3_V).
template <class S>
void se3_V_coefficients(const S& t2, S& a, S& b, S* da = nullptr, S* db = nullptr) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  if (t2 < S(1e-10)) {
    a = S(0.5) - t2 / S(24);
    b = S(1) / S(6) - t2 / S(120);
    if (da) *da = S(-1) / S(24), *db = S(-1) / S(120);
    return;
  }
  const S t = sqrt(t2), c = cos(t), s = sin(t);
  a = (S(1) - c) / t2;
  b = (t - s) / (t2 * t);
  if (da) {  // d/dt, then d/dt2 = d/dt / (2 t)
    *da = (s / t2 - S(2) * (S(1) - c) / (t2 * t)) / (S(2) * t);
    *db = ((S(1) - c) / (t2 * t) - S(3) * (t - s) / (t2 * t2)) / (S(2) * t);
  }
}

template <class S>
Matrix3<S> se3_V(const Vector3<S>& w) {
  S a, b;
  se3_V_coefficients<S>(w.squaredNorm(), a, b);
  const Matrix3<S> K = skew(w);
  return Matrix3<S>::Identity() + a * K + b * (K * K);
}

/// The coefficients of the SE(2) exponential's translation, [[a, -b], [b, a]] with a = sin(th) / th
/// and b = (1 - cos th) / th (Taylor series near 0), and, where da and db are given, their
/// derivatives with respect to th (for the adjoints of the planar joint).
template <class S>
void se2_coefficients(const S& th, S& a, S& b, S* da = nullptr, S* db = nullptr) {
  using std::cos;
  using std::sin;
  if (th * th < S(1e-12)) {
    a = S(1) - th * th / S(6);
    b = th / S(2) - th * th * th / S(24);
    if (da) *da = -th / S(3), *db = S(0.5) - th * th / S(8);
    return;
  }
  const S st = sin(th), ct = cos(th);
  a = st / th;
  b = (S(1) - ct) / th;
  if (da) *da = (ct - a) / th, *db = (st - b) / th;
}

}  // namespace gradyn
