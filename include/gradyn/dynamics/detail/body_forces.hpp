// tau += J^T F for spatial forces F_i acting on the bodies (world frame, about the world origin):
// joint i transmits the forces of its whole subtree, and its columns in the world frame are
// oMi * S_i (parents come before children, so a reverse sweep sums the subtrees). Shared by the
// penalty contact forces and the body_wrench networks; needs data.oMi current.
#pragma once

#include <vector>

#include "gradyn/model/data.hpp"

namespace gradyn::detail {

template <class S, class Tau>
void add_body_forces_to_tau(const ModelTpl<S>& model, const DataTpl<S>& data, const std::vector<Vector6<S>>& body_force,
                            std::vector<Vector6<S>>& subtree_force, Tau& tau) {
  const int nb = model.nbodies();
  for (int i = 0; i < nb; ++i) subtree_force[i] = body_force[i];
  for (int i = nb - 1; i >= 0; --i) {
    const Vector6<S>& F = subtree_force[i];
    const int iv = model.idx_v[i];
    for (int j = 0; j < model.joint_nv(i); ++j)
      tau[iv + j] += data.oMi[i].act_motion(Vector6<S>(data.joint_S[i].col(j))).dot(F);
    if (model.parent[i] >= 0) subtree_force[model.parent[i]] += F;
  }
}

}  // namespace gradyn::detail
