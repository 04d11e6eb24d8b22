// Reverse mode through time stepping (step_vjp, rollout_vjp) and the gradcheck utility.
// q adjoints are ambient: one per number in q, quaternion components included, i.e. the gradient
// of the function as computed from the raw q array, exact in every direction (the dynamics read a
// quaternion normalised, so their part of its adjoint has no component along it). Parameter
// adjoints come back in the flat layout of model.param_names (params_gradient); joint axes are
// normalised by with_params.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "common.hpp"
#include "gradyn/grad/gradcheck.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/batch.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn::python {

namespace {

// A (rows, cols) float64 argument viewed as a row-major matrix; None gives zeros.
class MatrixArg {
 public:
  MatrixArg(nb::handle h, const char* name, Eigen::Index rows, Eigen::Index cols) : rows_(rows), cols_(cols) {
    if (h.is_none()) {
      zeros_ = MatrixXr<double>::Zero(rows, cols);
      data_ = zeros_.data();
    } else {
      array_ = as_array(h, name);
      check_shape(array_, name, {rows, cols});
      data_ = array_.data();
    }
  }
  Eigen::Map<const MatrixXr<double>> x() const { return {data_, rows_, cols_}; }

 private:
  Eigen::Index rows_, cols_;
  ConstArray array_;
  MatrixXr<double> zeros_;
  const double* data_ = nullptr;
};

// A float64 vector argument for the per-step calls: a C-contiguous float64 buffer (a NumPy array)
// is read in place through the buffer protocol, which costs a fraction of nanobind's DLPack import
// (~0.2 us a vector); anything else (lists, other dtypes, strided arrays) goes through VectorArg,
// with its conversions and messages.
class StepVectorArg {
 public:
  StepVectorArg(nb::handle h, const char* name, Eigen::Index n) {
    if (PyObject_CheckBuffer(h.ptr())) {
      if (PyObject_GetBuffer(h.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
        if (view_.ndim == 1 && view_.shape[0] == n && view_.itemsize == 8 && is_native_double(view_.format)) {
          data_ = static_cast<const double*>(view_.buf);
          held_ = true;
          return;
        }
        PyBuffer_Release(&view_);
      } else {
        PyErr_Clear();  // e.g. not contiguous: VectorArg converts it
      }
    }
    fallback_.emplace(h, name, n);
    data_ = fallback_->x.data();
  }
  StepVectorArg(const StepVectorArg&) = delete;
  StepVectorArg& operator=(const StepVectorArg&) = delete;
  ~StepVectorArg() {
    if (held_) PyBuffer_Release(&view_);
  }
  Eigen::Map<const Eigen::VectorXd> x(Eigen::Index n) const { return {data_, n}; }

 private:
  static bool is_native_double(const char* f) {
    if (f == nullptr) return false;
    if (*f == '@' || *f == '=' || (*f == '<' && std::endian::native == std::endian::little)) ++f;
    return f[0] == 'd' && f[1] == '\0';
  }
  Py_buffer view_{};
  bool held_ = false;
  std::optional<VectorArg> fallback_;
  const double* data_ = nullptr;
};

nb::dict block_dict(const GradcheckBlock& b) {
  nb::dict d;
  d["size"] = b.size;
  d["scale"] = b.scale;
  d["ad_error"] = b.ad_error;
  d["fd_error"] = b.fd_error;
  d["ad_coords"] = b.ad_coords;
  d["fd_coords"] = b.fd_coords;
  d["worst_ad_index"] = b.worst_ad_index;
  d["worst_fd_index"] = b.worst_fd_index;
  return d;
}

}  // namespace

void bind_gradients(nb::module_& m) {
  const auto model_ = nb::arg("model");

  m.def(
      "step_vjp",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau, double dt, nb::handle q_next_bar,
         nb::handle v_next_bar, const std::string& integrator, nb::handle ctrl, nb::handle params,
         std::optional<int> threads) -> nb::object {
        const Integrator scheme = step_options(s.model, dt, integrator).integrator;
        if (is_batched(q))
          return step_vjp_batched(s, q, v, tau, ctrl, dt, q_next_bar, v_next_bar, scheme, params, threads);
        if (!params.is_none())
          return unbatched(step_vjp_batched(s, one_world(q), one_world(v), one_world(tau), one_world(ctrl), dt,
                                            one_world(q_next_bar), one_world(v_next_bar), scheme, one_world(params),
                                            threads));
        const Model& model = s.model;
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv);
        const OptionalVectorArg tau_(tau, "tau", model.nv, /*zeros_when_none=*/true);
        const OptionalVectorArg ctrl_(ctrl, "ctrl", model.nu(), /*zeros_when_none=*/false);
        VectorArg qn_bar(q_next_bar, "q_next_bar", model.nq), vn_bar(v_next_bar, "v_next_bar", model.nv);
        Eigen::VectorXd q_bar = Eigen::VectorXd::Zero(model.nq), v_bar = Eigen::VectorXd::Zero(model.nv),
                        tau_bar = Eigen::VectorXd::Zero(model.nv),
                        ctrl_bar = Eigen::VectorXd::Zero(ctrl_.given() ? model.nu() : 0);
        ModelTangent tangent(model);
        {
          DataLease data(s);
          gradyn::step_vjp<double>(model, *data, q_.x, v_.x, tau_.x(), ctrl_.x(), dt, scheme, qn_bar.x, vn_bar.x,
                                   q_bar, v_bar, tau_bar, ctrl_bar, tangent);
        }
        if (ctrl_.given())
          return nb::make_tuple(to_numpy(q_bar), to_numpy(v_bar), to_numpy(tau_bar),
                                to_numpy(params_gradient<double>(model, tangent)), to_numpy(ctrl_bar));
        return nb::make_tuple(to_numpy(q_bar), to_numpy(v_bar), to_numpy(tau_bar),
                              to_numpy(params_gradient<double>(model, tangent)));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("tau").none(), nb::arg("dt"), nb::arg("q_next_bar"),
      nb::arg("v_next_bar"), nb::arg("integrator") = "euler", nb::arg("ctrl").none() = nb::none(),
      nb::arg("params").none() = nb::none(), nb::arg("threads").none() = nb::none(), R"doc(
Reverse mode of step: given the adjoints (gradients of a loss) of the next state, returns
(q_bar, v_bar, tau_bar, params_bar), shapes (nq,), (nv,), (nv,) and (len(model.param_names),),
and ctrl_bar (model.nu,) after them when ctrl is given (tau None: zeros; ctrl None: every control
zero, as in step). params: the adjoint of the step of model.with_params(params).
Batched: q of shape (B, nq) (and every per-world array with that leading B, params (B, nparams))
differentiates B worlds on `threads` threads (None: all cores); each world's results are those of
the same call on it alone.

q_bar is ambient: one entry per number in q, quaternion components included (the gradient of
the step as computed from the raw q array), exact in every direction, also off the unit sphere.
The dynamics and integrate read a quaternion normalised (q and s q, s > 0, are the same
rotation), so a quaternion's adjoint has no component along itself. params_bar is in
the flat layout of model.param_names / model.params; joint axes are normalised by with_params, so
an axis adjoint has no component along the axis. The forward step is recomputed from (q, v, tau).
)doc");

