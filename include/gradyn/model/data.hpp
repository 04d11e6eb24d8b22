// Data: the workspace of the algorithms for one Model. Allocated once by the constructor; after
// that no algorithm allocates, except where a contact step needs an LCP of a new shape: the PGS
// problem's storage grows when a step has more rows than every step before it, and the
// interior-point problem and the PGS adjoint's buffers are re-sized when the row count changes
// (contacts or limit rows appearing or vanishing; tests/sim/test_step_allocations.cpp checks the
// rest). Each field says which algorithm fills it and in which frame.
#pragma once

#include <algorithm>
#include <cstdint>
#include <Eigen/Cholesky>
#include <vector>

#include "gradyn/contact/detail/symmetric_eigen.hpp"
#include "gradyn/contact/lcp_ipm.hpp"
#include "gradyn/contact/pgs.hpp"
#include "gradyn/model/model.hpp"

namespace gradyn {

/// Numerical trouble is reported here, never thrown (it must not abort a batch).
enum StatusFlag : std::uint32_t {
  kStatusOk = 0,
  kStatusNonFinite = 1u << 0,      // a NaN or inf appeared in the state a step returned
  kStatusSingularInertia = 1u << 1,  // a joint's articulated inertia (aba) or M (step_jacobian) was not invertible
  kStatusContactOverflow = 1u << 2,  // collide() found more contacts than Data::contacts holds
  kStatusBroadphaseOverflow = 1u << 3,  // more overlapping AABB pairs than Data::broadphase_pairs holds
  kStatusSolverNotConverged = 1u << 4,  // a contact solver (PGS, interior point) stopped before its tolerance
  kStatusDeepPenetration = 1u << 5,     // a contact is deeper than ContactSettings::max_penetration
};

template <class S>
struct DataTpl {
  using Scalar = S;
  using Matrix6XS = Matrix6X<S>;
  using MatrixDof = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
  using VectorDof = Eigen::Matrix<S, Eigen::Dynamic, 1, 0, 6, 1>;

  explicit DataTpl(const ModelTpl<S>& model);

  // kinematics (forward_kinematics, and every dynamics pass)
  std::vector<Pose<S>> liMi;      // body pose in its parent body frame
  std::vector<Pose<S>> oMi;       // body pose in the world
  std::vector<Vector6<S>> v;      // body spatial velocity, body frame (forward_kinematics with v)
  std::vector<Matrix6XS> joint_S; // joint motion subspace, body frame (constant; filled at construction)
  std::vector<Pose<S>> oMf;       // frame poses in the world (update_frames)

  // ABA and CRBA work in the world frame, about the world origin, so that no articulated or
  // composite inertia has to be carried from child to parent frame (Pinocchio's trick).
  std::vector<Matrix6XS> oS;      // joint motion subspace, world frame
  std::vector<Vector6<S>> ov;     // body spatial velocity, world frame (aba)
  std::vector<Vector6<S>> oa;     // body spatial acceleration, world frame, gravity included (aba)
  std::vector<Vector6<S>> oc;     // velocity-product acceleration ov x (oS qd) (aba)
  std::vector<Matrix6<S>> oI;     // rigid-body inertia, world frame (aba)

  // RNEA (body frame: cheaper than world frame when no inertia has to be carried up)
  std::vector<Vector6<S>> a;      // body spatial acceleration, body frame, gravity included
  std::vector<Vector6<S>> f;      // force transmitted by the joint into the body, body frame
  VectorX<S> tau;                 // rnea output (size nv)

  // ABA
  std::vector<Matrix6<S>> oIa;    // articulated inertia, world frame (after aba: the apparent inertia
                                  // the parent sees through the joint, Ia - U D^-1 U^T)
  std::vector<Vector6<S>> opA;    // articulated bias force, world frame
  std::vector<Matrix6XS> U;       // oIa oS
  std::vector<MatrixDof> Dinv;    // (S^T Ia S + armature)^-1
  std::vector<VectorDof> u;       // tau - S^T pA
  VectorX<S> ddq;                 // aba output (size nv)

  // CRBA
  std::vector<Matrix6<S>> oIc;    // composite rigid-body inertia, world frame
  MatrixX<S> M;                   // joint-space inertia matrix (crba output, both triangles; entries of
                                  // joints on different branches are zero from construction: keep them so)

