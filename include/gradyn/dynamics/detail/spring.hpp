// The joint spring's displacement, shared by passive_forces and potential_energy. Internal.
#pragma once

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn::detail {

/// d = q (-) q_rest for joint i, the tangent its spring pulls back along. Returns false (and
/// leaves d alone) when the joint has no spring: every stiffness is an inert zero.
template <class S>
inline bool spring_displacement(const ModelTpl<S>& model, const VecRef<S>& q, int i,
                                Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1>& d) {
  const int iv = model.idx_v[i], nvi = model.joint_nv(i), iq = model.idx_q[i], nqi = model.joint_nq(i);
  bool has_spring = false;
  for (int k = 0; k < nvi; ++k) has_spring |= !is_inert_zero(model.stiffness[iv + k]);
  if (!has_spring) return false;
  d.resize(nvi);
  joint_difference<S>(model.joint_type[i], model.q_rest.segment(iq, nqi), q.segment(iq, nqi), d);
  return true;
}

}  // namespace gradyn::detail
