// The joint kinds, registered: each kind's kernels and their adjoints live in a file of their own,
// joints/<kind>.hpp (the joint transform, the motion subspace, and the configuration-space operations
// integrate, difference, neutral on its manifold), and this header dispatches on JointType to them.
// A new joint kind is its file plus three lines here (the enumerator, the include, its visit case),
// and kLastJointType when it comes last.
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

#include "gradyn/model/joints/fixed.hpp"
#include "gradyn/model/joints/free.hpp"
#include "gradyn/model/joints/planar.hpp"
#include "gradyn/model/joints/prismatic.hpp"
#include "gradyn/model/joints/revolute.hpp"
#include "gradyn/model/joints/spherical.hpp"

namespace gradyn {

enum class JointType : std::uint8_t { Fixed, Revolute, Continuous, Prismatic, Spherical, Free, Planar };
inline constexpr JointType kLastJointType = JointType::Planar;  // the serialised format's range check

/// Calls f(Kind{}) with the joint kind registered for type (FixedJoint, RevoluteJoint, ...).
template <class F>
constexpr decltype(auto) visit_joint(JointType type, F&& f) {
  switch (type) {
    case JointType::Fixed: return f(FixedJoint{});
    case JointType::Revolute: return f(RevoluteJoint{});
    case JointType::Continuous: return f(ContinuousJoint{});
    case JointType::Prismatic: return f(PrismaticJoint{});
    case JointType::Spherical: return f(SphericalJoint{});
    case JointType::Free: return f(FreeJoint{});
    case JointType::Planar: return f(PlanarJoint{});
  }
  return f(FixedJoint{});
}

/// Every registered kind, in enumerator order.
template <class F>
constexpr void for_each_joint_type(F&& f) {
  for (int t = 0; t <= static_cast<int>(kLastJointType); ++t) f(static_cast<JointType>(t));
}

constexpr std::string_view joint_type_name(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::name; });
}
/// The URDF joint type that maps to this kind ("" if URDF has none).
constexpr std::string_view joint_urdf_type(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::urdf_type; });
}
constexpr int joint_nq(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::nq; });
}
constexpr int joint_nv(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::nv; });
}
constexpr bool joint_has_quaternion(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::quaternion; });
}
/// Whether the kernels read a direction parameter (Model::joint_axis).
constexpr bool joint_has_axis(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::has_axis; });
}
/// Whether the parameter table lists spring rest positions for it.
constexpr bool joint_has_rest(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::has_rest; });
}
/// Whether limits apply to its q coordinates (revolute, continuous, prismatic, planar).
constexpr bool joint_has_limited_coordinates(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::limited; });
}
/// Whether its configuration space is a group other than a vector space (integrate is an exponential).
constexpr bool joint_is_group(JointType t) {
  return visit_joint(t, [](auto j) { return decltype(j)::group; });
}

/// Pose of the joint's child frame in the joint frame, for joint configuration q (the joint's
/// own nq entries). A quaternion is normalised when read: q and s q (s > 0) are the same
/// rotation, so the gradient of anything with respect to a quaternion has no component along it.
template <class S, class Q>
Pose<S> joint_transform(JointType type, const Vector3<S>& axis, const Eigen::MatrixBase<Q>& q) {
  return visit_joint(type, [&]<class J>(J) { return J::template transform<S>(axis, q); });
}

/// Motion subspace S (6 x nv) in the child frame. Constant for every joint kind.
template <class S>
Matrix6X<S> joint_subspace(JointType type, const Vector3<S>& axis) {
  Matrix6X<S> Sm = Matrix6X<S>::Zero(6, joint_nv(type));
  visit_joint(type, [&]<class J>(J) { J::template subspace<S>(axis, Sm); });
  return Sm;
}

/// q_out = q (+) dv: move the joint's configuration along the tangent vector dv (its own nv
/// entries, e.g. dt * v). Quaternion joints move on the group (joints/<kind>.hpp say how); the
/// result's quaternion is renormalised.
template <class S, class Q, class V, class Out>
void joint_integrate(JointType type, const Eigen::MatrixBase<Q>& q, const Eigen::MatrixBase<V>& dv,
                     Eigen::MatrixBase<Out> const& q_out_const) {
  auto& q_out = const_cast<Eigen::MatrixBase<Out>&>(q_out_const);
  visit_joint(type, [&]<class J>(J) { J::template integrate<S>(q, dv, q_out); });
}

