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
#include "gradyn/contact/ipm_data.hpp"
#include "gradyn/contact/pgs_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradyn/collision/collide_vjp.hpp"
#include "gradyn/contact/detail/contact_force_derivatives.hpp"
#include "gradyn/contact/detail/small_lu.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/pgs.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {

using detail::add_path_column;
using detail::is_ancestor_or_self;
using detail::point_velocity;

bool is_pgs(const Model& model) { return model.contact.model == ContactModel::Pgs; }

// Contact k's impulse in its frame (normal, tangent1, tangent2) [N s].
Eigen::Vector3d contact_impulse(const Model& model, const Data& data, int k) {
  if (is_pgs(model)) return data.pgs->lambda.segment<3>(3 * k);
  const int nc = data.ncontacts, N = model.contact.ipm_friction_directions;
  const Eigen::VectorXd& z = data.ipm->workspace.z;
  Eigen::Vector3d zeta(z[k], 0.0, 0.0);
  for (int j = 0; j < N; ++j) zeta.tail<2>() += z[nc + N * k + j] * ipm_friction_direction(j, N);
  return zeta;
}

int limit_rows(const Model& model, const Data& data) { return is_pgs(model) ? data.pgs->nlimits : data.ipm->nlimits; }

int first_limit_row(const Model& model, const Data& data) {
  return is_pgs(model) ? 3 * data.ncontacts : (model.contact.ipm_friction_directions + 2) * data.ncontacts;
}

void limit_row(const Model& model, const Data& data, int l, int& coord, int& side) {
  const auto u = static_cast<size_t>(l);
  coord = is_pgs(model) ? data.pgs->limit_coord[u] : data.ipm->limit_coord[u];
  side = is_pgs(model) ? data.pgs->limit_side[u] : data.ipm->limit_side[u];
}

