// Where one more joint's entries go in q and v: ModelBuilder::build and deserialize_model lay a
// model out the same way, through this one function.
#pragma once

#include "gradyn/model/joint.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn::detail {

/// Appends the offsets (idx_q, idx_v) and sizes of a joint of this type, after every joint already
/// in the model, and grows nq and nv by them.
inline void append_joint_layout(Model& m, JointType type) {
  m.idx_q.push_back(m.nq);
  m.idx_v.push_back(m.nv);
  m.joint_nq_.push_back(joint_nq(type));
  m.joint_nv_.push_back(joint_nv(type));
  m.nq += joint_nq(type);
  m.nv += joint_nv(type);
}

}  // namespace gradyn::detail
