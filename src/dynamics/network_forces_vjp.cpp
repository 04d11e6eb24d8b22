// Adjoint of the network forces (dynamics/network_forces.hpp). A body_wrench network's forces
// depend on q and v through its body's pose and velocity (its inputs, the wrench's frame and
// lever arm) and through the joints' world axes in tau = J^T F; every such dependence is written
// as adjoints of the body poses (wrenches, dynamics/kinematics_vjp.hpp) and of the world
// velocities, which world_velocities_vjp and body_poses_vjp take back to v and q.
#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/network_inputs.hpp"
#include "gradyn/dynamics/kinematics_vjp.hpp"
#include "gradyn/dynamics/network_forces.hpp"

namespace gradyn {

namespace {

using detail::point_adjoint;

// The adjoints of a body_wrench network's output y (into y_bar) and of its body's pose (into
// pose_bar) given F_bar, the adjoint of network_wrench_in_world(st, y, world_frame).
template <class S>
void wrench_in_world_vjp(const detail::NetworkBodyState<S>& st, const Vector6<S>& y, bool world_frame,
                         const Vector6<S>& F_bar, Vector6<S>& y_bar, Vector6<S>& pose_bar) {
  const Vector3<S> N = F_bar.template head<3>();
  const Vector3<S> f_bar = Vector3<S>(F_bar.template tail<3>()) + N.cross(st.p);  // of f, the world force
  const Vector3<S> n_y = y.template head<3>(), f_y = y.template tail<3>();
  const Vector3<S> f = world_frame ? f_y : Vector3<S>(st.R * f_y);
  pose_bar += point_adjoint<S>(st.p, f.cross(N));  // the lever arm p x f
  if (world_frame) {
    y_bar.template head<3>() = N, y_bar.template tail<3>() = f_bar;
    return;
  }
  y_bar.template head<3>() = st.R.transpose() * N, y_bar.template tail<3>() = st.R.transpose() * f_bar;
  // R n_y and R f_y turn with the body: d(R x) = dtheta x (R x)
  pose_bar.template head<3>() += Vector3<S>(st.R * n_y).cross(N) + Vector3<S>(st.R * f_y).cross(f_bar);
}

}  // namespace

template <class S>
void network_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& ctrl, const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        VecOut<S> ctrl_bar, ModelTangentTpl<S>& model_bar, bool forward_is_current) {
  const bool wrenches = detail::has_body_wrench(model);
  if (wrenches) {
    // the poses and velocities at (q, v): the accelerations stage's adjoint may have moved data's
    detail::network_body_kinematics<S>(model, data, q, v);
    for (int i = 0; i < model.nbodies(); ++i) data.network_ow_bar[i].setZero(), data.network_pose_bar[i].setZero();
    // tau . tau_bar = sum_i F_i . ow_i(tau_bar): F_bar_i = ow_i(tau_bar), and the joints' world
    // axes move with the poses (world_velocities_vjp at w = tau_bar, with F as ow's adjoint)
    world_velocities<S>(model, data, tau_bar, data.network_force_bar);
    if (!forward_is_current) network_forces<S>(model, data, q, v, ctrl);  // network_body_force, the layers
    world_velocities_vjp<S>(model, data, tau_bar, data.network_body_force, data.network_w_bar, data.network_pose_bar,
                            &model_bar);
  }
  using K = NetworkInput::Kind;
  for (size_t n = 0; n < model.networks.size(); ++n) {
    const NetworkTpl<S>& net = model.networks[n];
    if (is_contact_site(net.site)) continue;  // the penalty contact model's adjoint differentiates them
    DenseWorkspaceTpl<S>& work = data.network_work[n];
    const bool body_wrench = net.site == NetworkSite::BodyWrench;
    detail::NetworkBodyState<S> st;
    if (body_wrench) st = detail::network_body_state(data, net.body);
    if (!forward_is_current && !wrenches) {  // (with wrenches, network_forces above ran them)
      detail::gather_network_inputs(net, q, v, ctrl, work.input);
      dense_forward<S>(net.shape, net.weights, work);
    }
    if (!body_wrench) {  // tau[output_dofs[k]] += y[k]
      for (size_t k = 0; k < net.output_dofs.size(); ++k) work.output_bar[k] = tau_bar[net.output_dofs[k]];
    } else {
      const auto y_out = work.post.segment(net.shape.activation_offset(net.shape.layers() - 1), net.shape.outputs());
      Vector6<S> y = Vector6<S>::Zero(), y_bar;
      for (size_t k = 0; k < net.output_dofs.size(); ++k) y[net.output_dofs[k]] = y_out[k];
      wrench_in_world_vjp<S>(st, y, net.world_frame, data.network_force_bar[net.body], y_bar,
                             data.network_pose_bar[net.body]);
      for (size_t k = 0; k < net.output_dofs.size(); ++k) work.output_bar[k] = y_bar[net.output_dofs[k]];
    }
    work.input_bar.setZero();
    dense_vjp<S>(net.shape, net.weights, work, work.output_bar, work.input_bar, model_bar.network_weights[n]);
    Vector3<S> p_bar = Vector3<S>::Zero(), ang_bar = Vector3<S>::Zero(), lin_bar = Vector3<S>::Zero();
    Matrix3<S> R_bar = Matrix3<S>::Zero();
    for (size_t j = 0; j < net.inputs.size(); ++j) {
      const NetworkInput& in = net.inputs[j];
      const S x_bar = work.input_bar[j];
      switch (in.kind) {
        case K::Position: q_bar[in.index] += x_bar; break;
        case K::Velocity: v_bar[in.index] += x_bar; break;
        case K::Control:
          if (ctrl.size() != 0) ctrl_bar[in.index] += x_bar;
          break;
        case K::BodyPosition: p_bar[in.index] += x_bar; break;
        case K::BodyRotation: R_bar(in.index / 3, in.index % 3) += x_bar; break;
        case K::BodyAngularVelocity: ang_bar[in.index] += x_bar; break;
        case K::BodyLinearVelocity: lin_bar[in.index] += x_bar; break;
        default: break;  // contact quantities: only contact sites read them (skipped above)
      }
    }
    if (!body_wrench) continue;
    detail::network_body_state_vjp<S>(st, p_bar, R_bar, ang_bar, lin_bar, data.network_pose_bar[net.body],
                                      data.network_ow_bar[net.body]);
  }
  if (!wrenches) return;
  world_velocities_vjp<S>(model, data, v, data.network_ow_bar, v_bar, data.network_pose_bar, &model_bar);
  body_poses_vjp<S>(model, data, q, data.network_pose_bar, q_bar, model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                              \
  template void network_forces_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, \
                                      const VecRef<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, \
                                      ModelTangentTpl<S>&, bool);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
