// Adjoints of the stages of a step (sim/stages.hpp), beside their forward in stages.cpp.
#include <string>
#include <type_traits>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/dynamics/actuation.hpp"
#include "gradyn/dynamics/network_forces.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/stages.hpp"

namespace gradyn {

namespace {

// The adjoint of the stage once the actuators' forces are in tau (stages.cpp's accelerations_under).
template <class S>
void accelerations_under_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                             const VecRef<S>& tau, const VectorX<S>& a_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                             VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar, bool stage_is_current) {
  visit_contact_model(model.contact.model, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level != ContactLevel::Force) {
      forward_dynamics_vjp<S>(model, data, q, v, tau, a_bar, q_bar, v_bar, tau_bar, model_bar, stage_is_current);
    } else {
      // a = forward_dynamics(q, v, tau + tau_c(q, v)): the adjoint of tau + tau_c flows to both.
      if (!stage_is_current) detail::accelerations_under<S>(model, data, q, v, tau);
      VectorX<S>& total_bar = data.adj_stage_tau_bar;
      total_bar.setZero();
      forward_dynamics_vjp<S>(model, data, q, v, data.contact_tau_total, a_bar, q_bar, v_bar, total_bar, model_bar,
                              /*forward_is_current=*/true);
      tau_bar += total_bar;
      Kind::template generalized_forces_vjp<S>(model, data, q, v, total_bar, q_bar, v_bar, model_bar);
    }
  });
}

}  // namespace

template <class S>
void stage_accelerations_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                             const VecRef<S>& tau, const VecRef<S>& ctrl, const VectorX<S>& a_bar, VecOut<S> q_bar,
                             VecOut<S> v_bar, VecOut<S> tau_bar, VecOut<S> ctrl_bar, ModelTangentTpl<S>& model_bar,
                             bool stage_is_current) {
  if (!detail::has_applied_forces(model)) {
    accelerations_under_vjp<S>(model, data, q, v, tau, a_bar, q_bar, v_bar, tau_bar, model_bar, stage_is_current);
    return;
  }
  // a = accelerations_under(q, v, tau + tau_actuation(q, v, ctrl) + tau_network(q, v, ctrl))
  if (!stage_is_current) detail::applied_forces<S>(model, data, q, v, tau, ctrl);
  VectorX<S>& applied_bar = data.adj_applied_tau_bar;
  applied_bar.setZero();
  accelerations_under_vjp<S>(model, data, q, v, data.applied_tau, a_bar, q_bar, v_bar, applied_bar, model_bar,
                             stage_is_current);
  tau_bar += applied_bar;
  actuation_vjp<S>(model, q, v, ctrl, applied_bar, q_bar, v_bar, ctrl_bar, model_bar);
  if (!model.networks.empty())  // data.network_work holds (q, v, ctrl)'s layers: from applied_forces above, or
                                // from the stage_accelerations call that stage_is_current vouches for
    network_forces_vjp<S>(model, data, q, v, ctrl, applied_bar, q_bar, v_bar, ctrl_bar, model_bar,
                          /*forward_is_current=*/true);
}

template <class S>
void stage_constraints_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                           const NoDeduce<S>& dt, const VecRef<S>& v_next_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                           VecOut<S> a_bar, ModelTangentTpl<S>& model_bar) {
  visit_contact_model(model.contact.model, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level != ContactLevel::Impulse) {  // v+ = v + dt a
      v_bar += v_next_bar;
      a_bar += dt * v_next_bar;
    } else if constexpr (std::is_same_v<S, double>) {
      Kind::velocity_vjp(model, data, q, v, dt, v_next_bar, q_bar, v_bar, a_bar, model_bar);
    } else {
      throw ArgumentError(std::string("step_vjp: the adjoint of contact model '") + Kind::name +
                          "' is computed in double only; forward mode through its step is exact already "
                          "(the impulses carry ADScalar derivatives by the implicit function theorem)");
    }
  });
}

#define GRADYN_INSTANTIATE(S)                                                                                       \
  template void stage_accelerations_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,     \
                                           const VecRef<S>&, const VecRef<S>&, const VectorX<S>&, VecOut<S>,         \
                                           VecOut<S>, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&, bool);              \
  template void stage_constraints_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,       \
                                         const NoDeduce<S>&, const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>,     \
                                         ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
