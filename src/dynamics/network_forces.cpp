// Network forces (dynamics/network_forces.hpp): the joint_force networks' residual generalized
// forces, and their partial derivatives for step_jacobian. The adjoint is beside it, in
// network_forces_vjp.cpp.
#include "gradyn/dynamics/network_forces.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/network_inputs.hpp"

namespace gradyn {

template <class S>
void network_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                    const VecRef<S>& ctrl) {
  data.network_tau.setZero();
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const NetworkTpl<S>& net = model.networks[n];
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    detail::gather_network_inputs(net, q, v, ctrl, work.input);
    const auto y = dense_forward<S>(net.shape, net.weights, work);
    for (size_t k = 0; k < net.output_dofs.size(); ++k) data.network_tau[net.output_dofs[k]] += y[k];
  }
}

void network_forces_derivatives(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                const VecRef<double>& ctrl, Eigen::Ref<Eigen::MatrixXd> dtau_dx,
                                Eigen::Ref<Eigen::MatrixXd> dtau_dctrl) {
  const int nv = model.nv;
  Eigen::VectorXd no_weights_bar;  // empty: dense_vjp skips the weights' adjoint
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const Network& net = model.networks[n];
    DenseWorkspace& work = data.network_work[n];
    detail::gather_network_inputs(net, q, v, ctrl, work.input);
    dense_forward<double>(net.shape, net.weights, work);
    // row k of the network's input Jacobian: the adjoint of output k (the weights' is not needed)
    for (size_t k = 0; k < net.output_dofs.size(); ++k) {
      work.output_bar.setZero();
      work.output_bar[k] = 1.0;
      work.input_bar.setZero();
      dense_vjp<double>(net.shape, net.weights, work, work.output_bar, work.input_bar, no_weights_bar);
      const int row = net.output_dofs[k];
      for (size_t j = 0; j < net.inputs.size(); ++j) {
        const NetworkInput& in = net.inputs[j];
        switch (in.kind) {
          case NetworkInput::Kind::Position: dtau_dx(row, in.tangent) += work.input_bar[j]; break;
          case NetworkInput::Kind::Velocity: dtau_dx(row, nv + in.index) += work.input_bar[j]; break;
          case NetworkInput::Kind::Control:
            if (ctrl.size() != 0) dtau_dctrl(row, in.index) += work.input_bar[j];
            break;
        }
      }
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                           \
  template void network_forces<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                  const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
