// Fixed tendons (model.hpp, FixedTendon): length and rate, linear in the joints' coordinates and
// velocities. Their limits are in contact/joint_limits.hpp, their spring-damper in
// dynamics/passive.hpp.
#pragma once

#include "gradyn/model/model.hpp"
#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

/// Length of a fixed tendon at q: sum_i coefs[i] q[idx_q[joints[i]]].
template <class S>
S tendon_length(const ModelTpl<S>& model, const FixedTendon& tendon, const VecRef<S>& q) {
  S length = S(0);
  for (size_t i = 0; i < tendon.joints.size(); ++i) length += tendon.coefs[i] * q[model.idx_q[tendon.joints[i]]];
  return length;
}

/// Rate of a fixed tendon's length: J v = sum_i coefs[i] v[idx_v[joints[i]]].
template <class S>
S tendon_rate(const ModelTpl<S>& model, const FixedTendon& tendon, const VecRef<S>& v) {
  S rate = S(0);
  for (size_t i = 0; i < tendon.joints.size(); ++i) rate += tendon.coefs[i] * v[model.idx_v[tendon.joints[i]]];
  return rate;
}

/// Adds (+=) w J^T to a v-sized vector (the generalised force of a tension w along the tendon).
template <class S, class Out>
void add_tendon_force(const ModelTpl<S>& model, const FixedTendon& tendon, const S& w, Out&& tau) {
  for (size_t i = 0; i < tendon.joints.size(); ++i) tau[model.idx_v[tendon.joints[i]]] += w * tendon.coefs[i];
}

}  // namespace gradyn