/// Tangent vector d with q1 = q0 (+) d (the inverse of joint_integrate), for springs and tests.
template <class S, class Q0, class Q1, class Out>
void joint_difference(JointType type, const Eigen::MatrixBase<Q0>& q0, const Eigen::MatrixBase<Q1>& q1,
                      Eigen::MatrixBase<Out> const& d_const) {
  auto& d = const_cast<Eigen::MatrixBase<Out>&>(d_const);
  visit_joint(type, [&]<class J>(J) { J::template difference<S>(q0, q1, d); });
}

/// Neutral configuration of one joint: zero, identity quaternion.
template <class S, class Out>
void joint_neutral(JointType type, Eigen::MatrixBase<Out> const& q_const) {
  auto& q = const_cast<Eigen::MatrixBase<Out>&>(q_const);
  visit_joint(type, [&]<class J>(J) { J::template neutral<S>(q); });
}

/// Puts the joint's q back on its manifold (renormalises a quaternion).
template <class S, class Out>
void joint_normalize(JointType type, Eigen::MatrixBase<Out> const& q_const) {
  auto& q = const_cast<Eigen::MatrixBase<Out>&>(q_const);
  visit_joint(type, [&]<class J>(J) { J::template normalize<S>(q); });
}

// --- adjoints and the other per-kind kernels (joints/<kind>.hpp document each) ---

/// Adjoint of joint_transform(type, axis, q) = Mj = (Rj, pj): accumulates into q_bar (the joint's
/// own nq entries) and axis_bar.
template <class S, class Q, class QBar>
void joint_transform_vjp(JointType type, const Vector3<S>& axis, const Q& q, const Pose<S>& Mj, const Matrix3<S>& Rj_bar,
                         const Vector3<S>& pj_bar, QBar&& q_bar, Vector3<S>& axis_bar) {
  visit_joint(type, [&]<class J>(J) { J::template transform_vjp<S>(axis, q, Mj, Rj_bar, pj_bar, q_bar, axis_bar); });
}

/// Ambient adjoint of the joint's q from the adjoint g of a tangent motion (velocity coordinates).
template <class S, class Q, class G, class QBar>
void joint_tangent_vjp(JointType type, const Vector3<S>& axis, const Q& q, const G& g, QBar&& q_bar) {
  visit_joint(type, [&]<class J>(J) { J::template tangent_vjp<S>(axis, q, g, q_bar); });
}

/// Adjoint of joint_integrate: accumulates into q_bar and dv_bar (the joint's own entries).
template <class S, class Q, class V, class QOutBar, class QBar, class DvBar>
void joint_integrate_vjp(JointType type, const Q& q, const V& dv, const QOutBar& q_out_bar, QBar&& q_bar,
                         DvBar&& dv_bar) {
  visit_joint(type, [&]<class J>(J) { J::template integrate_vjp<S>(q, dv, q_out_bar, q_bar, dv_bar); });
}

/// Adjoint of joint_difference(type, q0, q1, d): accumulates d_bar^T dd/d(q0, q1) into q0_bar, q1_bar.
template <class S, class Q0, class Q1, class D, class B0, class B1>
void joint_difference_vjp(JointType type, const Q0& q0, const Q1& q1, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
  visit_joint(type, [&]<class J>(J) { J::template difference_vjp<S>(q0, q1, d_bar, q0_bar, q1_bar); });
}

/// The axis part of the adjoint of a 1-DoF joint's subspace column (zero for joints without an axis).
template <class S>
Vector3<S> joint_subspace_axis_bar(JointType type, const Vector6<S>& s_bar) {
  return visit_joint(type, [&]<class J>(J) { return J::template subspace_axis_bar<S>(s_bar); });
}

/// The axis adjoint from the wrench Fj (joint frame) on the joint's subtree (for joints with an axis).
template <class S, class Q>
void joint_axis_wrench_vjp(JointType type, const Vector3<S>& axis, const Q& q, const Vector6<S>& Fj,
                           Vector3<S>& axis_bar) {
  visit_joint(type, [&]<class J>(J) { J::template axis_wrench_vjp<S>(axis, q, Fj, axis_bar); });
}

/// Lie bracket [x, y] of two tangent vectors of one joint (zero on vector-space joints).
template <class S>
void joint_bracket(JointType type, const S* x, const S* y, S* out) {
  visit_joint(type, [&]<class J>(J) { J::template bracket<S>(x, y, out); });
}

/// Adjoint of out = [x, y] given out_bar o: accumulates into x_bar and y_bar.
template <class S>
void joint_bracket_vjp(JointType type, const S* x, const S* y, const S* o, S* x_bar, S* y_bar) {
  visit_joint(type, [&]<class J>(J) { J::template bracket_vjp<S>(x, y, o, x_bar, y_bar); });
}

}  // namespace gradyn
