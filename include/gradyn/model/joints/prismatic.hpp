// The prismatic joint: q = [displacement], v = [rate] along the axis a (joint frame); S = [0; a].
#pragma once

#include "gradyn/model/joints/joint_defaults.hpp"

namespace gradyn {

struct PrismaticJoint : JointDefaults<1, 1> {
  static constexpr std::string_view name = "prismatic";
  static constexpr std::string_view urdf_type = "prismatic";
  static constexpr bool has_axis = true;
  static constexpr bool has_rest = true;
  static constexpr bool limited = true;

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>& axis, const Q& q) {
    return Pose<S>(Matrix3<S>::Identity(), axis * q[0]);
  }
  template <class S>
  static void subspace(const Vector3<S>& axis, Matrix6X<S>& Sm) {
    Sm.template block<3, 1>(3, 0) = axis;
  }
  template <class S>
  static Vector3<S> subspace_axis_bar(const Vector6<S>& s_bar) {
    return s_bar.template tail<3>();
  }

  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>& axis, const Q& q, const Pose<S>&, const Matrix3<S>&,
                            const Vector3<S>& pj_bar, QBar&& q_bar, Vector3<S>& axis_bar) {
    q_bar[0] += axis.dot(pj_bar);
    axis_bar += q[0] * pj_bar;
  }

  /// Mj = (I, a q), so da moves the subtree by [0; q da]: exact in every direction.
  template <class S, class Q>
  static void axis_wrench_vjp(const Vector3<S>&, const Q& q, const Vector6<S>& Fj, Vector3<S>& axis_bar) {
    axis_bar += q[0] * Fj.template tail<3>();
  }
};

}  // namespace gradyn
