// Penalty (force-level) contact: each contact collide() reports pushes its two geoms apart with a
// Hunt-Crossley spring-damper and resists sliding with a smoothed friction law (the spring-based
// model of Heiden et al., "NeuralSim", section III). Gradients: penalty_vjp.hpp (reverse mode) and
// penalty_jacobian.hpp (the step Jacobian).
//
// Per contact (normal n from geom a to geom b, depth d > 0 when overlapping):
//   relative velocity   u = v_b(point) - v_a(point)   (world; the world geom has velocity 0)
//   penetration rate    d_dot = -u . n
//   normal force        f_n = max(0, k d^p (1 + c d_dot))  for d > 0, else 0   (Hunt & Crossley 1975)
//   tangential velocity u_t = u - (u . n) n,  s = |u_t|
//   friction            SmoothCoulomb: f_t = -mu f_n u_t / sqrt(s^2 + eps^2)            (eps = velocity_scale)
//                       Brown:         f_t = -(f_n mu_B(s) + mu_v s) u_t / s,  mu_v only while f_n > 0
//                         mu_B(s) = mu tanh(4 s/v_s) + (mu_s - mu) (s/v_s) / ((s/v_s)^2/4 + 3/4)^2
//                         (Brown & McPhee 2016: static peak mu_s at s = v_s, Coulomb mu when sliding)
//   the pair's mu is the larger of the two geoms' friction (MuJoCo's rule).
// Geom b receives f = f_n n + f_t at the contact point, geom a receives -f. Those forces become
// per-body spatial forces (world frame, about the world origin) and then generalized forces
// tau_c = J^T f by one backward pass over the tree.
//
// Time steps: the integrators treat these forces explicitly, so the step must resolve them. The
// normal spring needs dt << 1/omega with omega^2 ~ p k d^(p-1) / m; near rest friction acts as a
// viscous damper of slope mu f_n / velocity_scale, stable only for dt < 2 velocity_scale m_eff /
// (mu f_n) (m_eff: the mass or I/r^2 the contact moves). Beyond that, velocities chatter and the
// mean friction drops (a box "sticking" on an incline then creeps far faster than the
// regularisation's creep speed v with mu v / sqrt(v^2 + eps^2) = tan(theta)).
#pragma once

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// Hunt-Crossley normal force magnitude for penetration depth and its rate (>= 0; 0 when d <= 0).
template <class S>
S hunt_crossley_force(const ContactSettings& settings, const S& depth, const S& depth_rate);

/// Friction force on geom b for the pair's Coulomb coefficient mu, the normal force magnitude and the
/// tangential velocity of b relative to a (world).
template <class S>
Vector3<S> friction_force(const ContactSettings& settings, const S& mu, const S& normal_force,
                          const Vector3<S>& tangential_velocity);

/// Forces of the contacts data.contacts[0, ncontacts) into data.contact_force, data.contact_body_force
/// and data.contact_tau. Needs forward_kinematics(q, v) (data.oMi, data.v) and collide() to be current.
template <class S>
const VectorX<S>& penalty_contact_forces(const ModelTpl<S>& model, DataTpl<S>& data);

/// The whole forces stage: forward_kinematics(q, v), collide(model.contact.margin),
/// penalty_contact_forces, then the penalty joint-limit forces (add_joint_limit_forces,
/// contact/joint_limits.hpp) added to data.contact_tau. Returns data.contact_tau (zero when
/// model.contact.model is None). Never allocates.
template <class S>
const VectorX<S>& contact_generalized_forces(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q,
                                             const VecRef<S>& v);

}  // namespace gradyn
