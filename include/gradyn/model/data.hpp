// Data: the workspace of the algorithms for one Model (constructor in src/model/data.cpp). Allocated
// once by the constructor; after
// that no algorithm allocates, except where a contact step needs an LCP of a new shape: the PGS
// problem's storage grows when a step has more rows than every step before it, and the
// interior-point problem and the PGS adjoint's buffers are re-sized when the row count changes
// (contacts or limit rows appearing or vanishing; tests/sim/test_step_allocations.cpp checks the
// rest). Each field says which algorithm fills it and in which frame.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "gradyn/model/model.hpp"

namespace gradyn {

template <class S> struct ModelTangentTpl;  // model/params.hpp

namespace detail {
// An owning pointer whose copies copy what it points to, so that a copy of Data shares nothing with
// the original. T may be incomplete where Data is used: DataTpl's special members, which copy and
// destroy it, are defined where T is complete (src/model/data.cpp).
template <class T>
class DeepPtr {
 public:
  DeepPtr() = default;
  explicit DeepPtr(std::unique_ptr<T> p) : p_(std::move(p)) {}
  DeepPtr(const DeepPtr& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  DeepPtr(DeepPtr&&) noexcept = default;
  DeepPtr& operator=(const DeepPtr& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  DeepPtr& operator=(DeepPtr&&) noexcept = default;
  ~DeepPtr() = default;
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }

 private:
  std::unique_ptr<T> p_;
};

// An owned object of a type this header does not name: a contact model's workspace, declared in a
// header of that model's own (contact/pgs_data.hpp, ipm_data.hpp) so that a change there rebuilds
// only its files. Copies copy the object. The model's typed accessor (pgs_data(data), ...) casts
// back; the slot a model owns is fixed by the registry, so the cast cannot meet another type.
class OpaqueWorkspace {
 public:
  OpaqueWorkspace() = default;
  template <class T>
  explicit OpaqueWorkspace(std::unique_ptr<T> p)
      : p_(p.release(), [](void* x) { delete static_cast<T*>(x); }),
        clone_([](const void* x) -> void* { return new T(*static_cast<const T*>(x)); }) {}
  OpaqueWorkspace(const OpaqueWorkspace& other)
      : p_(other.p_ ? other.clone_(other.p_.get()) : nullptr, other.p_.get_deleter()), clone_(other.clone_) {}
  OpaqueWorkspace(OpaqueWorkspace&&) noexcept = default;
  OpaqueWorkspace& operator=(const OpaqueWorkspace& other) {
    if (this != &other) *this = OpaqueWorkspace(other);
    return *this;
  }
  OpaqueWorkspace& operator=(OpaqueWorkspace&&) noexcept = default;
  ~OpaqueWorkspace() = default;
  template <class T> T& get() { return *static_cast<T*>(p_.get()); }
  template <class T> const T& get() const { return *static_cast<const T*>(p_.get()); }

 private:
  static void delete_nothing(void*) {}
  std::unique_ptr<void, void (*)(void*)> p_{nullptr, &delete_nothing};
  void* (*clone_)(const void*) = nullptr;
};
}  // namespace detail

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
  ~DataTpl();
  DataTpl(const DataTpl&);
  DataTpl(DataTpl&&) noexcept;
  DataTpl& operator=(const DataTpl&);
  DataTpl& operator=(DataTpl&&) noexcept;

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
  std::vector<OriginInertia<S>> oYc;  // composite rigid-body inertia, world frame, in ten numbers (crba)
  std::vector<Matrix6<S>> oIc;    // composite rigid-body inertia, world frame, as a 6x6 (rnea_derivatives)
  MatrixX<S> M;                   // joint-space inertia matrix (crba output, both triangles; entries of
                                  // joints on different branches are zero from construction: keep them so)

  // forces and passive terms
  VectorX<S> tau_passive;         // -damping v - stiffness (q (-) q_rest)
  VectorX<S> tau_total;           // tau + tau_passive (forward_dynamics)

