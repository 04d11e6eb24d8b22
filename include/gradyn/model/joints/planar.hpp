// The planar joint: q = [x, y, theta], v = [vx, vy, wz] in the child frame (the SE(2) body twist);
// the child moves in the joint frame's xy plane.
#pragma once

#include <cmath>

#include "gradyn/model/joints/joint_defaults.hpp"
#include "gradyn/model/joints/lie_group.hpp"

namespace gradyn {

struct PlanarJoint : JointDefaults<3, 3> {
  static constexpr std::string_view name = "planar";
  static constexpr std::string_view urdf_type = "planar";
  static constexpr bool has_rest = true;
  static constexpr bool limited = true;
  static constexpr bool group = true;
  static constexpr bool limit_rate_varies = true;

  template <class S, class Q>
  static Pose<S> transform(const Vector3<S>&, const Q& q) {
    using std::cos;
    using std::sin;
    const S c = cos(q[2]), s = sin(q[2]);
    Matrix3<S> R;
    R << c, -s, S(0), s, c, S(0), S(0), S(0), S(1);
    return Pose<S>(R, Vector3<S>(q[0], q[1], S(0)));
  }
  template <class S>
  static void subspace(const Vector3<S>&, Matrix6X<S>& Sm) {
    Sm(3, 0) = S(1);
    Sm(4, 1) = S(1);
    Sm(2, 2) = S(1);
  }

  /// q (+) dv applies the SE(2) exponential of the body twist (vx, vy, wz) on the right.
  template <class S, class Q, class V, class Out>
  static void integrate(const Q& q, const V& dv, Out& q_out) {
    using std::cos;
    using std::sin;
    const S th = dv[2];
    S a, b;
    se2_coefficients<S>(th, a, b);
    const S lx = a * dv[0] - b * dv[1], ly = b * dv[0] + a * dv[1];
    const S c = cos(q[2]), s = sin(q[2]);
    q_out[0] = q[0] + c * lx - s * ly;
    q_out[1] = q[1] + s * lx + c * ly;
    q_out[2] = q[2] + th;
  }
  template <class S, class Q0, class Q1, class Out>
  static void difference(const Q0& q0, const Q1& q1, Out& d) {
    using std::cos;
    using std::sin;
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
  }

