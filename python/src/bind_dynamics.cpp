// The algorithms: kinematics, dynamics, energies, configuration space and time stepping.
// Every array argument is checked here (shape and dimension) before it reaches C++.
#include <nanobind/stl/string.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "common.hpp"
#include "gradyn/sim/batch.hpp"

namespace gradyn::python {

namespace {

// A configuration or tangent argument: one (n,) row, or (B, n) rows (batched). Refuses non-finite
// entries, naming the row and index.
struct StateRows {
  StateRows(nb::handle h, const char* name, Eigen::Index n) : array(as_array(h, name)), cols(n), name(name) {
    batched = array.ndim() == 2;
    if (batched) rows = static_cast<Eigen::Index>(array.shape(0));
    if ((array.ndim() != 1 && array.ndim() != 2) || static_cast<Eigen::Index>(array.shape(array.ndim() - 1)) != n)
      throw ArgumentError(std::string(name) + ": expected shape (" + std::to_string(n) + ",) or (B, " +
                          std::to_string(n) + ") for B rows, got " + shape_string(array));
    for (Eigen::Index i = 0; i < rows * cols; ++i)
      if (!std::isfinite(array.data()[i])) {
        std::ostringstream msg;
        msg << name << ": expected finite numbers, got " << array.data()[i] << " at ";
        if (batched) msg << "row " << i / cols << ", ";
        msg << "index " << i % cols;
        throw ArgumentError(msg.str());
      }
  }
  Eigen::Map<const Eigen::VectorXd> row(Eigen::Index r) const {
    return {array.data() + (batched ? r * cols : 0), cols};
  }
  ConstArray array;
  Eigen::Index cols, rows = 1;
  const char* name;
  bool batched = false;
};

// Rows of a two-argument batch: each argument one row (shared) or the same B rows.
Eigen::Index shared_rows(const StateRows& a, const StateRows& b) {
  if (a.batched && b.batched && a.rows != b.rows)
    throw ArgumentError(std::string(a.name) + " and " + b.name + ": expected the same number of rows (or one of "
                        "them 1-D, shared by every row), got " + std::to_string(a.rows) + " and " +
                        std::to_string(b.rows));
  return a.batched ? a.rows : b.rows;
}

// f(a_row, b_row, out_row) for each row pair of a two-argument batch, into rows of n entries:
// (rows, n) when either argument is batched, else the one row as (n,).
template <class F>
nb::object map_rows(const StateRows& a, const StateRows& b, Eigen::Index n, F&& f) {
  const Eigen::Index rows = shared_rows(a, b);
  MatrixXr<double> out(rows, n);
  for (Eigen::Index r = 0; r < rows; ++r) {
    Eigen::Map<Eigen::VectorXd> row(out.data() + r * n, n);
    f(a.row(r), b.row(r), row);
  }
  if (a.batched || b.batched) return nb::cast(take_numpy(std::move(out)));
  return nb::cast(to_numpy(Eigen::VectorXd(out.row(0).transpose())));
}

int frame_or_raise(const Model& model, const std::string& name) {
  const int f = model.frame_id(name);
  if (f < 0) throw nb::key_error(("no frame named '" + name + "' (see model.frame_names)").c_str());
  return f;
}

ReferenceFrame parse_reference(const std::string& r) {
  if (r == "local_world_aligned") return ReferenceFrame::LocalWorldAligned;
  if (r == "local") return ReferenceFrame::Local;
  if (r == "world") return ReferenceFrame::World;
  throw ArgumentError("reference: expected 'local_world_aligned', 'local' or 'world', got '" + r + "'");
}

NumpyArray poses_to_numpy(const std::vector<Pose<double>>& poses) {
  double* d;
  NumpyArray out = new_array({poses.size(), 4, 4}, &d);
  for (const Pose<double>& pose : poses) {
    Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> T(d);
    T.setIdentity();
    T.topLeftCorner<3, 3>() = pose.R;
    T.topRightCorner<3, 1>() = pose.p;
    d += 16;
  }
  return out;
}

}  // namespace

void bind_dynamics(nb::module_& m) {
  const auto model_ = nb::arg("model");

  m.def(
      "aba",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv), tau_(tau, "tau", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        check_finite(tau_.x, "tau");
        DataLease data(s);
        return to_numpy(gradyn::aba<double>(s.model, *data, q_.x, v_.x, tau_.x));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("tau"), R"doc(
Forward dynamics by the articulated-body algorithm: a = M(q)^-1 (tau - C(q, v) v - g(q)), shape (nv,).
Armature is included in M; passive spring and damper forces are not (see forward_dynamics).
)doc");

  m.def(
      "rnea",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle a) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv), a_(a, "a", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        check_finite(a_.x, "a");
        DataLease data(s);
        return to_numpy(gradyn::rnea<double>(s.model, *data, q_.x, v_.x, a_.x));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("a"),
      "Inverse dynamics by recursive Newton-Euler: tau = M(q) a + C(q, v) v + g(q), shape (nv,).");

