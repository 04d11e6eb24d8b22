// Adjoint of the network forces (dynamics/network_forces.hpp).
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/network_inputs.hpp"
#include "gradyn/dynamics/network_forces.hpp"

namespace gradyn {

template <class S>
void network_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& ctrl, const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        VecOut<S> ctrl_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current) {
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const NetworkTpl<S>& net = model.networks[n];
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    if (!forward_is_current) {
      detail::gather_network_inputs(net, q, v, ctrl, work.input);
      dense_forward<S>(net.shape, net.weights, work);
    }
    // tau[output_dofs[k]] += y[k]
    for (size_t k = 0; k < net.output_dofs.size(); ++k) work.output_bar[k] = tau_bar[net.output_dofs[k]];
    work.input_bar.setZero();
    dense_vjp<S>(net.shape, net.weights, work, work.output_bar, work.input_bar, model_bar.network_weights[n]);
    for (size_t j = 0; j < net.inputs.size(); ++j) {
      const NetworkInput& in = net.inputs[j];
      switch (in.kind) {
        case NetworkInput::Kind::Position: q_bar[in.index] += work.input_bar[j]; break;
        case NetworkInput::Kind::Velocity: v_bar[in.index] += work.input_bar[j]; break;
        case NetworkInput::Kind::Control:
          if (ctrl.size() != 0) ctrl_bar[in.index] += work.input_bar[j];
          break;
      }
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                              \
  template void network_forces_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                      const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, \
                                      ModelTangentTpl<S>&, bool);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
