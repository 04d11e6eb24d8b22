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
//
// Resting on a slope: smoothed Coulomb friction has no stiffness, so a body "sticking" on an
// incline creeps at v = eps tan(theta) / sqrt(mu^2 - tan(theta)^2) (0.7 cm/s for mu = 1 on 30
// degrees, eps = 1 cm/s), and its friction is tan(theta) f_n at every contact: it follows the
// normal force. A box resting on its corners has rocking and hopping modes damped only by the
// Hunt-Crossley term, whose damping ratio at rest is (c/2) sqrt(g d0 / p) (d0 the resting depth).
// Below about 0.07 the friction-normal coupling (the mode-coupling instability of friction
// oscillators, Hoffmann & Gaul 2003) makes those modes grow: the box rocks, hops and walks down
// the slope. With the default c = 1 s/m (ratio 0.035 for a 1 kg box on k = 1e5) a 10 cm, 1 kg cube
// dropped on 30 degrees with mu = 1 travels 0.5 m in a second, tumbling at 10 rad/s, for every eps
// from 1e-3 to 1e-1 and every dt. c = 3 (ratio 0.1 for 1 kg, 0.05 for 0.1 kg, 0.23 for 10 kg) holds
// it: boxes, spheres and capsules on 15-40 degrees then stick (creep as above, at the contact
// point; rolling is not slipping) or slide as MuJoCo's (tests/python/test_penalty_incline.py, at
// dt = 0.5 ms: at 1 ms the friction's viscous slope chatters, creep ~1 cm/s). The default stays 1
// because the damper is explicit too, stable only while dt c f_n / m_eff < 2 (m_eff: the mass the
// contact moves): with c = 2 or 3 MuJoCo's humanoid under random motor commands diverges at its
// dt = 2 ms, with c = 5 a hard-pushed laikago at 1 ms. So: resting on slopes, damping 3 and
// dt <= 0.5 ms; light bodies (0.1 kg) or boxes near their tipping angle after a drop need more.
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
/// and data.contact_tau, with the body connections' spring-dampers (contact/joint_constraints.hpp) in
/// data.contact_body_force and data.contact_tau. Needs forward_kinematics(q, v) (data.oMi, data.v) and
/// collide() to be current.
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
