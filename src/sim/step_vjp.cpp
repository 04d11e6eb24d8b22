// Adjoint of one time step (step.cpp). The forward step is recomputed from (q, v, tau) into the
// step adjoint workspace of Data, stage by stage as step() runs them (sim/stages.hpp), then its
// operations are reversed one by one:
//   semi-implicit Euler   a = f(q, v, tau);  v+ = c(q, v, a);  q+ = q (+) dt v+
//   RK4 (Munthe-Kaas)     stages (q (+) theta_s, v + h k_v[s-1]) with k_q[s] = dexpinv(theta_s, v_s),
//                         then q+ = q (+) dt/6 sum c_s k_q[s],  v+ = v + dt/6 sum c_s k_v[s]
// where f is the accelerations stage (forward dynamics with the passive and, under penalty contact,
// the contact forces; adjoint stage_accelerations_vjp) and c the constraints stage (v + dt a, or the
// PGS / interior-point impulses; adjoint stage_constraints_vjp).
#include <cmath>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/detail/lie_bracket.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/stages.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

namespace {

// Adjoint of dexpinv: accumulates into theta_bar and xi_bar.
template <class S>
void dexpinv_vjp(const ModelTpl<S>& model, const VectorX<S>& theta, const VectorX<S>& xi, const VectorX<S>& out_bar,
                 VectorX<S>& theta_bar, VectorX<S>& xi_bar) {
  xi_bar += out_bar;
  for (int i = 0; i < model.nbodies(); ++i) {
    const JointType t = model.joint_type[i];
    if (!joint_is_group(t)) continue;
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    S b1[6], b1_bar[6], b2_bar[6];
    joint_bracket<S>(t, theta.data() + iv, xi.data() + iv, b1);
    for (int k = 0; k < nvi; ++k) {
      b1_bar[k] = out_bar[iv + k] / S(2);
      b2_bar[k] = out_bar[iv + k] / S(12);
    }
    joint_bracket_vjp<S>(t, theta.data() + iv, b1, b2_bar, theta_bar.data() + iv, b1_bar);  // b2 = [theta, b1]
    joint_bracket_vjp<S>(t, theta.data() + iv, xi.data() + iv, b1_bar, theta_bar.data() + iv, xi_bar.data() + iv);
  }
}

}  // namespace

