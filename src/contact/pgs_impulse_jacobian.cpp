// The PGS contact model's solved problem as the step Jacobian reads it (contact/models/pgs.hpp,
// contact/impulse_jacobian.hpp): rows [0, 3 nc) are the contacts' frame rows, then the limit rows,
// with impulses lambda; the impulses respond through the converged active set (pgs_implicit_jvp_left).
#include "gradyn/contact/models/pgs.hpp"
#include "gradyn/contact/pgs_data.hpp"

namespace gradyn {

const Eigen::MatrixXd& PgsContact::jacobian_transpose(const Data& data) { return pgs_data(data).JT; }

Eigen::Vector3d PgsContact::contact_impulse(const Model&, const Data& data, int k) {
  return pgs_data(data).lambda.segment<3>(3 * k);
}

int PgsContact::limit_rows(const Model&, const Data& data) { return pgs_data(data).nlimits; }

void PgsContact::limit_row(const Model&, const Data& data, int l, int& coord, int& side) {
  const auto u = static_cast<size_t>(l);
  coord = pgs_data(data).limit_coord[u];
  side = pgs_data(data).limit_side[u];
}

double PgsContact::limit_impulse(const Model&, const Data& data, int l) {
  return pgs_data(data).lambda[3 * data.ncontacts + l];
}

// Contact k's normal-row target on the step's branch (pgs_contact.cpp's pgs_target_branch) as a linear
// function of its depth and its approach J_n v (plus a constant): depth_weight depth + approach_weight J_n v.
Eigen::Vector2d PgsContact::contact_target_weights(const Model& model, const Data& data, int k, double dt,
                                                   double approach) {
  const ContactSettings& settings = model.contact;
  const Contact& c = data.contacts[k];
  const double e = model.geoms[c.restitution_geom].restitution;
  switch (pgs_target_branch(settings, c.depth, approach, e, dt)) {
    case PgsTargetBranch::Baumgarte: return {settings.erp / dt, 0.0};
    case PgsTargetBranch::Restitution: return {0.0, -e};
    case PgsTargetBranch::Capped:
    case PgsTargetBranch::Zero: return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

int PgsContact::problem_rows(const Model&, const Data& data) {
  return data.ncontacts + pgs_data(data).nlimits == 0 ? 0 : pgs_data(data).problem.rows;
}

// J = JT^T; dz = pgs_implicit_jvp(J dv + R); Q = M^-1 J^T (the map from the rows' change to dz) times
// it from the right, nv outputs instead of 3 nv directions. The rows are the frame and limit rows
// themselves (m = rows: a model with dry friction, couplings or connections takes the reverse-mode
// Jacobian), so R is deriv_impulse_w's leading rows as they are.
void PgsContact::response(const Model& model, Data& data, int rows, int m, const Eigen::MatrixXd&, bool,
                          Eigen::Ref<Eigen::MatrixXd> T, Eigen::Ref<Eigen::MatrixXd> QR) {
  const int nv = model.nv;
  const auto w = data.deriv_impulse_w.topRows(m);
  if (data.deriv_impulse_Y.cols() != rows) data.deriv_impulse_Y.resize(nv, rows);  // allocates: a new row count
  Eigen::MatrixXd& Q = data.deriv_impulse_Y;
  PgsDataTpl<double>& pgs = pgs_data(data);
  PgsAdjointWorkspace& aws = pgs.adj_workspace;
  if (aws.lambda_bar.size() != rows) aws.resize(rows);  // allocates: a new row count
  const auto JT = pgs.JT.leftCols(rows);
  Q = pgs.MinvJT.leftCols(rows);
  pgs_implicit_jvp_left(pgs.problem, pgs.lambda.head(rows), aws, Q);
  T.noalias() = Q * JT.transpose();
  QR.noalias() = Q * w.leftCols(2 * nv);
}

}  // namespace gradyn
