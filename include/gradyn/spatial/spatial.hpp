// Spatial algebra (Featherstone), templated on Scalar.
//
// Conventions, used everywhere in gradyn:
//  * A spatial motion vector is [angular; linear] = [w; v], where v is the linear velocity of
//    the point at the frame's origin. A spatial force is [moment; force] = [n; f], the moment
//    taken about the frame's origin. Both are 6-vectors expressed in one frame.
//  * A Pose (R, p) places frame B in frame A: a point x_B maps to x_A = R x_B + p. It is the pose
//    of B "seen from" A (Pinocchio's aMb). act() carries vectors from B to A, act_inv() from A to B.
//
// Everything here is small fixed-size Eigen: no heap allocation, no virtual calls, so that the
// same code can run per world in batches and, later, on a GPU.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "gradyn/core/types.hpp"

namespace gradyn {

/// Skew-symmetric matrix [a]x such that [a]x b = a x b.
template <class S>
Matrix3<S> skew(const Vector3<S>& a) {
  Matrix3<S> m;
  m << S(0), -a.z(), a.y(), a.z(), S(0), -a.x(), -a.y(), a.x(), S(0);
  return m;
}

/// Adjoint of skew(): the vector a_bar with <K_bar, skew(da)> = <a_bar, da> for every da.
template <class S>
Vector3<S> unskew_adjoint(const Matrix3<S>& K_bar) {
  return Vector3<S>(K_bar(2, 1) - K_bar(1, 2), K_bar(0, 2) - K_bar(2, 0), K_bar(1, 0) - K_bar(0, 1));
}

/// Rotation matrix from URDF roll-pitch-yaw (fixed axes X, then Y, then Z: R = Rz(y) Ry(p) Rx(r)).
template <class S>
Matrix3<S> rpy_to_matrix(const Vector3<S>& rpy) {
  using std::cos;
  using std::sin;
  const S cr = cos(rpy.x()), sr = sin(rpy.x());
  const S cp = cos(rpy.y()), sp = sin(rpy.y());
  const S cy = cos(rpy.z()), sy = sin(rpy.z());
  Matrix3<S> R;
  R << cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,  //
      sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,   //
      -sp, cp * sr, cp * cr;
  return R;
}

/// Rotation by angle about a unit axis (Rodrigues).
template <class S>
Matrix3<S> axis_angle_to_matrix(const Vector3<S>& axis, const S& angle) {
  using std::cos;
  using std::sin;
  const S c = cos(angle), s = sin(angle);
  const Matrix3<S> K = skew(axis);
  return Matrix3<S>::Identity() + s * K + (S(1) - c) * (K * K);
}

/// Pose of frame B in frame A (see the file comment).
template <class S>
struct Pose {
  Matrix3<S> R = Matrix3<S>::Identity();
  Vector3<S> p = Vector3<S>::Zero();

  Pose() = default;
  Pose(const Matrix3<S>& R_, const Vector3<S>& p_) : R(R_), p(p_) {}
  static Pose Identity() { return Pose(); }

  /// aMb * bMc = aMc.
  Pose operator*(const Pose& other) const { return Pose(R * other.R, R * other.p + p); }
  Pose inverse() const { return Pose(R.transpose(), -(R.transpose() * p)); }
  /// bMa^-1 * aMc without forming the inverse.
  Pose inv_times(const Pose& other) const { return Pose(R.transpose() * other.R, R.transpose() * (other.p - p)); }

  Vector3<S> act_point(const Vector3<S>& x) const { return R * x + p; }
  Vector3<S> act_inv_point(const Vector3<S>& x) const { return R.transpose() * (x - p); }

