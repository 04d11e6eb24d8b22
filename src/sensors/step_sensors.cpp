// The sensors of a step (sensors/step_sensors.hpp): step, then read qacc and the contacts' normal
// forces; the adjoint hands the accelerometer's qacc_bar to step_vjp as v_next_bar = qacc_bar / dt.
#include "gradyn/sensors/step_sensors.hpp"

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

namespace {

/// Runs the step and fills qacc and the contacts' normal forces (data.ncontacts entries).
template <class S>
void step_inputs(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                 const VecRef<S>& tau, const VecRef<S>& ctrl, const S& dt, Integrator integrator, VectorX<S>& qacc,
                 VectorX<S>& normal_force) {
  VectorX<S> q_next(model.nq), v_next(model.nv);
  step<S>(model, data, q, v, tau, ctrl, dt, integrator, q_next, v_next);
  qacc = (v_next - v) / dt;
  if (model.contact.model == ContactModel::None) data.ncontacts = 0;  // the step detected none
  normal_force = VectorX<S>::Zero(data.ncontacts);
  step_contact_normal_forces<S>(model, data, dt, normal_force);
}

}  // namespace

template <class S>
void step_contact_normal_forces(const ModelTpl<S>& model, const DataTpl<S>& data, const NoDeduce<S>& dt,
                                VecOut<S> normal_force) {
  const int nc = model.contact.model == ContactModel::None ? 0 : data.ncontacts;
  if (normal_force.size() < nc)
    throw ArgumentError("normal_force: expected room for " + std::to_string(nc) + " contacts, got " +
                        std::to_string(normal_force.size()));
  visit_contact_model(model.contact.model, [&](auto contact_model) {
    for (int k = 0; k < nc; ++k) normal_force[k] = decltype(contact_model)::normal_force(model, data, k, nc, dt);
  });
}

template <class S>
void step_sensor_readings(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& tau, const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator,
                          VecOut<S> readings) {
  if (!sensors_need_step(model)) {
    const VectorX<S> none;
    sensor_readings<S>(model, data, q, v, none, none, readings);
    return;
  }
  VectorX<S> qacc, normal_force;
  step_inputs<S>(model, data, q, v, tau, ctrl, dt, integrator, qacc, normal_force);
  sensor_readings<S>(model, data, q, v, qacc, normal_force, readings);
}

template <class S>
void step_sensor_readings_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                              const VecRef<S>& tau, const VecRef<S>& ctrl, const NoDeduce<S>& dt,
                              Integrator integrator, const VecRef<S>& readings_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                              VecOut<S> tau_bar, VecOut<S> ctrl_bar) {
  check_size("readings_bar", readings_bar.size(), model.nsensordata());
  for (const Sensor& s : model.sensors)
    if (s.kind == SensorKind::Touch && !is_inert_zero(readings_bar[s.adr]))
      throw ArgumentError("the gradient of touch sensor '" + s.name +
                          "' is not computed (its contact forces come out of the contact solver): give its entry "
                          "of readings_bar zero");
  if (!sensors_need_step(model)) {
    const VectorX<S> none;
    VectorX<S> none_bar;
    sensor_readings_vjp<S>(model, data, q, v, none, none, readings_bar, q_bar, v_bar, none_bar, none_bar);
    return;
  }
  VectorX<S> qacc, normal_force;
  step_inputs<S>(model, data, q, v, tau, ctrl, dt, integrator, qacc, normal_force);
  VectorX<S> qacc_bar = VectorX<S>::Zero(model.nv), normal_force_bar = VectorX<S>::Zero(normal_force.size());
  sensor_readings_vjp<S>(model, data, q, v, qacc, normal_force, readings_bar, q_bar, v_bar, qacc_bar, normal_force_bar);
  if (qacc_bar.isZero(0)) return;  // no accelerometer's adjoint: nothing flows through the step
  // qacc = (v_next - v) / dt
  const VectorX<S> v_next_bar = qacc_bar / dt;
  v_bar -= v_next_bar;
  const VectorX<S> q_next_bar = VectorX<S>::Zero(model.nq);
  ModelTangentTpl<S> model_bar(model);
  step_vjp<S>(model, data, q, v, tau, ctrl, dt, integrator, q_next_bar, v_next_bar, q_bar, v_bar, tau_bar, ctrl_bar,
              model_bar);
}

#define GRADYN_INSTANTIATE(S)                                                                                        \
  template void step_contact_normal_forces<S>(const ModelTpl<S>&, const DataTpl<S>&, const NoDeduce<S>&, VecOut<S>); \
  template void step_sensor_readings<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,        \
                                        const VecRef<S>&, const VecRef<S>&, const NoDeduce<S>&, Integrator,          \
                                        VecOut<S>);                                                                  \
  template void step_sensor_readings_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,    \
                                            const VecRef<S>&, const VecRef<S>&, const NoDeduce<S>&, Integrator,      \
                                            const VecRef<S>&, VecOut<S>, VecOut<S>, VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
