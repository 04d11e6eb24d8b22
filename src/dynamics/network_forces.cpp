// Network forces (dynamics/network_forces.hpp): the networks' residual generalized forces
// (joint_force outputs directly, body_wrench outputs as J^T F), and their partial derivatives for
// step_jacobian. The adjoint is beside it, in
// network_forces_vjp.cpp.
#include "gradyn/dynamics/network_forces.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/body_forces.hpp"
#include "gradyn/dynamics/detail/network_inputs.hpp"
#include "gradyn/dynamics/detail/world_terms.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

template <class S>
void detail::network_body_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                     const VecRef<S>& v) {
  for (int i = 0; i < model.nbodies(); ++i) detail::world_body_pose(model, data, q, i);
  world_velocities<S>(model, data, v, data.network_ow);
}

template <class S>
void network_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                    const VecRef<S>& ctrl) {
  data.network_tau.setZero();
  const bool wrenches = detail::has_body_wrench(model);
  if (wrenches) {
    detail::network_body_kinematics<S>(model, data, q, v);
    for (Vector6<S>& F : data.network_body_force) F.setZero();
  }
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const NetworkTpl<S>& net = model.networks[n];
    if (is_contact_site(net.site)) continue;  // per contact, in the penalty contact model
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    if (net.site == NetworkSite::JointForce) {
      detail::gather_network_inputs(net, q, v, ctrl, work.input);
      const auto y = dense_forward<S>(net.shape, net.weights, work);
      for (size_t k = 0; k < net.output_dofs.size(); ++k) data.network_tau[net.output_dofs[k]] += y[k];
    } else {
      const detail::NetworkBodyState<S> st = detail::network_body_state(data, net.body);
      detail::gather_network_inputs(net, q, v, ctrl, work.input, &st);
      const auto y = dense_forward<S>(net.shape, net.weights, work);
      Vector6<S> wrench = Vector6<S>::Zero();
      for (size_t k = 0; k < net.output_dofs.size(); ++k) wrench[net.output_dofs[k]] = y[k];
      data.network_body_force[net.body] += detail::network_wrench_in_world(st, wrench, net.world_frame);
    }
  }
  if (wrenches)  // tau += J^T F
    detail::add_body_forces_to_tau(model, data, data.network_body_force, data.network_subtree_force, data.network_tau);
}

void network_forces_derivatives(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                const VecRef<double>& ctrl, Eigen::Ref<Eigen::MatrixXd> dtau_dx,
                                Eigen::Ref<Eigen::MatrixXd> dtau_dctrl) {
  const int nv = model.nv;
  if (detail::has_body_wrench(model)) {
    // A wrench depends on every joint above its body: one adjoint per DoF r of tau, its q adjoint
    // (ambient) taken to the tangent by integrate's adjoint at dq = 0.
    ModelTangent& unused = *data.network_tangent;
    for (int r = 0; r < nv; ++r) {
      data.network_seed.setZero();
      data.network_seed[r] = 1.0;
      data.network_q_bar.setZero(), data.network_v_bar.setZero(), data.network_ctrl_bar.setZero();
      data.network_dq_bar.setZero();
      unused.setZero();
      network_forces_vjp<double>(model, data, q, v, ctrl, data.network_seed, data.network_q_bar, data.network_v_bar,
                                 data.network_ctrl_bar, unused);
      integrate_vjp<double>(model, q, data.network_zero_dq, data.network_q_bar, data.network_q_unused,
                            data.network_dq_bar);
      dtau_dx.row(r).head(nv) += data.network_dq_bar.transpose();
      dtau_dx.row(r).tail(nv) += data.network_v_bar.transpose();
      if (ctrl.size() != 0) dtau_dctrl.row(r) += data.network_ctrl_bar.transpose();
    }
    return;
  }
  Eigen::VectorXd no_weights_bar;  // empty: dense_vjp skips the weights' adjoint
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const Network& net = model.networks[n];
    if (is_contact_site(net.site)) continue;  // step_jacobian refuses them (penalty_jacobian.cpp)
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
          default: break;  // body quantities: only body_wrench networks read them (handled above)
        }
      }
    }
  }
}

#define GRADYN_INSTANTIATE(S)                                                                           \
  template void detail::network_body_kinematics<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&,    \
                                                   const VecRef<S>&);                                    \
  template void network_forces<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                  const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
