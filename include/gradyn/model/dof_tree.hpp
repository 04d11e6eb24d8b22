// The tree of a model's velocity coordinates (dofs), which the mass matrix's sparsity follows:
// M(i, j) = 0 unless i and j lie on one path to a root. A header of its own so that its few users
// (Data's derivative paths, the interior-point solver's factorisation of M) alone rebuild with it.
#pragma once

#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn {

/// Per dof, its parent dof: the previous dof of its joint, else the last dof of the nearest ancestor
/// body that has one; -1 at a root. Parents come before their children.
template <class S>
std::vector<int> dof_parents(const ModelTpl<S>& model) {
  std::vector<int> dof_parent(static_cast<size_t>(model.nv), -1);
  for (int i = 0; i < model.nbodies(); ++i) {
    int p = model.parent[i];
    while (p >= 0 && model.joint_nv(p) == 0) p = model.parent[p];
    for (int k = 0; k < model.joint_nv(i); ++k)
      dof_parent[static_cast<size_t>(model.idx_v[i] + k)] =
          k > 0 ? model.idx_v[i] + k - 1 : (p >= 0 ? model.idx_v[p] + model.joint_nv(p) - 1 : -1);
  }
  return dof_parent;
}

}  // namespace gradyn