  // forces and passive terms
  VectorX<S> tau_passive;         // -damping v - stiffness (q (-) q_rest)
  VectorX<S> tau_total;           // tau + tau_passive (forward_dynamics)

  // integration workspace (step)
  VectorX<S> q_tmp, v_tmp, dv_tmp, k_q[4], k_v[4];

  // --- adjoint workspace (rnea_vjp, aba_vjp, minv_solve, passive_forces_vjp) ---------------------
  std::vector<Pose<S>> joint_M;      // child frame in the joint frame: the joint transform (rnea_vjp)
  std::vector<Vector6<S>> adj_v;     // adjoint of v (body frame)
  std::vector<Vector6<S>> adj_a;     // adjoint of a (body frame)
  std::vector<Vector6<S>> adj_f;     // adjoint of the force the joint transmits, f (body frame)
  std::vector<Vector6<S>> minv_pA;   // minv_solve: bias forces (world frame)
  std::vector<Vector6<S>> minv_a;    // minv_solve: accelerations (world frame)
  std::vector<VectorDof> minv_u;     // minv_solve: b - S^T pA per joint
  VectorX<S> adj_mu;                 // aba_vjp: M^-1 ddq_bar (= tau_bar of that call)
  VectorX<S> adj_tau;                // aba_vjp: the rnea seed -mu
  VectorX<S> adj_ddq;                // aba_vjp: rnea's a_bar, unused

  // ---- step adjoint workspace (step_vjp, rollout_vjp; src/sim/step_vjp.cpp, rollout_vjp.cpp) ----
  // The forward step recomputed by step_vjp, then the adjoints of its stages. RK4 stage s
  // (1..3) evaluates the dynamics at (step_adj_q[s], step_adj_v[s]) = (q (+) theta_s, v + h k_v[s-1]).
  VectorX<S> step_adj_q[4];              // stage configurations (nq); [0] unused
  VectorX<S> step_adj_v[4];              // stage velocities (nv); [0] unused
  VectorX<S> step_adj_theta[4];          // stage offsets theta_s (nv); [0] unused
  VectorX<S> step_adj_kq[4], step_adj_kv[4];          // stage derivatives (nv)
  VectorX<S> step_adj_kq_bar[4], step_adj_kv_bar[4];  // their adjoints (nv)
  VectorX<S> step_adj_q_bar;             // adjoint of a stage configuration (nq)
  VectorX<S> step_adj_v_bar, step_adj_theta_bar, step_adj_dv;  // (nv)
  // rollout_vjp: the current state, the next one, and the running adjoints of states t+1 and t
  VectorX<S> rollout_adj_q[2], rollout_adj_v[2];       // (nq), (nv)
  VectorX<S> rollout_adj_tau;                          // (nv)
  VectorX<S> rollout_adj_lambda_q[2], rollout_adj_lambda_v[2];
  long long rollout_adj_forward_steps = 0;  // forward steps the last rollout_vjp recomputed
  std::vector<double> rollout_adj_norms;    // 2-norm of each state's adjoint, before clipping (T + 1)
  long long rollout_adj_clipped = 0;        // states whose adjoint CheckpointOptions::clip_norm scaled
  // ---- end of step adjoint workspace ----

  // ---- collision (collide; src/collision/) ----
  std::vector<Pose<S>> oMg;                  // geom poses in the world
  std::vector<Eigen::Vector3d> geom_aabb_min, geom_aabb_max;  // world AABBs, margin included (double:
                                                              // the broadphase is a discrete choice)
  std::vector<int> sweep_order;              // geoms sorted by AABB min x (kept between calls: re-sorting
                                             // an almost sorted list is linear)
  std::vector<std::pair<int, int>> broadphase_pairs;  // capacity fixed at construction
  int nbroadphase_pairs = 0;
  std::vector<ContactTpl<S>> contacts;       // capacity fixed at construction (model.max_contacts)
  int ncontacts = 0;                         // contacts[0, ncontacts) are valid

