// The revolute joint (and the continuous joint, a revolute joint without limits in URDF):
// q = [angle], v = [angular rate] about the unit axis a (joint frame); S = [a; 0].
#pragma once

#include <cmath>

#include "gradyn/model/joints/joint_defaults.hpp"

namespace gradyn {

struct RevoluteJoint : JointDefaults<1, 1> {
  static constexpr std::string_view name = "revolute";
  static constexpr std::string_view urdf_type = "revolute";
  static constexpr bool has_axis = true;
  static constexpr bool has_rest = true;
  static constexpr bool limited = true;

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>& axis, const Q& q) {
    return Pose<S>(axis_angle_to_matrix<S>(axis, q[0]), Vector3<S>::Zero());
  }
  template <class S>
  static void subspace(const Vector3<S>& axis, Matrix6X<S>& Sm) {
    Sm.template block<3, 1>(0, 0) = axis;
  }
  template <class S>
  static Vector3<S> subspace_axis_bar(const Vector6<S>& s_bar) {
    return s_bar.template head<3>();
  }

  /// Adjoint of transform: accumulates into q_bar and axis_bar.
  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>& axis, const Q& q, const Pose<S>&, const Matrix3<S>& Rj_bar,
                            const Vector3<S>&, QBar&& q_bar, Vector3<S>& axis_bar) {
    using std::cos;
    using std::sin;
    // Rj = I + s K + (1 - c) K^2 (Rodrigues, exactly as computed: the axis need not be unit).
    const Matrix3<S> K = skew(axis);
    const Matrix3<S> K2 = K * K;
    const S s = sin(q[0]), c = cos(q[0]);
    q_bar[0] += (Rj_bar.cwiseProduct(c * K + s * K2)).sum();
    const Matrix3<S> K_bar = s * Rj_bar + (S(1) - c) * (Rj_bar * K.transpose() + K.transpose() * Rj_bar);
    axis_bar += unskew_adjoint<S>(K_bar);
  }

  /// Along the unit sphere only (da . a = 0), where d exp(q [a]x) is the joint-frame rotation
  /// sin(q) da + (1 - cos q) a x da; the normal component is not a rigid motion (with_params
  /// normalises axes; params_gradient projects it out anyway).
  template <class S, class Q>
  static void axis_wrench_vjp(const Vector3<S>& a, const Q& q, const Vector6<S>& Fj, Vector3<S>& axis_bar) {
    using std::cos;
    using std::sin;
    const Vector3<S> n_j = Fj.template head<3>();
    const Vector3<S> t = sin(q[0]) * n_j + (S(1) - cos(q[0])) * n_j.cross(a);
    axis_bar += t - a * (a.dot(t) / a.squaredNorm());
  }
};

struct ContinuousJoint : RevoluteJoint {
  static constexpr std::string_view name = "continuous";
  static constexpr std::string_view urdf_type = "continuous";
};

}  // namespace gradyn
