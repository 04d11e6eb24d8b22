// The spherical (ball) joint: q = [qx, qy, qz, qw], a unit quaternion, v = [wx, wy, wz], the
// angular velocity in the child frame; S = [I; 0]. The quaternion is read normalised, so gradients
// with respect to it have no component along it.
#pragma once

#include "gradyn/model/joints/joint_defaults.hpp"
#include "gradyn/model/joints/lie_group_vjp.hpp"

namespace gradyn {

struct SphericalJoint : JointDefaults<4, 3> {
  static constexpr std::string_view name = "spherical";
  static constexpr bool quaternion = true;
  static constexpr bool group = true;

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>&, const Q& q) {
    using std::sqrt;
    const S n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    return Pose<S>(quaternion_xyzw_to_matrix<S>(q[0] / n, q[1] / n, q[2] / n, q[3] / n), Vector3<S>::Zero());
  }
  template <class S>
  static void subspace(const Vector3<S>&, Matrix6X<S>& Sm) {
    Sm.template block<3, 3>(0, 0).setIdentity();
  }

  /// q (+) dv multiplies by exp(dv) on the right (body frame) and renormalises.
  template <class S, class Q, class V, class Out>
  static void integrate(const Q& q, const V& dv, Out& q_out) {
    const Quaternion<S> q0(q[3], q[0], q[1], q[2]);
    Quaternion<S> q1 = q0 * quaternion_exp<S>(Vector3<S>(dv[0], dv[1], dv[2]));
    q1.normalize();
    q_out[0] = q1.x(); q_out[1] = q1.y(); q_out[2] = q1.z(); q_out[3] = q1.w();
  }
  template <class S, class Q0, class Q1, class Out>
  static void difference(const Q0& q0, const Q1& q1, Out& d) {
    const Quaternion<S> a(q0[3], q0[0], q0[1], q0[2]), b(q1[3], q1[0], q1[1], q1[2]);
    const Vector3<S> w = quaternion_log<S>(a.conjugate() * b);
    d[0] = w.x(); d[1] = w.y(); d[2] = w.z();
  }
  template <class S, class Out>
  static void neutral(Out& q) {
    q.setZero();
    q[3] = S(1);
  }
  template <class S, class Out>
  static void normalize(Out& q) {
    q.template segment<4>(0).normalize();
  }

  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>&, const Q& q, const Pose<S>&, const Matrix3<S>& Rj_bar, const Vector3<S>&,
                            QBar&& q_bar, Vector3<S>&) {
    const Eigen::Matrix<S, 4, 1> g = detail::normalized_quaternion_matrix_vjp<S>(q.template segment<4>(0), Rj_bar);
    for (int k = 0; k < 4; ++k) q_bar[k] += g[k];
  }
  template <class S, class Q, class G, class QBar>
  static void tangent_vjp(const Vector3<S>&, const Q& q, const G& g, QBar&& q_bar) {
    q_bar += detail::quaternion_adjoint<S>(q, Vector3<S>(g[0], g[1], g[2]));
  }
  template <class S, class Q, class V, class QOutBar, class QBar, class DvBar>
  static void integrate_vjp(const Q& q, const V& dv, const QOutBar& q_out_bar, QBar&& q_bar, DvBar&& dv_bar) {
    const Vector3<S> w(dv[0], dv[1], dv[2]);
    detail::Quat<S> q0_bar{Vector3<S>::Zero(), S(0)};
    Vector3<S> w_bar = Vector3<S>::Zero();
    detail::rotate_integrate_vjp(detail::quat_at<S>(q, 0), w, detail::quat_at<S>(q_out_bar, 0), q0_bar, w_bar);
    detail::add_quat(q_bar, 0, q0_bar);
    dv_bar.template segment<3>(0) += w_bar;
  }
  template <class S, class Q0, class Q1, class D, class B0, class B1>
  static void difference_vjp(const Q0& q0, const Q1& q1, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
    const Quaternion<S> a(q0[3], q0[0], q0[1], q0[2]), b(q1[3], q1[0], q1[1], q1[2]);
    Quaternion<S> c_bar(S(0), S(0), S(0), S(0));
    detail::quaternion_difference_vjp<S>(a, b, Vector3<S>(d_bar[0], d_bar[1], d_bar[2]), c_bar, 0, q0_bar, q1_bar);
  }

  /// so(3): [x, y] = x cross y.
  template <class S>
  static void bracket(const S* x, const S* y, S* out) {
    const Vector3<S> r = Vector3<S>(x[0], x[1], x[2]).cross(Vector3<S>(y[0], y[1], y[2]));
    for (int k = 0; k < 3; ++k) out[k] = r[k];
  }
  template <class S>
  static void bracket_vjp(const S* x, const S* y, const S* o, S* x_bar, S* y_bar) {
    const Vector3<S> X(x[0], x[1], x[2]), Y(y[0], y[1], y[2]), O(o[0], o[1], o[2]);
    const Vector3<S> xb = Y.cross(O), yb = O.cross(X);
    for (int k = 0; k < 3; ++k) x_bar[k] += xb[k], y_bar[k] += yb[k];
  }
};

}  // namespace gradyn
