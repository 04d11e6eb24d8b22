// The fixed joint: no coordinates; the child is welded to its parent at the joint placement.
#pragma once

#include "gradyn/model/joints/joint_defaults.hpp"

namespace gradyn {

struct FixedJoint : JointDefaults<0, 0> {
  static constexpr std::string_view name = "fixed";
  static constexpr std::string_view urdf_type = "fixed";

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>&, const Q&) {
    return Pose<S>();
  }
  template <class S>
  static void subspace(const Vector3<S>&, Matrix6X<S>&) {}
  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>&, const Q&, const Pose<S>&, const Matrix3<S>&, const Vector3<S>&, QBar&&,
                            Vector3<S>&) {}
};

}  // namespace gradyn
