// The forward stages of a step (sim/stages.hpp): the one place that dispatches on the contact model,
// through its hooks (contact/contact_models.hpp).
#include "gradyn/sim/stages.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/dynamics/actuation.hpp"
#include "gradyn/dynamics/network_forces.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

namespace {
// kStatusDeepPenetration when a contact of the last collide() is deeper than the settings allow.
template <class S>
void flag_deep_penetration(const ModelTpl<S>& model, DataTpl<S>& data) {
  for (int k = 0; k < data.ncontacts; ++k)
    if (value_of(data.contacts[k].depth) > model.contact.max_penetration) data.status |= kStatusDeepPenetration;
}

// Networks at contact sites run per contact inside the models that evaluate them (penalty); under
// any other they would silently do nothing.
template <class S>
void require_no_contact_networks(const ModelTpl<S>& model) {
  for (const NetworkTpl<S>& net : model.networks)
    if (is_contact_site(net.site))
      throw ArgumentError(std::string("network '") + net.name + "' is at site '" + network_site_name(net.site) +
                          "', which only the penalty contact model evaluates (per contact); this model's contact "
                          "model is '" + contact_model_name(model.contact.model) +
                          "': use Model.with_contact(model='penalty')");
}

}  // namespace

template <class S>
const VectorX<S>& detail::accelerations_under(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                      const VecRef<S>& v, const VecRef<S>& tau) {
  return visit_contact_model(model.contact.model, [&](auto contact_model) -> const VectorX<S>& {
    using Kind = decltype(contact_model);
    // Impulse-level models: free motion here; the impulses come in stage_constraints.
    if constexpr (Kind::level != ContactLevel::Force) {
      return forward_dynamics<S>(model, data, q, v, tau);
    } else {
      data.contact_tau_total = tau + Kind::template generalized_forces<S>(model, data, q, v);
      flag_deep_penetration<S>(model, data);
      return forward_dynamics<S>(model, data, q, v, data.contact_tau_total);
    }
  });
}

template <class S>
void detail::applied_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                            const VecRef<S>& tau, const VecRef<S>& ctrl) {
  if (!visit_contact_model(model.contact.model, [](auto m) { return decltype(m)::evaluates_contact_networks; }))
    require_no_contact_networks(model);
  actuation<S>(model, data, q, v, ctrl);
  if (model.networks.empty()) {
    data.applied_tau = tau + data.actuation_tau;
    return;
  }
  network_forces<S>(model, data, q, v, ctrl);
  data.applied_tau = tau + data.actuation_tau + data.network_tau;
}

template <class S>
const VectorX<S>& stage_accelerations(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                      const VecRef<S>& v, const VecRef<S>& tau, const VecRef<S>& ctrl) {
  if (!detail::has_applied_forces(model)) {
    if (ctrl.size() != 0) actuation<S>(model, data, q, v, ctrl);  // throws: no actuator takes these controls
    return detail::accelerations_under<S>(model, data, q, v, tau);
  }
  detail::applied_forces<S>(model, data, q, v, tau, ctrl);
  return detail::accelerations_under<S>(model, data, q, v, data.applied_tau);
}

template <class S>
void stage_constraints(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a, const NoDeduce<S>& dt, VecOut<S> v_next) {
  // v_next may alias v: every impulse model reads v before writing v_next.
  visit_contact_model(model.contact.model, [&](auto contact_model) {
    using Kind = decltype(contact_model);
    if constexpr (Kind::level == ContactLevel::Impulse) {
      Kind::template velocity<S>(model, data, q, v, a, dt, v_next);
      flag_deep_penetration<S>(model, data);
    } else {
      v_next = v + dt * a;
    }
  });
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template const VectorX<S>& detail::accelerations_under<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, \
                                                            const VecRef<S>&, const VecRef<S>&);              \
  template void detail::applied_forces<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,    \
                                          const VecRef<S>&, const VecRef<S>&);                                  \
  template const VectorX<S>& stage_accelerations<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&,        \
                                                    const VecRef<S>&, const VecRef<S>&, const VecRef<S>&);    \
  template void stage_constraints<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,      \
                                     const VecRef<S>&, const NoDeduce<S>&, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
