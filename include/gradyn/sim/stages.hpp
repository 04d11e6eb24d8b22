// The stages of a step, named once. step(), step_vjp() and step_jacobian() all run them in this
// order, and the backward replays exactly what the forward ran (MuJoCo's mj_forward, Box2D's stage
// enum):
//
//   accelerations  actuation (the model's actuators under the controls; dynamics/actuation.hpp),
//                  the networks' residual forces (dynamics/network_forces.hpp), kinematics,
//                  collision and penalty contact forces (ContactModel::Penalty), passive forces,
//                  forward dynamics:
//                    a = M^-1 (tau + tau_actuation + tau_network + tau_contact + tau_passive - C)
//   constraints    velocity-level contact and joint-limit impulses (Pgs, Ipm):  v+ = v + dt a + M^-1 J^T lambda;
//                  without them v+ = v + dt a
//   integrate      q+ = q (+) dt v+  (sim/integrate.hpp)
//
// RK4 evaluates the accelerations stage at each of its four stages (penalty contact or none).
// Each stage raises its own status flags: kStatusDeepPenetration for a contact deeper than
// ContactSettings::max_penetration, kStatusSolverNotConverged from the solvers.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// The accelerations stage at (q, v) under joint torques tau and the actuators' controls ctrl
/// (model.nu() entries, or none: all zero): forward dynamics with the actuator and passive forces
/// and, under penalty contact, the contact and joint-limit forces (collide() runs here).
/// Returns data.ddq.
template <class S>
const VectorX<S>& stage_accelerations(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                      const VecRef<S>& v, const VecRef<S>& tau, const VecRef<S>& ctrl);

namespace detail {
/// The accelerations stage with the actuators' and networks' forces already in tau (the adjoint
/// re-runs this part).
template <class S>
const VectorX<S>& accelerations_under(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                      const VecRef<S>& v, const VecRef<S>& tau);

/// Whether the model adds forces of its own to tau: actuators or joint_force networks.
template <class S>
bool has_applied_forces(const ModelTpl<S>& model) { return model.nu() > 0 || !model.networks.empty(); }

/// data.applied_tau = tau + the actuators' forces + the networks' forces (a model with
/// has_applied_forces; step_jacobian forms the forces as the stage does through this).
template <class S>
void applied_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                    const VecRef<S>& tau, const VecRef<S>& ctrl);
}  // namespace detail

/// Adjoint of stage_accelerations given a_bar: accumulates q_bar (nq, ambient), v_bar, tau_bar,
/// ctrl_bar (nu; untouched when ctrl is empty) and model_bar. stage_is_current:
/// stage_accelerations(q, v, tau, ctrl) was the last call on data.
template <class S>
void stage_accelerations_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                             const VecRef<S>& tau, const VecRef<S>& ctrl, const VectorX<S>& a_bar, VecOut<S> q_bar,
                             VecOut<S> v_bar, VecOut<S> tau_bar, VecOut<S> ctrl_bar, ModelTangentTpl<S>& model_bar,
                             bool stage_is_current);

/// The constraints stage of the semi-implicit Euler step: v_next from (q, v) and the accelerations
/// a of stage_accelerations (the free accelerations under Pgs and Ipm, which collide() and solve
/// their LCP here, with data's kinematics at q). v_next may alias v.
template <class S>
void stage_constraints(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                       const VecRef<S>& a, const NoDeduce<S>& dt, VecOut<S> v_next);

/// Adjoint of stage_constraints under Pgs or Ipm contact given v_next_bar: accumulates q_bar, v_bar,
/// a_bar (the free accelerations') and model_bar. Needs stage_constraints(q, v, a, dt) to be the last
/// contact call on data. The impulses' adjoints are computed in double only (ArgumentError for
/// ADScalar under Pgs and Ipm: forward mode through those steps is exact already).
template <class S>
void stage_constraints_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                           const NoDeduce<S>& dt, const VecRef<S>& v_next_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                           VecOut<S> a_bar, ModelTangentTpl<S>& model_bar);

}  // namespace gradyn
