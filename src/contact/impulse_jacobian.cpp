// Forward-mode derivatives of the velocity-level contact stage; the method is in the header.
//
// Per contact (geom a on body A, geom b on body B), with z held:
//   impulse forces  f = frame zeta / dt on B at p (zeta: the contact's impulse in its frame, summed
//                   over its rows), -f on A: W = [p x f; f], dW = [dp x f + p x df; df], df = dframe zeta / dt;
//   row rates       (J v+)_r = frame_r . u,  u = V_B(p) - V_A(p) at v+;  with v+ held a configuration
//                   column moves p and the frame (collide_jacobian) and the twists of moved bodies by
//                   xi x (V - V_parent(j)), so  d(frame_r . u) = dframe_r . u + frame_r . du,
//                   du = dV_B(p) - dV_A(p) + (w_B - w_A) x dp  (as penalty_jacobian.cpp).
#include "gradyn/contact/impulse_jacobian.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_force_derivatives.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {

using detail::add_path_column;
using detail::is_ancestor_or_self;
using detail::point_velocity;

// Contact k: the impulse forces' derivative into dtau_dq and the rows' rate, depth and approach
// derivatives into data.deriv_contact_*.
void add_contact_terms(const Model& model, Data& data, int k, const Eigen::Vector3d& zeta, double dt,
                       Eigen::Ref<Eigen::MatrixXd> dtau_dq) {
  const Contact& c = data.contacts[k];
  const int A = model.geoms[c.geom_a].body, B = model.geoms[c.geom_b].body;
  const ContactJacobian& J = data.deriv_contact_jac[k];
  const Vector6<double> zero = Vector6<double>::Zero();
  const Eigen::Vector3d& p = c.point;
  const Eigen::Matrix3d& frame = c.frame;
  const Eigen::Vector3d f = frame * zeta / dt;
  Vector6<double> W;
  W << p.cross(f), f;
  const bool pushes = !zeta.isZero(0.0);
  // The approach J_n v enters only a restitution target (contact_target_weights), which needs e > 0:
  // otherwise its row stays zero.
  const bool needs_approach = model.geoms[c.restitution_geom].restitution != 0.0;
  // twists at v+ (rates) and at v (approach)
  const Vector6<double>& VA1 = A >= 0 ? data.deriv_ov_next[A] : zero;
  const Vector6<double>& VB1 = B >= 0 ? data.deriv_ov_next[B] : zero;
  const Vector6<double>& VA0 = A >= 0 ? data.ov[A] : zero;
  const Vector6<double>& VB0 = B >= 0 ? data.ov[B] : zero;
  const Eigen::Vector3d u1 = point_velocity(VB1, p) - point_velocity(VA1, p);
  const Eigen::Vector3d u0 = point_velocity(VB0, p) - point_velocity(VA0, p);
  const Eigen::Vector3d w1 = VB1.head<3>() - VA1.head<3>(), w0 = VB0.head<3>() - VA0.head<3>();
  auto rate = data.deriv_contact_rate.middleRows<3>(3 * k);
  rate.setZero();
  data.deriv_contact_depth.row(k).setZero();
  data.deriv_contact_approach.row(k).setZero();
  for (int j = 0; j < model.nbodies(); ++j) {
    const bool moves_A = A >= 0 && is_ancestor_or_self(model, j, A);
    const bool moves_B = B >= 0 && is_ancestor_or_self(model, j, B);
    if (!moves_A && !moves_B) continue;
    const int parent = model.parent[j];
    const Vector6<double>& Vp1 = parent >= 0 ? data.deriv_ov_next[parent] : zero;
    const Vector6<double>& Vp0 = parent >= 0 ? data.ov[parent] : zero;
    for (int m = 0; m < model.joint_nv(j); ++m) {
      const int col = model.idx_v[j] + m;
      const Vector6<double> xi = data.oS[j].col(m);
      Eigen::Matrix<double, 13, 1> dc = Eigen::Matrix<double, 13, 1>::Zero();
      if (moves_A) dc.noalias() += J.leftCols<6>() * xi;
      if (moves_B) dc.noalias() += J.rightCols<6>() * xi;
      const Eigen::Vector3d dp = dc.head<3>();
      Eigen::Matrix3d dframe;
      for (int r = 0; r < 3; ++r) dframe.col(r) = dc.segment<3>(3 + 3 * r);
      data.deriv_contact_depth(k, col) = dc[12];
      // rates at v+ and the normal's at v
      const Vector6<double> dVA1 = moves_A ? cross_motion<double>(xi, Vector6<double>(VA1 - Vp1)) : zero;
      const Vector6<double> dVB1 = moves_B ? cross_motion<double>(xi, Vector6<double>(VB1 - Vp1)) : zero;
      const Eigen::Vector3d du1 = point_velocity(dVB1, p) - point_velocity(dVA1, p) + w1.cross(dp);
      rate.col(col) = dframe.transpose() * u1 + frame.transpose() * du1;
      if (needs_approach) {
        const Vector6<double> dVA0 = moves_A ? cross_motion<double>(xi, Vector6<double>(VA0 - Vp0)) : zero;
        const Vector6<double> dVB0 = moves_B ? cross_motion<double>(xi, Vector6<double>(VB0 - Vp0)) : zero;
        const Eigen::Vector3d du0 = point_velocity(dVB0, p) - point_velocity(dVA0, p) + w0.cross(dp);
        data.deriv_contact_approach(k, col) = dframe.col(0).dot(u0) + frame.col(0).dot(du0);
      }
      // the impulse forces
      if (!pushes) continue;
      const Eigen::Vector3d df = dframe * zeta / dt;
      Vector6<double> dW;
      dW << dp.cross(f) + p.cross(df), df;
      if (B >= 0) add_path_column(model, data, B, j, &xi, dW, W, 1.0, dtau_dq, col);
      if (A >= 0) add_path_column(model, data, A, j, &xi, dW, W, -1.0, dtau_dq, col);
    }
  }
}

