// Dry joint friction (model.frictionloss, per DoF) and joint couplings (model.joint_couplings: MJCF
// <equality><joint>, URDF <mimic>), for the contact models of step(). MuJoCo's semantics, with the
// constraint made stiff (no solref/solimp softness).
//
// Friction of DoF k, bound f_k = frictionloss[k] > 0 [N m | N]: the joint force opposing its motion
// is at most f_k; it holds the joint still while the other forces on it stay below f_k.
// Coupling c (joint1 -> body b1, joint2 -> body b2, 1-DoF joints, coefficients c0..c4; for a tendon
// coupling q1, q2 are the two tendons' lengths and e_v1, e_v2 their Jacobians, for_each_coupling_term):
//   error     g = (q1 - q1_ref) - p(x),  x = q2 - q2_ref,  p(x) = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4
//             (without joint2: g = q1 - q1_ref - c0)
//   Jacobian  J = e_{v1} - p'(x) e_{v2}  (1 x nv; g_dot = J v)
// Connection c (body1 b1, body2 b2 or the world, anchors a1, a2 in their bodies' frames):
//   error     g = p1 - p2 (3, world axes),  p1 = oM(b1) a1,  p2 = oM(b2) a2
//   Jacobian  rows e_r . (u_b1(p1) - u_b2(p2)), u_b(p) the velocity of b's material point at p
//             (contact/detail/contact_jacobian.hpp's point rows along the world axes)
// A weld (c.weld, rotation R_c: body2's orientation in body1's frame) adds three rotation rows:
//   error     g = axial(T - T^T) / 2,  T = R_b1 R_c R_b2^T  (sin(angle) axis of the rotation that takes
//             body2 to where the weld holds it: the rotation vector to first order, world axes)
//   Jacobian  rows e_r . (omega_b1 - omega_b2)  (g_dot = J v where g = 0)
//   MuJoCo's weld error is the quaternion's 2 sin(angle/2) axis; the two agree to first order, and
//   stiff rows hold either at 0.
//
// Per contact model (ContactSettings::model):
//   None:    neither is enforced (step() stays the plain articulated dynamics, as for joint limits).
//   Penalty: forces added with the joint-limit forces (contact_generalized_forces):
//              friction  tau_k -= f_k v_k / sqrt(v_k^2 + velocity_scale^2)  (smoothed Coulomb, as the
//                        contact friction: under a load r f_k, r < 1, a joint creeps at
//                        velocity_scale r / sqrt(1 - r^2) instead of sticking; velocity_scale is
//                        read in rad/s or m/s here)
//              coupling  tau -= J^T (limit_stiffness g + limit_damping J v)  (a stiff spring-damper)
//              connection  the same spring-damper on each block: at the anchors f = -(limit_stiffness g +
//                        limit_damping g_dot) on body1 and -f on body2, a weld's rotation the torque
//                        -(limit_stiffness e + limit_damping (omega1 - omega2)) on body1 and its
//                        opposite on body2 (penalty_contact_forces adds them with the contact forces);
//                        explicit, so the gap under a load F is F / limit_stiffness, and stable only
//                        while dt < 2 sqrt(m / limit_stiffness) and dt < 2 m / limit_damping for the
//                        smallest mass or moment m it moves (a weld on a thin link needs a small dt)
//   Pgs, Ipm: rows of the velocity-level LCP after the contact and joint-limit rows, always present:
//              friction  one row per DoF with f_k > 0, in DoF order: J = e_k, rate target 0, impulse
//                        in [-f_k dt, f_k dt] (PGS: a boxed row; Ipm: the 3-row polyhedral cone of one
//                        contact's friction with 2 directions, +-e_k, bound f_k dt instead of mu lambda_n:
//                        beta+, beta- >= 0 with J v+ + gamma >= 0, -J v+ + gamma >= 0 and
//                        f_k dt - beta+ - beta- >= 0, each complementary to its multiplier)
//              connection  three bilateral rows per connection after the coupling rows (every
//                        connection's point rows, then every weld's rotation rows: the blocks of
//                        for_each_connection_block; all that follows holds for both), impulse
//                        unbounded, target J v+ = -erp / dt g (PGS: rows in (-inf, inf); Ipm: equality
//                        rows after the couplings'), along the world axes, except that a principal
//                        direction of the connection's Jacobian J (3 x nv; an eigenvector of J J^T)
//                        whose singular value is below kConnectionRank (1e-2) of the largest is
//                        left out, the rows then spanning the rest (PGS: a zero, inert row; Ipm: no
//                        row): a direction the joints can hardly move, as
//                        the out-of-plane direction of a planar loop, where it is exactly 0 or, with
//                        the anchors a little apart on joints that are not parallel, small (the
//                        rolling four-bar of tests/contact/test_joint_constraints.cpp, as Cassie's
//                        legs); enforcing it demands huge velocities to close a gap the mechanism
//                        cannot close, and both solvers fail there (that test). The directions
//                        are taken on values: gradients treat them as fixed (exact where every
//                        direction is kept, or where the kept ones span a fixed plane).
//              coupling  one bilateral row per coupling, after the friction rows, impulse unbounded
//                        (PGS: a row in (-inf, inf); Ipm: an equality row A x = b of the mixed LCP), with
//                        the target J v+ = -erp / dt g + 1/2 dt p''(x) v2^2: Baumgarte on the whole
//                        error (no slop), plus the drift a curved coupling makes within the step
//                        (q+ = q + dt v+ moves along the tangent: g(q+) = g + dt J v+ - 1/2 dt^2 p'' v2^2
//                        to second order, with the pre-step v2 for v2+)
// Gradients: step_vjp differentiates them through every model, the friction bounds, the coupling
// coefficients, the anchors and a weld's rotation included (parameters of the flat vector,
// model/params.hpp). step_jacobian does too: under
// Penalty with its forward-mode terms, under Pgs and Ipm by reverse mode (one step_vjp per output).
#pragma once

