// Joint kinds and their per-joint kernels: the joint transform, the motion subspace, and the
// configuration-space operations (integrate, difference, neutral) on each joint's manifold.
//
// Configuration (q) and velocity (v) layout per joint, in gradyn's public convention:
//   revolute, continuous   q = [angle]                    v = [angular rate]
//   prismatic              q = [displacement]             v = [rate]
//   spherical              q = [qx, qy, qz, qw]           v = [wx, wy, wz]          (child frame)
//   free                   q = [x, y, z, qx, qy, qz, qw]  v = [vx, vy, vz, wx, wy, wz]
//                          position and quaternion of the body in its parent frame; v is the
//                          body's linear velocity (of its origin) and angular velocity, both in
//                          the body frame (Pinocchio's convention)
//   planar                 q = [x, y, theta]              v = [vx, vy, wz]          (child frame)
// Quaternions are stored x, y, z, w (Eigen's and Pinocchio's coefficient order) and are unit;
// the dynamics read them normalised (see joint_transform).
// The motion subspace S of every joint is constant in the child frame, so the joint bias cJ is 0.
#pragma once

#include <cstdint>
#include <string_view>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

enum class JointType : std::uint8_t { Fixed, Revolute, Continuous, Prismatic, Spherical, Free, Planar };

std::string_view joint_type_name(JointType type);

constexpr int joint_nq(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: return 1;
    case JointType::Spherical: return 4;
    case JointType::Free: return 7;
    case JointType::Planar: return 3;
  }
  return 0;
}

constexpr int joint_nv(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: return 1;
    case JointType::Spherical: return 3;
    case JointType::Free: return 6;
    case JointType::Planar: return 3;
  }
  return 0;
}

constexpr bool joint_has_quaternion(JointType t) { return t == JointType::Spherical || t == JointType::Free; }

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

/// Pose of the joint's child frame in the joint frame, for joint configuration q (the joint's
/// own nq entries). A quaternion is normalised when read: q and s q (s > 0) are the same
/// rotation, so the gradient of anything with respect to a quaternion has no component along it.
template <class S, class Q>
Pose<S> joint_transform(JointType type, const Vector3<S>& axis, const Eigen::MatrixBase<Q>& q) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous: return Pose<S>(axis_angle_to_matrix<S>(axis, q[0]), Vector3<S>::Zero());
    case JointType::Prismatic: return Pose<S>(Matrix3<S>::Identity(), axis * q[0]);
    case JointType::Spherical: {
      const S n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      return Pose<S>(quaternion_xyzw_to_matrix<S>(q[0] / n, q[1] / n, q[2] / n, q[3] / n), Vector3<S>::Zero());
    }
    case JointType::Free: {
      const S n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
      return Pose<S>(quaternion_xyzw_to_matrix<S>(q[3] / n, q[4] / n, q[5] / n, q[6] / n),
                     Vector3<S>(q[0], q[1], q[2]));
    }
    case JointType::Planar: {
      const S c = cos(q[2]), s = sin(q[2]);
      Matrix3<S> R;
      R << c, -s, S(0), s, c, S(0), S(0), S(0), S(1);
      return Pose<S>(R, Vector3<S>(q[0], q[1], S(0)));
    }
    case JointType::Fixed: break;
  }
  return Pose<S>();
}

/// Motion subspace S (6 x nv) in the child frame. Constant for every joint kind.
template <class S>
Matrix6X<S> joint_subspace(JointType type, const Vector3<S>& axis) {
  const int nv = joint_nv(type);
  Matrix6X<S> Sm = Matrix6X<S>::Zero(6, nv);
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous: Sm.template block<3, 1>(0, 0) = axis; break;
    case JointType::Prismatic: Sm.template block<3, 1>(3, 0) = axis; break;
    case JointType::Spherical: Sm.template block<3, 3>(0, 0).setIdentity(); break;
    case JointType::Free:
      Sm.template block<3, 3>(3, 0).setIdentity();  // linear velocity first
      Sm.template block<3, 3>(0, 3).setIdentity();  // then angular
      break;
    case JointType::Planar:
      Sm(3, 0) = S(1);
      Sm(4, 1) = S(1);
      Sm(2, 2) = S(1);
      break;
    case JointType::Fixed: break;
  }
  return Sm;
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

