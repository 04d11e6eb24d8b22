// Joint limits (model.lower_limit / model.upper_limit, one pair per coordinate of q) as one-sided
// constraints, for the contact models of step().
//
// Which coordinates: those of revolute, continuous, prismatic and planar joints (an angle or a
// displacement each). Limits on the coordinates of free and spherical joints (positions, quaternion
// components) are ignored; -inf / inf means no limit.
// Per limit, with side s = +1 for a lower limit and s = -1 for an upper one:
//   gap       g = s (q_k - bound)              (> 0 inside the range, < 0 violated)
//   gap rate  g_dot = s qdot_k,   qdot_k = r_k . v_j  (v_j: the joint's entries of v)
//   rate row  r_k = 1 for a scalar joint; planar joint (q = x, y, theta; v = vx, vy, wz in the child
//             frame): x: (cos theta, -sin theta, 0), y: (sin theta, cos theta, 0), theta: (0, 0, 1).
// So the limit's Jacobian row (1 x nv) is s r_k on the joint's columns: +e_k for a lower limit of a
// scalar joint, -e_k for an upper one.
// Fixed tendons (model.tendons, model.hpp's FixedTendon) are limited the same way: their lengths are
// the limit coordinates after q's (coordinate nq + t for tendon t, limit_coordinates() in all), with
//   gap       g = s (L_t(q) - bound),   g_dot = s J_t v,   J_t = coefs on the tendon's DoFs (constant).
//
// Per contact model (ContactSettings::model):
//   None:    limits are not enforced. step() then stays the plain articulated dynamics the smooth
//            gradients (step_vjp, rollout_vjp) differentiate, and the validated comparisons with
//            Pinocchio and MuJoCo (whose models carry limits) keep holding. Pick a contact model to
//            enforce them.
//   Penalty: a one-sided linear spring-damper on the violation d = -g, added to the generalised
//            forces of every forces stage (contact_generalized_forces):
//              f = max(0, limit_stiffness d + limit_damping d_dot)  while d > 0,   tau_j += s f r_k
//            (a tendon: tau += s f J_t).
//            Explicit like the contact forces: stable for dt < 2 / omega, omega^2 = limit_stiffness /
//            I_eff, and dt < 2 I_eff / limit_damping (I_eff = 1 / (M^-1)_kk, the inertia the joint
//            moves); the static violation under a load torque T is T / limit_stiffness.
//   Pgs, Ipm: one unilateral row per active limit in the velocity-level LCP (pgs_contact.hpp,
//            ipm_contact.hpp), built by the helpers below so that both models pick the same rows with
//            the same targets:
//              active    when min(g, g + dt r_k . v_free) < limit_margin (nearly or already violated, or
//                        about to be crossed by the free motion v_free = v + dt a_free);
//              row       J = s r_k on the joint's columns; the row's rate after the step J v+ must reach
//              target    erp / dt * max(-g - slop, 0)  when violated (g < 0): Baumgarte as for contacts,
//                                                       no restitution;
//                        -g / dt                        when g >= 0: the gap may close within the step,
//                                                       not be crossed (no sticking short of the limit);
//              impulse   lambda >= 0 along the row (N m s or N s), cfm as on the contact rows.
#pragma once

#include <vector>

#include "gradyn/autodiff.hpp"

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/dynamics/tendon.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// Limit coordinates: the nq coordinates of q, then one length per fixed tendon.
template <class S>
int limit_coordinates(const ModelTpl<S>& model) {
  return model.nq + static_cast<int>(model.tendons.size());
}

/// Body and index within its joint of coordinate iq of q (body -1 when no joint owns it, as for a
/// tendon's coordinate, iq >= nq).
template <class S>
void limit_coordinate_owner(const ModelTpl<S>& model, int iq, int& body, int& k) {
  body = -1, k = 0;
  if (iq >= model.nq) return;
  for (int i = 0; i < model.nbodies(); ++i)
    if (iq >= model.idx_q[i] && iq < model.idx_q[i] + model.joint_nq(i)) body = i, k = iq - model.idx_q[i];
}

/// Adds w d(value of limit coordinate coord)/dq to a q-sized vector: w at coord for a coordinate of
/// q, w coefs[i] at the tendon's joints for a tendon.
template <class S>
void add_limit_coordinate_gradient(const ModelTpl<S>& model, int coord, const S& w, VecOut<S> q_vector) {
  if (coord < model.nq) {
    q_vector[coord] += w;
    return;
  }
  const FixedTendon& tendon = model.tendons[static_cast<size_t>(coord - model.nq)];
  for (size_t i = 0; i < tendon.joints.size(); ++i) q_vector[model.idx_q[tendon.joints[i]]] += w * tendon.coefs[i];
}

