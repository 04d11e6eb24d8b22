// Actuation (dynamics/actuation.hpp): the model's actuators as joint forces, and their partial
// derivatives for step_jacobian. The adjoint is beside it, in actuation_vjp.cpp.
#include "gradyn/dynamics/actuation.hpp"

#include <string>

#include "gradyn/autodiff.hpp"
#include "gradyn/dynamics/detail/actuator_law.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

const char* actuator_kind_name(ActuatorKind kind) {
  switch (kind) {
    case ActuatorKind::Motor: return "motor";
    case ActuatorKind::Position: return "position";
    case ActuatorKind::Velocity: return "velocity";
    case ActuatorKind::General: return "general";
    case ActuatorKind::Servo: return "servo";
  }
  return "unknown";
}

namespace {
void check_ctrl_size(Eigen::Index size, int nu) {
  if (size != 0 && size != nu)
    throw ArgumentError("ctrl: expected shape (" + std::to_string(nu) + ",) (one control per actuator, model.nu), got (" +
                        std::to_string(size) + ",)");
}
}  // namespace

template <class S>
void actuation(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q, const VecRef<S>& v,
               const VecRef<S>& ctrl) {
  check_ctrl_size(ctrl.size(), model.nu());
  data.actuation_tau.setZero();
  const bool zero_ctrl = ctrl.size() == 0;
  for (int k = 0; k < model.nu(); ++k) {
    const ActuatorTpl<S>& a = model.actuators[k];
    const int iv = model.idx_v[a.joint];
    const S L = a.gear * q[model.idx_q[a.joint]], V = a.gear * v[iv];
    const S f = detail::actuator_law<S, false>(a, zero_ctrl ? S(0) : S(ctrl[k]), L, V).force;
    data.actuator_force[k] = f;
    data.actuation_tau[iv] += a.gear * f;
  }
}

void actuation_derivatives(const Model& model, const VecRef<double>& q, const VecRef<double>& v,
                           const VecRef<double>& ctrl, Eigen::Ref<Eigen::MatrixXd> dtau_dx,
                           Eigen::Ref<Eigen::MatrixXd> dtau_dctrl) {
  check_ctrl_size(ctrl.size(), model.nu());
  const int nv = model.nv;
  dtau_dctrl.setZero();
  for (int k = 0; k < model.nu(); ++k) {
    const Actuator& a = model.actuators[k];
    const int iv = model.idx_v[a.joint];
    const double L = a.gear * q[model.idx_q[a.joint]], V = a.gear * v[iv];
    const auto law = detail::actuator_law<double, true>(a, ctrl.size() ? ctrl[k] : 0.0, L, V);
    // tau[iv] = gear f(u, gear q, gear v); the joint's tangent coordinate is q itself (1 DoF)
    dtau_dx(iv, iv) += a.gear * a.gear * law.d_length;
    dtau_dx(iv, nv + iv) += a.gear * a.gear * law.d_velocity;
    dtau_dctrl(iv, k) = a.gear * law.d_ctrl;
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void actuation<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&, const VecRef<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
