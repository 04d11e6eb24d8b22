// Gathers a network's inputs (model/network.hpp) from q, v and ctrl, shared by the network forces,
// their adjoint and their Jacobian.
#pragma once

#include "gradyn/model/model.hpp"

namespace gradyn::detail {

template <class S, class Q, class V, class C, class Out>
void gather_network_inputs(const NetworkTpl<S>& net, const Q& q, const V& v, const C& ctrl, Out& x) {
  for (size_t j = 0; j < net.inputs.size(); ++j) {
    const NetworkInput& in = net.inputs[j];
    switch (in.kind) {
      case NetworkInput::Kind::Position: x[j] = q[in.index]; break;
      case NetworkInput::Kind::Velocity: x[j] = v[in.index]; break;
      case NetworkInput::Kind::Control: x[j] = ctrl.size() != 0 ? S(ctrl[in.index]) : S(0); break;
    }
  }
}

}  // namespace gradyn::detail
