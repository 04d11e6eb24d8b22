// Adjoint of one time step (step.cpp). The forward step is recomputed from (q, v, tau) into the
// step adjoint workspace of Data, then its operations are reversed one by one:
//   semi-implicit Euler   a = f(q, v, tau);  v+ = v + dt a;  q+ = q (+) dt v+
//   RK4 (Munthe-Kaas)     stages (q (+) theta_s, v + h k_v[s-1]) with k_q[s] = dexpinv(theta_s, v_s),
//                         then q+ = q (+) dt/6 sum c_s k_q[s],  v+ = v + dt/6 sum c_s k_v[s]
// where f is forward_dynamics (passive forces included); its adjoint is forward_dynamics_vjp. With
// penalty contact f(q, v, tau) = forward_dynamics(q, v, tau + tau_c(q, v)) (step.cpp's stage), whose
// adjoint adds penalty_contact_forces_vjp with the adjoint of tau + tau_c.
#include <cmath>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/joint_limits.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/penalty_vjp.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/ipm_contact_vjp.hpp"
#include "gradyn/contact/pgs_contact_vjp.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/detail/lie_bracket.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

namespace {

// Accumulates the adjoints of x and y for out = [x, y] (bilinear) given out_bar.
template <class S>
void bracket_vjp(JointType type, const S* x, const S* y, const S* o, S* x_bar, S* y_bar) {
  switch (type) {
    case JointType::Spherical: {
      const Vector3<S> X(x[0], x[1], x[2]), Y(y[0], y[1], y[2]), O(o[0], o[1], o[2]);
      const Vector3<S> xb = Y.cross(O), yb = O.cross(X);
      for (int k = 0; k < 3; ++k) x_bar[k] += xb[k], y_bar[k] += yb[k];
      break;
    }
    case JointType::Free: {
      const Vector3<S> v1(x[0], x[1], x[2]), w1(x[3], x[4], x[5]), v2(y[0], y[1], y[2]), w2(y[3], y[4], y[5]);
      const Vector3<S> ol(o[0], o[1], o[2]), oa(o[3], o[4], o[5]);
      // lin = w1 x v2 - w2 x v1, ang = w1 x w2
      const Vector3<S> w1b = v2.cross(ol) + w2.cross(oa), v2b = ol.cross(w1);
      const Vector3<S> w2b = -v1.cross(ol) + oa.cross(w1), v1b = -ol.cross(w2);
      for (int k = 0; k < 3; ++k) {
        x_bar[k] += v1b[k], x_bar[3 + k] += w1b[k];
        y_bar[k] += v2b[k], y_bar[3 + k] += w2b[k];
      }
      break;
    }
    case JointType::Planar:
      x_bar[0] += -y[2] * o[1];
      x_bar[1] += y[2] * o[0];
      x_bar[2] += -y[1] * o[0] + y[0] * o[1];
      y_bar[0] += x[2] * o[1];
      y_bar[1] += -x[2] * o[0];
      y_bar[2] += x[1] * o[0] - x[0] * o[1];
      break;
    default: break;
  }
}

// Adjoint of dexpinv: accumulates into theta_bar and xi_bar.
template <class S>
void dexpinv_vjp(const ModelTpl<S>& model, const VectorX<S>& theta, const VectorX<S>& xi, const VectorX<S>& out_bar,
                 VectorX<S>& theta_bar, VectorX<S>& xi_bar) {
  xi_bar += out_bar;
  for (int i = 0; i < model.nbodies(); ++i) {
    const JointType t = model.joint_type[i];
    if (!detail::is_group_joint(t)) continue;
    const int iv = model.idx_v[i], nvi = model.joint_nv(i);
    S b1[6], b1_bar[6], b2_bar[6];
    detail::joint_bracket<S>(t, theta.data() + iv, xi.data() + iv, b1);
    for (int k = 0; k < nvi; ++k) {
      b1_bar[k] = out_bar[iv + k] / S(2);
      b2_bar[k] = out_bar[iv + k] / S(12);
    }
    bracket_vjp<S>(t, theta.data() + iv, b1, b2_bar, theta_bar.data() + iv, b1_bar);  // b2 = [theta, b1]
    bracket_vjp<S>(t, theta.data() + iv, xi.data() + iv, b1_bar, theta_bar.data() + iv, xi_bar.data() + iv);
  }
}

// The accelerations one stage integrates, as step.cpp's stage computes them: forward dynamics, plus
// the penalty contact forces at (q, v) when the model has them.
template <class S>
const VectorX<S>& stage_dynamics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                                 const VecRef<S>& tau) {
  if (model.contact.model != ContactModel::Penalty) return forward_dynamics<S>(model, data, q, v, tau);
  data.contact_tau_total = tau + contact_generalized_forces<S>(model, data, q, v);
  return forward_dynamics<S>(model, data, q, v, data.contact_tau_total);
}

