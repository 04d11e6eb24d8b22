// Time stepping: semi-implicit Euler (the papers' scheme) and RK4. With model.contact.model = Penalty every
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

/// One step from (q, v) under joint torques tau. q_next/v_next may alias q/v. Allocates nothing,
/// except with PGS or Ipm contact when the number of contacts changes (the LCP is resized).
/// Sets kStatusNonFinite in data.status when the new state is not finite (never throws for it).
template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next);

/// T steps from (q0, v0) with taus (T x nv, one row per step, row-major like NumPy). Fills qs ((T+1) x nq) and
/// vs ((T+1) x nv), the initial state in row 0. step_status: empty, or T entries, entry t set to the
/// StatusFlag bits step t raised (which step went wrong); data.status gathers them either way.
template <class S>
void rollout(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& taus, const NoDeduce<S>& dt, Integrator integrator, MatrixXr<NoDeduce<S>>& qs,
             MatrixXr<NoDeduce<S>>& vs, std::span<std::uint32_t> step_status = {});

/// Adjoint of step: given the adjoints of (q_next, v_next), accumulates those of q (nq, ambient),
/// v, tau and the model parameters. Recomputes the forward step from (q, v, tau) itself.
template <class S>
void step_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
              const NoDeduce<S>& dt, Integrator integrator, const VecRef<S>& q_next_bar, const VecRef<S>& v_next_bar,
              VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar);

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
/// q0_bar, v0_bar, taus_bar (T x nv) and model_bar. Recomputes each step from its checkpoint.
template <class S>
void rollout_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                 const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& taus, const NoDeduce<S>& dt, Integrator integrator,
                 const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& qs_bar, const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& vs_bar,
                 VecOut<S> q0_bar, VecOut<S> v0_bar, Eigen::Ref<MatrixXr<NoDeduce<S>>> taus_bar,
                 ModelTangentTpl<S>& model_bar, const CheckpointOptions& options = {});

/// rollout_vjp when the caller still holds the forward trajectory (qs, vs) that rollout returned
/// for these very inputs: those states are the checkpoints, so no forward step is re-run before
/// the backward sweep and no memory is added. Same results as rollout_vjp.
template <class S>
void rollout_vjp_from_states(const ModelTpl<S>& model, DataTpl<S>& data,
                             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& qs,
                             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& vs,
                             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& taus, const NoDeduce<S>& dt,
                             Integrator integrator, const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& qs_bar,
                             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& vs_bar, VecOut<S> q0_bar,
                             VecOut<S> v0_bar, Eigen::Ref<MatrixXr<NoDeduce<S>>> taus_bar,
                             ModelTangentTpl<S>& model_bar, const CheckpointOptions& options = {});

}  // namespace gradyn
