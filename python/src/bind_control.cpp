// The iLQR kernels (control/ilqr.hpp) for gradyn.control: private functions (_box_qp,
// _ilqr_backward_pass, _feedback_rollout) that python/gradyn/control.py wraps with its documented API;
// and policy rollouts (control/policy.hpp): _policy_info, _policy_rollout, _policy_rollout_vjp, wrapped
// by python/gradyn/policy.py.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "gradyn/control/ilqr.hpp"
#include "gradyn/control/policy.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/batch.hpp"

namespace gradyn::python {

namespace {

// A float64 C-contiguous array of the given rank, its dimensions returned (-1: any).
std::vector<Eigen::Index> dims_of(const ConstArray& a, const char* name, size_t rank) {
  if (a.ndim() != rank)
    throw ArgumentError(std::string(name) + ": expected " + std::to_string(rank) + " dimensions, got shape " +
                        shape_string(a));
  std::vector<Eigen::Index> d(rank);
  for (size_t i = 0; i < rank; ++i) d[i] = static_cast<Eigen::Index>(a.shape(i));
  return d;
}

// Views a (T, r, c) or (T, c) array as the row-major (T r, c) stack the kernels read.
Eigen::Map<const MatrixXr<double>> stacked(const ConstArray& a) {
  const Eigen::Index cols = static_cast<Eigen::Index>(a.shape(a.ndim() - 1));
  return {a.data(), cols > 0 ? static_cast<Eigen::Index>(a.size()) / cols : 0, cols};
}

// A per-world argument: (B, n) rows, or one (n,) row shared by every world.
struct WorldRows {
  WorldRows(nb::handle h, const char* name, Eigen::Index n, Eigen::Index worlds) {
    if (h.is_none()) {
      if (n != 0) throw ArgumentError(std::string(name) + ": expected an array of " + std::to_string(n) + " entries per world, got None");
      return;
    }
    array = as_array(h, name);
    if (array.ndim() == 1) {
      check_shape(array, name, {n});
    } else {
      check_shape(array, name, {worlds, n});
      shared = false;
    }
    cols = n;
  }
  Eigen::Map<const Eigen::VectorXd> row(Eigen::Index world) const {
    if (!array.is_valid()) return {nullptr, 0};
    return {array.data() + (shared ? 0 : world * cols), cols};
  }
  ConstArray array;
  bool shared = true;
  Eigen::Index cols = 0;
};

// Entries per world of a task argument: (n,) shared or (B, n) per world; None: 0.
Eigen::Index task_columns(nb::handle task) {
  if (task.is_none()) return 0;
  const ConstArray a = as_array(task, "task");
  if (a.ndim() != 1 && a.ndim() != 2)
    throw ArgumentError("task: expected shape (ntask,) or (B, ntask), got " + shape_string(a));
  return static_cast<Eigen::Index>(a.shape(a.ndim() - 1));
}

// A policy call's per-world weights and task, checked against the policy.
struct PolicyArguments {
  PolicyArguments(const Model& model, const Policy& policy, nb::handle weights_h, nb::handle task_h, Eigen::Index worlds)
      : weights(weights_h, "weights", policy.shape.param_count(), worlds),
        task(task_h, "task", task_columns(task_h), worlds) {
    check_policy_arguments(model, policy, policy.shape.param_count(), task.cols);
  }
  WorldRows weights, task;
};

Policy policy_of(const Model& model, const std::vector<std::string>& observations, const std::vector<int>& hidden,
                 const std::string& activation, const std::string& output_activation, int memory) {
  return make_policy(model, observations, hidden, activation_from_name(activation),
                     activation_from_name(output_activation), memory);
}

ControlInput parse_controls(const std::string& controls) {
  if (controls == "ctrl") return ControlInput::Ctrl;
  if (controls == "tau") return ControlInput::Tau;
  throw ArgumentError("controls: expected 'ctrl' or 'tau', got '" + controls + "'");
}

}  // namespace

void bind_control(nb::module_& m) {
  m.def(
      "_box_qp",
      [](nb::handle H_h, nb::handle g_h, nb::handle lower_h, nb::handle upper_h, nb::handle x0_h) {
        const ConstArray g = as_array(g_h, "g");
        const Eigen::Index n = dims_of(g, "g", 1)[0];
        const ConstArray H = as_array(H_h, "H");
        check_shape(H, "H", {n, n});
        VectorArg lower(lower_h, "lower", n), upper(upper_h, "upper", n);
        OptionalVectorArg x0(x0_h, "x0", n, true);
        const Eigen::MatrixXd H_matrix = Eigen::Map<const MatrixXr<double>>(H.data(), n, n);
        Eigen::VectorXd x = x0.x();
        Eigen::Array<bool, Eigen::Dynamic, 1> free(n);
        BoxQpWorkspace ws(static_cast<int>(n));
        const bool ok = box_qp(H_matrix, Eigen::Map<const Eigen::VectorXd>(g.data(), n), lower.x, upper.x, x, free, ws);
        nb::list free_out;
        for (Eigen::Index i = 0; i < n; ++i) free_out.append(bool(free[i]));
        return nb::make_tuple(to_numpy(x), free_out, ok);
      },
      nb::arg("H"), nb::arg("g"), nb::arg("lower"), nb::arg("upper"), nb::arg("x0").none() = nb::none());

  m.def(
      "_ilqr_backward_pass",
      [](nb::handle A_h, nb::handle B_h, nb::handle lx_h, nb::handle lu_h, nb::handle lxx_h, nb::handle luu_h,
         nb::handle lux_h, nb::handle u_h, nb::handle u_min_h, nb::handle u_max_h, double mu,
         nb::handle k_h) -> nb::object {
        const ConstArray A = as_array(A_h, "A"), B = as_array(B_h, "B"), lx = as_array(lx_h, "lx"),
                         lu = as_array(lu_h, "lu"), lxx = as_array(lxx_h, "lxx"), luu = as_array(luu_h, "luu"),
                         lux = as_array(lux_h, "lux"), u = as_array(u_h, "u"), k_warm = as_array(k_h, "k");
        const auto ud = dims_of(u, "u", 2);
        const Eigen::Index T = ud[0], nu = ud[1];
        const Eigen::Index nx = dims_of(A, "A", 3)[1];
        check_shape(A, "A", {T, nx, nx});
        check_shape(B, "B", {T, nx, nu});
        check_shape(lx, "lx", {T + 1, nx});
        check_shape(lu, "lu", {T, nu});
        check_shape(lxx, "lxx", {T + 1, nx, nx});
        check_shape(luu, "luu", {T, nu, nu});
        check_shape(lux, "lux", {T, nu, nx});
        check_shape(k_warm, "k", {T, nu});
        VectorArg u_min(u_min_h, "u_min", nu), u_max(u_max_h, "u_max", nu);
        MatrixXr<double> k = stacked(k_warm), K(T * nu, nx);
        Eigen::Vector2d expected;
        bool ok;
        {
          nb::gil_scoped_release no_gil;
          ok = ilqr_backward_pass(LqrProblem{stacked(A), stacked(B), stacked(lx), stacked(lu), stacked(lxx),
                                             stacked(luu), stacked(lux), stacked(u), u_min.x, u_max.x},
                                  mu, k, K, expected);
        }
        if (!ok) return nb::none();
        double* d;
        NumpyArray K_out = new_array({static_cast<size_t>(T), static_cast<size_t>(nu), static_cast<size_t>(nx)}, &d);
        Eigen::Map<MatrixXr<double>>(d, T * nu, nx) = K;
        return nb::make_tuple(take_numpy(std::move(k)), K_out, nb::make_tuple(expected[0], expected[1]));
      },
      nb::arg("A"), nb::arg("B"), nb::arg("lx"), nb::arg("lu"), nb::arg("lxx"), nb::arg("luu"), nb::arg("lux"),
      nb::arg("u"), nb::arg("u_min"), nb::arg("u_max"), nb::arg("mu"), nb::arg("k"));

  m.def(
      "_feedback_rollout",
      [](PyModel& s, nb::handle q_ref_h, nb::handle v_ref_h, nb::handle u_ref_h, nb::handle k_h, nb::handle K_h,
         nb::handle alphas_h, nb::handle u_min_h, nb::handle u_max_h, const std::string& controls, double dt,
         const std::string& integrator, std::optional<int> threads) {
        const Model& model = s.model;
        const ControlInput input = parse_controls(controls);
        const ConstArray u_ref = as_array(u_ref_h, "u_ref");
        const auto ud = dims_of(u_ref, "u_ref", 2);
        const Eigen::Index T = ud[0], nu = ud[1], nq = model.nq, nv = model.nv;
        const ConstArray q_ref = as_array(q_ref_h, "q_ref"), v_ref = as_array(v_ref_h, "v_ref"),
                         k = as_array(k_h, "k"), K = as_array(K_h, "K"), alphas = as_array(alphas_h, "alphas");
        check_shape(q_ref, "q_ref", {T + 1, nq});
        check_shape(v_ref, "v_ref", {T + 1, nv});
        check_shape(k, "k", {T, nu});
        check_shape(K, "K", {T, nu, 2 * nv});
        const Eigen::Index n = dims_of(alphas, "alphas", 1)[0];
        VectorArg u_min(u_min_h, "u_min", nu), u_max(u_max_h, "u_max", nu);
        const StepOptions options = step_options(model, dt, integrator);
        const int pool = threads_arg(threads);
        const size_t un = static_cast<size_t>(n), uT = static_cast<size_t>(T);
        double *qs_d, *vs_d, *us_d;
        NumpyArray qs = new_array({un, uT + 1, static_cast<size_t>(nq)}, &qs_d);
        NumpyArray vs = new_array({un, uT + 1, static_cast<size_t>(nv)}, &vs_d);
        NumpyArray us = new_array({un, uT, static_cast<size_t>(nu)}, &us_d);
        auto* status = new std::vector<std::uint32_t>(un * uT);
        nb::capsule status_owner(status, [](void* p) noexcept { delete static_cast<std::vector<std::uint32_t>*>(p); });
        {
          nb::gil_scoped_release no_gil;
          std::vector<std::optional<Data>> workspace(static_cast<size_t>(pool));
          for_each_world(static_cast<int>(n), pool, [&](int world, int thread) {
            std::optional<Data>& data = workspace[static_cast<size_t>(thread)];
            if (!data) data.emplace(model);
            forget_history(model, *data);
            const size_t w = static_cast<size_t>(world);
            feedback_rollout(model, *data, stacked(q_ref), stacked(v_ref), stacked(u_ref), stacked(k), stacked(K),
                             alphas.data()[world], u_min.x, u_max.x, input, options,
                             Eigen::Map<MatrixXr<double>>(qs_d + w * (uT + 1) * nq, T + 1, nq),
                             Eigen::Map<MatrixXr<double>>(vs_d + w * (uT + 1) * nv, T + 1, nv),
                             Eigen::Map<MatrixXr<double>>(us_d + w * uT * nu, T, nu),
                             std::span<std::uint32_t>(status->data() + w * uT, uT));
          });
        }
        size_t shape[2] = {un, uT};
        nb::ndarray<nb::numpy, std::uint32_t> status_out(status->data(), 2, shape, status_owner);
        return nb::make_tuple(qs, vs, us, status_out);
      },
      nb::arg("model"), nb::arg("q_ref"), nb::arg("v_ref"), nb::arg("u_ref"), nb::arg("k"), nb::arg("K"),
      nb::arg("alphas"), nb::arg("u_min"), nb::arg("u_max"), nb::arg("controls"), nb::arg("dt"),
      nb::arg("integrator") = "euler", nb::arg("threads").none() = nb::none());

  m.def(
      "_policy_info",
      [](PyModel& s, const std::vector<std::string>& observations, const std::vector<int>& hidden,
         const std::string& activation, const std::string& output_activation, int memory, std::uint64_t seed,
         bool zero_last_layer) {
        const Policy policy = policy_of(s.model, observations, hidden, activation, output_activation, memory);
        nb::dict info;
        info["param_count"] = policy.shape.param_count();
        info["task_size"] = policy.task_size;
        info["memory"] = policy.memory;
        info["widths"] = policy.shape.widths;
        info["weights"] = to_numpy(dense_initial_weights(policy.shape, seed, zero_last_layer));
        info["param_names"] = dense_param_names(policy.shape, "policy");
        return info;
      },
      nb::arg("model"), nb::arg("observations"), nb::arg("hidden"), nb::arg("activation"),
      nb::arg("output_activation"), nb::arg("memory"), nb::arg("seed"), nb::arg("zero_last_layer"));

  m.def("_policy_observations", [](PyModel& s) { return policy_observations(s.model); }, nb::arg("model"));

  m.def(
      "_policy_rollout",
      [](PyModel& s, const std::vector<std::string>& observations, const std::vector<int>& hidden,
         const std::string& activation, const std::string& output_activation, int memory, nb::handle weights_h,
         nb::handle q0_h,
         nb::handle v0_h, nb::handle task_h, int steps, double dt, const std::string& integrator,
         std::optional<int> threads) {
        const Model& model = s.model;
        const Policy policy = policy_of(model, observations, hidden, activation, output_activation, memory);
        const StepOptions options = step_options(model, dt, integrator);
        if (steps < 1) throw ArgumentError("steps: expected at least 1, got " + std::to_string(steps));
        const ConstArray q0 = as_array(q0_h, "q0");
        const Eigen::Index B = dims_of(q0, "q0", 2)[0];
        check_shape(q0, "q0", {B, model.nq});
        const ConstArray v0 = as_array(v0_h, "v0");
        check_shape(v0, "v0", {B, model.nv});
        const PolicyArguments args(model, policy, weights_h, task_h, B);
        const WorldRows &weights = args.weights, &task = args.task;
        const int pool = threads_arg(threads);
        const size_t uB = static_cast<size_t>(B), uT = static_cast<size_t>(steps);
        double *qs_d, *vs_d, *us_d;
        NumpyArray qs = new_array({uB, uT + 1, static_cast<size_t>(model.nq)}, &qs_d);
        NumpyArray vs = new_array({uB, uT + 1, static_cast<size_t>(model.nv)}, &vs_d);
        NumpyArray us = new_array({uB, uT, static_cast<size_t>(model.nu())}, &us_d);
        auto* status = new std::vector<std::uint32_t>(uB * uT);
        nb::capsule status_owner(status, [](void* p) noexcept { delete static_cast<std::vector<std::uint32_t>*>(p); });
        {
          nb::gil_scoped_release no_gil;
          std::vector<std::optional<Data>> data(static_cast<size_t>(pool));
          std::vector<std::optional<PolicyWorkspace>> work(static_cast<size_t>(pool));
          for_each_world(static_cast<int>(B), pool, [&](int world, int thread) {
            const size_t th = static_cast<size_t>(thread), w = static_cast<size_t>(world);
            if (!data[th]) data[th].emplace(model), work[th].emplace(model, policy);
            forget_history(model, *data[th]);
            policy_rollout(model, *data[th], policy, weights.row(world), task.row(world),
                           Eigen::Map<const Eigen::VectorXd>(q0.data() + w * model.nq, model.nq),
                           Eigen::Map<const Eigen::VectorXd>(v0.data() + w * model.nv, model.nv), options, *work[th],
                           Eigen::Map<MatrixXr<double>>(qs_d + w * (uT + 1) * model.nq, steps + 1, model.nq),
                           Eigen::Map<MatrixXr<double>>(vs_d + w * (uT + 1) * model.nv, steps + 1, model.nv),
                           Eigen::Map<MatrixXr<double>>(us_d + w * uT * model.nu(), steps, model.nu()),
                           std::span<std::uint32_t>(status->data() + w * uT, uT));
          });
        }
        size_t shape[2] = {uB, uT};
        return nb::make_tuple(qs, vs, us, nb::ndarray<nb::numpy, std::uint32_t>(status->data(), 2, shape, status_owner));
      },
      nb::arg("model"), nb::arg("observations"), nb::arg("hidden"), nb::arg("activation"),
      nb::arg("output_activation"), nb::arg("memory"), nb::arg("weights"), nb::arg("q0"), nb::arg("v0"), nb::arg("task").none(),
      nb::arg("steps"), nb::arg("dt"), nb::arg("integrator") = "euler", nb::arg("threads").none() = nb::none());

  m.def(
      "_policy_rollout_vjp",
      [](PyModel& s, const std::vector<std::string>& observations, const std::vector<int>& hidden,
         const std::string& activation, const std::string& output_activation, int memory, nb::handle weights_h,
         nb::handle task_h,
         nb::handle qs_h, nb::handle vs_h, nb::handle qs_bar_h, nb::handle vs_bar_h, nb::handle ctrls_bar_h, double dt,
         double decay, const std::string& integrator, std::optional<int> threads, double clip_norm) {
        const Model& model = s.model;
        const Policy policy = policy_of(model, observations, hidden, activation, output_activation, memory);
        const StepOptions options = step_options(model, dt, integrator);
        const ConstArray qs = as_array(qs_h, "qs"), vs = as_array(vs_h, "vs");
        const auto qd = dims_of(qs, "qs", 3);
        const Eigen::Index B = qd[0], T = qd[1] - 1;
        check_shape(qs, "qs", {B, T + 1, model.nq});
        check_shape(vs, "vs", {B, T + 1, model.nv});
        const ConstArray qs_bar = as_array(qs_bar_h, "qs_bar"), vs_bar = as_array(vs_bar_h, "vs_bar");
        check_shape(qs_bar, "qs_bar", {B, T + 1, model.nq});
        check_shape(vs_bar, "vs_bar", {B, T + 1, model.nv});
        ConstArray ctrls_bar;
        if (!ctrls_bar_h.is_none()) {
          ctrls_bar = as_array(ctrls_bar_h, "ctrls_bar");
          check_shape(ctrls_bar, "ctrls_bar", {B, T, model.nu()});
        }
        const PolicyArguments args(model, policy, weights_h, task_h, B);
        const WorldRows &weights = args.weights, &task = args.task;
        const int pool = threads_arg(threads);
        const Eigen::Index P = policy.shape.param_count(), nparams = static_cast<Eigen::Index>(param_names(model).size());
        MatrixXr<double> q0_bar = MatrixXr<double>::Zero(B, model.nq), v0_bar = MatrixXr<double>::Zero(B, model.nv),
                         w_bar = MatrixXr<double>::Zero(B, P), task_bar = MatrixXr<double>::Zero(B, task.cols),
                         p_bar = MatrixXr<double>::Zero(B, nparams);
        {
          nb::gil_scoped_release no_gil;
          std::vector<std::optional<Data>> data(static_cast<size_t>(pool));
          std::vector<std::optional<PolicyWorkspace>> work(static_cast<size_t>(pool));
          std::vector<std::optional<ModelTangent>> tangent(static_cast<size_t>(pool));
          const size_t sq = static_cast<size_t>((T + 1) * model.nq), sv = static_cast<size_t>((T + 1) * model.nv);
          for_each_world(static_cast<int>(B), pool, [&](int world, int thread) {
            const size_t th = static_cast<size_t>(thread), w = static_cast<size_t>(world);
            if (!data[th]) data[th].emplace(model), work[th].emplace(model, policy), tangent[th].emplace(model);
            forget_history(model, *data[th]);
            tangent[th]->setZero();
            Eigen::Map<const MatrixXr<double>> c_bar(ctrls_bar.is_valid() ? ctrls_bar.data() + w * T * model.nu() : nullptr,
                                                     ctrls_bar.is_valid() ? T : 0, ctrls_bar.is_valid() ? model.nu() : 0);
            policy_rollout_vjp(model, *data[th], policy, weights.row(world), task.row(world),
                               Eigen::Map<const MatrixXr<double>>(qs.data() + w * sq, T + 1, model.nq),
                               Eigen::Map<const MatrixXr<double>>(vs.data() + w * sv, T + 1, model.nv), options,
                               Eigen::Map<const MatrixXr<double>>(qs_bar.data() + w * sq, T + 1, model.nq),
                               Eigen::Map<const MatrixXr<double>>(vs_bar.data() + w * sv, T + 1, model.nv), c_bar,
                               decay, *work[th], q0_bar.row(world).transpose(), v0_bar.row(world).transpose(),
                               w_bar.row(world).transpose(), task_bar.row(world).transpose(), *tangent[th],
                               clip_norm);
            p_bar.row(world) = params_gradient(model, *tangent[th]).transpose();
          });
        }
        return nb::make_tuple(take_numpy(std::move(q0_bar)), take_numpy(std::move(v0_bar)),
                              take_numpy(std::move(w_bar)), take_numpy(std::move(task_bar)),
                              take_numpy(std::move(p_bar)));
      },
      nb::arg("model"), nb::arg("observations"), nb::arg("hidden"), nb::arg("activation"),
      nb::arg("output_activation"), nb::arg("memory"), nb::arg("weights"), nb::arg("task").none(), nb::arg("qs"), nb::arg("vs"),
      nb::arg("qs_bar"), nb::arg("vs_bar"), nb::arg("ctrls_bar").none(), nb::arg("dt"), nb::arg("decay") = 1.0,
      nb::arg("integrator") = "euler", nb::arg("threads").none() = nb::none(), nb::arg("clip_norm") = 0.0);
}

}  // namespace gradyn::python