  // ---- contact (penalty_contact_forces; src/contact/penalty.cpp) ----
  std::vector<Vector3<S>> contact_force;     // per contact: world force on geom b (geom a gets its opposite)
  std::vector<Vector6<S>> contact_body_force;  // per body: external spatial force, world frame, about the world origin
  std::vector<Vector6<S>> contact_subtree_force;  // the sum of contact_body_force over each body's subtree
  VectorX<S> contact_tau;                    // generalized contact forces J^T f (nv), plus the penalty
                                             // joint-limit forces after contact_generalized_forces
  VectorX<S> contact_tau_total;              // tau + contact_tau, the input step() hands to forward_dynamics (nv)
  // ---- velocity-level contact (ContactModel::Pgs; src/contact/pgs_contact.cpp) ----
  // Rows (pgs_contact.hpp): per contact one normal row then two two-sided friction rows (tangent1,
  // tangent2), rows [0, 3 pgs_ncontacts); then one row per active joint limit, rows
  // [3 pgs_ncontacts, pgs_problem.rows). Every buffer is capacity-sized: the leading rows are current.
  MatrixX<S> pgs_JT;          // J^T, nv x (3 contacts.size() + pgs_limit_coord.size()); leading pgs_problem.rows columns
  MatrixX<S> pgs_MinvJT;      // M^-1 J^T, same shape
  BoxedLcpTpl<S> pgs_problem; // pgs_problem.rows rows in use (0: none last step); the storage grows (allocates)
                              // only when a step needs more rows than every step before it
  PgsWorkspaceTpl<S> pgs_workspace;
  VectorX<S> pgs_lambda;      // impulses of the last step [N s]: leading pgs_problem.rows entries
  VectorX<S> pgs_warm_start;  // what that solve started from: leading pgs_problem.rows entries
  int pgs_ncontacts = 0;      // contacts of the last step
  int pgs_nlimits = 0;        // limit rows of the last step
  std::vector<int> pgs_limit_coord;  // per limit row: its coordinate in q (capacity: 2 per limitable coordinate)
  std::vector<int> pgs_limit_side;   // per limit row: +1 lower limit (J = +r_k), -1 upper limit (J = -r_k)
  // Warm start memory, keyed by geom pair and point (contacts) and by coordinate and side (limits).
  std::vector<std::pair<int, int>> pgs_memory_pair;  // per contact of the last step: (geom_a, geom_b)
  std::vector<Vector3<S>> pgs_memory_point;          // its point (world)
  std::vector<Vector3<S>> pgs_memory_impulse;        // its impulse on geom b (world) [N s]
  int pgs_memory_ncontacts = 0;
  VectorX<S> pgs_memory_limit;  // 2 nq: impulse of the lower (2k) and upper (2k + 1) limit of coordinate k, 0 if none
  PgsResult pgs_result;       // the last solve
  VectorX<S> pgs_v_free;      // v + dt a_free (nv)
  VectorX<S> pgs_column;      // scratch (nv)
  // ---- end of velocity-level contact ----

  // ---- interior-point contact (ContactModel::Ipm; src/contact/ipm_contact.cpp) ----
  // The mixed LCP of paper 000 (docs/references.md) per step; z = [lambda_n (nc); beta (N nc); gamma (nc); joint-limit
  // impulses (ipm_nlimits)], N = contact.ipm_friction_directions. The problem and workspace must have
  // the exact LCP shape: they are re-sized (allocated) only when the contact or limit-row count
  // changes. The solve runs in double; with S = ADScalar the solution's derivatives come from the
  // implicit function theorem (ipm_contact.hpp).
  MatrixX<S> ipm_JT;             // nv x (3 * contacts.size()): per contact the normal, tangent1, tangent2 columns
  MixedLcpTpl<S> ipm_problem;    // the assembled LCP (x = v+, nv unknowns; no equality rows)
  MixedLcp ipm_problem_value;    // its values (used only when S is not double)
  IpmWorkspace ipm_workspace{0, 0, 0};  // solution x, z, s; K factored at it on demand (mixed_lcp_kkt_solve)
  LcpIpmResult ipm_result;       // the last solve
  VectorX<S> ipm_z;              // z of the last step (impulses [N s or N m s] and gamma [m/s]), n_ineq
  int ipm_ncontacts = -1;        // contact count the problem is shaped for (-1: none yet)
  int ipm_nlimits = 0;           // limit rows of the last step (after the contact rows)
  std::vector<int> ipm_limit_coord;  // per limit row: its coordinate in q (as pgs_limit_coord)
  std::vector<int> ipm_limit_side;   // per limit row: +1 lower limit, -1 upper limit
  VectorX<S> ipm_v_free;         // v + dt a_free (nv)
  // per contact: which term set its normal row's target (IpmTargetBranch, contact/ipm_contact.hpp)
  std::vector<std::uint8_t> ipm_target_branch;
  // warm start (opt-in: model.contact.ipm_warm_start, ipm_contact.hpp): a step whose rows are those of
  // the solve ipm_workspace holds starts from its solution; ipm_warm_ncontacts -1: none, or it did not converge
  int ipm_warm_ncontacts = -1;
  std::vector<std::pair<int, int>> ipm_warm_pair;  // per contact: (geom_a, geom_b)
  std::vector<int> ipm_warm_limit_coord, ipm_warm_limit_side;  // per limit row (as ipm_limit_coord / side)
  // adjoint (ipm_contact_velocity_vjp; double only)
  MixedLcp ipm_adj;              // mixed_lcp_vjp's gradient, the LCP's shapes (re-sized with the problem)
  Eigen::VectorXd ipm_adj_row;   // per Jacobian basis row (normal, tangent1, tangent2 of each contact): a weight
  Eigen::VectorXd ipm_adj_v_free_bar, ipm_adj_lambda_x, ipm_adj_column, ipm_adj_scratch;  // (nv)
  Eigen::VectorXd ipm_adj_none;  // empty: the cotangents of z, y, s (only v+ leaves the stage)
  // ---- end of interior-point contact ----

