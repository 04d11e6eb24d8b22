// The PGS contact model's workspace (ContactModel::Pgs): Data holds it in
// data.contact_workspaces, read through pgs_data(data), and only the files of the solver include
// this header, so that a change here rebuilds only them.
//
// Rows (pgs_contact.hpp): per contact one normal row then two two-sided friction rows (tangent1,
// tangent2), rows [0, 3 ncontacts); then one row per active joint limit, rows [3 ncontacts,
// 3 ncontacts + nlimits); then the dry-friction rows and the coupling rows (contact/joint_constraints.hpp),
// njoint_rows of them, to problem.rows. Every buffer is capacity-sized: the leading rows are current.
#pragma once

#include <utility>
#include <vector>

#include "gradyn/contact/detail/symmetric_eigen.hpp"
#include "gradyn/contact/pgs.hpp"
#include "gradyn/model/data.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn {

template <class S>
struct PgsDataTpl {
  /// contacts: the capacity of Data::contacts; limit_rows: the most joint-limit rows a step can have;
  /// joint_rows: the friction and coupling rows every step has.
  PgsDataTpl(const ModelTpl<S>& model, int contacts, int limit_rows, int joint_rows);

  // ---- the step (pgs_contact_velocity; src/contact/pgs_contact.cpp) ----
  MatrixX<S> JT;          // J^T, nv x (3 contacts + limit_rows); leading problem.rows columns
  MatrixX<S> MinvJT;      // M^-1 J^T, same shape
  BoxedLcpTpl<S> problem; // problem.rows rows in use (0: none last step); the storage grows (allocates)
                          // only when a step needs more rows than every step before it
  PgsWorkspaceTpl<S> workspace;
  VectorX<S> lambda;      // impulses of the last step [N s]: leading problem.rows entries
  VectorX<S> warm_start;  // what that solve started from: leading problem.rows entries
  int ncontacts = 0;      // contacts of the last step
  int nlimits = 0;        // limit rows of the last step
  int njoint_rows = 0;    // friction and coupling rows of the last step (after the limit rows)
  std::vector<int> limit_coord;  // per limit row: its coordinate in q (capacity: 2 per limitable coordinate)
  std::vector<int> limit_side;   // per limit row: +1 lower limit (J = +r_k), -1 upper limit (J = -r_k)
  // Warm start memory, keyed by geom pair and point (contacts) and by coordinate and side (limits).
  std::vector<std::pair<int, int>> memory_pair;  // per contact of the last step: (geom_a, geom_b)
  std::vector<Vector3<S>> memory_point;          // its point (world)
  std::vector<Vector3<S>> memory_impulse;        // its impulse on geom b (world) [N s]
  int memory_ncontacts = 0;
  VectorX<S> memory_limit;  // 2 per limit coordinate (joint_limits.hpp): impulse of the lower (2k) and upper (2k + 1)
                            // limit of coordinate k, 0 if none
  VectorX<S> memory_joint_rows;  // per friction, coupling and connection row: its last impulse (0: none yet)
  std::vector<Eigen::Matrix3d> connection_axes;  // per connection block: its rows' directions (joint_constraints.hpp)
  PgsResult result;       // the last solve
  VectorX<S> v_free;      // v + dt a_free (nv)
  VectorX<S> column;      // scratch (nv)

  // ---- the adjoint (pgs_contact_velocity_vjp; src/contact/pgs_contact_vjp.cpp; double only) ----
  VectorX<S> adj_v_free_bar, adj_y_bar, adj_x, adj_column, adj_scratch;  // (nv)
  VectorX<S> adj_lambda_bar, adj_lambda, adj_row;  // (rows)
  MatrixX<S> adj_A_sym;                  // A_bar + A_bar^T, then its half
  detail::SymmetricEigen adj_eigen;      // of adj_A_sym
  BoxedLcpAdjoint adj;
  PgsAdjointWorkspace adj_workspace;
  PgsWorkspaceTpl<S> record_workspace;   // the sweeps replayed with their iterates recorded
};

template <class S>
PgsDataTpl<S>::PgsDataTpl(const ModelTpl<S>& model, int contacts, int limit_rows, int joint_rows) {
  const int rows = 3 * contacts + limit_rows + joint_rows;
  JT = MatrixX<S>::Zero(model.nv, rows);
  MinvJT = MatrixX<S>::Zero(model.nv, rows);
  limit_coord.assign(limit_rows, -1);
  limit_side.assign(limit_rows, 0);
  memory_pair.assign(contacts, {-1, -1});
  memory_point.assign(contacts, Vector3<S>::Zero());
  memory_impulse.assign(contacts, Vector3<S>::Zero());
  memory_limit = VectorX<S>::Zero(2 * (model.nq + static_cast<int>(model.tendons.size())));  // 2 per limit coordinate
  memory_joint_rows = VectorX<S>::Zero(joint_rows);
  connection_axes.assign(static_cast<size_t>(model.connection_blocks()), Eigen::Matrix3d::Identity());
  v_free = VectorX<S>::Zero(model.nv);
  column = VectorX<S>::Zero(model.nv);
  for (VectorX<S>* x : {&adj_v_free_bar, &adj_y_bar, &adj_x, &adj_column, &adj_scratch})
    *x = VectorX<S>::Zero(model.nv);
}

/// The pgs workspace in data (made by Data's constructor through the registry,
/// contact/contact_models.hpp).
template <class S>
PgsDataTpl<S>& pgs_data(DataTpl<S>& data) {
  return data.contact_workspaces[static_cast<int>(ContactModel::Pgs)].template get<PgsDataTpl<S>>();
}
template <class S>
const PgsDataTpl<S>& pgs_data(const DataTpl<S>& data) {
  return data.contact_workspaces[static_cast<int>(ContactModel::Pgs)].template get<PgsDataTpl<S>>();
}

}  // namespace gradyn