#include <algorithm>
#include <vector>

#include <Eigen/Eigenvalues>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/detail/contact_jacobian.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// True when step() has dry joint friction, joint couplings or body connections to enforce.
template <class S>
bool has_joint_constraints(const ModelTpl<S>& model);

/// DoFs with frictionloss > 0 (one friction row each).
template <class S>
int joint_friction_rows(const ModelTpl<S>& model);

/// Calls visit(row, dof) for each friction row in order (row counts from 0).
template <class S, class Visit>
void for_each_joint_friction_row(const ModelTpl<S>& model, Visit&& visit) {
  int row = 0;
  for (int k = 0; k < static_cast<int>(model.frictionloss.size()); ++k)  // empty: a model built by hand
    if (value_of(model.frictionloss[k]) > 0.0) visit(row++, k);
}

/// Calls visit(block, connection, rotational) for each row block of the body connections
/// (model.connection_blocks(), three rows each), in row order: every connection's point rows, in
/// connection order, then every weld's rotation rows, in connection order.
template <class S, class Visit>
void for_each_connection_block(const ModelTpl<S>& model, Visit&& visit) {
  const int n = static_cast<int>(model.body_connections.size());
  for (int k = 0; k < n; ++k) visit(k, model.body_connections[static_cast<size_t>(k)], false);
  int block = n;
  for (int k = 0; k < n; ++k)
    if (model.body_connections[static_cast<size_t>(k)].weld) visit(block++, model.body_connections[static_cast<size_t>(k)], true);
}

/// Calls visit(iq, iv, coef) for each joint term of coordinate `which` (1: the follower, 2: the
/// leader) of a coupling: its joint (coef 1), or, for a tendon coupling, the tendon's joints with
/// their coefficients. The coordinate is sum coef q[iq], its rate sum coef v[iv]; nothing without it.
template <class S, class Visit>
void for_each_coupling_term(const ModelTpl<S>& model, const JointCoupling& c, int which, Visit&& visit) {
  const int id = which == 1 ? c.joint1 : c.joint2;
  if (id < 0) return;
  if (!c.tendons) {
    visit(model.idx_q[id], model.idx_v[id], 1.0);
    return;
  }
  const FixedTendon& t = model.tendons[static_cast<size_t>(id)];
  for (size_t i = 0; i < t.joints.size(); ++i) visit(model.idx_q[t.joints[i]], model.idx_v[t.joints[i]], t.coefs[i]);
}