  template <class S, class Q, class QBar>
  static void transform_vjp(const Vector3<S>&, const Q&, const Pose<S>& Mj, const Matrix3<S>& Rj_bar,
                            const Vector3<S>& pj_bar, QBar&& q_bar, Vector3<S>&) {
    const S c = Mj.R(0, 0), s = Mj.R(1, 0);
    q_bar[0] += pj_bar[0];
    q_bar[1] += pj_bar[1];
    q_bar[2] += -s * (Rj_bar(0, 0) + Rj_bar(1, 1)) + c * (Rj_bar(1, 0) - Rj_bar(0, 1));
  }
  template <class S, class Q, class G, class QBar>
  static void tangent_vjp(const Vector3<S>&, const Q& q, const G& g, QBar&& q_bar) {
    using std::cos;
    using std::sin;
    // d(x, y) = Rz(theta) (vx, vy), dtheta = wz
    const S c = cos(q[2]), s = sin(q[2]);
    q_bar[0] += c * g[0] - s * g[1];
    q_bar[1] += s * g[0] + c * g[1];
    q_bar[2] += g[2];
  }
  template <class S, class Q, class V, class QOutBar, class QBar, class DvBar>
  static void integrate_vjp(const Q& q, const V& dv, const QOutBar& q_out_bar, QBar&& q_bar, DvBar&& dv_bar) {
    using std::cos;
    using std::sin;
    // out = (x + c lx - s ly, y + s lx + c ly, th0 + th), (lx, ly) = [[a, -b], [b, a]] (dv0, dv1)
    const S th = dv[2];
    S a, b, da, db;
    se2_coefficients<S>(th, a, b, &da, &db);
    const S lx = a * dv[0] - b * dv[1], ly = b * dv[0] + a * dv[1];
    const S c = cos(q[2]), s = sin(q[2]);
    const S o0 = q_out_bar[0], o1 = q_out_bar[1], o2 = q_out_bar[2];
    q_bar[0] += o0;
    q_bar[1] += o1;
    q_bar[2] += o2 + (-s * lx - c * ly) * o0 + (c * lx - s * ly) * o1;
    const S lx_bar = c * o0 + s * o1, ly_bar = -s * o0 + c * o1;
    const S a_bar = lx_bar * dv[0] + ly_bar * dv[1];
    const S b_bar = -lx_bar * dv[1] + ly_bar * dv[0];
    dv_bar[0] += a * lx_bar + b * ly_bar;
    dv_bar[1] += -b * lx_bar + a * ly_bar;
    dv_bar[2] += o2 + a_bar * da + b_bar * db;
  }
  template <class S, class Q0, class Q1, class D, class B0, class B1>
  static void difference_vjp(const Q0& q0, const Q1& q1, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
    using std::cos;
    using std::sin;
    const S th = q1[2] - q0[2];
    const S c = cos(q0[2]), s = sin(q0[2]);
    const S dx = q1[0] - q0[0], dy = q1[1] - q0[1];
    const S lx = c * dx + s * dy, ly = -s * dx + c * dy;
    S a, b, da, db;  // and their derivatives in th, on the same branch as difference
    se2_coefficients<S>(th, a, b, &da, &db);
    const S det = a * a + b * b;
    const S d0 = (a * lx + b * ly) / det, d1 = (-b * lx + a * ly) / det;
    const S g0 = d_bar[0] / det, g1 = d_bar[1] / det;
    const S lx_bar = a * g0 - b * g1, ly_bar = b * g0 + a * g1;
    const S det_bar = -(d0 * g0 + d1 * g1);
    const S a_bar = lx * g0 + ly * g1 + S(2) * a * det_bar;
    const S b_bar = ly * g0 - lx * g1 + S(2) * b * det_bar;
    const S th_bar = d_bar[2] + a_bar * da + b_bar * db;
    const S dx_bar = c * lx_bar - s * ly_bar, dy_bar = s * lx_bar + c * ly_bar;
    q1_bar[0] += dx_bar;
    q0_bar[0] -= dx_bar;
    q1_bar[1] += dy_bar;
    q0_bar[1] -= dy_bar;
    q1_bar[2] += th_bar;
    q0_bar[2] += -th_bar + lx_bar * ly - ly_bar * lx;  // the q0 frame rotates with q0[2]
  }

  /// se(2) with (vx, vy, w).
  template <class S>
  static void bracket(const S* x, const S* y, S* out) {
    out[0] = -x[2] * y[1] + y[2] * x[1];
    out[1] = x[2] * y[0] - y[2] * x[0];
    out[2] = S(0);
  }
  template <class S>
  static void bracket_vjp(const S* x, const S* y, const S* o, S* x_bar, S* y_bar) {
    x_bar[0] += -y[2] * o[1];
    x_bar[1] += y[2] * o[0];
    x_bar[2] += -y[1] * o[0] + y[0] * o[1];
    y_bar[0] += x[2] * o[1];
    y_bar[1] += -x[2] * o[0];
    y_bar[2] += x[1] * o[0] - x[0] * o[1];
  }

  /// x and y are in the joint frame, v in the child frame: x' = c vx - s vy, y' = s vx + c vy.
  template <class S, class Q>
  static Vector3<S> limit_rate_row(const Q& q, int k) {
    using std::cos;
    using std::sin;
    const S theta = q[2];
    const S c = cos(theta), s = sin(theta);
    switch (k) {
      case 0: return Vector3<S>(c, -s, S(0));
      case 1: return Vector3<S>(s, c, S(0));
      default: return Vector3<S>(S(0), S(0), S(1));
    }
  }
  template <class S, class Q, class QBar>
  static void limit_rate_row_vjp(const Q& q, int k, const Vector3<S>& r_bar, QBar&& q_bar) {
    using std::cos;
    using std::sin;
    if (k >= 2) return;
    const S theta = q[2];
    const S c = cos(theta), s = sin(theta);
    // x: r = (c, -s, 0), dr/dtheta = (-s, -c, 0);  y: r = (s, c, 0), dr/dtheta = (c, -s, 0)
    q_bar[2] += k == 0 ? S(-s * r_bar[0] - c * r_bar[1]) : S(c * r_bar[0] - s * r_bar[1]);
  }
};

}  // namespace gradyn
