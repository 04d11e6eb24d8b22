// The joint quantities a network or a policy may read by name, in model order: the position of
// every 1-DoF joint ("<joint>.q"), then every DoF's velocity ("<joint>.v", "<joint>.v[k]").
// Shared by the networks inside the dynamics (model/network.hpp) and the policies inside the rollout
// (control/policy.hpp), so the two name a joint's quantities alike.
#pragma once

#include <string>
#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn::detail {

struct JointQuantity {
  bool position = true;  // false: a velocity
  int q_index = 0;       // position: its entry of q
  int v_index = 0;       // its DoF (entry of v)
  std::string name;
};

inline std::vector<JointQuantity> joint_quantities(const Model& model) {
  std::vector<JointQuantity> all;
  for (int i = 0; i < model.nbodies(); ++i) {
    if (joint_nv(model.joint_type[i]) == 1 && model.joint_nq(i) == 1) all.push_back({true, model.idx_q[i], model.idx_v[i], model.joint_names[i] + ".q"});
  }
  for (int i = 0; i < model.nbodies(); ++i) {
    const int n = model.joint_nv(i);
    for (int k = 0; k < n; ++k)
      all.push_back({false, 0, model.idx_v[i] + k,
                     n == 1 ? model.joint_names[i] + ".v" : model.joint_names[i] + ".v[" + std::to_string(k) + "]"});
  }
  return all;
}

}  // namespace gradyn::detail