/// A coupling coordinate's value at q (sum coef q[iq]) or, with rate, its rate at v (sum coef v[iv]).
template <class S>
S coupling_coordinate(const ModelTpl<S>& model, const JointCoupling& c, int which, const VecRef<S>& x,
                      bool rate = false) {
  S sum = S(0);
  for_each_coupling_term(model, c, which, [&](int iq, int iv, double coef) { sum += coef * x[rate ? iv : iq]; });
  return sum;
}

/// Rows the velocity-level models add for friction, couplings and connections (PGS: all of them;
/// Ipm: the friction ones as 3-row cones, the others as equality rows).
template <class S>
int joint_constraint_rows(const ModelTpl<S>& model) {
  return joint_friction_rows<S>(model) + static_cast<int>(model.joint_couplings.size()) +
         3 * model.connection_blocks();
}

/// World points p1 = oM(body1) anchor1 and p2 of a connection; needs data.oMi at the current q.
template <class S>
void connection_points(const DataTpl<S>& data, const BodyConnection& c, Vector3<S>& p1, Vector3<S>& p2) {
  p1 = data.oMi[c.body1].act_point(c.anchor1.cast<S>());
  p2 = c.body2 >= 0 ? data.oMi[c.body2].act_point(c.anchor2.cast<S>()) : Vector3<S>(c.anchor2.cast<S>());
}

/// Relative singular value below which a connection's row direction is left out (file comment).
inline constexpr double kConnectionRank = 1e-2;