  m.def(
      "step_jacobian",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle tau, double dt, const std::string& integrator,
         nb::handle ctrl, nb::handle params, std::optional<int> threads) -> nb::object {
        const Integrator scheme = step_options(s.model, dt, integrator).integrator;
        if (is_batched(q)) return step_jacobian_batched(s, q, v, tau, ctrl, dt, scheme, params, threads);
        if (!params.is_none())
          return unbatched(step_jacobian_batched(s, one_world(q), one_world(v), one_world(tau), one_world(ctrl), dt,
                                                 scheme, one_world(params), threads));
        const Model& model = s.model;
        const StepVectorArg q_(q, "q", model.nq), v_(v, "v", model.nv);
        std::optional<StepVectorArg> tau_;
        if (!tau.is_none()) tau_.emplace(tau, "tau", model.nv);
        const OptionalVectorArg ctrl_(ctrl, "ctrl", model.nu(), /*zeros_when_none=*/false);
        // A, B and B_ctrl in one buffer, column-major (Eigen's layout), handed to numpy as
        // Fortran-ordered arrays: no copy, no transposition (a row-major copy cost ~1 us of a ~10 us call).
        const size_t n = static_cast<size_t>(model.nv), rows = 2 * n;
        const size_t nu = ctrl_.given() ? static_cast<size_t>(model.nu()) : 0;
        double* buffer = new double[std::max<size_t>(rows * (3 * n + nu), 1)];
        nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<double*>(p); });
        double* b_ctrl = buffer + rows * 3 * n;
        Eigen::Map<Eigen::MatrixXd> A(buffer, 2 * model.nv, 2 * model.nv), B(buffer + rows * rows, 2 * model.nv, model.nv),
            B_ctrl(b_ctrl, 2 * model.nv, static_cast<Eigen::Index>(nu));
        {
          DataLease data(s);
          Eigen::VectorXd zeros;  // tau None
          if (!tau_) zeros = Eigen::VectorXd::Zero(model.nv);
          const Eigen::Ref<const Eigen::VectorXd> tau_x =
              tau_ ? Eigen::Ref<const Eigen::VectorXd>(tau_->x(model.nv)) : Eigen::Ref<const Eigen::VectorXd>(zeros);
          gradyn::step_jacobian(model, *data, q_.x(model.nq), v_.x(model.nv), tau_x, ctrl_.x(), dt, scheme, A, B, B_ctrl);
        }
        const int64_t col_major[2] = {1, static_cast<int64_t>(rows)};
        const size_t shape_A[2] = {rows, rows}, shape_B[2] = {rows, n}, shape_C[2] = {rows, nu};
        if (ctrl_.given())
          return nb::make_tuple(NumpyArray(buffer, 2, shape_A, owner, col_major),
                                NumpyArray(buffer + rows * rows, 2, shape_B, owner, col_major),
                                NumpyArray(b_ctrl, 2, shape_C, owner, col_major));
        return nb::make_tuple(NumpyArray(buffer, 2, shape_A, owner, col_major),
                              NumpyArray(buffer + rows * rows, 2, shape_B, owner, col_major));
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("tau").none(), nb::arg("dt"), nb::arg("integrator") = "euler",
      nb::arg("ctrl").none() = nb::none(), nb::arg("params").none() = nb::none(),
      nb::arg("threads").none() = nb::none(), R"doc(
