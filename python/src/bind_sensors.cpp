// gradyn.sensors and gradyn.sensors_vjp: the model's sensors (sensors/sensors.hpp,
// sensors/step_sensors.hpp), one world or a batch (a leading dimension B on every per-world array).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "common.hpp"
#include "gradyn/sensors/step_sensors.hpp"

namespace gradyn::python {

namespace {

/// dt and the integrator of a model whose sensors read a step; throws ArgumentError naming dt when a
/// sensor needs it and it is missing. Models without such sensors ignore dt (any value or None).
StepOptions sensor_step(const Model& model, std::optional<double> dt, const std::string& integrator) {
  const Sensor* needs = nullptr;
  for (const Sensor& s : model.sensors)
    if (sensor_needs_step(s.kind)) {
      needs = &s;
      break;
    }
  if (!needs) return StepOptions{dt.value_or(1.0), parse_integrator(integrator)};
  if (!dt)
    throw ArgumentError(std::string("dt: sensor '") + needs->name + "' (" + sensor_kind_name(needs->kind) +
                        ") reads a step (its accelerations and contact forces): pass dt, the step's length, and "
                        "tau / ctrl as for gradyn.step");
  return step_options(model, *dt, integrator);
}

/// A (B, n) argument, or None (zeros, or empty for ctrl).
struct Rows {
  Rows(nb::handle h, const char* name, Eigen::Index B, Eigen::Index n, bool zeros_when_none) {
    if (h.is_none()) {
      if (zeros_when_none) fallback = MatrixXr<double>::Zero(B, n);
      else fallback.resize(B, 0);
      return;
    }
    array = as_array(h, name);
    check_shape(array, name, {B, n});
    check_finite(Eigen::Map<const Eigen::VectorXd>(array.data(), B * n), name);  // index: row * n + entry
  }
  Eigen::Map<const Eigen::VectorXd> row(Eigen::Index b) const {
    if (array.is_valid())
      return Eigen::Map<const Eigen::VectorXd>(array.data() + b * array.shape(1), array.shape(1));
    return Eigen::Map<const Eigen::VectorXd>(fallback.data() + b * fallback.cols(), fallback.cols());
  }
  bool given() const { return array.is_valid(); }
  ConstArray array;
  MatrixXr<double> fallback;
};

Eigen::Index batch_of(nb::handle q, const Model& model) {
  const ConstArray a = as_array(q, "q");
  check_shape(a, "q", {-1, model.nq});
  return static_cast<Eigen::Index>(a.shape(0));
}

}  // namespace

void bind_sensors(nb::module_& m) {
  m.def(
      "sensors",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau, std::optional<double> dt, nb::handle ctrl,
         const std::string& integrator) -> nb::object {
        const Model& model = s.model;
        const StepOptions opt = sensor_step(model, dt, integrator);
        const int ns = model.nsensordata();
        if (is_batched(q)) {
          const Eigen::Index B = batch_of(q, model);
          const Rows q_(q, "q", B, model.nq, true), v_(v, "v", B, model.nv, true),
              tau_(tau, "tau", B, model.nv, true), ctrl_(ctrl, "ctrl", B, model.nu(), false);
          MatrixXr<double> out(B, ns);
          {
            nb::gil_scoped_release no_gil;
            DataLease data(s);
            Eigen::VectorXd r(ns);
            for (Eigen::Index b = 0; b < B; ++b) {
              step_sensor_readings<double>(model, *data, q_.row(b), v_.row(b), tau_.row(b), ctrl_.row(b), opt.dt,
                                           opt.integrator, r);
              out.row(b) = r.transpose();
            }
          }
          return nb::cast(take_numpy(std::move(out)));
        }
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        const OptionalVectorArg tau_(tau, "tau", model.nv, /*zeros_when_none=*/true);
        const OptionalVectorArg ctrl_(ctrl, "ctrl", model.nu(), /*zeros_when_none=*/false);
        check_finite(tau_.x(), "tau");
        check_finite(ctrl_.x(), "ctrl");
        Eigen::VectorXd r(ns);
        DataLease data(s);
        step_sensor_readings<double>(model, *data, q_.x, v_.x, tau_.x(), ctrl_.x(), opt.dt, opt.integrator, r);
        return nb::cast(to_numpy(r));
      },
      nb::arg("model"), nb::arg("q"), nb::arg("v"), nb::arg("tau").none() = nb::none(),
      nb::arg("dt").none() = nb::none(), nb::arg("ctrl").none() = nb::none(), nb::arg("integrator") = "euler",
      R"doc(
The readings of the model's sensors (MJCF <sensor>), shape (model.nsensordata,), in the order of
model.sensor_names; model.sensor_slices[name] picks one sensor's entries. MuJoCo's definitions:

* jointpos, jointvel: the joint's q, v entry (hinge and slide joints);
* framepos: the frame's origin in the world, or in the reference frame (reftype/refname);
* framequat: its orientation as a unit quaternion (w, x, y, z), MuJoCo's order, with w >= 0
  (MuJoCo does not fix the sign: its reading may be the negative);
* framelinvel, frameangvel: the origin's linear and the frame's angular velocity, world axes, or
  relative to the moving reference frame and in its axes;
* gyro: the angular velocity in the site's axes;
* accelerometer: the proper acceleration of the site (gravity reads +|g| upward at rest), site axes;
* touch: the sum of the normal contact forces on the site's body whose contact ray meets the site.

Readings are clamped by each sensor's cutoff as MuJoCo clamps them; noise is not applied (as in
MuJoCo; model files keep it).

jointpos ... gyro read (q, v). accelerometer and touch read a step: with them, dt is required,
and the readings are those of gradyn.step(model, q, v, tau, dt, integrator, ctrl=ctrl): the
accelerometer's acceleration is (v_next - v) / dt (for the default semi-implicit Euler step the
constrained acceleration, contact impulses included, as MuJoCo's qacc), touch the normal forces of
that step's contacts (impulse / dt for PGS and interior point). tau: shape (nv,) or None (zeros);
ctrl: shape (model.nu,) or None (every control zero).
Batched: q of shape (B, nq), v (B, nv), tau (B, nv) or None, ctrl (B, nu) or None gives (B, nsensordata).
)doc");

  m.def(
      "sensors_vjp",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle readings_bar, nb::handle tau, std::optional<double> dt,
         nb::handle ctrl, const std::string& integrator) -> nb::object {
        const Model& model = s.model;
        const StepOptions opt = sensor_step(model, dt, integrator);
        const int ns = model.nsensordata();
        if (is_batched(q)) {
          const Eigen::Index B = batch_of(q, model);
          const Rows q_(q, "q", B, model.nq, true), v_(v, "v", B, model.nv, true),
              r_bar(readings_bar, "readings_bar", B, ns, true), tau_(tau, "tau", B, model.nv, true),
              ctrl_(ctrl, "ctrl", B, model.nu(), false);
          MatrixXr<double> q_bar = MatrixXr<double>::Zero(B, model.nq), v_bar = MatrixXr<double>::Zero(B, model.nv),
                           tau_bar = MatrixXr<double>::Zero(B, model.nv),
                           ctrl_bar = MatrixXr<double>::Zero(B, ctrl_.given() ? model.nu() : 0);
          {
            nb::gil_scoped_release no_gil;
            DataLease data(s);
            Eigen::VectorXd qb(model.nq), vb(model.nv), tb(model.nv), cb(ctrl_.given() ? model.nu() : 0);
            for (Eigen::Index b = 0; b < B; ++b) {
              qb.setZero(), vb.setZero(), tb.setZero(), cb.setZero();
              step_sensor_readings_vjp<double>(model, *data, q_.row(b), v_.row(b), tau_.row(b), ctrl_.row(b), opt.dt,
                                               opt.integrator, r_bar.row(b), qb, vb, tb, cb);
              q_bar.row(b) = qb.transpose(), v_bar.row(b) = vb.transpose(), tau_bar.row(b) = tb.transpose();
              ctrl_bar.row(b) = cb.transpose();
            }
          }
          if (ctrl_.given())
            return nb::make_tuple(take_numpy(std::move(q_bar)), take_numpy(std::move(v_bar)),
                                  take_numpy(std::move(tau_bar)), take_numpy(std::move(ctrl_bar)));
          return nb::make_tuple(take_numpy(std::move(q_bar)), take_numpy(std::move(v_bar)), take_numpy(std::move(tau_bar)));
        }
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv), r_bar(readings_bar, "readings_bar", ns);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        const OptionalVectorArg tau_(tau, "tau", model.nv, /*zeros_when_none=*/true);
        const OptionalVectorArg ctrl_(ctrl, "ctrl", model.nu(), /*zeros_when_none=*/false);
        check_finite(tau_.x(), "tau");
        check_finite(ctrl_.x(), "ctrl");
        check_finite(r_bar.x, "readings_bar");
        Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                        tau_bar = Eigen::VectorXd::Zero(model.nv),
                        ctrl_bar = Eigen::VectorXd::Zero(ctrl_.given() ? model.nu() : 0);
        {
          DataLease data(s);
          step_sensor_readings_vjp<double>(model, *data, q_.x, v_.x, tau_.x(), ctrl_.x(), opt.dt, opt.integrator,
                                           r_bar.x, q_bar, v_bar, tau_bar, ctrl_bar);
        }
        if (ctrl_.given())
          return nb::make_tuple(to_numpy(q_bar), to_numpy(v_bar), to_numpy(tau_bar), to_numpy(ctrl_bar));
        return nb::make_tuple(to_numpy(q_bar), to_numpy(v_bar), to_numpy(tau_bar));
      },
      nb::arg("model"), nb::arg("q"), nb::arg("v"), nb::arg("readings_bar"), nb::arg("tau").none() = nb::none(),
      nb::arg("dt").none() = nb::none(), nb::arg("ctrl").none() = nb::none(), nb::arg("integrator") = "euler",
      R"doc(
Reverse mode of gradyn.sensors: given the adjoint of the readings (shape (model.nsensordata,)),
returns (q_bar, v_bar, tau_bar), and ctrl_bar after them when ctrl is given. q_bar is ambient (one
entry per number in q, as step_vjp's). Sensors of (q, v) pass nothing to tau and ctrl; an
accelerometer's adjoint flows through the step (step_vjp). A clamped reading (cutoff) passes none.
Touch readings are not differentiated (their forces come out of the contact solver): a non-zero
adjoint of one raises ValueError. Batched like gradyn.sensors: (B, ...) arrays give (B, ...) adjoints.
)doc");
}

}  // namespace gradyn::python
