// Reverse mode of the penalty contact model (contact/penalty.hpp): the adjoint of the generalised
// contact forces tau_c(q, v, model) = sum_c J_c(q)^T f_c. Exact wherever the contact set and the
// branches of the force law (f_n > 0 or clamped at 0, contact present or not) do not change.
//
// Reverse, with w = tau_c_bar:
//   J^T f part   sum_i W_i . ow_i(q; w) with the body wrenches W held fixed gives the adjoint of the
//                Jacobians (world_velocities_vjp with ow_bar = W); the wrench of force f at point p
//                on body b, W_b = [p x f; f], gives f_bar = ow_b(p) (the velocity of the contact point
//                under w, relative to the other body) and p_bar = f x (omega_b - omega_a).
//   force law    f = f_n n + f_t(mu, f_n, u_t): Hunt-Crossley and the friction laws reversed by hand,
//                to the depth, the normal, the relative point velocity u, mu and the contact settings.
//   velocities   u = ov_b(p) - ov_a(p) -> world velocity adjoints -> (v_bar, pose adjoints).
//   geometry     (point, normal, depth) adjoints -> collide_vjp -> pose and geom adjoints.
//   poses        body_poses_vjp -> q_bar, model_bar.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// Adjoint of penalty_contact_forces given tau_c_bar (nv). Needs, current in data: the contacts of
/// contact_generalized_forces(q, v) and the world kinematics of aba/forward_dynamics at (q, v)
/// (data.oMi, oS, ov). Accumulates q_bar (nq, ambient), v_bar and model_bar (geoms, contact settings,
/// placements, axes). Does not touch the forward results in data. Never allocates.
template <class S>
void penalty_contact_forces_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                                const VecRef<S>& tau_c_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                                ModelTangentTpl<S>& model_bar);

/// Adjoint of the friction law friction_force(settings, mu, f_n, u_t) given the adjoint of its result:
/// accumulates mu_bar, fn_bar, ut_bar and the settings adjoints (velocity_scale, static_friction_ratio,
/// viscous_friction) into settings_bar.
template <class S>
void friction_force_vjp(const ContactSettings& settings, const S& mu, const S& normal_force,
                        const Vector3<S>& tangential_velocity, const Vector3<S>& f_bar, S& mu_bar, S& fn_bar,
                        Vector3<S>& ut_bar, typename ModelTangentTpl<S>::ContactSettingsBar& settings_bar);

}  // namespace gradyn
