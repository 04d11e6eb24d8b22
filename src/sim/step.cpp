#include "gradyn/sim/step.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/detail/lie_bracket.hpp"
#include "gradyn/sim/integrate.hpp"
#include "gradyn/sim/stages.hpp"

namespace gradyn {

const char* integrator_name(Integrator integrator) {
  switch (integrator) {
    case Integrator::SemiImplicitEuler: return "euler";
    case Integrator::RK4: return "rk4";
  }
  return "unknown";
}

void check_controls_shape(int nu, Eigen::Index rows, Eigen::Index cols, Eigen::Index T) {
  if (rows == 0 && cols == 0) return;  // no controls: every control zero
  if (rows != T || cols != nu) {
    std::ostringstream s;
    s << "ctrls: expected shape (" << T << ", " << nu << ") (one row per step, one control per actuator, "
      << "model.nu), got (" << rows << ", " << cols << ")";
    throw ArgumentError(s.str());
  }
}

void check_step_options(const ContactSettings& contact, const StepOptions& options) {
  if (!(options.dt > 0) || !std::isfinite(options.dt)) {
    std::ostringstream s;
    s << "dt: expected a positive finite time step [s], got " << options.dt;
    throw ArgumentError(s.str());
  }
  if (has_impulses(contact.model) && options.integrator != Integrator::SemiImplicitEuler)
    throw ArgumentError(std::string("integrator '") + integrator_name(options.integrator) +
                        "' cannot step contact model '" + contact_model_name(contact.model) +
                        "': its velocity-level contact impulses are defined for the semi-implicit Euler step, "
                        "not for RK4's intermediate stages; use integrator 'euler' "
                        "(Integrator::SemiImplicitEuler), or contact model 'penalty' for RK4");
}


template <class S>
void step(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v, const VecRef<S>& tau,
          const VecRef<S>& ctrl, const NoDeduce<S>& dt, Integrator integrator, VecOut<S> q_next, VecOut<S> v_next) {
  check_size("q_next", q_next.size(), model.nq);
  check_size("v_next", v_next.size(), model.nv);
  check_step_options(model.contact, StepOptions{value_of(dt), integrator});
  if (model.contact.model != ContactModel::None) check_contact_settings(model.contact);
  if (integrator == Integrator::SemiImplicitEuler) {
    const VectorX<S>& a = stage_accelerations<S>(model, data, q, v, tau, ctrl);
    stage_constraints<S>(model, data, q, v, a, dt, v_next);
    data.dv_tmp = dt * v_next;
    integrate<S>(model, q, data.dv_tmp, q_next);
  } else {
    // Classical RK4 on (q, v) in Runge-Kutta-Munthe-Kaas form: each stage moves q on the manifold
    // by an offset theta from q, and k_q are the offset's derivatives.
    const S half = dt / S(2);
    data.k_q[0] = v;
    data.k_v[0] = stage_accelerations<S>(model, data, q, v, tau, ctrl);
    for (int s = 1; s < 4; ++s) {
      const S h = s < 3 ? half : dt;
      data.v_tmp = v + h * data.k_v[s - 1];
      data.dv_tmp = h * data.k_q[s - 1];
      integrate<S>(model, q, data.dv_tmp, data.q_tmp);
      detail::dexpinv<S>(model, data.dv_tmp, data.v_tmp, data.k_q[s]);
      data.k_v[s] = stage_accelerations<S>(model, data, data.q_tmp, data.v_tmp, tau, ctrl);
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
             const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
             MatrixXr<NoDeduce<S>>& qs, MatrixXr<NoDeduce<S>>& vs, std::span<std::uint32_t> step_status) {
  qs.resize(taus.rows() + 1, model.nq);
  vs.resize(taus.rows() + 1, model.nv);
  rollout_into<S>(model, data, q0, v0, taus, ctrls, dt, integrator, qs, vs, step_status);
}

template <class S>
void rollout_into(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                  const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
                  RowsOut<S> qs, RowsOut<S> vs, std::span<std::uint32_t> step_status) {
  check_size("q0", q0.size(), model.nq);
  check_size("v0", v0.size(), model.nv);
  check_step_options(model.contact, StepOptions{value_of(dt), integrator});
  if (taus.cols() != model.nv) {
    std::ostringstream s;
    s << "taus: expected shape (T, " << model.nv << "), got (" << taus.rows() << ", " << taus.cols() << ")";
    throw ArgumentError(s.str());
  }
  const Eigen::Index T = taus.rows();
  check_controls_shape(model.nu(), ctrls.rows(), ctrls.cols(), T);
  const bool per_step = !step_status.empty();
  if (per_step && static_cast<Eigen::Index>(step_status.size()) != T)
    throw ArgumentError("step_status: expected " + std::to_string(T) + " entries (one per step), got " +
                        std::to_string(step_status.size()));
  if (qs.rows() != T + 1 || qs.cols() != model.nq || vs.rows() != T + 1 || vs.cols() != model.nv) {
    std::ostringstream s;
    s << "qs, vs: expected shapes (" << T + 1 << ", " << model.nq << ") and (" << T + 1 << ", " << model.nv
      << "), got (" << qs.rows() << ", " << qs.cols() << ") and (" << vs.rows() << ", " << vs.cols() << ")";
    throw ArgumentError(s.str());
  }
  qs.row(0) = q0.transpose();
  vs.row(0) = v0.transpose();
  const std::uint32_t status_before = data.status;
  std::uint32_t raised = kStatusOk;
  for (Eigen::Index t = 0; t < T; ++t) {
    if (per_step) data.status = kStatusOk;
    if (ctrls.size() == 0)
      step<S>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), taus.row(t).transpose(), dt, integrator,
              qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    else
      step<S>(model, data, qs.row(t).transpose(), vs.row(t).transpose(), taus.row(t).transpose(),
              ctrls.row(t).transpose(), dt, integrator, qs.row(t + 1).transpose(), vs.row(t + 1).transpose());
    if (per_step) step_status[static_cast<size_t>(t)] = data.status, raised |= data.status;
  }
  if (per_step) data.status = status_before | raised;
}

#define GRADYN_INSTANTIATE(S)                                                                                \
  template void step<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&, \
                        const VecRef<S>&, const NoDeduce<S>&, Integrator, VecOut<S>, VecOut<S>);              \
  template void rollout<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,               \
                           const RowsRef<S>&, const RowsRef<S>&, const NoDeduce<S>&, Integrator,              \
                           MatrixXr<NoDeduce<S>>&, MatrixXr<NoDeduce<S>>&, std::span<std::uint32_t>);         \
  template void rollout_into<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,          \
                                const RowsRef<S>&, const RowsRef<S>&, const NoDeduce<S>&, Integrator, RowsOut<S>, \
                                RowsOut<S>, std::span<std::uint32_t>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