/// Leaves out of a connection's three world-axis rows (JT, nv x 3, as add_connection_rows builds
/// them) the principal directions of its Jacobian (eigenvectors of J J^T) whose singular value is
/// below kConnectionRank of the largest: axes (3 x 3, on values) holds the rows' directions, the
/// identity when none is dropped, else an orthonormal basis of the rest from the world axes (a zero
/// column for each dropped one), and JT becomes JT axes. Never allocates.
template <class S, class Block>
void rotate_connection_rows(Block&& JT, Eigen::Matrix3d& axes) {
  Eigen::Matrix3d gram = Eigen::Matrix3d::Zero();
  for (Eigen::Index i = 0; i < JT.rows(); ++i) {
    const Eigen::Vector3d r(value_of(JT(i, 0)), value_of(JT(i, 1)), value_of(JT(i, 2)));
    gram.noalias() += r * r.transpose();
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(gram);
  const Eigen::Vector3d& sigma2 = eigen.eigenvalues();  // ascending
  // the kept directions: the world axes projected off the dropped ones and orthonormalised, the
  // axes that project longest first (each in its own column), so that a connection that drops none
  // keeps the world axes, and a planar loop its in-plane ones
  Eigen::Matrix3d projector = Eigen::Matrix3d::Identity();
  int dropped = 0;
  for (int k = 0; k < 3; ++k)
    if (!(sigma2[2] > 0.0) || sigma2[k] < kConnectionRank * kConnectionRank * sigma2[2]) {
      projector -= eigen.eigenvectors().col(k) * eigen.eigenvectors().col(k).transpose();
      ++dropped;
    }
  axes.setZero();
  if (dropped == 0) {
    axes.setIdentity();
  } else if (dropped < 3) {
    int order[3] = {0, 1, 2};
    std::sort(order, order + 3, [&](int a, int b) { return projector.col(a).norm() > projector.col(b).norm(); });
    for (int n = 0; n < 3 - dropped; ++n) {
      Eigen::Vector3d d = projector.col(order[n]);
      for (int m = 0; m < n; ++m) d -= axes.col(order[m]).dot(d) * axes.col(order[m]);
      axes.col(order[n]) = d.normalized();
    }
  }
  const Matrix3<S> rotation = axes.cast<S>();
  for (Eigen::Index i = 0; i < JT.rows(); ++i) {
    const Eigen::Matrix<S, 1, 3> r = JT.row(i);
    JT.row(i).noalias() = r * rotation;
  }
}

/// Adds the connection's three rows (along the world axes) into the 3 columns of JT (nv x 3).
/// Needs data.oMi at the current q.
template <class S, class Block>
void add_connection_rows(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c, Block&& JT) {
  Vector3<S> p1, p2;
  connection_points<S>(data, c, p1, p2);
  const Matrix3<S> axes = Matrix3<S>::Identity();
  detail::add_point_jacobian<S>(model, data, c.body1, p1, axes, S(1), JT);
  if (c.body2 >= 0) detail::add_point_jacobian<S>(model, data, c.body2, p2, axes, S(-1), JT);
}

/// Adds a weld's three rotation rows, about the world axes (omega_body1 - omega_body2), into the
/// 3 columns of JT (nv x 3). Needs data.oMi at the current q.
template <class S, class Block>
void add_weld_rotation_rows(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c, Block&& JT) {
  const auto add = [&](int body, const S& sign) {
    for (int i = body; i >= 0; i = model.parent[i])
      for (int j = 0; j < model.joint_nv(i); ++j)
        JT.row(model.idx_v[i] + j) += sign * (data.oMi[i].R * data.joint_S[i].col(j).template head<3>()).transpose();
  };
  add(c.body1, S(1));
  if (c.body2 >= 0) add(c.body2, S(-1));
}

/// A weld's orientation error about the world axes, the axial vector of the skew part of
/// T = R(body1) rotation R(body2)^T (the rotation that takes body2 to where the weld holds it):
/// sin(angle) axis, the rotation vector to first order. Needs data.oMi at the current q.
template <class S>
Vector3<S> weld_rotation_error(const DataTpl<S>& data, const BodyConnection& c) {
  Matrix3<S> T = data.oMi[c.body1].R * c.rotation.cast<S>();
  if (c.body2 >= 0) T = T * data.oMi[c.body2].R.transpose();
  return S(0.5) * Vector3<S>(T(2, 1) - T(1, 2), T(0, 2) - T(2, 0), T(1, 0) - T(0, 1));
}

/// Angular acceleration of body b when no joint accelerates: the angular part of sum_j oc_j over
/// b's joints. Needs data.oc at (q, v).
template <class S>
Vector3<S> angular_bias_acceleration(const ModelTpl<S>& model, const DataTpl<S>& data, int b) {
  Vector3<S> alpha = Vector3<S>::Zero();
  for (int j = b; j >= 0; j = model.parent[j]) alpha += data.oc[j].template head<3>();
  return alpha;
}

/// The rates a weld's rotation rows must reach: -erp / dt g - 1/2 dt (alpha1 - alpha2), g the
/// orientation error (weld_rotation_error), alpha the bodies' angular bias accelerations: as
/// connection_target, for the orientation. Needs data.oMi, ov and oc at (q, v).
template <class S>
Vector3<S> weld_rotation_target(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c,
                                const NoDeduce<S>& dt) {
  Vector3<S> drift = angular_bias_acceleration<S>(model, data, c.body1);
  if (c.body2 >= 0) drift -= angular_bias_acceleration<S>(model, data, c.body2);
  return -S(model.contact.erp) / dt * weld_rotation_error<S>(data, c) - S(0.5) * dt * drift;
}

/// Classical acceleration of body b's material point p when no joint accelerates: the spatial bias
/// acceleration sum_j oc_j over b's joints (oc_j = ov x oS_j v_j) plus omega x (the point's velocity).
/// Needs data.ov and data.oc at (q, v), as forward_dynamics leaves them.
template <class S>
Vector3<S> point_bias_acceleration(const ModelTpl<S>& model, const DataTpl<S>& data, int b, const Vector3<S>& p) {
  Vector6<S> A = Vector6<S>::Zero();
  for (int j = b; j >= 0; j = model.parent[j]) A += data.oc[j];
  const Vector3<S> w = data.ov[b].template head<3>();
  const Vector3<S> u = Vector3<S>(data.ov[b].template tail<3>()) + w.cross(p);
  return Vector3<S>(A.template tail<3>()) + Vector3<S>(A.template head<3>()).cross(p) + w.cross(u);
}

/// The rates J v+ a connection's rows must reach: -erp / dt g - 1/2 dt (a1 - a2), a the anchors'
/// bias accelerations (point_bias_acceleration): Baumgarte on the gap, plus the gap the step itself
/// opens (q+ = q (+) dt v+ moves the anchors along their tangents: g(q+) = g + dt J v+ +
/// 1/2 dt^2 (a1 - a2) to second order, with the pre-step v for v+), as for a curved coupling. Needs
/// data.oMi, ov and oc at (q, v).
template <class S>
Vector3<S> connection_target(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c,
                             const NoDeduce<S>& dt) {
  Vector3<S> p1, p2;
  connection_points<S>(data, c, p1, p2);
  Vector3<S> drift = point_bias_acceleration<S>(model, data, c.body1, p1);
  if (c.body2 >= 0) drift -= point_bias_acceleration<S>(model, data, c.body2, p2);
  return -S(model.contact.erp) / dt * (p1 - p2) - S(0.5) * dt * drift;
}

/// The rows of one block of for_each_connection_block into the 3 columns of JT (nv x 3): a
/// connection's point rows, or a weld's rotation rows.
template <class S, class Block>
void add_connection_block_rows(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c,
                               bool rotational, Block&& JT) {
  if (rotational)
    add_weld_rotation_rows<S>(model, data, c, JT);
  else
    add_connection_rows<S>(model, data, c, JT);
}

/// The rates one block's rows must reach, along the world axes (connection_target or
/// weld_rotation_target).
template <class S>
Vector3<S> connection_block_target(const ModelTpl<S>& model, const DataTpl<S>& data, const BodyConnection& c,
                                   bool rotational, const NoDeduce<S>& dt) {
  return rotational ? weld_rotation_target<S>(model, data, c, dt) : connection_target<S>(model, data, c, dt);
}

/// Adjoint of the connection rows for J_bar += a_scale a z^T, a holding 3 weights per block of
/// for_each_connection_block (a[first + 3 block + r]) along its row directions (axes[block],
/// rotate_connection_rows; held fixed):
/// accumulates data.adj_pose_bar (body_poses_vjp then takes it to q) and model_bar (joint axes). Uses
/// data.adj_ow, adj_ow_bar and z_bar_scratch (nv).
void connection_rows_vjp(const Model& model, Data& data, const std::vector<Eigen::Matrix3d>& axes,
                         const Eigen::VectorXd& a, double a_scale, int first, const VecRef<double>& z,
                         Eigen::VectorXd& z_bar_scratch, ModelTangent& model_bar);

/// Adjoint of the connections' targets along their row directions (axes^T connection_block_target)
/// given target_scale target_bar (3 per block from target_bar[0]) at (q, v): accumulates
/// data.adj_pose_bar, v_bar and model_bar (erp, joint axes). Uses data.adj_ow and adj_ow_bar.
void connection_targets_vjp(const Model& model, Data& data, const std::vector<Eigen::Matrix3d>& axes,
                            const double* target_bar, double target_scale, const VecRef<double>& v, double dt,
                            VecOut<double> v_bar, ModelTangent& model_bar);

/// Coupling error g at q, and p'(x) into slope (the Jacobian's entry on joint2's DoF is -slope;
/// 0 without joint2).
template <class S>
S joint_coupling_error(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q, S& slope);

/// The rate J v+ a coupling row must reach at (q, v): -erp / dt g + 1/2 dt p''(x) v2^2 (the file
/// comment's target).
template <class S>
S joint_coupling_target(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q,
                        const VecRef<S>& v, const NoDeduce<S>& dt);

/// Adjoint of the coupling row's Jacobian for J_bar += weight z^T (z: a generalised velocity):
/// accumulates q_bar (J depends on q through p'(x) when the polynomial is above first degree) and,
/// given model_bar, the coefficients' adjoint.
void joint_coupling_jacobian_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                                 double weight, const VecRef<double>& z, VecOut<double> q_bar,
                                 ModelTangent* model_bar = nullptr);

/// Adjoint of joint_coupling_target given target_bar: accumulates q_bar, v_bar and model_bar
/// (contact.erp, the coefficients).
void joint_coupling_target_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                               const VecRef<double>& v, double dt, double target_bar, VecOut<double> q_bar,
                               VecOut<double> v_bar, ModelTangent& model_bar);

/// Adds (+=) the Penalty model's friction and coupling forces at (q, v) to tau (size nv). Never allocates.
template <class S>
void add_joint_constraint_forces(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, VecOut<S> tau);

/// Adjoint of add_joint_constraint_forces: accumulates (+=) q_bar (nq) and v_bar (nv) given tau_bar,
/// and, given model_bar, the friction bounds' and coupling coefficients' adjoints. Never allocates.
template <class S>
void add_joint_constraint_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                     const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                                     ModelTangentTpl<S>* model_bar = nullptr);

}  // namespace gradyn
