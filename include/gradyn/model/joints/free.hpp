// The free joint: q = [x, y, z, qx, qy, qz, qw], the child's position and unit quaternion in the
// joint frame; v = [vx, vy, vz, wx, wy, wz], the body's linear velocity (of its origin) and angular
// velocity, both in the body frame (Pinocchio's convention); S = [0 I; I 0] (linear first).
#pragma once

#include "gradyn/model/joints/joint_defaults.hpp"
#include "gradyn/model/joints/lie_group_vjp.hpp"

namespace gradyn {

struct FreeJoint : JointDefaults<7, 6> {
  static constexpr std::string_view name = "free";
  static constexpr std::string_view urdf_type = "floating";
  static constexpr bool quaternion = true;
  static constexpr bool group = true;

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>&, const Q& q) {
    using std::sqrt;
    const S n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
    return Pose<S>(quaternion_xyzw_to_matrix<S>(q[3] / n, q[4] / n, q[5] / n, q[6] / n), Vector3<S>(q[0], q[1], q[2]));
  }
  template <class S>
  static void subspace(const Vector3<S>&, Matrix6X<S>& Sm) {
    Sm.template block<3, 3>(3, 0).setIdentity();  // linear velocity first
    Sm.template block<3, 3>(0, 3).setIdentity();  // then angular
  }