  // actuation (actuation(), in the accelerations stage of every step; dynamics/actuation.hpp)
  VectorX<S> actuator_force;      // per actuator: its scalar force after the clamps (MuJoCo's actuator_force)
  VectorX<S> actuation_tau;       // generalized actuator forces, sum of gear * force per DoF (nv)
  VectorX<S> applied_tau;         // tau + actuation_tau + network_tau: the forces the accelerations stage applies (nv)
  VectorX<S> adj_applied_tau_bar; // (nv) stage_accelerations_vjp: adjoint of applied_tau

  // networks at joint_force sites (network_forces(), in the accelerations stage; dynamics/network_forces.hpp)
  VectorX<S> network_tau;         // their residual generalized forces, summed per DoF (nv)
  std::vector<DenseWorkspaceTpl<S>> network_work;  // per model.networks entry: input, every layer's z and y
  // body_wrench networks (world frame, spatial vectors about the world origin, per body):
  std::vector<Vector6<S>> network_ow;           // spatial velocity, as world_velocities(v) gives it
  std::vector<Vector6<S>> network_body_force;   // the networks' wrenches on the body
  std::vector<Vector6<S>> network_subtree_force;  // the wrenches of the body's subtree (J^T sweep)
  std::vector<Vector6<S>> network_force_bar, network_ow_bar, network_pose_bar;  // network_forces_vjp
  VectorX<S> network_w_bar;                     // network_forces_vjp: an adjoint it does not need (nv)
  // network_forces_derivatives (step_jacobian with body_wrench networks): one adjoint per DoF
  VectorX<S> network_seed, network_q_bar, network_v_bar, network_ctrl_bar, network_dq_bar, network_zero_dq;
  VectorX<S> network_q_unused;  // (nq) integrate_vjp's adjoint of q, not needed
  detail::DeepPtr<ModelTangentTpl<S>> network_tangent;  // the weights' adjoints it does not need

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
  VectorX<S> rollout_adj_ctrl;                         // (nu)
  VectorX<S> rollout_adj_lambda_q[2], rollout_adj_lambda_v[2];
  long long rollout_adj_forward_steps = 0;  // forward steps the last rollout_vjp recomputed
  std::vector<double> rollout_adj_norms;    // 2-norm of each state's adjoint, before clipping (T + 1)
  long long rollout_adj_clipped = 0;        // states whose adjoint CheckpointOptions::clip_norm scaled
  // ---- end of step adjoint workspace ----

  // ---- sensors (sensor_readings, sensor_readings_vjp; sensors/sensors.hpp) ----
  std::vector<Vector6<S>> sensor_ov;        // per body: world spatial velocity about the world origin
  std::vector<Vector6<S>> sensor_oa;        // per body: world spatial acceleration about the origin (no gravity)
  std::vector<Vector6<S>> sensor_ov_bar, sensor_oa_bar, sensor_pose_bar;  // their adjoints, the poses' (wrenches)
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
  // ---- each contact model's own workspace, indexed by ContactModel, made by the model's
  //      make_workspace (contact/contact_models.hpp); declared in a header of the model's own, which
  //      only its files include (a change there rebuilds only them), and read through its accessor:
  //      pgs_data(data) (contact/pgs_data.hpp), ipm_data(data) (contact/ipm_data.hpp) ----
  std::array<detail::OpaqueWorkspace, kContactModelCount> contact_workspaces;

  // ---- contact adjoint workspace (dynamics/kinematics_vjp.hpp, collision/collide_vjp.hpp,
  //      src/contact/*_vjp.cpp) ----
  std::vector<Vector6<S>> adj_pose_bar;      // per body: pose adjoint (a wrench, world frame)
  std::vector<Vector6<S>> adj_ow;            // per body: world velocity under some generalised velocity
  std::vector<Vector6<S>> adj_ow_bar;        // per body: its adjoint
  std::vector<ContactBarTpl<S>> contact_bar; // per contact: adjoint of its point, frame and depth
  VectorX<S> adj_contact_tau_bar;            // (nv) scratch of penalty_contact_forces_vjp
  VectorX<S> adj_stage_tau_bar;              // (nv) step_vjp: adjoint of tau + tau_c
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
  MatrixX<S> deriv_dtau_dctrl;        // nv x nu: d tau_actuation / d ctrl
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
  VectorX<S> deriv_limit_tangent;     // (nv) a limit row's q derivative in the tangent space
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

}  // namespace gradyn
