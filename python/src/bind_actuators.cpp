// gradyn.actuator_torques and gradyn.actuator_torques_vjp: paper 002's servo motors, with the
// per-DoF settings passed as arguments (scalars apply to every DoF).
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "common.hpp"
#include "gradyn/dynamics/actuators.hpp"

namespace gradyn::python {

namespace {

ServoKind parse_servo_kind(const std::string& name) {
  if (name == "torque") return ServoKind::Torque;
  if (name == "position") return ServoKind::Position;
  if (name == "velocity") return ServoKind::Velocity;
  throw ArgumentError("kind: expected 'torque', 'position' or 'velocity', got '" + name + "'");
}

// A scalar (every DoF) or an array of nv entries.
Eigen::VectorXd per_dof(nb::handle h, const char* name, int nv) {
  const ConstArray a = as_array(h, name);
  if (a.ndim() == 0) return Eigen::VectorXd::Constant(nv, a.data()[0]);
  check_shape(a, name, {nv});
  return Eigen::Map<const Eigen::VectorXd>(a.data(), nv);
}

std::vector<ServoSettings> servo_settings(const Model& model, nb::handle kind, nb::handle kp, nb::handle kv,
                                          nb::handle effort_limit, nb::handle velocity_limit) {
  const int nv = model.nv;
  std::vector<ServoSettings> s(nv);
  if (nb::isinstance<nb::str>(kind)) {
    const ServoKind k = parse_servo_kind(nb::cast<std::string>(kind));
    for (auto& x : s) x.kind = k;
  } else {
    const nb::list kinds(kind);
    if (static_cast<int>(kinds.size()) != nv)
      throw ArgumentError("kind: expected a str or " + std::to_string(nv) + " of them, got " +
                          std::to_string(kinds.size()));
    for (int i = 0; i < nv; ++i) s[i].kind = parse_servo_kind(nb::cast<std::string>(kinds[i]));
  }
  const Eigen::VectorXd kp_ = per_dof(kp, "kp", nv), kv_ = per_dof(kv, "kv", nv);
  for (int i = 0; i < nv; ++i) {
    s[i].kp = kp_[i];
    s[i].kv = kv_[i];
  }
  if (!effort_limit.is_none()) {
    const Eigen::VectorXd e = per_dof(effort_limit, "effort_limit", nv);
    for (int i = 0; i < nv; ++i) s[i].effort_limit = e[i];
  }
  if (!velocity_limit.is_none()) {
    const Eigen::VectorXd w = per_dof(velocity_limit, "velocity_limit", nv);
    for (int i = 0; i < nv; ++i) s[i].velocity_limit = w[i];
  }
  return s;
}

constexpr const char* kServoDoc = R"doc(
Per DoF (``kind`` one str or a list of nv; the numbers scalars or arrays of shape (nv,)),
with clip(x, L) = min(max(x, -L), L):

* ``'torque'``:   u is the torque, tau = clip(u, effort_limit)
* ``'position'``: u is the target position (1-DoF joints only),
  v_target = clip(kp (u - q), velocity_limit), tau = clip(kv (v_target - v), effort_limit)
* ``'velocity'``: u is the target velocity,
  v_target = clip(u, velocity_limit), tau = clip(kv (v_target - v), effort_limit)

``effort_limit`` / ``velocity_limit`` None: the model's (``inf`` where the model has none).
Negative gains or limits raise ValueError naming the DoF. Use with step: each step,
``tau = actuator_torques(model, q, v, u, ...)`` then ``q, v = step(model, q, v, tau, dt)``.)doc";

}  // namespace

void bind_actuators(nb::module_& m) {
  m.def(
      "actuator_torques",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle u, nb::handle kind, nb::handle kp, nb::handle kv,
         nb::handle effort_limit, nb::handle velocity_limit) {
        const Model& model = s.model;
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv), u_(u, "u", model.nv);
        const auto settings = servo_settings(model, kind, kp, kv, effort_limit, velocity_limit);
        Eigen::VectorXd tau(model.nv);
        actuator_torques<double>(model, settings, q_.x, v_.x, u_.x, tau);
        return to_numpy(tau);
      },
      nb::arg("model"), nb::arg("q"), nb::arg("v"), nb::arg("u"), nb::kw_only(), nb::arg("kind") = "torque",
      nb::arg("kp") = 0.0, nb::arg("kv") = 0.0, nb::arg("effort_limit").none() = nb::none(),
      nb::arg("velocity_limit").none() = nb::none(),
      (std::string("Joint torques, shape (nv,), of servo motors (Degrave et al.) under controls u (nv,).\n") +
       kServoDoc)
          .c_str());

  m.def(
      "actuator_torques_vjp",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle u, nb::handle tau_bar, nb::handle kind, nb::handle kp,
         nb::handle kv, nb::handle effort_limit, nb::handle velocity_limit) {
        const Model& model = s.model;
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv), u_(u, "u", model.nv),
            tau_bar_(tau_bar, "tau_bar", model.nv);
        const auto settings = servo_settings(model, kind, kp, kv, effort_limit, velocity_limit);
        Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                        u_bar = Eigen::VectorXd::Zero(model.nv);
        actuator_torques_vjp<double>(model, settings, q_.x, v_.x, u_.x, tau_bar_.x, q_bar, v_bar, u_bar);
        return nb::make_tuple(to_numpy(q_bar), to_numpy(v_bar), to_numpy(u_bar));
      },
      nb::arg("model"), nb::arg("q"), nb::arg("v"), nb::arg("u"), nb::arg("tau_bar"), nb::kw_only(),
      nb::arg("kind") = "torque", nb::arg("kp") = 0.0, nb::arg("kv") = 0.0,
      nb::arg("effort_limit").none() = nb::none(), nb::arg("velocity_limit").none() = nb::none(),
      (std::string("Adjoint of actuator_torques: (q_bar (nq,), v_bar (nv,), u_bar (nv,)) = tau_bar^T d tau / d(q, v, u).\n"
                   "A clipped quantity passes no gradient (zero derivative where |x| > L; at |x| == L the\n"
                   "unclipped branch). Same settings arguments as actuator_torques.\n") +
       kServoDoc)
          .c_str());
}

}  // namespace gradyn::python