  /// Motion vector expressed in B -> expressed in A.
  Vector6<S> act_motion(const Vector6<S>& m) const {
    Vector6<S> out;
    out.template head<3>() = R * m.template head<3>();
    out.template tail<3>() = R * m.template tail<3>() + p.cross(out.template head<3>());
    return out;
  }
  /// Motion vector expressed in A -> expressed in B.
  Vector6<S> act_inv_motion(const Vector6<S>& m) const {
    Vector6<S> out;
    out.template head<3>() = R.transpose() * m.template head<3>();
    out.template tail<3>() = R.transpose() * (m.template tail<3>() - p.cross(m.template head<3>()));
    return out;
  }
  /// Force vector expressed in B -> expressed in A.
  Vector6<S> act_force(const Vector6<S>& f) const {
    Vector6<S> out;
    out.template tail<3>() = R * f.template tail<3>();
    out.template head<3>() = R * f.template head<3>() + p.cross(out.template tail<3>());
    return out;
  }
  /// Force vector expressed in A -> expressed in B.
  Vector6<S> act_inv_force(const Vector6<S>& f) const {
    Vector6<S> out;
    out.template tail<3>() = R.transpose() * f.template tail<3>();
    out.template head<3>() = R.transpose() * (f.template head<3>() - p.cross(f.template tail<3>()));
    return out;
  }
  /// Columns of a motion matrix (e.g. a motion subspace) from B to A.
  template <class Derived>
  Matrix6X<S> act_motion_cols(const Eigen::MatrixBase<Derived>& M) const {
    Matrix6X<S> out(6, M.cols());
    for (Eigen::Index j = 0; j < M.cols(); ++j) out.col(j) = act_motion(Vector6<S>(M.col(j)));
    return out;
  }
  /// 6x6 matrix that maps B-motion to A-motion (for tests and slow paths).
  Matrix6<S> motion_matrix() const {
    Matrix6<S> X = Matrix6<S>::Zero();
    X.template topLeftCorner<3, 3>() = R;
    X.template bottomRightCorner<3, 3>() = R;
    X.template bottomLeftCorner<3, 3>() = skew(p) * R;
    return X;
  }

  template <class T> Pose<T> cast() const { return Pose<T>(R.template cast<T>(), p.template cast<T>()); }
};

/// Motion cross product v x m (Featherstone's crm).
template <class S>
Vector6<S> cross_motion(const Vector6<S>& v, const Vector6<S>& m) {
  Vector6<S> out;
  const auto w = v.template head<3>();
  const auto vl = v.template tail<3>();
  out.template head<3>() = w.cross(m.template head<3>());
  out.template tail<3>() = w.cross(m.template tail<3>()) + vl.cross(m.template head<3>());
  return out;
}

/// Force cross product v x* f (Featherstone's crf).
template <class S>
Vector6<S> cross_force(const Vector6<S>& v, const Vector6<S>& f) {
  Vector6<S> out;
  const auto w = v.template head<3>();
  const auto vl = v.template tail<3>();
  out.template head<3>() = w.cross(f.template head<3>()) + vl.cross(f.template tail<3>());
  out.template tail<3>() = w.cross(f.template tail<3>());
  return out;
}

/// Rigid-body inertia: mass, centre of mass c and rotational inertia about the centre of mass,
/// all in the body frame.
template <class S>
struct Inertia {
  S mass = S(0);
  Vector3<S> com = Vector3<S>::Zero();
  Matrix3<S> inertia_com = Matrix3<S>::Zero();  // symmetric

  Inertia() = default;
  Inertia(const S& m, const Vector3<S>& c, const Matrix3<S>& I) : mass(m), com(c), inertia_com(I) {}

  /// Rotational inertia about the frame origin: Ic - m [c]x [c]x.
  Matrix3<S> inertia_origin() const {
    const Matrix3<S> cx = skew(com);
    return inertia_com - mass * (cx * cx);
  }
  /// Spatial momentum h = I v.
  Vector6<S> operator*(const Vector6<S>& v) const {
    const auto w = v.template head<3>();
    const auto vl = v.template tail<3>();
    Vector6<S> h;
    const Vector3<S> lin = mass * (vl - com.cross(w));  // m (v + w x c)
    h.template tail<3>() = lin;
    h.template head<3>() = inertia_com * w + com.cross(lin);
    return h;
  }
  /// The 6x6 spatial inertia matrix about the frame origin.
  Matrix6<S> matrix() const {
    Matrix6<S> M;
    const Matrix3<S> cx = skew(com);
    M.template topLeftCorner<3, 3>() = inertia_origin();
    M.template topRightCorner<3, 3>() = mass * cx;
    M.template bottomLeftCorner<3, 3>() = -mass * cx;
    M.template bottomRightCorner<3, 3>() = mass * Matrix3<S>::Identity();
    return M;
  }
  /// The same inertia expressed in frame A, given this frame's pose in A.
  Inertia transformed(const Pose<S>& aMb) const {
    return Inertia(mass, aMb.act_point(com), aMb.R * inertia_com * aMb.R.transpose());
  }
  /// Sum of two inertias expressed in the same frame.
  Inertia operator+(const Inertia& o) const {
    const S m = mass + o.mass;
    if (m == S(0)) return Inertia();
    const Vector3<S> c = (mass * com + o.mass * o.com) / m;
    const Vector3<S> d1 = com - c, d2 = o.com - c;
    const Matrix3<S> s1 = skew(d1), s2 = skew(d2);
    return Inertia(m, c, inertia_com - mass * (s1 * s1) + o.inertia_com - o.mass * (s2 * s2));
  }
  template <class T> Inertia<T> cast() const {
    return Inertia<T>(T(mass), com.template cast<T>(), inertia_com.template cast<T>());
  }
};

/// A rigid-body or composite inertia about the origin of the frame it is expressed in (gradyn's
/// world frame), in its ten numbers: mass m, first moment h = m c (c the centre of mass) and the
/// rotational inertia Io about the origin (symmetric). Inertias expressed in one frame add number by
/// number, which is what makes CRBA's composite inertias cheap in the world frame (Pinocchio's trick).
template <class S>
struct OriginInertia {
  S m = S(0);
  Vector3<S> h = Vector3<S>::Zero();
  Matrix3<S> Io = Matrix3<S>::Zero();