  // ---- contact adjoint workspace (dynamics/kinematics_vjp.hpp, collision/collide_vjp.hpp,
  //      src/contact/*_vjp.cpp) ----
  std::vector<Vector6<S>> adj_pose_bar;      // per body: pose adjoint (a wrench, world frame)
  std::vector<Vector6<S>> adj_ow;            // per body: world velocity under some generalised velocity
  std::vector<Vector6<S>> adj_ow_bar;        // per body: its adjoint
  std::vector<ContactBarTpl<S>> contact_bar; // per contact: adjoint of its point, frame and depth
  VectorX<S> adj_contact_tau_bar;            // (nv) scratch of penalty_contact_forces_vjp
  VectorX<S> adj_stage_tau_bar;              // (nv) step_vjp: adjoint of tau + tau_c
  // pgs_contact_velocity_vjp (double only: the LCP adjoints are)
  VectorX<S> pgs_adj_v_free_bar, pgs_adj_y_bar, pgs_adj_x, pgs_adj_column, pgs_adj_scratch;  // (nv)
  VectorX<S> pgs_adj_lambda_bar, pgs_adj_lambda, pgs_adj_row;  // (rows)
  MatrixX<S> pgs_adj_A_sym;                  // A_bar + A_bar^T, then its half
  detail::SymmetricEigen pgs_adj_eigen;      // of pgs_adj_A_sym
  BoxedLcpAdjoint pgs_adj;
  PgsAdjointWorkspace pgs_adj_workspace;
  PgsWorkspaceTpl<S> pgs_record_workspace;   // the sweeps replayed with their iterates recorded
  // ---- end of contact adjoint workspace ----

