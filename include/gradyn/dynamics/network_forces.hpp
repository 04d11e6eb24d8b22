// Network forces: the residual generalized forces of the model's joint_force networks
// (model/network.hpp), inside every step (the accelerations stage, sim/stages.hpp), beside the
// actuators' forces. For network n with inputs x (entries of q, v and ctrl, gathered by name):
//
//   joint_force:  tau_network[output_dofs[k]] += dense(x; weights)[k]
//   body_wrench:  tau_network += J_body^T F, F the network's wrench on its body as a world spatial
//                 force (its outputs are wrench components, in the body's axes or the world's)
// Networks at contact sites are not here: the penalty contact model runs them per contact
// (contact/detail/contact_networks.hpp).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// The networks' forces under controls ctrl (model.nu() entries, or none: every control zero) into
/// data.network_tau (nv); each network's layers stay in data.network_work. Never allocates.
template <class S>
void network_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                    const VecRef<S>& ctrl);

/// Adjoint of network_forces given the adjoint of data.network_tau: accumulates q_bar (nq), v_bar
/// (nv), ctrl_bar (nu; untouched when ctrl is empty) and the weights' adjoints in model_bar.
/// forward_is_current: network_forces(q, v, ctrl) was the last call to write data.network_work
/// (the accelerations stage's adjoint knows it is); otherwise the forward pass runs again first.
template <class S>
void network_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& ctrl, const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        VecOut<S> ctrl_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current = false);

namespace detail {
/// The world poses (data.oMi, data.oS) and data.network_ow at (q, v) that body_wrench networks read.
template <class S>
void network_body_kinematics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v);
}  // namespace detail

/// Partial derivatives of data.network_tau for step_jacobian: adds d tau/d dq and d tau/d v to the
/// left and right halves of dtau_dx (nv x 2nv) and d tau/d ctrl to dtau_dctrl (nv x nu). One
/// adjoint pass per output unit; with a body_wrench network, one network_forces_vjp per DoF instead
/// (every network at once). Never allocates.
void network_forces_derivatives(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                                const VecRef<double>& ctrl, Eigen::Ref<Eigen::MatrixXd> dtau_dx,
                                Eigen::Ref<Eigen::MatrixXd> dtau_dctrl);

}  // namespace gradyn