  /// The body inertia I (body frame) expressed in A, given the body's pose oMi in A:
  /// Io = R Ic R^T - m [c]x [c]x. Only Io's upper triangle is computed (columns 1 and 2 two rows at a
  /// time: fewer instructions than the full 3x3 product), then mirrored, so Io is exactly symmetric.
  static OriginInertia from_body(const Inertia<S>& I, const Pose<S>& oMi) {
    OriginInertia Y;
    const Matrix3<S>& R = oMi.R;
    const Vector3<S> c = oMi.act_point(I.com);
    Y.m = I.mass;
    Y.h = I.mass * c;
    Matrix3<S> T;
    T.noalias() = R * I.inertia_com;
    const S ch = c.dot(Y.h);  // - m [c]x [c]x = m |c|^2 I - m c c^T
    for (int col = 1; col < 3; ++col)
      Y.Io.col(col).template head<2>() = T.template topRows<2>().col(0) * R(col, 0) +
                                         T.template topRows<2>().col(1) * R(col, 1) +
                                         T.template topRows<2>().col(2) * R(col, 2) -
                                         c.template head<2>() * Y.h[col];
    Y.Io(0, 0) = T.row(0).dot(R.row(0)) - c[0] * Y.h[0] + ch;
    Y.Io(1, 1) += ch;
    Y.Io(2, 2) = T.row(2).dot(R.row(2)) - c[2] * Y.h[2] + ch;
    Y.Io(1, 0) = Y.Io(0, 1);
    Y.Io(2, 0) = Y.Io(0, 2);
    Y.Io(2, 1) = Y.Io(1, 2);
    return Y;
  }
  OriginInertia& operator+=(const OriginInertia& o) {
    m += o.m;
    h += o.h;
    Io += o.Io;
    return *this;
  }
  /// Spatial momentum of the motion s = [w; v]: [Io w + h x v; m v - h x w].
  Vector6<S> operator*(const Vector6<S>& s) const {
    const auto w = s.template head<3>();
    const auto v = s.template tail<3>();
    Vector6<S> out;
    out.template head<3>().noalias() = Io * w;
    out.template head<3>() += h.cross(v);
    out.template tail<3>() = m * v - h.cross(w);
    return out;
  }
  /// The 6x6 spatial inertia matrix [[Io, [h]x], [-[h]x, m I]].
  Matrix6<S> matrix() const {
    Matrix6<S> M;
    const Matrix3<S> hx = skew(h);
    M.template topLeftCorner<3, 3>() = Io;
    M.template topRightCorner<3, 3>() = hx;
    M.template bottomLeftCorner<3, 3>() = -hx;
    M.template bottomRightCorner<3, 3>() = m * Matrix3<S>::Identity();
    return M;
  }
};

/// A 6x6 (articulated or rigid) inertia expressed in B, re-expressed in A: X* I X^-1.
/// Written on 3x3 blocks: I = [[A, B], [B^T, C]].
template <class S>
Matrix6<S> transform_inertia_to_parent(const Pose<S>& aMb, const Matrix6<S>& I) {
  const Matrix3<S>& R = aMb.R;
  const Matrix3<S> A = R * I.template topLeftCorner<3, 3>() * R.transpose();
  const Matrix3<S> B = R * I.template topRightCorner<3, 3>() * R.transpose();
  const Matrix3<S> C = R * I.template bottomRightCorner<3, 3>() * R.transpose();
  const Matrix3<S> P = skew(aMb.p);
  const Matrix3<S> PC = P * C;
  Matrix6<S> out;
  const Matrix3<S> Bp = B + PC;
  out.template topLeftCorner<3, 3>() = A + P * B.transpose() - B * P - PC * P;
  out.template topRightCorner<3, 3>() = Bp;
  out.template bottomLeftCorner<3, 3>() = Bp.transpose();
  out.template bottomRightCorner<3, 3>() = C;
  return out;
}

}  // namespace gradyn
