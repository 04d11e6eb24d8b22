// Time stepping: semi-implicit Euler (the papers' scheme) and RK4. Every step runs the model's
// actuators under the controls it is given (dynamics/actuation.hpp), besides the joint torques tau. With model.contact.model = Penalty every
// dynamics evaluation (each RK4 stage) first runs collide() and adds the penalty contact forces
// (contact/penalty.hpp). With Pgs or Ipm the semi-implicit Euler step adds velocity-level contact impulses
// after the free-motion accelerations (contact/pgs_contact.hpp, contact/ipm_contact.hpp); RK4 throws
// ArgumentError for them. The adjoints (step_vjp, rollout_vjp) follow every contact model: penalty
// (contact/penalty_vjp.hpp), PGS (contact/pgs_contact_vjp.hpp) and Ipm (contact/ipm_contact_vjp.hpp),
// the last two for semi-implicit Euler and double only.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

enum class Integrator : std::uint8_t {
  SemiImplicitEuler,  // v+ = v + dt a(q, v);  q+ = q (+) dt v+
  RK4,                // classical Runge-Kutta on (q, v); stages move q on the manifold
};

/// How a step advances time: its length and its integrator. Every step function checks these with
/// check_step_options before it runs (the Python bindings call the same check).
struct StepOptions {
  double dt = 0.0;  // [s]: positive and finite
  Integrator integrator = Integrator::SemiImplicitEuler;
};

/// The integrator's name as the Python API spells it ("euler", "rk4").
const char* integrator_name(Integrator integrator);

/// Throws ArgumentError, saying what was passed and what to pass instead, unless options.dt is
/// positive and finite and the integrator suits the contact model: PGS and interior-point contact
/// impulses are defined for the semi-implicit Euler step, not for RK4's intermediate stages.
void check_step_options(const ContactSettings& contact, const StepOptions& options);

/// Throws ArgumentError naming the expected and the actual shape unless a rollout's controls are
/// empty (0 x 0: every control zero) or T x nu.
void check_controls_shape(int nu, Eigen::Index rows, Eigen::Index cols, Eigen::Index T);

/// One step from (q, v) under joint torques tau and the actuators' controls ctrl (model.nu()
/// entries: dynamics/actuation.hpp; an empty ctrl means every control is zero). q_next/v_next may
/// alias q/v. Allocates nothing, except with PGS or Ipm contact when the number of contacts changes
/// (the LCP is resized). Sets kStatusNonFinite in data.status when the new state is not finite
/// (never throws for it).
template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next);
/// step with every control zero (a model without actuators needs no ctrl).
template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next) {
  step<S>(model, data, q, v, tau, VectorX<S>(), dt, integrator, q_next, v_next);
}

template <class S> using RowsRef = Eigen::Ref<const MatrixXr<NoDeduce<S>>>;  // one row per step
template <class S> using RowsOut = Eigen::Ref<MatrixXr<NoDeduce<S>>>;

/// T steps from (q0, v0) with taus (T x nv, one row per step, row-major like NumPy) and ctrls
/// (T x nu, or empty: every control zero). Fills qs ((T+1) x nq) and vs ((T+1) x nv), the initial
/// state in row 0. step_status: empty, or T entries, entry t set to the StatusFlag bits step t
/// raised (which step went wrong); data.status gathers them either way.
template <class S>
void rollout(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
             const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
             MatrixXr<NoDeduce<S>>& qs, MatrixXr<NoDeduce<S>>& vs, std::span<std::uint32_t> step_status = {});
/// rollout into arrays the caller sized: qs ((T+1) x nq) and vs ((T+1) x nv), e.g. one world's rows
/// of a batch (sim/batch.hpp). The same numbers as rollout.
template <class S>
void rollout_into(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                  const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
                  RowsOut<S> qs, RowsOut<S> vs, std::span<std::uint32_t> step_status = {});
/// rollout with every control zero.
template <class S>
void rollout(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
             const RowsRef<S>& taus, const NoDeduce<S>& dt, Integrator integrator, MatrixXr<NoDeduce<S>>& qs,
             MatrixXr<NoDeduce<S>>& vs, std::span<std::uint32_t> step_status = {}) {
  rollout<S>(model, data, q0, v0, taus, MatrixXr<S>(), dt, integrator, qs, vs, step_status);
}

/// Adjoint of step: given the adjoints of (q_next, v_next), accumulates those of q (nq, ambient),
/// v, tau, ctrl (ctrl_bar: nu entries; untouched when ctrl is empty) and the model parameters.
/// Recomputes the forward step from (q, v, tau, ctrl) itself.
template <class S>
void step_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
              const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator, const VecRef<S>& q_next_bar,
              const VecRef<S>& v_next_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar, VecOut<S> ctrl_bar,
              ModelTangentTpl<S>& model_bar);