  // ---- analytical derivatives (rnea_derivatives, step_jacobian; world frame, about the origin) ----
  std::vector<Matrix6<S>> deriv_Bc;   // subtree sum of B = v x* I - I v x + (I v)-bar (the velocity variation)
  std::vector<Vector6<S>> deriv_Fc;   // subtree sum of the body forces I a + v x* I v
  std::vector<Vector6<S>> deriv_hc;   // subtree sum of the momenta I v
  std::vector<Vector6<S>> deriv_fv;   // per body: the velocity-product force v x* I v
  std::vector<Matrix6XS> deriv_P;     // oIc oS (6 x nv_i)
  std::vector<Matrix6XS> deriv_Q;     // deriv_Bc^T oS
  std::vector<char> deriv_in_subtree; // scratch: body b is in the subtree of the joint being differentiated
  MatrixX<S> deriv_dtau_dx;           // nv x 2nv: [d/dq, d/dv] (tangent) of the forces the step sees
  MatrixX<S> deriv_minv;              // M^-1
  // M = L^T L with L lower triangular and the tree's sparsity (Featherstone's LTL: no fill-in, so
  // L and L^-1 are nonzero only at (dof, ancestor dof) and M^-1 = L^-1 L^-T costs O(nv d^2))
  MatrixX<S> deriv_LT;                // L^T (column k: row k of L, at the dofs on k's path to the root)
  MatrixX<S> deriv_LinvT;             // L^-T (the same pattern)
  // Per dof k, the dofs on its path to the root, k included, as ranges of consecutive dofs in
  // increasing order (a chain of joints is one range): [deriv_path[2 r], deriv_path[2 r + 1]) for
  // r in [deriv_path_begin[k], deriv_path_begin[k + 1]). The last range ends at k + 1.
  std::vector<int> deriv_path_begin, deriv_path;
  std::vector<int> deriv_index_scratch;  // (nv) step_jacobian's scratch: a dof path, a column's nonzero rows
  std::vector<Eigen::Matrix<double, 13, 12>> deriv_contact_jac;  // collide_jacobian's, per contact
  // velocity-level contact (contact/impulse_jacobian.cpp); "rows" are the solver's LCP rows
  std::vector<Vector6<S>> deriv_ov_next;  // per body: world twist at v+
  MatrixX<S> deriv_contact_rate;      // 3 contacts x nv: d(frame_r . u(q, v+))/dq with v+ held (row 3 k + r)
  MatrixX<S> deriv_contact_depth;     // contacts x nv: d depth / dq
  MatrixX<S> deriv_contact_approach;  // contacts x nv: d(normal . u(q, v))/dq with v held (restitution targets)
  MatrixX<S> deriv_impulse_w;         // rows x 3nv: d(J v+ - target) with the impulses held, then d impulses
  MatrixX<S> deriv_impulse_Y;         // pgs: nv x rows, M^-1 J^T then times the response; ipm: nv x m, M^-1 Jr^T
  MatrixX<S> deriv_impulse_S;         // rows x rows: the ipm's Schur complement J M^-1 J^T - F + D, then its LU
  Eigen::VectorXi deriv_impulse_row_order;  // rows of S in the order partial pivoting put them (ipm)
  // ipm: the LCP rows are P times the contact-frame and limit rows Jr (m = 3 contacts + limits rows),
  // row a = coeff(0, a) Jr(index(0, a)) + coeff(1, a) Jr(index(1, a)) (index -1: no term)
  Eigen::Matrix<int, 2, Eigen::Dynamic> deriv_impulse_P_index;
  Eigen::Matrix<double, 2, Eigen::Dynamic> deriv_impulse_P_coeff;
  MatrixX<S> deriv_impulse_JrT;       // nv x m: Jr^T (the contact frames' columns, then the limits')
  MatrixX<S> deriv_impulse_W;         // m x m: Jr M^-1 Jr^T
  MatrixX<S> deriv_impulse_WPt;       // m x rows: W P^T
  MatrixX<S> deriv_impulse_YPS;       // nv x rows: M^-1 Jr^T P^T S^-1
  MatrixX<S> deriv_impulse_X;         // nv x m: -M^-1 Jr^T P^T S^-1 P
  // ---- end of analytical derivatives ----

