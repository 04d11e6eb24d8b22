// The model's actuators (Model.nu, actuator_names, actuators; ModelBuilder.add_actuator), which
// every step runs under its ctrl argument; and gradyn.actuator_torques / actuator_torques_vjp:
// paper 002's servo motors as a map alone, with per-DoF settings passed as arguments.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "gradyn/dynamics/actuators.hpp"
#include "gradyn/model/builder.hpp"

namespace gradyn::python {

namespace {

ActuatorKind parse_actuator_kind(const std::string& name) {
  for (ActuatorKind k : {ActuatorKind::Motor, ActuatorKind::Position, ActuatorKind::Velocity, ActuatorKind::General,
                         ActuatorKind::Servo})
    if (name == actuator_kind_name(k)) return k;
  throw ArgumentError("kind: expected 'motor', 'position', 'velocity', 'general' or 'servo', got '" + name + "'");
}

// (lower, upper) or None.
std::optional<std::pair<double, double>> range_arg(nb::handle h, const char* name) {
  if (h.is_none()) return std::nullopt;
  const Eigen::VectorXd r = VectorArg(h, name, 2).x;
  return std::pair{r[0], r[1]};
}

nb::dict actuator_dict(const Model& m, const Actuator& a) {
  nb::dict d;
  d["name"] = a.name;
  d["kind"] = actuator_kind_name(a.kind);
  d["joint"] = m.joint_names[a.joint];
  d["gear"] = a.gear;
  d["gain"] = nb::make_tuple(a.gain[0], a.gain[1], a.gain[2]);
  d["bias"] = nb::make_tuple(a.bias[0], a.bias[1], a.bias[2]);
  if (a.kind == ActuatorKind::Servo) {
    d["kp"] = a.servo_kp;
    d["kv"] = a.servo_kv;
    d["velocity_limit"] = a.servo_velocity_limit;
  }
  d["ctrlrange"] = a.ctrl_limited ? nb::object(nb::make_tuple(a.ctrl_lower, a.ctrl_upper)) : nb::none();
  d["forcerange"] = a.force_limited ? nb::object(nb::make_tuple(a.force_lower, a.force_upper)) : nb::none();
  return d;
}

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
  nb::class_<PyModel> model_class = nb::borrow<nb::class_<PyModel>>(m.attr("Model"));
  model_class
      .def_prop_ro("nu", [](const PyModel& s) { return s.model.nu(); },
                   "Number of actuators, and of controls a step takes (ctrl of shape (nu,)).")
      .def_prop_ro("actuator_names",
                   [](const PyModel& s) {
                     std::vector<std::string> n;
                     for (const Actuator& a : s.model.actuators) n.push_back(a.name);
                     return n;
                   },
                   "The actuators' names, in control order.")
      .def_prop_ro("actuators",
                   [](const PyModel& s) {
                     nb::list out;
                     for (const Actuator& a : s.model.actuators) out.append(actuator_dict(s.model, a));
                     return out;
                   },
                   R"doc(
The actuators, in control order, one dict each: name, kind ('motor', 'position', 'velocity',
'general', 'servo'), joint, gear, gain and bias (MuJoCo's affine force law: force = (gain[0] +
gain[1] L + gain[2] V) ctrl + bias[0] + bias[1] L + bias[2] V, L = gear q, V = gear v; a servo
has kp, kv, velocity_limit instead: force = kv (clip(kp (ctrl - L), velocity_limit) - V)),
ctrlrange and forcerange ((lower, upper), or None when unclamped). The joint receives gear * force.
)doc");

  nb::class_<ModelBuilder> builder_class = nb::borrow<nb::class_<ModelBuilder>>(m.attr("ModelBuilder"));
  builder_class.def(
      "add_actuator",
      [](ModelBuilder& b, const std::string& joint, const std::string& kind, const std::string& name, double gear,
         double kp, double kv, nb::handle gain, nb::handle bias, double velocity_limit, nb::handle ctrlrange,
         nb::handle forcerange) -> ModelBuilder& {
        ActuatorSpec a;
        a.joint = joint;
        a.kind = parse_actuator_kind(kind);
        a.name = name;
        a.gear = gear;
        a.kp = kp;
        a.kv = kv;
        a.gain = vector3_arg(gain, "gain");
        a.bias = vector3_arg(bias, "bias");
        a.velocity_limit = velocity_limit;
        a.ctrl_range = range_arg(ctrlrange, "ctrlrange");
        a.force_range = range_arg(forcerange, "forcerange");
        return b.add_actuator(std::move(a));
      },
      nb::arg("joint"), nb::arg("kind") = "motor", nb::arg("name") = "", nb::arg("gear") = 1.0, nb::arg("kp") = 0.0,
      nb::arg("kv") = 0.0, nb::arg("gain") = nb::make_tuple(1.0, 0.0, 0.0), nb::arg("bias") = nb::make_tuple(0.0, 0.0, 0.0),
      nb::arg("velocity_limit") = std::numeric_limits<double>::infinity(), nb::arg("ctrlrange").none() = nb::none(),
      nb::arg("forcerange").none() = nb::none(), nb::rv_policy::reference_internal, R"doc(
Add an actuator on a revolute, continuous or prismatic joint; its control is the next entry of
ctrl. Returns the builder. With L = gear q and V = gear v::

  'motor'     force = ctrl
  'position'  force = kp ctrl - kp L - kv V            (MuJoCo's <position kp kv>)
  'velocity'  force = kv ctrl - kv V                   (MuJoCo's <velocity kv>)
  'general'   force = (gain[0] + gain[1] L + gain[2] V) ctrl + bias[0] + bias[1] L + bias[2] V
  'servo'     force = kv (clip(kp (ctrl - L), velocity_limit) - V)   (paper 002's servo)

ctrl is first clamped to ctrlrange, the force to forcerange ((lower, upper); None: unclamped), and
the joint receives gear * force. name: default the joint's name (then "<joint>/<kind>" for more).
build() raises gradyn.ModelError naming the actuator when its joint is missing or not 1-DoF.
)doc");

  m.def(
      "actuator_torques",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle u, nb::handle kind, nb::handle kp, nb::handle kv,
         nb::handle effort_limit, nb::handle velocity_limit) {
        const Model& model = s.model;
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv), u_(u, "u", model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        check_finite(u_.x, "u");
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
        for (const auto& [x, name] : {std::pair{&q_, "q"}, {&v_, "v"}, {&u_, "u"}, {&tau_bar_, "tau_bar"}})
          check_finite(x->x, name);
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
                   "A clipped quantity passes no gradient (zero derivative where ``|x| > L``; at ``|x| == L`` the\n"
                   "unclipped branch). Same settings arguments as actuator_torques.\n") +
       kServoDoc)
          .c_str());
}

}  // namespace gradyn::python