// Adjoint of stage_dynamics. stage_is_current: stage_dynamics(q, v, tau) was the last call on data.
template <class S>
void stage_dynamics_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                        const VecRef<S>& tau, const VectorX<S>& a_bar, VecOut<S> q_bar, VecOut<S> v_bar,
                        VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar, bool stage_is_current) {
  if (model.contact.model != ContactModel::Penalty) {
    forward_dynamics_vjp<S>(model, data, q, v, tau, a_bar, q_bar, v_bar, tau_bar, model_bar, stage_is_current);
    return;
  }
  if (!stage_is_current) stage_dynamics<S>(model, data, q, v, tau);
  VectorX<S>& total_bar = data.adj_stage_tau_bar;  // adjoint of tau + tau_c
  total_bar.setZero();
  forward_dynamics_vjp<S>(model, data, q, v, data.contact_tau_total, a_bar, q_bar, v_bar, total_bar, model_bar,
                          /*forward_is_current=*/true);
  tau_bar += total_bar;
  penalty_contact_forces_vjp<S>(model, data, q, v, total_bar, q_bar, v_bar, model_bar);
  add_joint_limit_forces_vjp<S>(model, q, v, total_bar, q_bar, v_bar);
}

}  // namespace

template <class S>
void step_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
              const NoDeduce<S>& dt, Integrator integrator, const VecRef<S>& q_next_bar, const VecRef<S>& v_next_bar,
              VecOut<S> q_bar, VecOut<S> v_bar, VecOut<S> tau_bar, ModelTangentTpl<S>& model_bar) {
  const ContactModel contact = model.contact.model;
  if (contact != ContactModel::None && contact != ContactModel::Penalty && contact != ContactModel::Pgs &&
      contact != ContactModel::Ipm)
    throw ArgumentError(std::string("step_vjp: gradients through contact model '") + contact_model_name(contact) +
                        "' are not implemented yet (penalty, pgs and ipm contact have them)");
  if ((contact == ContactModel::Pgs || contact == ContactModel::Ipm) && integrator != Integrator::SemiImplicitEuler)
    throw ArgumentError(std::string("step_vjp: contact model '") + contact_model_name(contact) +
                        "' needs Integrator::SemiImplicitEuler (as step does)");
  check_size("q", q.size(), model.nq);
  check_size("v", v.size(), model.nv);
  check_size("tau", tau.size(), model.nv);
  check_size("q_next_bar", q_next_bar.size(), model.nq);
  check_size("v_next_bar", v_next_bar.size(), model.nv);
  check_size("q_bar", q_bar.size(), model.nq);
  check_size("v_bar", v_bar.size(), model.nv);
  check_size("tau_bar", tau_bar.size(), model.nv);
  auto& kq = data.step_adj_kq;
  auto& kv = data.step_adj_kv;
  auto& kq_bar = data.step_adj_kq_bar;
  auto& kv_bar = data.step_adj_kv_bar;
  VectorX<S>& dv = data.step_adj_dv;
  VectorX<S>& dv_bar = data.step_adj_theta_bar;

  if (contact == ContactModel::Pgs) {
    // forward: a_free = f(q, v, tau); v+ = pgs(v + dt a_free); dv = dt v+
    kv[0] = forward_dynamics<S>(model, data, q, v, tau);
    // Cold start: the step is differentiated as a function of (q, v, tau) alone, not of the warm
    // start a previous step left (converged solves agree to the PGS tolerance either way).
    data.pgs_memory_ncontacts = 0;
    data.pgs_memory_limit.setZero();
    pgs_contact_velocity<S>(model, data, q, v, kv[0], dt, kq[0]);
    dv = dt * kq[0];
    // reverse
    dv_bar.setZero();
    integrate_vjp<S>(model, q, dv, q_next_bar, q_bar, dv_bar);
    kq_bar[0] = v_next_bar + dt * dv_bar;  // adjoint of v+
    kv_bar[0].setZero();                  // adjoint of a_free
    pgs_contact_velocity_vjp<S>(model, data, q, v, dt, kq_bar[0], q_bar, v_bar, kv_bar[0], model_bar);
    // neither the contact stage nor its adjoint touch forward_dynamics' results
    forward_dynamics_vjp<S>(model, data, q, v, tau, kv_bar[0], q_bar, v_bar, tau_bar, model_bar,
                            /*forward_is_current=*/true);
    return;
  }
  if (contact == ContactModel::Ipm) {
    // forward: a_free = f(q, v, tau); v+ = ipm(v + dt a_free); dv = dt v+ (no warm start to hold)
    kv[0] = forward_dynamics<S>(model, data, q, v, tau);
    ipm_contact_velocity<S>(model, data, q, v, kv[0], dt, kq[0]);
    dv = dt * kq[0];
    // reverse
    dv_bar.setZero();
    integrate_vjp<S>(model, q, dv, q_next_bar, q_bar, dv_bar);
    kq_bar[0] = v_next_bar + dt * dv_bar;  // adjoint of v+
    kv_bar[0].setZero();                  // adjoint of a_free
    ipm_contact_velocity_vjp<S>(model, data, q, v, dt, kq_bar[0], q_bar, v_bar, kv_bar[0], model_bar);
    // the contact stage reruns crba and collide at the same q: forward_dynamics' results stay valid
    forward_dynamics_vjp<S>(model, data, q, v, tau, kv_bar[0], q_bar, v_bar, tau_bar, model_bar,
                            /*forward_is_current=*/true);
    return;
  }
  if (integrator == Integrator::SemiImplicitEuler) {
    // forward: a = f(q, v, tau); v+ = v + dt a; dv = dt v+
    kv[0] = stage_dynamics<S>(model, data, q, v, tau);
    kq[0] = v + dt * kv[0];  // v+
    dv = dt * kq[0];
    // reverse
    dv_bar.setZero();
    integrate_vjp<S>(model, q, dv, q_next_bar, q_bar, dv_bar);
    kq_bar[0] = v_next_bar + dt * dv_bar;  // adjoint of v+
    v_bar += kq_bar[0];
    kv_bar[0] = dt * kq_bar[0];  // adjoint of a
    // integrate_vjp leaves data alone: it still holds forward_dynamics(q, v, tau) from above.
    stage_dynamics_vjp<S>(model, data, q, v, tau, kv_bar[0], q_bar, v_bar, tau_bar, model_bar,
                          /*stage_is_current=*/true);
    return;
  }

  // RK4, forward (as step.cpp computes it)
  const S half = dt / S(2);
  const S h_of[4] = {S(0), half, half, dt};
  kq[0] = v;
  kv[0] = stage_dynamics<S>(model, data, q, v, tau);
  for (int s = 1; s < 4; ++s) {
    data.step_adj_v[s] = v + h_of[s] * kv[s - 1];
    data.step_adj_theta[s] = h_of[s] * kq[s - 1];
    integrate<S>(model, q, data.step_adj_theta[s], data.step_adj_q[s]);
    detail::dexpinv<S>(model, data.step_adj_theta[s], data.step_adj_v[s], kq[s]);
    kv[s] = stage_dynamics<S>(model, data, data.step_adj_q[s], data.step_adj_v[s], tau);
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
    stage_dynamics_vjp<S>(model, data, data.step_adj_q[s], data.step_adj_v[s], tau, kv_bar[s], qs_bar, vs_bar,
                          tau_bar, model_bar, /*stage_is_current=*/false);
    dexpinv_vjp<S>(model, data.step_adj_theta[s], data.step_adj_v[s], kq_bar[s], dv_bar, vs_bar);
    integrate_vjp<S>(model, q, data.step_adj_theta[s], qs_bar, q_bar, dv_bar);
    v_bar += vs_bar;
    kv_bar[s - 1] += h_of[s] * vs_bar;
    kq_bar[s - 1] += h_of[s] * dv_bar;
  }
  stage_dynamics_vjp<S>(model, data, q, v, tau, kv_bar[0], q_bar, v_bar, tau_bar, model_bar,
                        /*stage_is_current=*/false);
  v_bar += kq_bar[0];
}

#define GRADYN_INSTANTIATE(S)                                                                                       \
  template void step_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                            const NoDeduce<S>&, Integrator, const VecRef<S>&, const VecRef<S>&, VecOut<S>,          \
                            VecOut<S>, VecOut<S>, ModelTangentTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