  /// q (+) dv applies the SE(3) exponential of the body twist and renormalises the quaternion.
  template <class S, class Q, class V, class Out>
  static void integrate(const Q& q, const V& dv, Out& q_out) {
    const Quaternion<S> q0(q[6], q[3], q[4], q[5]);
    const Vector3<S> lin(dv[0], dv[1], dv[2]), ang(dv[3], dv[4], dv[5]);
    // The displacement is rotated by the normalised quaternion, as transform reads it.
    const Vector3<S> p1 = Vector3<S>(q[0], q[1], q[2]) + q0.normalized() * (se3_V<S>(ang) * lin);
    Quaternion<S> q1 = q0 * quaternion_exp<S>(ang);
    q1.normalize();
    q_out[0] = p1.x(); q_out[1] = p1.y(); q_out[2] = p1.z();
    q_out[3] = q1.x(); q_out[4] = q1.y(); q_out[5] = q1.z(); q_out[6] = q1.w();
  }
  template <class S, class Q0, class Q1, class Out>
  static void difference(const Q0& q0, const Q1& q1, Out& d) {
    const Quaternion<S> a(q0[6], q0[3], q0[4], q0[5]), b(q1[6], q1[3], q1[4], q1[5]);
    const Vector3<S> w = quaternion_log<S>(a.conjugate() * b);
    const Vector3<S> dp_local = a.conjugate() * (Vector3<S>(q1[0], q1[1], q1[2]) - Vector3<S>(q0[0], q0[1], q0[2]));
    const Vector3<S> lin = se3_V<S>(w).inverse() * dp_local;
    d[0] = lin.x(); d[1] = lin.y(); d[2] = lin.z();
    d[3] = w.x(); d[4] = w.y(); d[5] = w.z();
  }
  template <class S, class Out>
  static void neutral(Out& q) {
    q.setZero();
    q[6] = S(1);
  }
  template <class S, class Out>
  static void normalize(Out& q) {
    q.template segment<4>(3).normalize();
  }

  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>&, const Q& q, const Pose<S>&, const Matrix3<S>& Rj_bar,
                            const Vector3<S>& pj_bar, QBar&& q_bar, Vector3<S>&) {
    const Eigen::Matrix<S, 4, 1> g = detail::normalized_quaternion_matrix_vjp<S>(q.template segment<4>(3), Rj_bar);
    for (int k = 0; k < 3; ++k) q_bar[k] += pj_bar[k];
    for (int k = 0; k < 4; ++k) q_bar[3 + k] += g[k];
  }
  template <class S, class Q, class G, class QBar>
  static void tangent_vjp(const Vector3<S>& axis, const Q& q, const G& g, QBar&& q_bar) {
    // dp (parent frame) = R v_lin with R the normalised quaternion's rotation.
    const Pose<S> Mj = transform<S>(axis, q);
    q_bar.template head<3>() += Mj.R * Vector3<S>(g[0], g[1], g[2]);
    q_bar.template tail<4>() += detail::quaternion_adjoint<S>(q.template tail<4>(), Vector3<S>(g[3], g[4], g[5]));
  }
  template <class S, class Q, class V, class QOutBar, class QBar, class DvBar>
  static void integrate_vjp(const Q& q, const V& dv, const QOutBar& q_out_bar, QBar&& q_bar, DvBar&& dv_bar) {
    using std::sqrt;
    // p1 = p0 + R(q0) (V(ang) lin);  q1 = normalize(q0 exp(ang))
    const detail::Quat<S> q0 = detail::quat_at<S>(q, 3);
    const Vector3<S> lin(dv[0], dv[1], dv[2]), ang(dv[3], dv[4], dv[5]);
    const Vector3<S> p1_bar(q_out_bar[0], q_out_bar[1], q_out_bar[2]);
    detail::Quat<S> q0_bar{Vector3<S>::Zero(), S(0)};
    Vector3<S> ang_bar = Vector3<S>::Zero(), lin_bar = Vector3<S>::Zero(), u_bar = Vector3<S>::Zero();
    // p1 rotates by the normalised quaternion u: adjoint at u, then through the normalisation.
    const S n = sqrt(q0.v.squaredNorm() + q0.w * q0.w);
    detail::Quat<S> u_q_bar{Vector3<S>::Zero(), S(0)};
    detail::rotate_vector_vjp(detail::Quat<S>{q0.v / n, q0.w / n}, Vector3<S>(se3_V<S>(ang) * lin), p1_bar, u_q_bar,
                              u_bar);
    const detail::Quat<S> through_norm = detail::normalize_vjp(q0, u_q_bar);
    q0_bar.v += through_norm.v;
    q0_bar.w += through_norm.w;
    detail::se3_V_times_vjp(ang, lin, u_bar, ang_bar, lin_bar);
    detail::rotate_integrate_vjp(q0, ang, detail::quat_at<S>(q_out_bar, 3), q0_bar, ang_bar);
    for (int k = 0; k < 3; ++k) q_bar[k] += p1_bar[k];
    detail::add_quat(q_bar, 3, q0_bar);
    dv_bar.template segment<3>(0) += lin_bar;
    dv_bar.template segment<3>(3) += ang_bar;
  }
  template <class S, class Q0, class Q1, class D, class B0, class B1>
  static void difference_vjp(const Q0& q0, const Q1& q1, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
    const Quaternion<S> a(q0[6], q0[3], q0[4], q0[5]), b(q1[6], q1[3], q1[4], q1[5]);
    const Quaternion<S> c = a.conjugate();
    const Quaternion<S> r = c * b;
    Vector3<S> w_bar(d_bar[3], d_bar[4], d_bar[5]);
    Quaternion<S> c_bar(S(0), S(0), S(0), S(0));
    // lin = V(w)^-1 (c * (p1 - p0)), w = log(c * b)
    const Vector3<S> w = quaternion_log<S>(r);
    const Vector3<S> dpos = Vector3<S>(q1[0], q1[1], q1[2]) - Vector3<S>(q0[0], q0[1], q0[2]);
    const Vector3<S> dp_local = c * dpos;
    const Matrix3<S> Vinv = se3_V<S>(w).inverse();
    const Vector3<S> lin = Vinv * dp_local;
    const Vector3<S> lin_bar(d_bar[0], d_bar[1], d_bar[2]);
    const Vector3<S> dp_local_bar = Vinv.transpose() * lin_bar;
    detail::se3_V_vjp<S>(w, Matrix3<S>(-dp_local_bar * lin.transpose()), w_bar);  // d(V^-1) = -V^-1 dV V^-1
    Vector3<S> dpos_bar = Vector3<S>::Zero();
    detail::quaternion_rotate_vjp<S>(c, dpos, dp_local_bar, c_bar, dpos_bar);
    for (int k = 0; k < 3; ++k) {
      q1_bar[k] += dpos_bar[k];
      q0_bar[k] -= dpos_bar[k];
    }
    detail::quaternion_difference_vjp<S>(a, b, w_bar, c_bar, 3, q0_bar, q1_bar);
  }

  /// se(3) with (linear, angular): [(v1, w1), (v2, w2)] = (w1 x v2 - w2 x v1, w1 x w2).
  template <class S>
  static void bracket(const S* x, const S* y, S* out) {
    const Vector3<S> v1(x[0], x[1], x[2]), w1(x[3], x[4], x[5]), v2(y[0], y[1], y[2]), w2(y[3], y[4], y[5]);
    const Vector3<S> lin = w1.cross(v2) - w2.cross(v1), ang = w1.cross(w2);
    for (int k = 0; k < 3; ++k) out[k] = lin[k], out[3 + k] = ang[k];
  }
  template <class S>
  static void bracket_vjp(const S* x, const S* y, const S* o, S* x_bar, S* y_bar) {
    const Vector3<S> v1(x[0], x[1], x[2]), w1(x[3], x[4], x[5]), v2(y[0], y[1], y[2]), w2(y[3], y[4], y[5]);
    const Vector3<S> ol(o[0], o[1], o[2]), oa(o[3], o[4], o[5]);
    // lin = w1 x v2 - w2 x v1, ang = w1 x w2
    const Vector3<S> w1b = v2.cross(ol) + w2.cross(oa), v2b = ol.cross(w1);
    const Vector3<S> w2b = -v1.cross(ol) + oa.cross(w1), v1b = -ol.cross(w2);
    for (int k = 0; k < 3; ++k) {
      x_bar[k] += v1b[k], x_bar[3 + k] += w1b[k];
      y_bar[k] += v2b[k], y_bar[3 + k] += w2b[k];
    }
  }
};

}  // namespace gradyn
