// What a joint kind inherits unless it says otherwise: the kernels of a joint whose configuration
// space is a vector space (q and v of the same size, q (+) dv = q + dv), and no axis, rest position
// or limits. Each joint kind (joints/<kind>.hpp) derives from this and defines its own transform and
// subspace, and every kernel below where it differs; joint.hpp registers the kinds.
#pragma once

#include <string_view>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

template <int NQ, int NV>
struct JointDefaults {
  static constexpr int nq = NQ;
  static constexpr int nv = NV;
  static constexpr bool has_axis = false;     // a direction parameter (Model::joint_axis) that the kernels read
  static constexpr bool has_rest = false;     // spring rest positions in the parameter table (q_rest)
  static constexpr bool limited = false;      // limits act on its q coordinates
  static constexpr bool quaternion = false;   // q holds a unit quaternion (normalised by normalize)
  static constexpr bool group = false;        // integrate is a group exponential, not q + dv
  static constexpr bool limit_rate_varies = false;  // limit_rate_row depends on q
  static constexpr std::string_view urdf_type{};    // its URDF <joint type="...">, if URDF has it

  /// q_out = q (+) dv.
  template <class S, class Q, class V, class Out>
  static void integrate(const Q& q, const V& dv, Out& q_out) {
    for (int k = 0; k < NQ; ++k) q_out[k] = q[k] + dv[k];
  }
  /// d with q1 = q0 (+) d.
  template <class S, class Q0, class Q1, class Out>
  static void difference(const Q0& q0, const Q1& q1, Out& d) {
    for (int k = 0; k < NQ; ++k) d[k] = q1[k] - q0[k];
  }
  template <class S, class Out>
  static void neutral(Out& q) {
    q.setZero();
  }
  /// Puts q back on the manifold (quaternion joints renormalise).
  template <class S, class Out>
  static void normalize(Out&) {}

  /// The axis part of a subspace column's adjoint (1-DoF joints with an axis: S = [a; 0] or [0; a]).
  template <class S>
  static Vector3<S> subspace_axis_bar(const Vector6<S>&) {
    return Vector3<S>::Zero();
  }
  /// The axis adjoint from the wrench Fj (joint frame) that the joint's subtree receives, the subtree
  /// moving as the axis moves (body_poses_vjp).
  template <class S, class Q>
  static void axis_wrench_vjp(const Vector3<S>&, const Q&, const Vector6<S>&, Vector3<S>&) {}

  /// Adjoint of q (+) dv: accumulates into q_bar and dv_bar.
  template <class S, class Q, class V, class QOutBar, class QBar, class DvBar>
  static void integrate_vjp(const Q&, const V&, const QOutBar& q_out_bar, QBar&& q_bar, DvBar&& dv_bar) {
    for (int k = 0; k < NQ; ++k) {
      q_bar[k] += q_out_bar[k];
      dv_bar[k] += q_out_bar[k];
    }
  }
  /// Adjoint of difference(q0, q1): accumulates into q0_bar and q1_bar.
  template <class S, class Q0, class Q1, class D, class B0, class B1>
  static void difference_vjp(const Q0&, const Q1&, const D& d_bar, B0&& q0_bar, B1&& q1_bar) {
    for (int k = 0; k < NQ; ++k) {
      q1_bar[k] += d_bar[k];
      q0_bar[k] -= d_bar[k];
    }
  }
  /// Ambient adjoint of q from the adjoint g of a tangent (velocity-coordinate) motion of the joint.
  template <class S, class Q, class G, class QBar>
  static void tangent_vjp(const Vector3<S>&, const Q&, const G& g, QBar&& q_bar) {
    for (int k = 0; k < NV; ++k) q_bar[k] += g[k];
  }

  /// Lie bracket [x, y] of two tangent vectors (zero on a vector space), for RK4 on the group.
  template <class S>
  static void bracket(const S*, const S*, S* out) {
    for (int k = 0; k < NV; ++k) out[k] = S(0);
  }
  /// Adjoint of out = [x, y] (bilinear), given out_bar o: accumulates into x_bar and y_bar.
  template <class S>
  static void bracket_vjp(const S*, const S*, const S*, S*, S*) {}

  /// The row r over the joint's velocities whose product r . v is the rate of q coordinate k
  /// (the limit constraint's Jacobian row): the unit row e_k.
  template <class S, class Q>
  static Vector3<S> limit_rate_row(const Q&, int k) {
    Vector3<S> r = Vector3<S>::Zero();
    r[k] = S(1);
    return r;
  }
  /// Adjoint of limit_rate_row with respect to q (where limit_rate_varies).
  template <class S, class Q, class QBar>
  static void limit_rate_row_vjp(const Q&, int, const Vector3<S>&, QBar&&) {}
};

}  // namespace gradyn
