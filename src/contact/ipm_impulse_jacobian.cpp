// The interior-point contact model's solved problem as the step Jacobian reads it
// (contact/models/ipm.hpp, contact/impulse_jacobian.hpp): z = [normal impulses (nc); friction-direction
// impulses (N nc); gamma (nc); limit impulses], G = -P Jr on the contact-frame and limit rows Jr; the
// impulses respond through the linearised KKT conditions at the returned point (paper 000, Eq. 3).
#include "gradyn/contact/models/ipm.hpp"

#include <algorithm>
#include <limits>

#include "gradyn/contact/detail/small_lu.hpp"
#include "gradyn/contact/ipm_data.hpp"

namespace gradyn {

const Eigen::MatrixXd& IpmContact::jacobian_transpose(const Data& data) { return ipm_data(data).JT; }

// Contact k's impulse in its frame (normal, tangent1, tangent2) [N s]: its friction directions' summed.
Eigen::Vector3d IpmContact::contact_impulse(const Model& model, const Data& data, int k) {
  const int nc = data.ncontacts, N = model.contact.ipm_friction_directions;
  const Eigen::VectorXd& z = ipm_data(data).workspace.z;
  Eigen::Vector3d zeta(z[k], 0.0, 0.0);
  for (int j = 0; j < N; ++j) zeta.tail<2>() += z[nc + N * k + j] * ipm_friction_direction(j, N);
  return zeta;
}

int IpmContact::limit_rows(const Model&, const Data& data) { return ipm_data(data).nlimits; }

void IpmContact::limit_row(const Model&, const Data& data, int l, int& coord, int& side) {
  const auto u = static_cast<size_t>(l);
  coord = ipm_data(data).limit_coord[u];
  side = ipm_data(data).limit_side[u];
}

double IpmContact::limit_impulse(const Model& model, const Data& data, int l) {
  return ipm_data(data).workspace.z[(model.contact.ipm_friction_directions + 2) * data.ncontacts + l];
}

// Contact k's normal-row target on the branch ipm_contact.cpp recorded, as a linear function of its
// depth and its approach J_n v (plus a constant): depth_weight depth + approach_weight J_n v.
Eigen::Vector2d IpmContact::contact_target_weights(const Model& model, const Data& data, int k, double dt, double) {
  const ContactSettings& settings = model.contact;
  const double e = model.geoms[data.contacts[k].restitution_geom].restitution;
  switch (ipm_data(data).target_branch[static_cast<size_t>(k)]) {
    case kIpmTargetBaumgarte: return {settings.erp / dt, 0.0};
    case kIpmTargetRestitution: return {0.0, -e};
    case kIpmTargetGap: return {1.0 / dt, 0.0};
    case kIpmTargetGapBounce: return {1.0 / dt, -e};
    default: return {0.0, 0.0};  // zero or inert: a constant
  }
}

int IpmContact::problem_rows(const Model&, const Data& data) {
  return data.ncontacts + ipm_data(data).nlimits == 0 ? 0 : static_cast<int>(ipm_data(data).problem.G.rows());
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
  for (int l = 0; l < ipm_data(data).nlimits; ++l) {
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

}  // namespace

// The response (impulse_response's doc; T without the identity, which impulse_response adds;
// J = -G = P Jr, dz = -S^-1 (J dv + w), S = J M^-1 J^T - F + D) with the products in the m = 3 nc + nl contact-frame and limit rows
// instead of the (N + 2) nc + nl LCP rows: with Y = M^-1 Jr^T and w = P wr (the rows' change is
// made of the frame rows' too, the normal targets on rows P maps one to one),
//   T = X Jr,  QR = X wr,  X = -Y P^T S^-1 P,  S = P (Jr Y) P^T - F + D.
// S is factored with partial pivoting (D = s / z spans many orders of magnitude at the solution)
// and solved from the right of Y P^T, as before the reduction: P^T S^-1 P alone can be huge where
// contacts are redundant (~1 / cfm along J's null space, which Jr^T ... Jr cancels), and forming it
// first loses those digits (~1e-9 relative on a box face down).
void IpmContact::response(const Model& model, Data& data, int rows, int m, const Eigen::MatrixXd& Minv,
                          bool v_columns, Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR) {
  const int nv = model.nv, nc = data.ncontacts;
  const MixedLcp& lcp = ipm_data(data).problem;
  const IpmWorkspace& ws = ipm_data(data).workspace;
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
  JrT.leftCols(3 * nc) = ipm_data(data).JT.leftCols(3 * nc);
  for (int l = 0; l < ipm_data(data).nlimits; ++l) JrT.col(3 * nc + l) = -lcp.G.row((model.contact.ipm_friction_directions + 2) * nc + l).transpose();
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
  // D = s / z, floored as the solver's backward pass floors it (lcp_ipm.hpp, kIpmBackwardDiagonalFloor)
  const double floor = rows > 0 ? kIpmBackwardDiagonalFloor * S.diagonal().cwiseAbs().maxCoeff() : 0.0;
  for (int r = 0; r < rows; ++r) S(r, r) += std::max(ws.s[r] / std::max(ws.z[r], std::numeric_limits<double>::min()), floor);
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

}  // namespace gradyn