The analytical Jacobian of one step: returns (A, B), shapes (2 nv, 2 nv) and (2 nv, nv), and, when
ctrl is given, B_ctrl (2 nv, model.nu) after them, with

    [dq_next; dv_next] = A [dq; dv] + B dtau + B_ctrl dctrl

(Fortran-ordered arrays) in tangent coordinates: dq is a tangent vector at q (gradyn.integrate(model, q, dq) moves along it;
gradyn.difference gives it back), so A has no rows or columns for quaternion components. Computed
in a few passes over the tree (analytical derivatives of inverse dynamics), not one step per
direction. Semi-implicit Euler ('euler') only ('rk4' raises ValueError: use step_vjp), with every
contact model: penalty forces are differentiated through their force law; 'pgs' and 'ipm' impulses
through the solver's conditions at its solution (PGS: the converged active set, as
PgsGradient.Implicit; ipm: the linearised KKT system, paper 000's Eq. 3), so a PGS Jacobian is that
of the exact LCP solution, within the solver's tolerance of finite differences.
At a contact appearing or a force clamped at zero the step is not differentiable; this is the
derivative of the branch the step took.
params: the Jacobian of model.with_params(params)'s step. Batched: q of shape (B, nq) (every
per-world array with the leading B) returns A (B, 2 nv, 2 nv), B (B, 2 nv, nv) [and B_ctrl], the
worlds on `threads` threads (None: all cores).
)doc");

  m.def(
      "rollout_vjp",
      [](PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, double dt, nb::handle qs_bar, nb::handle vs_bar,
         const std::string& integrator, int max_snapshots, nb::handle qs, nb::handle vs, double clip_norm,
         bool return_norms, nb::handle ctrls, nb::handle params, std::optional<int> threads) -> nb::object {
        const Integrator scheme = step_options(s.model, dt, integrator).integrator;
        if (max_snapshots < 0)
          throw ArgumentError("max_snapshots: expected 0 (keep every state) or a positive count, got " +
                              std::to_string(max_snapshots));
        CheckpointOptions checkpoints;
        checkpoints.max_snapshots = max_snapshots;
        checkpoints.clip_norm = clip_norm;
        if (is_batched(q0))
          return rollout_vjp_batched(s, q0, v0, taus, ctrls, dt, qs_bar, vs_bar, scheme, checkpoints, qs, vs,
                                     return_norms, params, threads);
        if (!params.is_none())
          return unbatched(rollout_vjp_batched(s, one_world(q0), one_world(v0), one_world(taus), one_world(ctrls), dt,
                                               one_world(qs_bar), one_world(vs_bar), scheme, checkpoints, one_world(qs),
                                               one_world(vs), return_norms, one_world(params), threads));
        const Model& model = s.model;
        VectorArg q_(q0, "q0", model.nq), v_(v0, "v0", model.nv);
        const Eigen::Index T = steps_of(taus, ctrls);
        const OptionalRowsArg taus_arg(taus, "taus", T, model.nv, /*zeros_when_none=*/true);
        const OptionalRowsArg ctrls_arg(ctrls, "ctrls", T, model.nu(), /*zeros_when_none=*/false);
        const auto taus_ = taus_arg.x();
        const auto ctrls_ = ctrls_arg.x();
        MatrixXr<double> ctrls_bar = MatrixXr<double>::Zero(ctrls_arg.given() ? T : 0, model.nu());
        MatrixArg qs_bar_(qs_bar, "qs_bar", T + 1, model.nq), vs_bar_(vs_bar, "vs_bar", T + 1, model.nv);
        Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(model.nq), v0_bar = Eigen::VectorXd::Zero(model.nv);
        MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, model.nv);
        ModelTangent tangent(model);
        const CheckpointOptions& options = checkpoints;
        std::vector<double> norms;
        if (qs.is_none() != vs.is_none()) throw ArgumentError("qs and vs: give both forward arrays or neither");
        if (!qs.is_none()) {  // the caller's forward trajectory: no forward step is re-run
          MatrixArg qs_(qs, "qs", T + 1, model.nq), vs_(vs, "vs", T + 1, model.nv);
          if (qs_.x().row(0).transpose() != q_.x || vs_.x().row(0).transpose() != v_.x)
            throw ArgumentError("qs, vs: their first rows must be q0 and v0 (the arrays rollout returned)");
          nb::gil_scoped_release no_gil;
          DataLease data(s);
          forget_history(model, *data);  // as rollout: no contact warm start from an earlier call
          gradyn::rollout_vjp_from_states<double>(model, *data, qs_.x(), vs_.x(), taus_, ctrls_, dt, scheme, qs_bar_.x(),
                                                  vs_bar_.x(), q0_bar, v0_bar, taus_bar, ctrls_bar, tangent, options);
          norms = (*data).rollout_adj_norms;
        } else {
          nb::gil_scoped_release no_gil;
          DataLease data(s);
          forget_history(model, *data);
          gradyn::rollout_vjp<double>(model, *data, q_.x, v_.x, taus_, ctrls_, dt, scheme, qs_bar_.x(), vs_bar_.x(),
                                      q0_bar, v0_bar, taus_bar, ctrls_bar, tangent, options);
          norms = (*data).rollout_adj_norms;
        }
        nb::list out;
        out.append(to_numpy(q0_bar));
        out.append(to_numpy(v0_bar));
        out.append(take_numpy(std::move(taus_bar)));
        out.append(to_numpy(params_gradient<double>(model, tangent)));
        if (ctrls_arg.given()) out.append(take_numpy(std::move(ctrls_bar)));
        if (return_norms) out.append(to_numpy(Eigen::Map<const Eigen::VectorXd>(norms.data(), Eigen::Index(norms.size()))));
        return nb::tuple(out);
      },
      model_, nb::arg("q0"), nb::arg("v0"), nb::arg("taus").none(), nb::arg("dt"), nb::arg("qs_bar").none(),
      nb::arg("vs_bar").none(), nb::arg("integrator") = "euler", nb::arg("max_snapshots") = 0,
      nb::arg("qs").none() = nb::none(), nb::arg("vs").none() = nb::none(), nb::arg("clip_norm") = 0.0,
      nb::arg("return_norms") = false, nb::arg("ctrls").none() = nb::none(), nb::arg("params").none() = nb::none(),
      nb::arg("threads").none() = nb::none(), R"doc(
