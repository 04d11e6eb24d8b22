// Reverse mode of the interior-point contact (contact/ipm_contact.hpp): v+ = x, the solution of the
// mixed LCP  M x + G^T z = -q,  G x + F z + s = m,  s, z >= 0,  s.z = kappa  with
//   q = -M v_free,  G = -J_hat (the normal and N friction-direction rows, 0 for gamma, then the
//   joint-limit rows J_l),  F = [-cfm I 0 0 0; 0 -cfm I -E 0; -mu E^T 0 0; 0 0 0 -cfm I],
//   m = [-target; 0; 0; -target_l],  v_free = v + dt a_free.
//
// The LCP's adjoint is paper 000's Eq. 3 (mixed_lcp_vjp, contact/lcp_ipm.hpp): with
// [lambda_x; lambda_s] = K^-T [v+_bar; 0] (K factored at the solution by the forward solve),
//   q_bar = -lambda_x,  m_bar = lambda_s,  M_bar = -lambda_x x^T,  G_bar = -(lambda_s x^T + z lambda_x^T),
//   F_bar = -lambda_s z^T.
// Through the assembly:
//   M  (crba at q, armature included): in M x and in q = -M v_free, together -lambda_x^T dM (x - v_free),
//      one bilinear form (two mass_quadratic_vjp by polarisation); v_free_bar = M lambda_x.
//   J  the basis rows (normal, tangent1, tangent2 per contact; friction row j is cos_j J_t1 + sin_j J_t2):
//      J_bar = a1 x^T + a2 lambda_x^T with a1_b = sum_rows coef lambda_s, a2_b = sum_rows coef z: two
//      world_velocities passes and their adjoints to the contact geometry and the body poses.
//   J_l (side r_k on the joint's columns): J_l_bar = lambda_s x^T + z lambda_x^T, which reaches q only
//      through a planar joint's angle (its x and y rows turn with it).
//   mu_k: lambda_s[gamma_k] z[lambda_n,k] (to the geom whose friction the pair took);  cfm: sum over
//      normal, friction and limit rows of lambda_s z.
//   target_l (-m): Baumgarte erp / dt (-g - slop) -> q_k, erp, slop; a limit not yet reached, -g / dt
//      -> q_k; none when violated within the slop.
//   target (-m): the branch the forward took: Baumgarte erp / dt (depth - slop) -> depth, erp, slop;
//      restitution -e J_n v -> e (the geom it came from), v and J_n; a gap, depth / dt -> depth (plus
//      the restitution term when it closes at a bouncing speed); an inert row (J_n = 0) none.
// Then the contact geometry's adjoint goes through collide_vjp, all pose adjoints through
// body_poses_vjp. The contact set, the active limits, the inert rows and the target branches are held
// fixed (discrete choices made on values). Exact at the returned point when the solve converged with kappa > 0, or
// with kappa = 0 at a strictly complementary solution; at a degenerate one (a contact exactly at the
// switch between sticking and sliding, or touching without load) it is one of the one-sided
// derivatives, and kappa > 0 smooths it. A sticking contact at kappa = 0 is degenerate too: its N
// direction impulses beta are not unique (only the friction force they add up to is). v+ and its
// derivatives are unique, but cfm's adjoint (cfm multiplies beta) depends at cfm = 0 on the
// decomposition the solver returned; cfm > 0 or kappa > 0 makes it unique. Double only.
#pragma once

#include "gradyn/dynamics/kinematics.hpp"
#include "gradyn/model/params.hpp"

namespace gradyn {

/// Adjoint of ipm_contact_velocity given v_next_bar: accumulates q_bar (nq, ambient), v_bar,
/// a_free_bar and model_bar (inertias and armature through M, joint placements and axes through the
/// Jacobians and poses, geom sizes, placements, friction and restitution, contact.erp, slop, cfm,
/// through the contact and the joint-limit rows).
/// Needs ipm_contact_velocity(q, v, a_free, dt) to be the last contact call on data (its LCP, solution
/// and LU at the solution are reused), after forward_dynamics at q. Allocates only when the contact
/// count changed since the last call. double only: forward mode through the
/// interior-point step is exact already (ipm_contact_velocity propagates ADScalar derivatives implicitly).
void ipm_contact_velocity_vjp(const Model& model, Data& data, const VecRef<double>& q, const VecRef<double>& v,
                              double dt, const VecRef<double>& v_next_bar, VecOut<double> q_bar, VecOut<double> v_bar,
                              VecOut<double> a_free_bar, ModelTangent& model_bar);

}  // namespace gradyn