double limit_impulse(const Model& model, const Data& data, int l) {
  const int row = first_limit_row(model, data) + l;
  return is_pgs(model) ? data.pgs->lambda[row] : data.ipm->workspace.z[row];
}

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
void add_limit_force_terms(const Model& model, Data& data, const VecRef<double>& q, double dt,
                           Eigen::Ref<Eigen::MatrixXd> dtau_dq) {
  Eigen::VectorXd& unit = data.dv_tmp;
  Eigen::VectorXd& ambient = data.q_tmp;
  Eigen::VectorXd& tangent = data.pgs->column;
  for (int l = 0; l < limit_rows(model, data); ++l) {
    int coord, side, body, k;
    limit_row(model, data, l, coord, side);
    limit_coordinate_owner(model, coord, body, k);
    if (body < 0) continue;  // a tendon's row is constant
    const double weight = limit_impulse(model, data, l) / dt;
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

// Contact k's normal-row target on the step's branch as a linear function of its depth and its
// approach J_n v (plus a constant): target = depth_weight depth + approach_weight J_n v + const.
Eigen::Vector2d contact_target_weights(const Model& model, const Data& data, int k, double dt, double approach) {
  const ContactSettings& settings = model.contact;
  const Contact& c = data.contacts[k];
  const double e = model.geoms[c.restitution_geom].restitution;
  if (is_pgs(model)) {  // pgs_contact.cpp
    switch (pgs_target_branch(settings, c.depth, approach, e, dt)) {
      case PgsTargetBranch::Baumgarte: return {settings.erp / dt, 0.0};
      case PgsTargetBranch::Restitution: return {0.0, -e};
      case PgsTargetBranch::Capped:
      case PgsTargetBranch::Zero: return {0.0, 0.0};
    }
  }
  switch (data.ipm->target_branch[static_cast<size_t>(k)]) {  // ipm_contact.cpp
    case kIpmTargetBaumgarte: return {settings.erp / dt, 0.0};
    case kIpmTargetRestitution: return {0.0, -e};
    case kIpmTargetGap: return {1.0 / dt, 0.0};
    case kIpmTargetGapBounce: return {1.0 / dt, -e};
    default: return {0.0, 0.0};  // zero or inert: a constant
  }
}

// w_row (1 x 3nv) -= d target / d(dq, v, tau) of contact k's normal row; Jn its Jacobian row. True
// if the target depends on v (w_row's v columns changed).
template <class Row, class JRow>
bool subtract_contact_target(const Model& model, const Data& data, int k, double dt, const VecRef<double>& v,
                             const JRow& Jn, Row&& w_row) {
  const int nv = model.nv;
  const Eigen::Vector2d weight = contact_target_weights(model, data, k, dt, Jn.dot(v));
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
  if (model.contact.model != ContactModel::Pgs && model.contact.model != ContactModel::Ipm)
    throw ArgumentError(std::string("add_impulse_forces_jacobian: the model's contact model is '") +
                        contact_model_name(model.contact.model) + "', not 'pgs' or 'ipm'");
  check_size("v_next", v_next.size(), model.nv);
  const int nc = data.ncontacts;
  if (nc > 0) {
    collide_jacobian(model, data, data.deriv_contact_jac);
    world_velocities<double>(model, data, v_next, data.deriv_ov_next);
  }
  for (int k = 0; k < nc; ++k) add_contact_terms(model, data, k, contact_impulse(model, data, k), dt, dtau_dq);
  add_limit_force_terms(model, data, q, dt, dtau_dq);
}

namespace {

// The ipm's LCP rows as combinations of the contact-frame and limit rows Jr (ipm_contact.hpp:
// G = -[J_n; J_f; 0; J_l] = -P Jr): normal k -> Jr row 3 k, friction direction j of contact k ->
// cos Jr(3 k + 1) + sin Jr(3 k + 2), gamma -> none, limit l -> Jr row 3 nc + l. Into data's
// deriv_impulse_P_* (re-sized only when the row count changes).
void ipm_row_map(const Model& model, Data& data, int rows) {
  const int nc = data.ncontacts, N = model.contact.ipm_friction_directions;
  auto& index = data.deriv_impulse_P_index;
  auto& coeff = data.deriv_impulse_P_coeff;
  if (index.cols() != rows) index.resize(2, rows), coeff.resize(2, rows);  // allocates: a new row count
  index.setConstant(-1);
  coeff.setZero();
  for (int k = 0; k < nc; ++k) {
    index(0, k) = 3 * k;
    coeff(0, k) = 1.0;
  }
  for (int j = 0; j < N; ++j) {
    const Eigen::Vector2d d = ipm_friction_direction(j, N);
    for (int k = 0; k < nc; ++k) {
      const int r = nc + N * k + j;
      index.col(r) << 3 * k + 1, 3 * k + 2;
      coeff.col(r) = d;
    }
  }
  for (int l = 0; l < data.ipm->nlimits; ++l) {
    index(0, (N + 2) * nc + l) = 3 * nc + l;
    coeff(0, (N + 2) * nc + l) = 1.0;
  }
}

// out = in P^T: out's column a combines in's columns as P's row a does (one branch per column).
template <class In>
void times_row_map_transpose(const Data& data, const In& in, Eigen::MatrixXd& out) {
  const auto& index = data.deriv_impulse_P_index;
  const auto& coeff = data.deriv_impulse_P_coeff;
  for (Eigen::Index a = 0; a < index.cols(); ++a) {
    if (index(0, a) < 0)
      out.col(a).setZero();
    else if (index(1, a) < 0)
      out.col(a) = coeff(0, a) * in.col(index(0, a));
    else
      out.col(a) = coeff(0, a) * in.col(index(0, a)) + coeff(1, a) * in.col(index(1, a));
  }
}

// out = P in, by rows.
void row_map_times(const Data& data, const Eigen::MatrixXd& in, Eigen::MatrixXd& out) {
  const auto& index = data.deriv_impulse_P_index;
  const auto& coeff = data.deriv_impulse_P_coeff;
  for (Eigen::Index a = 0; a < index.cols(); ++a) {
    if (index(0, a) < 0)
      out.row(a).setZero();
    else if (index(1, a) < 0)
      out.row(a) = coeff(0, a) * in.row(index(0, a));
    else
      out.row(a) = coeff(0, a) * in.row(index(0, a)) + coeff(1, a) * in.row(index(1, a));
  }
}

// The ipm's response (impulse_response's doc; J = -G = P Jr, dz = -S^-1 (J dv + w),
// S = J M^-1 J^T - F + D) with the products in the m = 3 nc + nl contact-frame and limit rows
// instead of the (N + 2) nc + nl LCP rows: with Y = M^-1 Jr^T and w = P wr (the rows' change is
// made of the frame rows' too, the normal targets on rows P maps one to one),
//   T = I + X Jr,  QR = X wr,  X = -Y P^T S^-1 P,  S = P (Jr Y) P^T - F + D.
// S is factored with partial pivoting (D = s / z spans many orders of magnitude at the solution)
// and solved from the right of Y P^T, as before the reduction: P^T S^-1 P alone can be huge where
// contacts are redundant (~1 / cfm along J's null space, which Jr^T ... Jr cancels), and forming it
// first loses those digits (~1e-9 relative on a box face down).
void ipm_response(const Model& model, Data& data, int rows, int m, const Eigen::MatrixXd& Minv, bool v_columns,
                  Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR) {
  const int nv = model.nv, nc = data.ncontacts;
  const MixedLcp& lcp = data.ipm->problem;
  const IpmWorkspace& ws = data.ipm->workspace;
  if (data.deriv_impulse_W.cols() != m || data.deriv_impulse_Y.cols() != m || data.deriv_impulse_S.cols() != rows) {  // allocates: a new size
    data.deriv_impulse_JrT.resize(nv, m);
    data.deriv_impulse_Y.resize(nv, m);
    data.deriv_impulse_YPS.resize(nv, rows);
    data.deriv_impulse_X.resize(nv, m);
    data.deriv_impulse_W.resize(m, m);
    data.deriv_impulse_WPt.resize(m, rows);
    data.deriv_impulse_S.resize(rows, rows);
  }
  ipm_row_map(model, data, rows);
  Eigen::MatrixXd& JrT = data.deriv_impulse_JrT;
  JrT.leftCols(3 * nc) = data.ipm->JT.leftCols(3 * nc);
  for (int l = 0; l < data.ipm->nlimits; ++l) JrT.col(3 * nc + l) = -lcp.G.row(first_limit_row(model, data) + l).transpose();
  Eigen::MatrixXd& Y = data.deriv_impulse_Y;
  Y.noalias() = Minv * JrT;
  Eigen::MatrixXd& W = data.deriv_impulse_W;
  W.noalias() = JrT.transpose() * Y;
  // S = P W P^T - F + D
  Eigen::MatrixXd& WPt = data.deriv_impulse_WPt;
  times_row_map_transpose(data, W, WPt);
  Eigen::MatrixXd& S = data.deriv_impulse_S;
  row_map_times(data, WPt, S);
  S -= lcp.F;
  for (int r = 0; r < rows; ++r) S(r, r) += ws.s[r] / std::max(ws.z[r], std::numeric_limits<double>::min());
  Eigen::VectorXi& order = data.deriv_impulse_row_order;
  if (order.size() != rows) order.resize(rows);  // allocates: a new row count
  detail::lu_in_place(S.data(), rows, nullptr, order.data());
  // Y P^T S^-1: Y P^T, then with order's S = O^T L U, times U^-1 and L^-1 from the right (in
  // place) and O: column i is column order[i] of the product.
  Eigen::MatrixXd& YPS = data.deriv_impulse_YPS;
  times_row_map_transpose(data, Y, YPS);
  S.triangularView<Eigen::Upper>().solveInPlace<Eigen::OnTheRight>(YPS);
  S.triangularView<Eigen::UnitLower>().solveInPlace<Eigen::OnTheRight>(YPS);
  // X = -(that) P: the LCP rows' columns gathered onto the frame rows they are made of
  Eigen::MatrixXd& X = data.deriv_impulse_X;
  X.setZero();
  const auto& index = data.deriv_impulse_P_index;
  const auto& coeff = data.deriv_impulse_P_coeff;
  for (int i = 0; i < rows; ++i)
    for (int t = 0; t < 2; ++t)
      if (const int a = order[i]; index(t, a) >= 0) X.col(index(t, a)) -= coeff(t, a) * YPS.col(i);
  T.noalias() = X * JrT.transpose();
  const auto wr = data.deriv_impulse_w.topRows(m);
  if (v_columns) {
    QR.noalias() = X * wr.leftCols(2 * nv);
  } else {  // no target depends on v
    QR.leftCols(nv).noalias() = X * wr.leftCols(nv);
    QR.rightCols(nv).setZero();
  }
}

}  // namespace

bool impulse_response(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                      const VecRef<double>& v_next, double dt, const Eigen::MatrixXd& Minv, Eigen::Ref<Eigen::MatrixXd> T,
                      Eigen::Ref<Eigen::MatrixXd> QR) {
  const int nv = model.nv, nc = data.ncontacts;
  const bool pgs = is_pgs(model);
  const int rows = pgs ? (nc + data.pgs->nlimits == 0 ? 0 : data.pgs->problem.rows)
                       : (nc + data.ipm->nlimits == 0 ? 0 : static_cast<int>(data.ipm->problem.G.rows()));
  if (rows == 0) return false;
  if (T.rows() != nv || T.cols() != nv || QR.rows() != nv || QR.cols() != 2 * nv)
    throw ArgumentError("impulse_response: T must be nv x nv and QR nv x 2 nv");
  // R: the rows' own motion (v+ held) and their targets (columns dq, v), per contact-frame row
  // (normal, tangent1, tangent2) and limit row: the PGS rows, and the ipm's before P (ipm_response).
  const int nl = limit_rows(model, data), m = 3 * nc + nl;
  ensure_shape(data.deriv_impulse_w, rows, 3 * nv);
  auto w = data.deriv_impulse_w.topRows(m);
  w.setZero();
  bool v_columns = false;
  for (int k = 0; k < nc; ++k) {
    w.middleRows<3>(3 * k).leftCols(nv) += data.deriv_contact_rate.middleRows<3>(3 * k);
    const auto Jn = pgs ? data.pgs->JT.col(3 * k) : data.ipm->JT.col(3 * k);
    v_columns |= subtract_contact_target(model, data, k, dt, v, Jn.transpose(), w.row(3 * k));
  }
  Eigen::VectorXd& ambient = data.q_tmp;
  Eigen::VectorXd& tangent = data.pgs->column;
  for (int l = 0; l < nl; ++l) {
    int coord, side;
    limit_row(model, data, l, coord, side);
    ambient.setZero();
    joint_limit_jacobian_vjp(model, q, coord, side, 1.0, v_next, ambient);  // d(J_l v+)/dq, v+ held
    add_limit_coordinate_gradient<double>(model, coord, -joint_limit_target_slope(model, q, coord, side, dt), ambient);
    to_tangent(model, data, q, ambient, tangent);
    w.row(3 * nc + l).head(nv) += tangent.transpose();
  }

  if (pgs) {  // J = JT^T; dz = pgs_implicit_jvp(J dv + R); Q = M^-1 J^T (the map from the rows'
              // change to dz) times it from the right, nv outputs instead of 3 nv directions
    if (data.deriv_impulse_Y.cols() != rows) data.deriv_impulse_Y.resize(nv, rows);  // allocates: a new row count
    Eigen::MatrixXd& Q = data.deriv_impulse_Y;
    PgsAdjointWorkspace& aws = data.pgs->adj_workspace;
    if (aws.lambda_bar.size() != rows) aws.resize(rows);  // allocates: a new row count
    const auto JT = data.pgs->JT.leftCols(rows);
    Q = data.pgs->MinvJT.leftCols(rows);
    pgs_implicit_jvp_left(data.pgs->problem, data.pgs->lambda.head(rows), aws, Q);
    T.noalias() = Q * JT.transpose();
    QR.noalias() = Q * w.leftCols(2 * nv);
  } else {
    ipm_response(model, data, rows, m, Minv, v_columns, T, QR);
  }
  T.diagonal().array() += 1.0;
  return true;
}

}  // namespace gradyn