  std::uint32_t status = kStatusOk;
};

using Data = DataTpl<double>;

template <class S>
DataTpl<S>::DataTpl(const ModelTpl<S>& model) {
  const int nb = model.nbodies();
  liMi.resize(nb);
  oMi.resize(nb);
  v.assign(nb, Vector6<S>::Zero());
  ov.assign(nb, Vector6<S>::Zero());
  oa.assign(nb, Vector6<S>::Zero());
  oc.assign(nb, Vector6<S>::Zero());
  a.assign(nb, Vector6<S>::Zero());
  f.assign(nb, Vector6<S>::Zero());
  oI.assign(nb, Matrix6<S>::Zero());
  oIa.assign(nb, Matrix6<S>::Zero());
  oIc.assign(nb, Matrix6<S>::Zero());
  opA.assign(nb, Vector6<S>::Zero());
  joint_S.resize(nb);
  oS.resize(nb);
  U.resize(nb);
  Dinv.resize(nb);
  u.resize(nb);
  for (int i = 0; i < nb; ++i) {
    const int nvi = model.joint_nv(i);
    joint_S[i] = joint_subspace<S>(model.joint_type[i], model.joint_axis[i]);
    oS[i] = joint_S[i];
    U[i] = Matrix6XS::Zero(6, nvi);
    Dinv[i] = MatrixDof::Zero(nvi, nvi);
    u[i] = VectorDof::Zero(nvi);
  }
  oMf.resize(model.frames.size());
  tau = VectorX<S>::Zero(model.nv);
  ddq = VectorX<S>::Zero(model.nv);
  M = MatrixX<S>::Zero(model.nv, model.nv);
  tau_passive = VectorX<S>::Zero(model.nv);
  tau_total = VectorX<S>::Zero(model.nv);
  q_tmp = VectorX<S>::Zero(model.nq);
  v_tmp = VectorX<S>::Zero(model.nv);
  dv_tmp = VectorX<S>::Zero(model.nv);
  for (int k = 0; k < 4; ++k) {
    k_q[k] = VectorX<S>::Zero(model.nv);
    k_v[k] = VectorX<S>::Zero(model.nv);
  }
  // step adjoint workspace
  for (int k = 0; k < 4; ++k) {
    step_adj_q[k] = VectorX<S>::Zero(model.nq);
    step_adj_v[k] = VectorX<S>::Zero(model.nv);
    step_adj_theta[k] = VectorX<S>::Zero(model.nv);
    step_adj_kq[k] = VectorX<S>::Zero(model.nv);
    step_adj_kv[k] = VectorX<S>::Zero(model.nv);
    step_adj_kq_bar[k] = VectorX<S>::Zero(model.nv);
    step_adj_kv_bar[k] = VectorX<S>::Zero(model.nv);
  }
  step_adj_q_bar = VectorX<S>::Zero(model.nq);
  step_adj_v_bar = VectorX<S>::Zero(model.nv);
  step_adj_theta_bar = VectorX<S>::Zero(model.nv);
  step_adj_dv = VectorX<S>::Zero(model.nv);
  for (int k = 0; k < 2; ++k) {
    rollout_adj_q[k] = VectorX<S>::Zero(model.nq);
    rollout_adj_v[k] = VectorX<S>::Zero(model.nv);
    rollout_adj_lambda_q[k] = VectorX<S>::Zero(model.nq);
    rollout_adj_lambda_v[k] = VectorX<S>::Zero(model.nv);
  }
  rollout_adj_tau = VectorX<S>::Zero(model.nv);
  joint_M.resize(nb);
  adj_v.assign(nb, Vector6<S>::Zero());
  adj_a.assign(nb, Vector6<S>::Zero());
  adj_f.assign(nb, Vector6<S>::Zero());
  minv_pA.assign(nb, Vector6<S>::Zero());
  minv_a.assign(nb, Vector6<S>::Zero());
  minv_u.resize(nb);
  for (int i = 0; i < nb; ++i) minv_u[i] = VectorDof::Zero(model.joint_nv(i));
  adj_mu = VectorX<S>::Zero(model.nv);
  adj_tau = VectorX<S>::Zero(model.nv);
  adj_ddq = VectorX<S>::Zero(model.nv);
  // collision workspace
  const int ng = model.ngeoms();
  oMg.resize(ng);
  geom_aabb_min.assign(ng, Eigen::Vector3d::Zero());
  geom_aabb_max.assign(ng, Eigen::Vector3d::Zero());
  sweep_order.resize(ng);
  for (int g = 0; g < ng; ++g) sweep_order[g] = g;
  broadphase_pairs.resize(std::max(64, std::min(ng * (ng - 1) / 2, 64 * ng)));
  contacts.resize(model.max_contacts > 0 ? model.max_contacts : std::max(32, 8 * ng));
  // contact workspace
  contact_force.assign(contacts.size(), Vector3<S>::Zero());
  contact_body_force.assign(nb, Vector6<S>::Zero());
  contact_subtree_force.assign(nb, Vector6<S>::Zero());
  contact_tau = VectorX<S>::Zero(model.nv);
  contact_tau_total = VectorX<S>::Zero(model.nv);
  int limit_rows = 0;  // two per coordinate of a revolute, continuous, prismatic or planar joint
  for (int i = 0; i < nb; ++i) {
    const JointType t = model.joint_type[i];
    if (t == JointType::Revolute || t == JointType::Continuous || t == JointType::Prismatic || t == JointType::Planar)
      limit_rows += 2 * model.joint_nq(i);
  }
  const int pgs_rows = 3 * static_cast<int>(contacts.size()) + limit_rows;
  pgs_JT = MatrixX<S>::Zero(model.nv, pgs_rows);
  pgs_MinvJT = MatrixX<S>::Zero(model.nv, pgs_rows);
  pgs_limit_coord.assign(limit_rows, -1);
  pgs_limit_side.assign(limit_rows, 0);
  pgs_memory_pair.assign(contacts.size(), {-1, -1});
  pgs_memory_point.assign(contacts.size(), Vector3<S>::Zero());
  pgs_memory_impulse.assign(contacts.size(), Vector3<S>::Zero());
  pgs_memory_limit = VectorX<S>::Zero(2 * model.nq);
  pgs_v_free = VectorX<S>::Zero(model.nv);
  pgs_column = VectorX<S>::Zero(model.nv);
  // interior-point contact
  ipm_JT = MatrixX<S>::Zero(model.nv, 3 * static_cast<Eigen::Index>(contacts.size()));
  ipm_v_free = VectorX<S>::Zero(model.nv);
  ipm_adj_row = Eigen::VectorXd::Zero(3 * static_cast<Eigen::Index>(contacts.size()));
  ipm_adj_v_free_bar = ipm_adj_lambda_x = ipm_adj_column = ipm_adj_scratch = Eigen::VectorXd::Zero(model.nv);
  ipm_target_branch.assign(contacts.size(), 0);
  ipm_limit_coord.assign(limit_rows, -1);
  ipm_limit_side.assign(limit_rows, 0);
  ipm_warm_pair.assign(contacts.size(), {-1, -1});
  ipm_warm_limit_coord.assign(limit_rows, -1);
  ipm_warm_limit_side.assign(limit_rows, 0);
  // contact adjoint workspace
  adj_pose_bar.assign(nb, Vector6<S>::Zero());
  adj_ow.assign(nb, Vector6<S>::Zero());
  adj_ow_bar.assign(nb, Vector6<S>::Zero());
  contact_bar.resize(contacts.size());
  adj_contact_tau_bar = VectorX<S>::Zero(model.nv);
  adj_stage_tau_bar = VectorX<S>::Zero(model.nv);
  for (VectorX<S>* x : {&pgs_adj_v_free_bar, &pgs_adj_y_bar, &pgs_adj_x, &pgs_adj_column, &pgs_adj_scratch})
    *x = VectorX<S>::Zero(model.nv);
  // analytical derivatives
  deriv_Bc.assign(nb, Matrix6<S>::Zero());
  deriv_Fc.assign(nb, Vector6<S>::Zero());
  deriv_hc.assign(nb, Vector6<S>::Zero());
  deriv_fv.assign(nb, Vector6<S>::Zero());
  deriv_P.resize(nb);
  deriv_Q.resize(nb);
  for (int i = 0; i < nb; ++i) deriv_P[i] = deriv_Q[i] = Matrix6XS::Zero(6, model.joint_nv(i));
  deriv_in_subtree.assign(nb, 0);
  deriv_dtau_dx = MatrixX<S>::Zero(model.nv, 2 * model.nv);
  deriv_minv = MatrixX<S>::Zero(model.nv, model.nv);
  deriv_LT = deriv_LinvT = MatrixX<S>::Zero(model.nv, model.nv);  // entries off the tree's pattern stay zero
  {
    std::vector<int> dof_parent(model.nv, -1), path;
    for (int i = 0; i < nb; ++i) {
      int p = model.parent[i];
      while (p >= 0 && model.joint_nv(p) == 0) p = model.parent[p];
      for (int k = 0; k < model.joint_nv(i); ++k)
        dof_parent[model.idx_v[i] + k] =
            k > 0 ? model.idx_v[i] + k - 1 : (p >= 0 ? model.idx_v[p] + model.joint_nv(p) - 1 : -1);
    }
    deriv_path_begin.assign(1, 0);
    deriv_path.clear();
    for (int k = 0; k < model.nv; ++k) {
      path.clear();
      for (int i = k; i != -1; i = dof_parent[i]) path.push_back(i);
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (static_cast<int>(deriv_path.size()) > 2 * deriv_path_begin.back() && deriv_path.back() == *it)
          ++deriv_path.back();
        else
          deriv_path.insert(deriv_path.end(), {*it, *it + 1});
      }
      deriv_path_begin.push_back(static_cast<int>(deriv_path.size()) / 2);
    }
    deriv_index_scratch.assign(model.nv, 0);
  }
  deriv_contact_jac.assign(contacts.size(), Eigen::Matrix<double, 13, 12>::Zero());
  deriv_ov_next.assign(nb, Vector6<S>::Zero());
  deriv_contact_rate = MatrixX<S>::Zero(3 * static_cast<Eigen::Index>(contacts.size()), model.nv);
  deriv_contact_depth = deriv_contact_approach = MatrixX<S>::Zero(static_cast<Eigen::Index>(contacts.size()), model.nv);
  // deriv_impulse_*: sized by their first use (the row count depends on the solver)
}

}  // namespace gradyn