/// Rate row of coordinate `coordinate` (index within the joint's q entries) of joint `body` at
/// configuration q: qdot_k = r . v.segment(idx_v[body], joint_nv(body)) (unused entries 0).
template <class S>
Vector3<S> joint_limit_rate_row(const ModelTpl<S>& model, int body, int coordinate, const VecRef<S>& q);

/// Adds (+=) the penalty joint-limit forces at (q, v) to tau (size nv). Never allocates.
template <class S>
void add_joint_limit_forces(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v, VecOut<S> tau);

/// Adjoint of add_joint_limit_forces: accumulates (+=) q_bar (nq; a planar joint's theta through its
/// rate rows) and v_bar (nv) given tau_bar. The limits, limit_stiffness and limit_damping are not
/// parameters (params.hpp). The branches (violated or not, force clamped at 0 or not) are the
/// forward pass's. Never allocates.
template <class S>
void add_joint_limit_forces_vjp(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v,
                                const VecRef<S>& tau_bar, VecOut<S> q_bar, VecOut<S> v_bar);

// ---- limit rows of the velocity-level models (Pgs, Ipm) ----

/// Picks the active limit rows at q for the free velocity v_free (on values: a discrete choice). Row l
/// is the limit of coordinate coord[l] (its index in q, or nq + t for tendon t) on side side[l] (+1
/// lower, -1 upper), by coordinate, a lower limit before an upper one. coord and side must hold 2
/// entries per limitable coordinate and tendon (Data sizes them so). Returns the row count. Never
/// allocates.
template <class S>
int select_joint_limit_rows(const ModelTpl<S>& model, const VecRef<S>& q, const VecRef<S>& v_free, double dt,
                            std::vector<int>& coord, std::vector<int>& side);

/// Calls visit(dof, value) for each entry of the Jacobian row (1 x nv) of the limit of coordinate
/// `coord` on `side` at q: side r_k on a joint's DoFs (zeros of a planar joint's row included),
/// side coefs on a tendon's DoFs.
template <class S, class Visit>
void for_each_limit_row_entry(const ModelTpl<S>& model, const VecRef<S>& q, int coord, int side, Visit&& visit) {
  if (coord >= model.nq) {
    const FixedTendon& tendon = model.tendons[static_cast<size_t>(coord - model.nq)];
    for (size_t i = 0; i < tendon.joints.size(); ++i) visit(model.idx_v[tendon.joints[i]], S(side * tendon.coefs[i]));
    return;
  }
  int body, k;
  limit_coordinate_owner(model, coord, body, k);
  const Vector3<S> r = joint_limit_rate_row<S>(model, body, k, q);
  for (int j = 0; j < model.joint_nv(body); ++j) visit(model.idx_v[body] + j, S(side) * r[j]);
}

/// The rate J v+ the limit row of coordinate `coord` on `side` must reach (the file comment's target).
template <class S>
S joint_limit_target(const ModelTpl<S>& model, const VecRef<S>& q, int coord, int side, const NoDeduce<S>& dt);

/// d joint_limit_target / d (the value of limit coordinate coord: q[coord] or a tendon's length),
/// on the forward's branch (add_limit_coordinate_gradient takes it to q).
double joint_limit_target_slope(const Model& model, const VecRef<double>& q, int coord, int side, double dt);

/// Adjoint of joint_limit_target given target_bar: accumulates q_bar (q_bar[coord], or the tendon's
/// joints) and model_bar.contact.erp
/// and slop (the branch is the forward's, taken again on the same values).
void joint_limit_target_vjp(const Model& model, const VecRef<double>& q, int coord, int side, double dt,
                            double target_bar, VecOut<double> q_bar, ModelTangent& model_bar);

/// Adjoint of the limit row's Jacobian for J_bar += weight z^T (z: a generalised velocity):
/// accumulates q_bar. Only a planar joint's x and y rows depend on q (on its angle theta); a tendon's
/// row is constant.
void joint_limit_jacobian_vjp(const Model& model, const VecRef<double>& q, int coord, int side, double weight,
                              const VecRef<double>& z, VecOut<double> q_bar);

}  // namespace gradyn