// Ambient q gradient -> tangent one (integrate_vjp at a zero step), into `tangent` (overwritten).
void to_tangent(const Model& model, Data& data, const VecRef<double>& q, const Eigen::VectorXd& ambient,
                Eigen::VectorXd& tangent) {
  Eigen::VectorXd& zero_step = data.v_tmp;
  zero_step.setZero();
  tangent.setZero();
  integrate_vjp<double>(model, q, zero_step, ambient, data.step_adj_q_bar, tangent);
}

// The limit rows' impulse forces J_l(q)^T z_l / dt: only a planar joint's x and y rows depend on q
// (a tendon's row is constant).
template <class Kind>
void add_limit_force_terms(const Model& model, Data& data, const VecRef<double>& q, double dt,
                           Eigen::Ref<Eigen::MatrixXd> dtau_dq) {
  Eigen::VectorXd& unit = data.dv_tmp;
  Eigen::VectorXd& ambient = data.q_tmp;
  Eigen::VectorXd& tangent = data.deriv_limit_tangent;
  for (int l = 0; l < Kind::limit_rows(model, data); ++l) {
    int coord, side, body, k;
    Kind::limit_row(model, data, l, coord, side);
    limit_coordinate_owner(model, coord, body, k);
    if (body < 0) continue;  // a tendon's row is constant
    const double weight = Kind::limit_impulse(model, data, l) / dt;
    const int iv = model.idx_v[body], nvj = model.joint_nv(body);
    for (int r = iv; r < iv + nvj; ++r) {
      unit.setZero();
      unit[r] = 1.0;
      ambient.setZero();
      joint_limit_jacobian_vjp(model, q, coord, side, weight, unit, ambient);
      if (ambient.isZero(0.0)) continue;
      to_tangent(model, data, q, ambient, tangent);
      dtau_dq.row(r) += tangent.transpose();
    }
  }
}

// w_row (1 x 3nv) -= d target / d(dq, v, tau) of contact k's normal row, whose target is
// Kind::contact_target_weights' linear function of its depth and its approach J_n v (plus a constant);
// Jn its Jacobian row. True
// if the target depends on v (w_row's v columns changed).
template <class Kind, class Row, class JRow>
bool subtract_contact_target(const Model& model, const Data& data, int k, double dt, const VecRef<double>& v,
                             const JRow& Jn, Row&& w_row) {
  const int nv = model.nv;
  const Eigen::Vector2d weight = Kind::contact_target_weights(model, data, k, dt, Jn.dot(v));
  if (weight[0] != 0.0) w_row.head(nv) -= weight[0] * data.deriv_contact_depth.row(k);
  if (weight[1] == 0.0) return false;
  w_row.head(nv) -= weight[1] * data.deriv_contact_approach.row(k);
  w_row.segment(nv, nv) -= weight[1] * Jn;
  return true;
}

