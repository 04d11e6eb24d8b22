// Actuation: the model's actuators (model.hpp, ActuatorTpl) turned into joint forces, inside every
// step (the accelerations stage, sim/stages.hpp), as MuJoCo's mj_fwdActuation does. For actuator a
// on the 1-DoF joint with entries q[iq], v[iv]:
//
//   u  = clamp(ctrl[a], ctrlrange)                       (when ctrl_limited)
//   L  = gear q[iq],  V = gear v[iv]                     (length and velocity of the transmission)
//   f  = law(u, L, V)                                    (ActuatorKind: affine gain and bias, or the servo)
//   f  = clamp(f, forcerange)                            (when force_limited)
//   tau_actuation[iv] += gear f
//
// A clamp is piecewise linear: where it is active (strictly outside its range) the derivative
// through it is zero and its bound gets the gradient; on the boundary the unclamped branch is taken,
// in the forward pass and in the derivatives alike.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// The actuators' forces under controls ctrl (model.nu() entries, or none: every control zero):
/// data.actuator_force (per actuator, after the clamps) and data.actuation_tau (nv, the
/// generalized forces). Never allocates. Throws ArgumentError for a ctrl of another size.
template <class S>
void actuation(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
               const VecRef<S>& ctrl);

/// Adjoint of actuation given the adjoint of data.actuation_tau: accumulates q_bar (nq), v_bar (nv),
/// ctrl_bar (nu; untouched when ctrl is empty) and the actuator parameters' adjoints in model_bar.
template <class S>
void actuation_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& ctrl,
                   const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> ctrl_bar,
                   ModelTangentTpl<S>& model_bar);

/// Partial derivatives of data.actuation_tau for step_jacobian: adds d tau/d dq and d tau/d v to
/// the left and right halves of dtau_dx (nv x 2nv; an actuator acts on its own DoF only, so it adds
/// to the diagonals) and overwrites dtau_dctrl (nv x nu).
void actuation_derivatives(const Model& model, const VecRef<double>& q, const VecRef<double>& v,
                           const VecRef<double>& ctrl, Eigen::Ref<Eigen::MatrixXd> dtau_dx,
                           Eigen::Ref<Eigen::MatrixXd> dtau_dctrl);

}  // namespace gradyn
