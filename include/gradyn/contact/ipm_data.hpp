// The interior-point contact model's workspace (ContactModel::Ipm): Data holds it in
// data.contact_workspaces, read through ipm_data(data), and only the files of the solver include
// this header, so that a change here rebuilds only them.
//
// The mixed LCP of paper 000 (docs/references.md) per step; z = [lambda_n (nc); beta (N nc); gamma
// (nc); joint-limit impulses (nlimits); joint friction (3 per DoF with frictionloss)], N =
// contact.ipm_friction_directions; one equality row per joint coupling. The problem and
// workspace must have the exact LCP shape: they are re-sized (allocated) only when the contact or
// limit-row count changes. The solve runs in double; with S = ADScalar the solution's derivatives
// come from the implicit function theorem (ipm_contact.hpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gradyn/contact/lcp_ipm.hpp"
#include "gradyn/model/data.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn {

template <class S>
struct IpmDataTpl {
  /// contacts: the capacity of Data::contacts; limit_rows: the most joint-limit rows a step can have.
  IpmDataTpl(const ModelTpl<S>& model, int contacts, int limit_rows);

  // ---- the step (ipm_contact_velocity; src/contact/ipm_contact.cpp) ----
  MatrixX<S> JT;             // nv x (3 contacts): per contact the normal, tangent1, tangent2 columns
  MixedLcpTpl<S> problem;    // the assembled LCP (x = v+, nv unknowns; equality rows: the joint couplings)
  MixedLcp problem_value;    // its values (used only when S is not double)
  IpmWorkspace workspace{0, 0, 0};  // solution x, z, s; K factored at it on demand (mixed_lcp_kkt_solve)
  LcpIpmResult result;       // the last solve
  VectorX<S> z;              // z of the last step (impulses [N s or N m s] and gamma [m/s]), n_ineq
  int ncontacts = -1;        // contact count the problem is shaped for (-1: none yet)
  int nlimits = 0;           // limit rows of the last step (after the contact rows)
  std::vector<int> limit_coord;  // per limit row: its coordinate in q (as PgsDataTpl::limit_coord)
  std::vector<int> limit_side;   // per limit row: +1 lower limit, -1 upper limit
  VectorX<S> v_free;         // v + dt a_free (nv)
  // equality rows: the joint couplings, then the body connections' rows along the directions
  // rotate_connection_rows keeps (joint_constraints.hpp: blocks of three rows, for_each_connection_block)
  MatrixX<S> connection_JT;    // nv x (3 blocks): every connection row, built each step
  std::vector<Eigen::Matrix3d> connection_axes;  // per block: its rows' directions (joint_constraints.hpp)
  std::vector<Vector3<S>> block_target;          // per block: the rates its rows must reach (world axes)
  std::vector<int> eq_source;  // per equality row: its joint row (c: coupling c; ncouplings + 3 k + r:
                               // row r of block k); capacity ncouplings + 3 blocks
  int neq = 0;                 // equality rows of the last step
  // per contact: which term set its normal row's target (IpmTargetBranch, contact/ipm_contact.hpp)
  std::vector<std::uint8_t> target_branch;
  // warm start (opt-in: model.contact.ipm_warm_start, ipm_contact.hpp): a step whose rows are those of
  // the solve `workspace` holds starts from its solution; warm_ncontacts -1: none, or it did not converge
  int warm_ncontacts = -1;
  std::vector<std::pair<int, int>> warm_pair;  // per contact: (geom_a, geom_b)
  std::vector<int> warm_limit_coord, warm_limit_side;  // per limit row (as limit_coord / side)

  // ---- the adjoint (ipm_contact_velocity_vjp; src/contact/ipm_contact_vjp.cpp; double only) ----
  MixedLcp adj;              // mixed_lcp_vjp's gradient, the LCP's shapes (re-sized with the problem)
  Eigen::VectorXd adj_row;   // per Jacobian basis row (normal, tangent1, tangent2 of each contact): a weight
  Eigen::VectorXd adj_v_free_bar, adj_lambda_x, adj_column, adj_scratch;  // (nv)
  Eigen::VectorXd adj_none;  // empty: the cotangents of z, y, s (only v+ leaves the stage)
  Eigen::VectorXd adj_eq_a, adj_eq_b;  // per joint row (ncouplings + 3 blocks): equality adjoints
};

template <class S>
IpmDataTpl<S>::IpmDataTpl(const ModelTpl<S>& model, int contacts, int limit_rows) {
  JT = MatrixX<S>::Zero(model.nv, 3 * static_cast<Eigen::Index>(contacts));
  v_free = VectorX<S>::Zero(model.nv);
  adj_row = Eigen::VectorXd::Zero(3 * static_cast<Eigen::Index>(contacts));
  adj_v_free_bar = adj_lambda_x = adj_column = adj_scratch = Eigen::VectorXd::Zero(model.nv);
  target_branch.assign(contacts, 0);
  limit_coord.assign(limit_rows, -1);
  limit_side.assign(limit_rows, 0);
  warm_pair.assign(contacts, {-1, -1});
  warm_limit_coord.assign(limit_rows, -1);
  warm_limit_side.assign(limit_rows, 0);
  const Eigen::Index nconn = static_cast<Eigen::Index>(model.connection_blocks());  // blocks of three rows
  const Eigen::Index njoint = static_cast<Eigen::Index>(model.joint_couplings.size()) + 3 * nconn;
  connection_JT = MatrixX<S>::Zero(model.nv, 3 * nconn);
  connection_axes.assign(static_cast<size_t>(nconn), Eigen::Matrix3d::Identity());
  block_target.assign(static_cast<size_t>(nconn), Vector3<S>::Zero());
  eq_source.assign(static_cast<size_t>(njoint), -1);
  adj_eq_a = adj_eq_b = Eigen::VectorXd::Zero(njoint);
}

/// The ipm workspace in data (made by Data's constructor through the registry,
/// contact/contact_models.hpp).
template <class S>
IpmDataTpl<S>& ipm_data(DataTpl<S>& data) {
  return data.contact_workspaces[static_cast<int>(ContactModel::Ipm)].template get<IpmDataTpl<S>>();
}
template <class S>
const IpmDataTpl<S>& ipm_data(const DataTpl<S>& data) {
  return data.contact_workspaces[static_cast<int>(ContactModel::Ipm)].template get<IpmDataTpl<S>>();
}

}  // namespace gradyn