/// q_out = q (+) dv: move the joint's configuration along the tangent vector dv (its own nv
/// entries, e.g. dt * v). Quaternion joints move on the group: spherical multiplies by
/// exp(dv) on the right (body frame); free applies the SE(3) exponential of the body twist;
/// planar the SE(2) exponential. The result's quaternion is renormalised.
template <class S, class Q, class V, class Out>
void joint_integrate(JointType type, const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& dv,
                     Eigen::MatrixBase<Out> const& q_out_const) {
  using std::cos;
  using std::sin;
  auto& q_out = const_cast<Eigen::MatrixBase<Out>&>(q_out_const);
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: q_out[0] = q[0] + dv[0]; break;
    case JointType::Spherical: {
      const Quaternion<S> q0(q[3], q[0], q[1], q[2]);
      Quaternion<S> q1 = q0 * quaternion_exp<S>(Vector3<S>(dv[0], dv[1], dv[2]));
      q1.normalize();
      q_out[0] = q1.x(); q_out[1] = q1.y(); q_out[2] = q1.z(); q_out[3] = q1.w();
      break;
    }
    case JointType::Free: {
      const Quaternion<S> q0(q[6], q[3], q[4], q[5]);
      const Vector3<S> lin(dv[0], dv[1], dv[2]), ang(dv[3], dv[4], dv[5]);
      // The displacement is rotated by the normalised quaternion, as joint_transform reads it.
      const Vector3<S> p1 = Vector3<S>(q[0], q[1], q[2]) + q0.normalized() * (se3_V<S>(ang) * lin);
      Quaternion<S> q1 = q0 * quaternion_exp<S>(ang);
      q1.normalize();
      q_out[0] = p1.x(); q_out[1] = p1.y(); q_out[2] = p1.z();
      q_out[3] = q1.x(); q_out[4] = q1.y(); q_out[5] = q1.z(); q_out[6] = q1.w();
      break;
    }
    case JointType::Planar: {
      // SE(2) exponential of the body twist (vx, vy, wz), applied on the right.
      const S th = dv[2];
      S a, b;
      se2_coefficients<S>(th, a, b);
      const S lx = a * dv[0] - b * dv[1], ly = b * dv[0] + a * dv[1];
      const S c = cos(q[2]), s = sin(q[2]);
      q_out[0] = q[0] + c * lx - s * ly;
      q_out[1] = q[1] + s * lx + c * ly;
      q_out[2] = q[2] + th;
      break;
    }
    case JointType::Fixed: break;
  }
}

/// Tangent vector d with q1 = q0 (+) d (the inverse of joint_integrate), for springs and tests.
template <class S, class Q0, class Q1, class Out>
void joint_difference(JointType type, const Eigen::MatrixBase<Q0>& q0, const Eigen::MatrixBase<Q1>& q1,
                      Eigen::MatrixBase<Out> const& d_const) {
  using std::atan2;
  using std::cos;
  using std::sin;
  auto& d = const_cast<Eigen::MatrixBase<Out>&>(d_const);
  switch (type) {
    case JointType::Revolute:
    case JointType::Continuous:
    case JointType::Prismatic: d[0] = q1[0] - q0[0]; break;
    case JointType::Spherical: {
      const Quaternion<S> a(q0[3], q0[0], q0[1], q0[2]), b(q1[3], q1[0], q1[1], q1[2]);
      const Vector3<S> w = quaternion_log<S>(a.conjugate() * b);
      d[0] = w.x(); d[1] = w.y(); d[2] = w.z();
      break;
    }
    case JointType::Free: {
      const Quaternion<S> a(q0[6], q0[3], q0[4], q0[5]), b(q1[6], q1[3], q1[4], q1[5]);
      const Vector3<S> w = quaternion_log<S>(a.conjugate() * b);
      const Vector3<S> dp_local = a.conjugate() * (Vector3<S>(q1[0], q1[1], q1[2]) - Vector3<S>(q0[0], q0[1], q0[2]));
      const Vector3<S> lin = se3_V<S>(w).inverse() * dp_local;
      d[0] = lin.x(); d[1] = lin.y(); d[2] = lin.z();
      d[3] = w.x(); d[4] = w.y(); d[5] = w.z();
      break;
    }
    case JointType::Planar: {
      S th = q1[2] - q0[2];
      const S c = cos(q0[2]), s = sin(q0[2]);
      const S dx = q1[0] - q0[0], dy = q1[1] - q0[1];
      const S lx = c * dx + s * dy, ly = -s * dx + c * dy;  // displacement in the q0 frame
      S a, b;
      se2_coefficients<S>(th, a, b);
      const S det = a * a + b * b;  // invert [[a, -b], [b, a]]
      d[0] = (a * lx + b * ly) / det;
      d[1] = (-b * lx + a * ly) / det;
      d[2] = th;
      break;
    }
    case JointType::Fixed: break;
  }
}

/// Neutral configuration of one joint: zero, identity quaternion.
template <class S, class Out>
void joint_neutral(JointType type, Eigen::MatrixBase<Out> const& q_const) {
  auto& q = const_cast<Eigen::MatrixBase<Out>&>(q_const);
  q.setZero();
  if (type == JointType::Spherical) q[3] = S(1);
  if (type == JointType::Free) q[6] = S(1);
}

}  // namespace gradyn