  m.def(
      "crba",
      [](PyModel& s, nb::handle q) {
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        return matrix_to_numpy(gradyn::crba<double>(s.model, *data, q_.x));
      },
      model_, nb::arg("q"),
      "Joint-space inertia matrix M(q) by the composite rigid-body algorithm, shape (nv, nv), symmetric, "
      "armature on the diagonal.");

  m.def(
      "nonlinear_effects",
      [](PyModel& s, nb::handle q, nb::handle v) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        DataLease data(s);
        return to_numpy(gradyn::nonlinear_effects<double>(s.model, *data, q_.x, v_.x));
      },
      model_, nb::arg("q"), nb::arg("v"), "Coriolis, centrifugal and gravity torques C(q, v) v + g(q), shape (nv,).");

  m.def(
      "generalized_gravity",
      [](PyModel& s, nb::handle q) {
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        return to_numpy(gradyn::generalized_gravity<double>(s.model, *data, q_.x));
      },
      model_, nb::arg("q"), "Gravity torques g(q), shape (nv,).");

  m.def(
      "passive_forces",
      [](PyModel& s, nb::handle q, nb::handle v) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        DataLease data(s);
        return to_numpy(gradyn::passive_forces<double>(s.model, *data, q_.x, v_.x));
      },
      model_, nb::arg("q"), nb::arg("v"),
      "Joint spring and damper torques -damping * v - stiffness * (q (-) q_rest), shape (nv,).");

  m.def(
      "forward_dynamics",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv), tau_(tau, "tau", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        check_finite(tau_.x, "tau");
        DataLease data(s);
        return to_numpy(gradyn::forward_dynamics<double>(s.model, *data, q_.x, v_.x, tau_.x));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("tau"),
      "Accelerations the simulator integrates: aba(q, v, tau + passive_forces(q, v)), shape (nv,).");

  m.def(
      "forward_kinematics",
      [](PyModel& s, nb::handle q, nb::handle v) {
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        nb::dict out;
        if (v.is_none()) {
          gradyn::forward_kinematics<double>(s.model, *data, q_.x);
        } else {
          VectorArg v_(v, "v", s.model.nv);
          check_finite(v_.x, "v");
          gradyn::forward_kinematics<double>(s.model, *data, q_.x, v_.x);
          double* d;
          NumpyArray vel = new_array({static_cast<size_t>(s.model.nbodies()), 6}, &d);
          for (const Vector6<double>& vb : (*data).v) {
            Eigen::Map<Vector6<double>> row(d);
            row = vb;
            d += 6;
          }
          out["body_velocities"] = vel;
        }
        update_frames<double>(s.model, *data);
        out["body_poses"] = poses_to_numpy((*data).oMi);
        out["frame_poses"] = poses_to_numpy((*data).oMf);
        return out;
      },
      model_, nb::arg("q"), nb::arg("v") = nb::none(), R"doc(
Poses (and velocities) of every body and frame. Returns a dict:

* 'body_poses': (nbodies, 4, 4) homogeneous world poses, in the order of model.body_names;
* 'frame_poses': (nframes, 4, 4), in the order of model.frame_names;
* 'body_velocities' (only when v is given): (nbodies, 6) spatial velocities [angular; linear]
  of each body, in its own frame.
)doc");

  m.def(
      "frame_pose",
      [](PyModel& s, nb::handle q, const std::string& frame) {
        const int f = frame_or_raise(s.model, frame);
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        gradyn::forward_kinematics<double>(s.model, *data, q_.x);
        update_frames<double>(s.model, *data);
        return to_numpy((*data).oMf[f]);
      },
      model_, nb::arg("q"), nb::arg("frame"), "World pose of a named frame as a 4x4 homogeneous matrix.");

  m.def(
      "frame_jacobian",
      [](PyModel& s, nb::handle q, const std::string& frame, const std::string& reference) {
        const int f = frame_or_raise(s.model, frame);
        const ReferenceFrame ref = parse_reference(reference);
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        Eigen::MatrixXd J = Eigen::MatrixXd::Zero(6, s.model.nv);
        gradyn::frame_jacobian<double>(s.model, *data, q_.x, f, ref, J);
        return matrix_to_numpy(J);
      },
      model_, nb::arg("q"), nb::arg("frame"), nb::arg("reference") = "local_world_aligned", R"doc(
Jacobian of a named frame, shape (6, nv): J v is the frame's spatial velocity, rows [angular; linear].
reference: 'local_world_aligned' (velocity of the frame's origin in world axes, the default),
'local' (in the frame's own axes) or 'world' (spatial velocity about the world origin).
)doc");

  m.def(
      "kinetic_energy",
      [](PyModel& s, nb::handle q, nb::handle v) {
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv);
        check_finite(q_.x, "q");
        check_finite(v_.x, "v");
        DataLease data(s);
        return gradyn::kinetic_energy<double>(s.model, *data, q_.x, v_.x);
      },
      model_, nb::arg("q"), nb::arg("v"), "Kinetic energy 1/2 v^T M(q) v (armature included).");

  m.def(
      "potential_energy",
      [](PyModel& s, nb::handle q) {
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        return gradyn::potential_energy<double>(s.model, *data, q_.x);
      },
      model_, nb::arg("q"), "Gravitational potential energy plus joint spring energy.");

  m.def(
      "center_of_mass",
      [](PyModel& s, nb::handle q) {
        VectorArg q_(q, "q", s.model.nq);
        check_finite(q_.x, "q");
        DataLease data(s);
        return to_numpy(gradyn::center_of_mass<double>(s.model, *data, q_.x));
      },
      model_, nb::arg("q"), "Centre of mass of the whole model in the world frame, shape (3,).");

  m.def(
      "total_mass", [](PyModel& s) { return gradyn::total_mass<double>(s.model); }, model_,
      "Total mass of the bodies (kg).");

  m.def(
      "integrate",
      [](PyModel& s, nb::handle q, nb::handle dv) {
        const StateRows q_(q, "q", s.model.nq), dv_(dv, "dv", s.model.nv);
        return map_rows(q_, dv_, s.model.nq, [&](const auto& qr, const auto& dvr, auto& out) {
          gradyn::integrate<double>(s.model, qr, dvr, out);
        });
      },
      model_, nb::arg("q"), nb::arg("dv"),
      "q (+) dv: move q along the tangent vector dv (e.g. dt * v) on each joint's manifold, shape "
      "(nq,).\n\nBatches: q (B, nq) and/or dv (B, nv) give (B, nq), a 1-D argument shared by every "
      "row.");

  m.def(
      "difference",
      [](PyModel& s, nb::handle q0, nb::handle q1) {
        const StateRows q0_(q0, "q0", s.model.nq), q1_(q1, "q1", s.model.nq);
        return map_rows(q0_, q1_, s.model.nv, [&](const auto& a, const auto& b, auto& out) {
          gradyn::difference<double>(s.model, a, b, out);
        });
      },
      model_, nb::arg("q0"), nb::arg("q1"),
      "q1 (-) q0: the tangent vector d with integrate(q0, d) = q1, shape (nv,).\n\nBatches: q0 "
      "and/or q1 of shape (B, nq) give (B, nv), a 1-D argument shared by every row (one call in "
      "C++ instead of a Python loop).");

  nb::enum_<StatusFlag>(m, "Status", nb::is_flag(), nb::is_arithmetic(), R"doc(
What went wrong in a step, as bits (an enum.IntFlag); step(..., return_status=True) and
rollout(..., return_status=True) report them. Numerical trouble never raises: the step finishes and
sets its flag, so one bad world does not stop a batch::

  NON_FINITE            a NaN or inf in the new state (it diverged)
  SINGULAR_INERTIA      a joint's articulated inertia was not invertible (zero mass or inertia)
  CONTACT_OVERFLOW      more contacts than the model's buffer holds; some were dropped
  BROADPHASE_OVERFLOW   more overlapping bounding-box pairs than the broadphase holds; some were dropped
  SOLVER_NOT_CONVERGED  the PGS or interior-point solve stopped at its iteration limit before its
                        tolerance (the step keeps its last iterate)
  DEEP_PENETRATION      a contact deeper than max_penetration (Model.with_contact)
)doc")
      .value("OK", kStatusOk)
      .value("NON_FINITE", kStatusNonFinite)
      .value("SINGULAR_INERTIA", kStatusSingularInertia)
      .value("CONTACT_OVERFLOW", kStatusContactOverflow)
      .value("BROADPHASE_OVERFLOW", kStatusBroadphaseOverflow)
      .value("SOLVER_NOT_CONVERGED", kStatusSolverNotConverged)
      .value("DEEP_PENETRATION", kStatusDeepPenetration);

  m.def(
      "step",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau, double dt, const std::string& integrator,
         bool return_status, nb::handle ctrl, nb::handle params, std::optional<int> threads) -> nb::object {
        const Integrator scheme = step_options(s.model, dt, integrator).integrator;
        if (is_batched(q)) return step_batched(s, q, v, tau, ctrl, dt, scheme, return_status, params, threads);
        if (!params.is_none()) {
          nb::tuple one = nb::borrow<nb::tuple>(unbatched(step_batched(s, one_world(q), one_world(v), one_world(tau),
                                                                        one_world(ctrl), dt, scheme, return_status,
                                                                        one_world(params), threads)));
          if (!return_status) return one;
          // a single step's status is a gradyn.Status, as without params
          return nb::make_tuple(one[0], one[1], static_cast<StatusFlag>(nb::cast<std::uint32_t>(one[2])));
        }
        VectorArg q_(q, "q", s.model.nq), v_(v, "v", s.model.nv);
        const OptionalVectorArg tau_(tau, "tau", s.model.nv, /*zeros_when_none=*/true);
        const OptionalVectorArg ctrl_(ctrl, "ctrl", s.model.nu(), /*zeros_when_none=*/false);
        Eigen::VectorXd q_next(s.model.nq), v_next(s.model.nv);
        DataLease data(s);
        (*data).status = kStatusOk;  // the flags of this step alone
        gradyn::step<double>(s.model, *data, q_.x, v_.x, tau_.x(), ctrl_.x(), dt, scheme, q_next, v_next);
        if (!return_status) return nb::make_tuple(to_numpy(q_next), to_numpy(v_next));
        return nb::make_tuple(to_numpy(q_next), to_numpy(v_next), static_cast<StatusFlag>((*data).status));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("tau").none(), nb::arg("dt"), nb::arg("integrator") = "euler",
      nb::arg("return_status") = false, nb::arg("ctrl").none() = nb::none(), nb::arg("params").none() = nb::none(),
      nb::arg("threads").none() = nb::none(), R"doc(
One time step from (q, v) under joint torques tau and the actuators' controls ctrl (passive forces
included; contact forces or impulses under the model's contact model, see Model.with_contact).

* tau: shape (nv,), generalised forces added to the actuators'; None: zeros.
* ctrl: shape (model.nu,), one control per actuator (model.actuator_names; the actuators run inside
  the step: force = gain ctrl + bias, clamped, times gear); None: every control zero.
* integrator: 'euler' (semi-implicit: v+ = v + dt a, q+ = q (+) dt v+) or 'rk4'.

Returns (q_next, v_next); with return_status=True (q_next, v_next, status), status a gradyn.Status
(Status.OK, or the flags of what went wrong in this step: the step never raises for numerical
trouble, e.g. a contact solver that did not converge or a state that became NaN).
params: shape (len(model.param_names),), the step of model.with_params(params).
Batched: q of shape (B, nq) steps B worlds at once, on `threads` threads (None: all cores) without
the GIL; v (B, nv), tau (B, nv) or None, ctrl (B, nu) or None, params (B, nparams) or None (one model
per world). Returns (B, nq), (B, nv) [and a uint32 status (B,)]. Each world starts from a fresh
workspace (no contact warm start carried between calls), so its numbers are bitwise those of the
same call on that world alone, for every thread count.
)doc");

  m.def(
      "rollout",
      [](PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, double dt, const std::string& integrator,
         bool return_status, nb::handle ctrls, nb::handle params, std::optional<int> threads) -> nb::object {
        const Integrator scheme = step_options(s.model, dt, integrator).integrator;
        // One world is a batch of one, with params given or not: the same code and the same numbers.
        if (is_batched(q0)) return rollout_batched(s, q0, v0, taus, ctrls, dt, scheme, return_status, params, threads);
        if (!params.is_none())
          return unbatched(rollout_batched(s, one_world(q0), one_world(v0), one_world(taus), one_world(ctrls), dt, scheme,
                                           return_status, one_world(params), threads));
        VectorArg q_(q0, "q0", s.model.nq), v_(v0, "v0", s.model.nv);
        const Eigen::Index T = steps_of(taus, ctrls);
        const OptionalRowsArg taus_(taus, "taus", T, s.model.nv, /*zeros_when_none=*/true);
        const OptionalRowsArg ctrls_(ctrls, "ctrls", T, s.model.nu(), /*zeros_when_none=*/false);
        MatrixXr<double> qs(T + 1, s.model.nq), vs(T + 1, s.model.nv);
        std::vector<std::uint32_t> status(return_status ? static_cast<size_t>(T) : 0);  // empty: not recorded
        {
          nb::gil_scoped_release no_gil;
          DataLease data(s);
          forget_history(s.model, *data);  // a rollout depends on its inputs alone (as each world of a batch)
          gradyn::rollout<double>(s.model, *data, q_.x, v_.x, taus_.x(), ctrls_.x(), dt, scheme, qs, vs, status);
        }
        if (!return_status) return nb::make_tuple(take_numpy(std::move(qs)), take_numpy(std::move(vs)));
        auto* owned = new std::vector<std::uint32_t>(std::move(status));
        nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<std::uint32_t>*>(p); });
        nb::ndarray<nb::numpy, std::uint32_t> statuses(owned->data(), {owned->size()}, owner);
        return nb::make_tuple(take_numpy(std::move(qs)), take_numpy(std::move(vs)), statuses);
      },
      model_, nb::arg("q0"), nb::arg("v0"), nb::arg("taus").none(), nb::arg("dt"), nb::arg("integrator") = "euler",
      nb::arg("return_status") = false, nb::arg("ctrls").none() = nb::none(), nb::arg("params").none() = nb::none(),
      nb::arg("threads").none() = nb::none(), R"doc(