template <class S>
void step_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
              const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator, const VecRef<S>& q_next_bar,
              const VecRef<S>& v_next_bar, VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar, VecOut<S> ctrl_bar,
              ModelTangentTpl<S>& model_bar) {
  check_step_options(model.contact, StepOptions{value_of(dt), integrator});
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau", tau.size(), model.nv);
  check_size("q_next_bar", q_next_bar.size(), model.nq);
  check_size("v_next_bar", v_next_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  check_size("tau_bar", tau_bar.size(), model.nv);
  if (ctrl.size() != 0) {
    check_size("ctrl", ctrl.size(), model.nu());
    check_size("ctrl_bar", ctrl_bar.size(), model.nu());
  }
  auto& kq = data.step_adj_kq;
  auto& kv = data.step_adj_kv;
  auto& kq_bar = data.step_adj_kq_bar;
  auto& kv_bar = data.step_adj_kv_bar;
  VectorX<S>& dv = data.step_adj_dv;
  VectorX<S>& dv_bar = data.step_adj_theta_bar;

  if (integrator == Integrator::SemiImplicitEuler) {
    // forward: a = accelerations(q, v, tau); v+ = constraints(q, v, a); dv = dt v+
    // e.g. PGS's cold start: the step is differentiated as a function of (q, v, tau) alone
    visit_contact_model(model.contact.model, [&](auto m) { decltype(m)::before_step_vjp(data); });
    kv[0] = stage_accelerations<S>(model, data, q, v, tau, ctrl);
    stage_constraints<S>(model, data, q, v, kv[0], dt, kq[0]);
    dv = dt * kq[0];
    // reverse
    dv_bar.setZero();
    integrate_vjp<S>(model, q, dv, q_next_bar, q_bar, dv_bar);
    kq_bar[0] = v_next_bar + dt * dv_bar;  // adjoint of v+
    kv_bar[0].setZero();                  // adjoint of a
    stage_constraints_vjp<S>(model, data, q, v, dt, kq_bar[0], q_bar, v_bar, kv_bar[0], model_bar);
    // Neither integrate_vjp nor the constraints stage and its adjoint change the accelerations
    // stage's results in data (the contact solvers rerun crba and collide at the same q).
    stage_accelerations_vjp<S>(model, data, q, v, tau, ctrl, kv_bar[0], q_bar, v_bar, tau_bar, ctrl_bar, model_bar,
                               /*stage_is_current=*/true);
    return;
  }

  // RK4, forward (as step.cpp computes it)
  const S half = dt / S(2);
  const S h_of[4] = {S(0), half, half, dt};
  kq[0] = v;
  kv[0] = stage_accelerations<S>(model, data, q, v, tau, ctrl);
  for (int s = 1; s < 4; ++s) {
    data.step_adj_v[s] = v + h_of[s] * kv[s - 1];
    data.step_adj_theta[s] = h_of[s] * kq[s - 1];
    integrate<S>(model, q, data.step_adj_theta[s], data.step_adj_q[s]);
    detail::dexpinv<S>(model, data.step_adj_theta[s], data.step_adj_v[s], kq[s]);
    kv[s] = stage_accelerations<S>(model, data, data.step_adj_q[s], data.step_adj_v[s], tau, ctrl);
  }
  const S w = dt / S(6);
  dv = w * (kq[0] + S(2) * kq[1] + S(2) * kq[2] + kq[3]);

  // reverse: the final combination
  dv_bar.setZero();
  integrate_vjp<S>(model, q, dv, q_next_bar, q_bar, dv_bar);
  v_bar += v_next_bar;
  const S c_of[4] = {S(1), S(2), S(2), S(1)};
  for (int s = 0; s < 4; ++s) {
    kq_bar[s] = (w * c_of[s]) * dv_bar;
    kv_bar[s] = (w * c_of[s]) * v_next_bar;
  }
  // the stages, last first: stage s reads k_q[s-1] and k_v[s-1], so their adjoints are complete
  // when stage s-1 is reached
  for (int s = 3; s >= 1; --s) {
    VectorX<S>& qs_bar = data.step_adj_q_bar;
    VectorX<S>& vs_bar = data.step_adj_v_bar;
    qs_bar.setZero();
    vs_bar.setZero();
    dv_bar.setZero();  // now the adjoint of theta_s
    stage_accelerations_vjp<S>(model, data, data.step_adj_q[s], data.step_adj_v[s], tau, ctrl, kv_bar[s], qs_bar,
                               vs_bar, tau_bar, ctrl_bar, model_bar, /*stage_is_current=*/false);
    dexpinv_vjp<S>(model, data.step_adj_theta[s], data.step_adj_v[s], kq_bar[s], dv_bar, vs_bar);
    integrate_vjp<S>(model, q, data.step_adj_theta[s], qs_bar, q_bar, dv_bar);
    v_bar += vs_bar;
    kv_bar[s - 1] += h_of[s] * vs_bar;
    kq_bar[s - 1] += h_of[s] * dv_bar;
  }
  stage_accelerations_vjp<S>(model, data, q, v, tau, ctrl, kv_bar[0], q_bar, v_bar, tau_bar, ctrl_bar, model_bar,
                             /*stage_is_current=*/false);
  v_bar += kq_bar[0];
}

#define GRADYN_INSTANTIATE(S)                                                                                       \
  template void step_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                            const VecRef<S>&, const NoDeduce<S>&, Integrator, const VecRef<S>&, const VecRef<S>&,   \
                            VecOut<S>, VecOut<S>, VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
