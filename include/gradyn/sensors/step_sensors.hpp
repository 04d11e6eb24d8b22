// The sensors of a step: accelerometer and touch read what a step does (sensors/sensors.hpp).
#pragma once

#include "gradyn/sensors/sensors.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

/// Readings at (q, v) when the model steps under (tau, ctrl) for dt: the kinematic sensors from
/// (q, v); accelerometer from qacc = (v_next - v) / dt of that step; touch from the normal forces of
/// its contacts (penalty: the contact force along the normal; PGS: the normal impulse / dt; Ipm: the
/// normal impulse / dt; no contact model: none). A model without accelerometer or touch does not step.
/// With RK4 (penalty or no contact), qacc is the step's mean acceleration and the contacts are those
/// of its last stage. ctrl: nu entries, or empty (every control zero).
template <class S>
void step_sensor_readings(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                          const VecRef<S>& tau, const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator,
                          VecOut<S> readings);

/// The normal forces of the contacts of the step data has just taken (data.ncontacts entries into
/// the head of normal_force, which must hold at least that many): penalty: the contact force along
/// the normal; PGS and Ipm: the normal impulse / dt; no contact model: none. What touch sensors read.
template <class S>
void step_contact_normal_forces(const ModelTpl<S>& model, const DataTpl<S>& data, const NoDeduce<S>& dt,
                                VecOut<S> normal_force);

/// Adjoint of step_sensor_readings: ACCUMULATES q_bar (nq, ambient), v_bar, tau_bar and ctrl_bar (nu;
/// untouched when ctrl is empty); the accelerometer's through step_vjp (double only when the contact
/// model is PGS or Ipm, as step_vjp). Touch readings are not differentiated (their contact forces
/// come out of the contact solver, whose adjoint step_vjp keeps inside): a non-zero adjoint of a touch
/// reading throws ArgumentError saying so.
template <class S>
void step_sensor_readings_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                              const VecRef<S>& tau, const VecRef<S>& ctrl, const NoDeduce<S>& dt,
                              Integrator integrator, const VecRef<S>& readings_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                              VecOut<S> tau_bar, VecOut<S> ctrl_bar);

}  // namespace gradyn