template <class Matrix>
void ensure_shape(Matrix& X, Eigen::Index rows, Eigen::Index cols) {
  if (X.rows() < rows || X.cols() != cols) X.resize(std::max(rows, X.rows()), cols);  // allocates: a new size
}

}  // namespace

void add_impulse_forces_jacobian(const Model& model, Data& data, const VecRef<double>& q,
                                 const VecRef<double>& v_next, double dt, Eigen::Ref<Eigen::MatrixXd> dtau_dq) {
  visit_contact_model(model.contact.model, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level != ContactLevel::Impulse) {
      throw ArgumentError(std::string("add_impulse_forces_jacobian: the model's contact model is '") + Kind::name +
                          "', which acts through no impulses");
    } else {
      check_size("v_next", v_next.size(), model.nv);
      const int nc = data.ncontacts;
      if (nc > 0) {
        collide_jacobian(model, data, data.deriv_contact_jac);
        world_velocities<double>(model, data, v_next, data.deriv_ov_next);
      }
      for (int k = 0; k < nc; ++k) add_contact_terms(model, data, k, Kind::contact_impulse(model, data, k), dt, dtau_dq);
      add_limit_force_terms<Kind>(model, data, q, dt, dtau_dq);
    }
  });
}

namespace {

template <class Kind>
bool impulse_response_of(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                         const VecRef<double>& v_next, double dt, const Eigen::MatrixXd& Minv,
                         Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR) {
  const int nv = model.nv, nc = data.ncontacts;
  const int rows = Kind::problem_rows(model, data);
  if (rows == 0) return false;
  if (T.rows() != nv || T.cols() != nv || QR.rows() != nv || QR.cols() != 2 * nv)
    throw ArgumentError("impulse_response: T must be nv x nv and QR nv x 2 nv");
  // R: the rows' own motion (v+ held) and their targets (columns dq, v), per contact-frame row
  // (normal, tangent1, tangent2) and limit row (the model's response maps them to its own rows).
  const int nl = Kind::limit_rows(model, data), m = 3 * nc + nl;
  ensure_shape(data.deriv_impulse_w, rows, 3 * nv);
  auto w = data.deriv_impulse_w.topRows(m);
  w.setZero();
  bool v_columns = false;
  const Eigen::MatrixXd& JT = Kind::jacobian_transpose(data);
  for (int k = 0; k < nc; ++k) {
    w.middleRows<3>(3 * k).leftCols(nv) += data.deriv_contact_rate.middleRows<3>(3 * k);
    const auto Jn = JT.col(3 * k);
    v_columns |= subtract_contact_target<Kind>(model, data, k, dt, v, Jn.transpose(), w.row(3 * k));
  }
  Eigen::VectorXd& ambient = data.q_tmp;
  Eigen::VectorXd& tangent = data.deriv_limit_tangent;
  for (int l = 0; l < nl; ++l) {
    int coord, side;
    Kind::limit_row(model, data, l, coord, side);
    ambient.setZero();
    joint_limit_jacobian_vjp(model, q, coord, side, 1.0, v_next, ambient);  // d(J_l v+)/dq, v+ held
    add_limit_coordinate_gradient<double>(model, coord, -joint_limit_target_slope(model, q, coord, side, dt), ambient);
    to_tangent(model, data, q, ambient, tangent);
    w.row(3 * nc + l).head(nv) += tangent.transpose();
  }
  Kind::response(model, data, rows, m, Minv, v_columns, T, QR);
  T.diagonal().array() += 1.0;
  return true;
}

}  // namespace

bool impulse_response(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                      const VecRef<double>& v_next, double dt, const Eigen::MatrixXd& Minv, Eigen::Ref<Eigen::MatrixXd> T,
                      Eigen::Ref<Eigen::MatrixXd> QR) {
  return visit_contact_model(model.contact.model, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level != ContactLevel::Impulse)
      return false;
    else
      return impulse_response_of<Kind>(model, data, q, v, v_next, dt, Minv, T, QR);
  });
}

}  // namespace gradyn
