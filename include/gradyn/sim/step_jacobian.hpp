// The analytical Jacobian of one step, for planners (iLQR), linearisation and sensitivity
// analysis: the derivatives of the next state with respect to the state and the joint torques,
// all in one call, at the cost of a few dynamics passes (rnea_derivatives.hpp) instead of one
// pass per direction (finite differences, or one step_vjp per output).
//
// Coordinates: the state is (dq, v) with dq a tangent vector at q (q (+) dq, integrate.hpp),
// the same at the next state, so A is 2nv x 2nv whatever quaternions q holds:
//   [dq+; dv+] = A [dq; dv] + B dtau + B_ctrl dctrl,   B: 2nv x nv,  B_ctrl: 2nv x nu.
// Scope: semi-implicit Euler (RK4 is refused with ArgumentError; step_vjp differentiates it), with
// every contact model: penalty forces through their force law (contact/penalty_jacobian.hpp), PGS
// and interior-point impulses through the solver's conditions at its solution
// (contact/impulse_jacobian.hpp). Where a contact appears, an active set changes or a force is
// clamped the step is not differentiable; this is the derivative of the branch the forward step took.
#pragma once

#include "gradyn/sim/step.hpp"

namespace gradyn {

/// A (2nv x 2nv), B (2nv x nv) and B_ctrl (2nv x nu: the derivatives with respect to the
/// actuators' controls ctrl; pass an empty matrix to skip them), overwritten, at the step under
/// (tau, ctrl) (ctrl: nu entries, or empty: every control zero; the actuators' dependence on q and
/// v is in A). Also leaves the step's results in data as step() would (poses, contacts,
/// accelerations). Its workspace is in data (preallocated).
void step_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                   const VecRef<double>& tau, const VecRef<double>& ctrl, double dt, Integrator integrator,
                   Eigen::Ref<Eigen::MatrixXd> A, Eigen::Ref<Eigen::MatrixXd> B, Eigen::Ref<Eigen::MatrixXd> B_ctrl);
/// step_jacobian with every control zero and no control Jacobian.
inline void step_jacobian(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                          const VecRef<double>& tau, double dt, Integrator integrator, Eigen::Ref<Eigen::MatrixXd> A,
                          Eigen::Ref<Eigen::MatrixXd> B) {
  Eigen::MatrixXd none;
  step_jacobian(model, data, q, v, tau, Eigen::VectorXd(), dt, integrator, A, B, none);
}

}  // namespace gradyn
