// Dry joint friction (model.frictionloss, per DoF) and joint couplings (model.joint_couplings: MJCF
// <equality><joint>, URDF <mimic>), for the contact models of step(). MuJoCo's semantics, with the
// constraint made stiff (no solref/solimp softness).
//
// Friction of DoF k, bound f_k = frictionloss[k] > 0 [N m | N]: the joint force opposing its motion
// is at most f_k; it holds the joint still while the other forces on it stay below f_k.
// Coupling c (joint1 -> body b1, joint2 -> body b2, 1-DoF joints, coefficients c0..c4):
//   error     g = (q1 - q1_ref) - p(x),  x = q2 - q2_ref,  p(x) = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4
//             (without joint2: g = q1 - q1_ref - c0)
//   Jacobian  J = e_{v1} - p'(x) e_{v2}  (1 x nv; g_dot = J v)
//
// Per contact model (ContactSettings::model):
//   None:    neither is enforced (step() stays the plain articulated dynamics, as for joint limits).
//   Penalty: forces added with the joint-limit forces (contact_generalized_forces):
//              friction  tau_k -= f_k v_k / sqrt(v_k^2 + velocity_scale^2)  (smoothed Coulomb, as the
//                        contact friction: a joint creeps at ~ velocity_scale * load / f_k below the
//                        bound instead of sticking; velocity_scale is read in rad/s or m/s here)
//              coupling  tau -= J^T (limit_stiffness g + limit_damping J v)  (a stiff spring-damper)
//   Pgs, Ipm: rows of the velocity-level LCP after the contact and joint-limit rows, always present:
//              friction  one row per DoF with f_k > 0, in DoF order: J = e_k, rate target 0, impulse
//                        in [-f_k dt, f_k dt] (PGS: a boxed row; Ipm: the 3-row polyhedral cone of one
//                        contact's friction with 2 directions, +-e_k, bound f_k dt instead of mu lambda_n:
//                        beta+, beta- >= 0 with J v+ + gamma >= 0, -J v+ + gamma >= 0 and
//                        f_k dt - beta+ - beta- >= 0, each complementary to its multiplier)
//              coupling  one bilateral row per coupling, after the friction rows, impulse unbounded
//                        (PGS: a row in (-inf, inf); Ipm: an equality row A x = b of the mixed LCP), with
//                        the target J v+ = -erp / dt g + 1/2 dt p''(x) v2^2: Baumgarte on the whole
//                        error (no slop), plus the drift a curved coupling makes within the step
//                        (q+ = q + dt v+ moves along the tangent: g(q+) = g + dt J v+ - 1/2 dt^2 p'' v2^2
//                        to second order, with the pre-step v2 for v2+)
// Gradients: step_vjp differentiates both through every model (the friction bound and the coupling
// coefficients are not parameters of the flat vector). step_jacobian differentiates them under
// Penalty only.
#pragma once

#include "gradyn/autodiff.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// True when step() has dry joint friction or joint couplings to enforce for this model.
template <class S>
bool has_joint_constraints(const ModelTpl<S>& model);

/// DoFs with frictionloss > 0 (one friction row each).
template <class S>
int joint_friction_rows(const ModelTpl<S>& model);

/// Calls visit(row, dof) for each friction row in order (row counts from 0).
template <class S, class Visit>
void for_each_joint_friction_row(const ModelTpl<S>& model, Visit&& visit) {
  int row = 0;
  for (int k = 0; k < static_cast<int>(model.frictionloss.size()); ++k)  // empty: a model built by hand
    if (value_of(model.frictionloss[k]) > 0.0) visit(row++, k);
}

/// Coupling error g at q, and p'(x) into slope (the Jacobian's entry on joint2's DoF is -slope;
/// 0 without joint2).
template <class S>
S joint_coupling_error(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q, S& slope);

/// The rate J v+ a coupling row must reach at (q, v): -erp / dt g + 1/2 dt p''(x) v2^2 (the file
/// comment's target).
template <class S>
S joint_coupling_target(const ModelTpl<S>& model, const JointCoupling& coupling, const VecRef<S>& q,
                        const VecRef<S>& v, const NoDeduce<S>& dt);

/// Adjoint of the coupling row's Jacobian for J_bar += weight z^T (z: a generalised velocity):
/// accumulates q_bar (J depends on q through p'(x) when the polynomial is above first degree).
void joint_coupling_jacobian_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                                 double weight, const VecRef<double>& z, VecOut<double> q_bar);

/// Adjoint of joint_coupling_target given target_bar: accumulates q_bar, v_bar and
/// model_bar.contact.erp.
void joint_coupling_target_vjp(const Model& model, const JointCoupling& coupling, const VecRef<double>& q,
                               const VecRef<double>& v, double dt, double target_bar, VecOut<double> q_bar,
                               VecOut<double> v_bar, ModelTangent& model_bar);

/// Adds (+=) the Penalty model's friction and coupling forces at (q, v) to tau (size nv). Never allocates.
template <class S>
void add_joint_constraint_forces(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, VecOut<S> tau);

/// Adjoint of add_joint_constraint_forces: accumulates (+=) q_bar (nq) and v_bar (nv) given tau_bar.
/// Never allocates.
template <class S>
void add_joint_constraint_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                     const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar);

}  // namespace gradyn