Simulate T steps from (q0, v0) with one row per step: taus of shape (T, nv) (generalised forces;
None: zeros) and ctrls of shape (T, model.nu) (the actuators' controls; None: zeros). At least one
of them is given, and it sets T.
Returns (qs, vs) of shapes (T + 1, nq) and (T + 1, nv); row 0 is the initial state. With
return_status=True (qs, vs, status), status a uint32 array of shape (T,): entry t holds the
gradyn.Status flags step t raised (0 where all went well), e.g. (status & gradyn.Status.NON_FINITE) != 0
marks the steps that diverged. A step with trouble never raises; the rollout goes on.
Runs without the GIL, so rollouts on different models can run in parallel threads. Every rollout
starts from a fresh workspace (no contact warm start from an earlier call): the same inputs give
the same bits.
params: shape (len(model.param_names),), the rollout of model.with_params(params).
Batched (many worlds on all cores): q0 of shape (B, nq) runs B worlds, v0 (B, nv), taus (B, T, nv)
or None, ctrls (B, T, nu) or None, params (B, nparams) or None (one model per world: domain
randomisation, populations); threads: how many threads (None: all cores; the GIL is released).
Returns qs (B, T + 1, nq), vs (B, T + 1, nv) [and status (B, T)]. Each world runs on one thread with
its own workspace, so its arrays are bitwise those of rollout on that world alone, for every thread
count; a world that diverges flags its own status and leaves the others untouched.
)doc");
}

}  // namespace gradyn::python