Reverse mode of rollout (backpropagation through time).
qs, vs (optional): the arrays gradyn.rollout returned for these very inputs; given, they serve as
the checkpoints and no forward step is re-run (faster, no extra memory; max_snapshots is then
unused). qs_bar (T + 1, nq) and vs_bar (T + 1, nv)
are the gradients of a loss with respect to the arrays rollout returns (None: zeros; a terminal
loss fills only the last row). Returns (q0_bar, v0_bar, taus_bar, params_bar), shapes (nq,),
(nv,), (T, nv), (len(model.param_names),), then ctrls_bar (T, model.nu) when ctrls is given
(taus and ctrls as in rollout: either may be None).

q0_bar is ambient (quaternion components are plain coordinates) and exact in every direction
(see step_vjp for its component along a quaternion). max_snapshots = 0 keeps every
state of the forward pass; k > 0 keeps at most k states and recomputes the others (binomial
checkpointing, memory O(k) for very long horizons); both give identical numbers when a step depends
on its state alone (no contact, 'penalty', 'ipm' without its warm start). 'pgs' starts each solve
from the last step's impulses, so a recomputed segment starts from other impulses than the forward
pass did: the two then agree to the solver's tolerance, amplified by the dynamics (bench/results/
long_horizons.md). Runs without the GIL.