/// step_vjp with every control zero.
template <class S>
void step_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
              const NoDeduce<S>& dt, Integrator integrator, const VecRef<S>& q_next_bar, const VecRef<S>& v_next_bar,
              VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar) {
  VectorX<S> no_ctrl;
  step_vjp<S>(model, data, q, v, tau, no_ctrl, dt, integrator, q_next_bar, v_next_bar, q_bar, v_bar, tau_bar, no_ctrl,
              model_bar);
}

/// Options of rollout_vjp: how it keeps the forward trajectory, and what it does with the adjoint
/// of each state on the way back (the per-step report and clipping hook for exploding gradients).
struct CheckpointOptions {
  // 0: keep (q, v) of every step (the default; (nq + nv) doubles per step). k > 0: keep at most k
  // states and recompute the rest (binomial "revolve" checkpointing), for very long horizons.
  int max_snapshots = 0;
  // > 0: whenever the adjoint of a state, lambda_t = (q_bar_t, v_bar_t), has a 2-norm above this,
  // scale it down to this norm before it flows into step t-1 (gradient clipping through time; the
  // result is then no longer the exact gradient, by design). 0: never.
  double clip_norm = 0.0;
  // Called (double only) with t and lambda_t, after the report and the clipping, before lambda_t
  // flows into step t-1; may read or modify lambda_t.
  std::function<void(long step, Eigen::Ref<Eigen::VectorXd> q_bar, Eigen::Ref<Eigen::VectorXd> v_bar)> hook;
};
// Report: after rollout_vjp or rollout_vjp_from_states, data.rollout_adj_norms[t] holds the 2-norm
// of lambda_t (before clipping), t = 0..T, and data.rollout_adj_clipped the number of states clipped.

/// Adjoint of rollout: qs_bar ((T+1) x nq) and vs_bar ((T+1) x nv) are the adjoints of the arrays
/// rollout returns (running losses: every row; a terminal loss: only the last). Accumulates into
/// q0_bar, v0_bar, taus_bar (T x nv), ctrls_bar (T x nu; untouched when ctrls is empty) and
/// model_bar. Recomputes each step from its checkpoint.
template <class S>
void rollout_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                 const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
                 const RowsRef<S>& qs_bar, const RowsRef<S>& vs_bar, VecOut<S> q0_bar, VecOut<S> v0_bar,
                 RowsOut<S> taus_bar, RowsOut<S> ctrls_bar, ModelTangentTpl<S>& model_bar,
                 const CheckpointOptions& options = {});
/// rollout_vjp with every control zero.
template <class S>
void rollout_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                 const RowsRef<S>& taus, const NoDeduce<S>& dt, Integrator integrator, const RowsRef<S>& qs_bar,
                 const RowsRef<S>& vs_bar, VecOut<S> q0_bar, VecOut<S> v0_bar, RowsOut<S> taus_bar,
                 ModelTangentTpl<S>& model_bar, const CheckpointOptions& options = {}) {
  MatrixXr<S> no_ctrls;
  rollout_vjp<S>(model, data, q0, v0, taus, no_ctrls, dt, integrator, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar,
                 no_ctrls, model_bar, options);
}

/// rollout_vjp when the caller still holds the forward trajectory (qs, vs) that rollout returned
/// for these very inputs: those states are the checkpoints, so no forward step is re-run before
/// the backward sweep and no memory is added. Same results as rollout_vjp.
template <class S>
void rollout_vjp_from_states(const ModelTpl<S>& model, DataTpl<S>& data, const RowsRef<S>& qs, const RowsRef<S>& vs,
                             const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt,
                             Integrator integrator, const RowsRef<S>& qs_bar, const RowsRef<S>& vs_bar,
                             VecOut<S> q0_bar, VecOut<S> v0_bar, RowsOut<S> taus_bar, RowsOut<S> ctrls_bar,
                             ModelTangentTpl<S>& model_bar, const CheckpointOptions& options = {});
/// rollout_vjp_from_states with every control zero.
template <class S>
void rollout_vjp_from_states(const ModelTpl<S>& model, DataTpl<S>& data, const RowsRef<S>& qs, const RowsRef<S>& vs,
                             const RowsRef<S>& taus, const NoDeduce<S>& dt, Integrator integrator,
                             const RowsRef<S>& qs_bar, const RowsRef<S>& vs_bar, VecOut<S> q0_bar, VecOut<S> v0_bar,
                             RowsOut<S> taus_bar, ModelTangentTpl<S>& model_bar, const CheckpointOptions& options = {}) {
  MatrixXr<S> no_ctrls;
  rollout_vjp_from_states<S>(model, data, qs, vs, taus, no_ctrls, dt, integrator, qs_bar, vs_bar, q0_bar, v0_bar,
                             taus_bar, no_ctrls, model_bar, options);
}

}  // namespace gradyn
