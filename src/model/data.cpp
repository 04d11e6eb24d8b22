// Data's constructor: every workspace sized once from the Model (model/data.hpp), the contact models'
// own blocks by their make_workspace (contact/contact_models.hpp).
#include "gradyn/model/data.hpp"

#include <algorithm>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/joint_constraints.hpp"
#include "gradyn/contact/models/contact_model_defaults.hpp"
#include "gradyn/model/dof_tree.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

template <class S>
DataTpl<S>::DataTpl(const ModelTpl<S>& model) {
  const int nb = model.nbodies();
  liMi.resize(nb);
  oMi.resize(nb);
  v.assign(nb, Vector6<S>::Zero());
  ov.assign(nb, Vector6<S>::Zero());
  oa.assign(nb, Vector6<S>::Zero());
  oc.assign(nb, Vector6<S>::Zero());
  a.assign(nb, Vector6<S>::Zero());
  f.assign(nb, Vector6<S>::Zero());
  oI.assign(nb, Matrix6<S>::Zero());
  oIa.assign(nb, Matrix6<S>::Zero());
  oIc.assign(nb, Matrix6<S>::Zero());
  oYc.assign(nb, OriginInertia<S>());
  opA.assign(nb, Vector6<S>::Zero());
  joint_S.resize(nb);
  oS.resize(nb);
  U.resize(nb);
  Dinv.resize(nb);
  u.resize(nb);
  for (int i = 0; i < nb; ++i) {
    const int nvi = model.joint_nv(i);
    joint_S[i] = joint_subspace<S>(model.joint_type[i], model.joint_axis[i]);
    oS[i] = joint_S[i];
    U[i] = Matrix6XS::Zero(6, nvi);
    Dinv[i] = MatrixDof::Zero(nvi, nvi);
    u[i] = VectorDof::Zero(nvi);
  }
  oMf.resize(model.frames.size());
  tau = VectorX<S>::Zero(model.nv);
  ddq = VectorX<S>::Zero(model.nv);
  M = MatrixX<S>::Zero(model.nv, model.nv);
  tau_passive = VectorX<S>::Zero(model.nv);
  tau_total = VectorX<S>::Zero(model.nv);
  actuator_force = VectorX<S>::Zero(model.nu());
  actuation_tau = VectorX<S>::Zero(model.nv);
  applied_tau = VectorX<S>::Zero(model.nv);
  adj_applied_tau_bar = VectorX<S>::Zero(model.nv);
  network_tau = VectorX<S>::Zero(model.nv);
  for (const auto& net : model.networks) network_work.emplace_back(net.shape);
  for (auto* x : {&network_ow, &network_body_force, &network_subtree_force, &network_force_bar, &network_ow_bar,
                  &network_pose_bar})
    x->assign(nb, Vector6<S>::Zero());
  network_w_bar = VectorX<S>::Zero(model.nv);
  network_seed = network_v_bar = network_dq_bar = network_zero_dq = VectorX<S>::Zero(model.nv);
  network_q_bar = network_q_unused = VectorX<S>::Zero(model.nq);
  network_ctrl_bar = VectorX<S>::Zero(model.nu());
  if (!model.networks.empty())
    network_tangent = detail::DeepPtr<ModelTangentTpl<S>>(std::make_unique<ModelTangentTpl<S>>(model));
  q_tmp = VectorX<S>::Zero(model.nq);
  v_tmp = VectorX<S>::Zero(model.nv);
  dv_tmp = VectorX<S>::Zero(model.nv);
  for (int k = 0; k < 4; ++k) {
    k_q[k] = VectorX<S>::Zero(model.nv);
    k_v[k] = VectorX<S>::Zero(model.nv);
  }
  // step adjoint workspace
  for (int k = 0; k < 4; ++k) {
    step_adj_q[k] = VectorX<S>::Zero(model.nq);
    step_adj_v[k] = VectorX<S>::Zero(model.nv);
    step_adj_theta[k] = VectorX<S>::Zero(model.nv);
    step_adj_kq[k] = VectorX<S>::Zero(model.nv);
    step_adj_kv[k] = VectorX<S>::Zero(model.nv);
    step_adj_kq_bar[k] = VectorX<S>::Zero(model.nv);
    step_adj_kv_bar[k] = VectorX<S>::Zero(model.nv);
  }
  step_adj_q_bar = VectorX<S>::Zero(model.nq);
  step_adj_v_bar = VectorX<S>::Zero(model.nv);
  step_adj_theta_bar = VectorX<S>::Zero(model.nv);
  step_adj_dv = VectorX<S>::Zero(model.nv);
  for (int k = 0; k < 2; ++k) {
    rollout_adj_q[k] = VectorX<S>::Zero(model.nq);
    rollout_adj_v[k] = VectorX<S>::Zero(model.nv);
    rollout_adj_lambda_q[k] = VectorX<S>::Zero(model.nq);
    rollout_adj_lambda_v[k] = VectorX<S>::Zero(model.nv);
  }
  rollout_adj_tau = VectorX<S>::Zero(model.nv);
  rollout_adj_ctrl = VectorX<S>::Zero(model.nu());
  joint_M.resize(nb);
  adj_v.assign(nb, Vector6<S>::Zero());
  adj_a.assign(nb, Vector6<S>::Zero());
  adj_f.assign(nb, Vector6<S>::Zero());
  minv_pA.assign(nb, Vector6<S>::Zero());
  minv_a.assign(nb, Vector6<S>::Zero());
  minv_u.resize(nb);
  for (int i = 0; i < nb; ++i) minv_u[i] = VectorDof::Zero(model.joint_nv(i));
  adj_mu = VectorX<S>::Zero(model.nv);
  adj_tau = VectorX<S>::Zero(model.nv);
  adj_ddq = VectorX<S>::Zero(model.nv);
  // sensors
  for (auto* x : {&sensor_ov, &sensor_oa, &sensor_ov_bar, &sensor_oa_bar, &sensor_pose_bar})
    x->assign(nb, Vector6<S>::Zero());
  // collision workspace
  const int ng = model.ngeoms();
  oMg.resize(ng);
  geom_aabb_min.assign(ng, Eigen::Vector3d::Zero());
  geom_aabb_max.assign(ng, Eigen::Vector3d::Zero());
  sweep_order.resize(ng);
  for (int g = 0; g < ng; ++g) sweep_order[g] = g;
  broadphase_pairs.resize(std::max(64, std::min(ng * (ng - 1) / 2, 64 * ng)));
  contacts.resize(model.max_contacts > 0 ? model.max_contacts : std::max(32, 8 * ng));
  // contact workspace
  contact_force.assign(contacts.size(), Vector3<S>::Zero());
  contact_body_force.assign(nb, Vector6<S>::Zero());
  contact_subtree_force.assign(nb, Vector6<S>::Zero());
  contact_tau = VectorX<S>::Zero(model.nv);
  contact_tau_total = VectorX<S>::Zero(model.nv);
  int limit_rows = 0;  // two per coordinate of a joint with limited coordinates, and per limited tendon
  for (int i = 0; i < nb; ++i)
    if (joint_has_limited_coordinates(model.joint_type[i])) limit_rows += 2 * model.joint_nq(i);
  for (const FixedTendon& tendon : model.tendons) limit_rows += tendon.limited() ? 2 : 0;
  const int ncontact_slots = static_cast<int>(contacts.size());
  const int joint_rows = joint_constraint_rows<S>(model);
  const ContactWorkspaceSizes sizes{ncontact_slots, limit_rows, joint_rows};
  // Every registered model's, whichever is on. Made in contact_models.cpp, not here: this file must
  // not include the models' headers, whose inline functions use Data before the defaulted assignment
  // operators below (GCC 12 then rejects them: "invalid array assignment", once per C-array member).
  make_contact_workspaces<S>(model, sizes, contact_workspaces);
  // contact adjoint workspace
  adj_pose_bar.assign(nb, Vector6<S>::Zero());
  adj_ow.assign(nb, Vector6<S>::Zero());
  adj_ow_bar.assign(nb, Vector6<S>::Zero());
  contact_bar.resize(contacts.size());
  adj_contact_tau_bar = VectorX<S>::Zero(model.nv);
  adj_stage_tau_bar = VectorX<S>::Zero(model.nv);
  // analytical derivatives
  deriv_Bc.assign(nb, Matrix6<S>::Zero());
  deriv_Fc.assign(nb, Vector6<S>::Zero());
  deriv_hc.assign(nb, Vector6<S>::Zero());
  deriv_fv.assign(nb, Vector6<S>::Zero());
  deriv_P.resize(nb);
  deriv_Q.resize(nb);
  for (int i = 0; i < nb; ++i) deriv_P[i] = deriv_Q[i] = Matrix6XS::Zero(6, model.joint_nv(i));
  deriv_in_subtree.assign(nb, 0);
  deriv_dtau_dx = MatrixX<S>::Zero(model.nv, 2 * model.nv);
  deriv_dtau_dctrl = MatrixX<S>::Zero(model.nv, model.nu());
  deriv_minv = MatrixX<S>::Zero(model.nv, model.nv);
  deriv_LT = deriv_LinvT = MatrixX<S>::Zero(model.nv, model.nv);  // entries off the tree's pattern stay zero
  {
    const std::vector<int> dof_parent = dof_parents(model);
    std::vector<int> path;
    deriv_path_begin.assign(1, 0);
    deriv_path.clear();
    for (int k = 0; k < model.nv; ++k) {
      path.clear();
      for (int i = k; i != -1; i = dof_parent[i]) path.push_back(i);
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (static_cast<int>(deriv_path.size()) > 2 * deriv_path_begin.back() && deriv_path.back() == *it)
          ++deriv_path.back();
        else
          deriv_path.insert(deriv_path.end(), {*it, *it + 1});
      }
      deriv_path_begin.push_back(static_cast<int>(deriv_path.size()) / 2);
    }
    deriv_index_scratch.assign(model.nv, 0);
  }
  deriv_contact_jac.assign(contacts.size(), Eigen::Matrix<double, 13, 12>::Zero());
  deriv_ov_next.assign(nb, Vector6<S>::Zero());
  deriv_contact_rate = MatrixX<S>::Zero(3 * static_cast<Eigen::Index>(contacts.size()), model.nv);
  deriv_limit_tangent = VectorX<S>::Zero(model.nv);
  deriv_contact_depth = deriv_contact_approach = MatrixX<S>::Zero(static_cast<Eigen::Index>(contacts.size()), model.nv);
  // deriv_impulse_*: sized by their first use (the row count depends on the solver)
}

template <class S>
DataTpl<S>::~DataTpl() = default;
template <class S>
DataTpl<S>::DataTpl(const DataTpl&) = default;
template <class S>
DataTpl<S>::DataTpl(DataTpl&&) noexcept = default;
template <class S>
DataTpl<S>& DataTpl<S>::operator=(const DataTpl&) = default;
template <class S>
DataTpl<S>& DataTpl<S>::operator=(DataTpl&&) noexcept = default;

#define GRADYN_INSTANTIATE(S) template struct DataTpl<S>;
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