params: shape (len(model.param_names),), the adjoint of the rollout of model.with_params(params).
Batched: q0 of shape (B, nq) differentiates B worlds at once on `threads` threads (None: all cores),
every per-world array with the leading B (taus (B, T, nv), ctrls (B, T, nu), qs_bar (B, T + 1, nq),
vs_bar, qs, vs, params (B, nparams)); the results get it too (params_bar (B, nparams)), bitwise
those of the same call on each world alone.

Exploding gradients (contact makes them common): return_norms=True appends a (T + 1,) array, the
2-norm of the adjoint of each state (q_bar_t, v_bar_t) on the way back, before clipping (last in the tuple). clip_norm > 0
scales any state adjoint with a larger norm down to clip_norm before it flows into earlier steps
(gradient clipping through time: no longer the exact gradient, by design).
Gradients through contact: exact for the smooth parts; a contact appearing or vanishing, or a
friction row switching between sticking and sliding, within the step is a kink the gradient does
not see (see the README's "Gradients through contact").
)doc");

  m.def(
      "gradcheck",
      [](PyModel& s, nb::handle q, nb::handle v, nb::handle taus, double dt, const std::string& integrator,
         bool final_loss, bool running_loss, unsigned seed, bool check_ad, bool check_fd, bool check_params,
         double fd_step, int ad_max_coords, int fd_max_coords, int max_snapshots, nb::handle ctrls) {
        GradcheckOptions o;
        o.integrator = step_options(s.model, dt, integrator).integrator;
        o.final_loss = final_loss;
        o.running_loss = running_loss;
        o.seed = seed;
        o.check_ad = check_ad;
        o.check_fd = check_fd;
        o.check_params = check_params;
        o.fd_step = fd_step;
        o.ad_max_coords = ad_max_coords;
        o.fd_max_coords = fd_max_coords;
        o.max_snapshots = max_snapshots;
        const Model& model = s.model;
        VectorArg q_(q, "q", model.nq), v_(v, "v", model.nv);
        check_finite(q_.x, "q");  // a check of gradients needs a state where they exist
        check_finite(v_.x, "v");
        if (!(fd_step > 0) || !std::isfinite(fd_step))
          throw ArgumentError("fd_step: expected a positive finite step, got " + std::to_string(fd_step));
        const ConstArray taus_array = as_array(taus, "taus");
        if (taus_array.ndim() == 1) {  // one step: a (nv,) torque
          check_shape(taus_array, "taus", {model.nv});
        } else {
          check_shape(taus_array, "taus", {-1, model.nv});
        }
        const Eigen::Index T = taus_array.ndim() == 1 ? 1 : static_cast<Eigen::Index>(taus_array.shape(0));
        Eigen::Map<const MatrixXr<double>> taus_(taus_array.data(), T, model.nv);
        MatrixXr<double> ctrls_;
        if (!ctrls.is_none()) {
          const ConstArray c = as_array(ctrls, "ctrls");
          if (taus_array.ndim() == 1) check_shape(c, "ctrls", {model.nu()});
          else check_shape(c, "ctrls", {T, model.nu()});
          ctrls_ = Eigen::Map<const MatrixXr<double>>(c.data(), T, model.nu());
        }
        GradcheckResult r;
        {
          nb::gil_scoped_release no_gil;
          r = gradyn::gradcheck(model, q_.x, v_.x, taus_, ctrls_, dt, o);
        }
        nb::dict out;
        for (const GradcheckBlock& b : r.blocks) out[b.name.c_str()] = block_dict(b);
        return out;
      },
      model_, nb::arg("q"), nb::arg("v"), nb::arg("taus"), nb::arg("dt"), nb::arg("integrator") = "euler",
      nb::arg("final_loss") = true, nb::arg("running_loss") = false, nb::arg("seed") = 0, nb::arg("check_ad") = true,
      nb::arg("check_fd") = true, nb::arg("check_params") = true, nb::arg("fd_step") = 1e-6,
      nb::arg("ad_max_coords") = -1, nb::arg("fd_max_coords") = -1, nb::arg("max_snapshots") = 0,
      nb::arg("ctrls").none() = nb::none(), R"doc(
Compare the three gradients of a rollout: adjoint (rollout_vjp), forward-mode AD and central
finite differences, for a random linear loss of the states (weights on the final state and/or
every state). taus: (T, nv), or (nv,) for a single step; ctrls: the actuators' controls, (T, nu)
or (nu,) for a single step (None: none, every control zero).

Returns a dict per input block, "q0", "v0", "taus", "ctrls" (when given) and (with check_params)
"params", each a
dict with size, scale (largest ``|gradient entry|``), ad_error and fd_error (``max |adjoint - reference|``
/ scale; NaN when not computed), ad_coords and fd_coords (entries compared: the taus and params
blocks can be subsampled with ad_max_coords / fd_max_coords, evenly spaced), worst_ad_index and
worst_fd_index. Every block is compared as raw ambient numbers (the references perturb single
entries, quaternion components and joint-axis parameters included, off the unit sphere): the
dynamics read quaternions normalised and with_params normalises axes, so the adjoints are exact
in every direction.
)doc");
}

}  // namespace gradyn::python
