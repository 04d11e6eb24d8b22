#include "gradyn/sim/step.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/ipm_contact.hpp"
#include "gradyn/contact/penalty.hpp"
#include "gradyn/contact/pgs_contact.hpp"
#include "gradyn/dynamics/passive.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/detail/lie_bracket.hpp"
#include "gradyn/sim/integrate.hpp"

namespace gradyn {

namespace {
// kStatusDeepPenetration when a contact of the last collide() is deeper than the settings allow.
template <class S>
void flag_deep_penetration(const ModelTpl<S>& model, DataTpl<S>& data) {
  for (int k = 0; k < data.ncontacts; ++k)
    if (value_of(data.contacts[k].depth) > model.contact.max_penetration) data.status |= kStatusDeepPenetration;
}

// The accelerations one stage integrates: the forces stage (contact forces when the model has a
// contact model, recomputed at every call, so at every RK4 stage) then forward dynamics.
template <class S>
const VectorX<S>& stage_dynamics(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
                                 const VecRef<S>& tau) {
  // Pgs, Ipm: free motion here; the impulses come after (step), at the velocity level.
  if (model.contact.model != ContactModel::Penalty)
    return forward_dynamics<S>(model, data, q, v, tau);
  data.contact_tau_total = tau + contact_generalized_forces<S>(model, data, q, v);
  flag_deep_penetration<S>(model, data);
  return forward_dynamics<S>(model, data, q, v, data.contact_tau_total);
}
}  // namespace

template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next) {
  check_size("q_next", q_next.size(), model.nq);
  check_size("v_next", v_next.size(), model.nv);
  if (model.contact.model != ContactModel::None) check_contact_settings(model.contact);
  const bool velocity_level = model.contact.model == ContactModel::Pgs || model.contact.model == ContactModel::Ipm;
  if (velocity_level && integrator != Integrator::SemiImplicitEuler)
    throw ArgumentError(std::string("step: contact model '") + contact_model_name(model.contact.model) +
                        "' needs Integrator::SemiImplicitEuler (velocity-level contact impulses are "
                        "defined for the semi-implicit Euler step, not for RK4's intermediate stages)");
  if (integrator == Integrator::SemiImplicitEuler) {
    const VectorX<S>& a = stage_dynamics<S>(model, data, q, v, tau);
    // v_next may alias v: both contact solvers read v before writing v_next.
    if (model.contact.model == ContactModel::Pgs)
      pgs_contact_velocity<S>(model, data, q, v, a, dt, v_next);
    else if (model.contact.model == ContactModel::Ipm)
      ipm_contact_velocity<S>(model, data, q, v, a, dt, v_next);
    else
      v_next = v + dt * a;
    if (velocity_level) flag_deep_penetration<S>(model, data);
    data.dv_tmp = dt * v_next;
    integrate<S>(model, q, data.dv_tmp, q_next);
  } else {
    // Classical RK4 on (q, v) in Runge-Kutta-Munthe-Kaas form: each stage moves q on the manifold
    // by an offset theta from q, and k_q are the offset's derivatives.
    const S half = dt / S(2);
    data.k_q[0] = v;
    data.k_v[0] = stage_dynamics<S>(model, data, q, v, tau);
    for (int s = 1; s < 4; ++s) {
      const S h = s < 3 ? half : dt;
      data.v_tmp = v + h * data.k_v[s - 1];
      data.dv_tmp = h * data.k_q[s - 1];
      integrate<S>(model, q, data.dv_tmp, data.q_tmp);
      detail::dexpinv<S>(model, data.dv_tmp, data.v_tmp, data.k_q[s]);
      data.k_v[s] = stage_dynamics<S>(model, data, data.q_tmp, data.v_tmp, tau);
    }
    const S w = dt / S(6);
    data.dv_tmp = w * (data.k_q[0] + S(2) * data.k_q[1] + S(2) * data.k_q[2] + data.k_q[3]);
    v_next = v + w * (data.k_v[0] + S(2) * data.k_v[1] + S(2) * data.k_v[2] + data.k_v[3]);
    integrate<S>(model, q, data.dv_tmp, q_next);
  }
  if (!all_finite(q_next) || !all_finite(v_next)) data.status |= kStatusNonFinite;
}

template <class S>
void rollout(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
             const Eigen::Ref<const MatrixXr<NoDeduce<S>>>& taus, const NoDeduce<S>& dt, Integrator integrator, MatrixXr<NoDeduce<S>>& qs,
             MatrixXr<NoDeduce<S>>& vs, std::span<std::uint32_t> step_status) {
  check_size("q0", q0.size(), model.nq);
  check_size("v0", v0.size(), model.nv);
  if (taus.cols() != model.nv) {
    std::ostringstream s;
    s << "taus: expected shape (T, " << model.nv << "), got (" << taus.rows() << ", " << taus.cols() << ")";
    throw ArgumentError(s.str());
  }
  const Eigen::Index T = taus.rows();
  const bool per_step = !step_status.empty();
  if (per_step && static_cast<Eigen::Index>(step_status.size()) != T)
    throw ArgumentError("step_status: expected " + std::to_string(T) + " entries (one per step), got " +
                        std::to_string(step_status.size()));
  qs.resize(T + 1, model.nq);
  vs.resize(T + 1, model.nv);
  qs.row(0) = q0.transpose();
  vs.row(0) = v0.transpose();
  const std::uint32_t status_before = data.status;
  std::uint32_t raised = kStatusOk;
  for (Eigen::Index t = 0; t < T; ++t) {
    if (per_step) data.status = kStatusOk;
    step<S>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), taus.row(t).transpose(), dt, integrator,
            qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    if (per_step) step_status[static_cast<size_t>(t)] = data.status, raised |= data.status;
  }
  if (per_step) data.status = status_before | raised;
}

#define GRADYN_INSTANTIATE(S)                                                                                \
  template void step<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                        const NoDeduce<S>&, Integrator, VecOut<S>, VecOut<S>);               \
  template void rollout<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,               \
                           const Eigen::Ref<const MatrixXr<NoDeduce<S>>>&, const NoDeduce<S>&, Integrator, MatrixXr<NoDeduce<S>>&,          \
                           MatrixXr<NoDeduce<S>>&, std::span<std::uint32_t>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
