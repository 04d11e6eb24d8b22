// Batched calls: step, rollout, step_vjp, rollout_vjp and step_jacobian with a leading batch dimension B on every per-world
// array, run on a pool of threads without the GIL (sim/batch.hpp). Each world runs on one thread
// with a workspace that starts fresh (forget_history), so its numbers are those of the same call
// on that world alone, whatever the thread count. Per-world models: params of shape (B, nparams).
#include <nanobind/stl/optional.h>

#include <algorithm>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/batch.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn::python {

namespace {

// The batch size, from the first per-world array; every later one must agree.
class BatchSize {
 public:
  void agree(const char* name, const ConstArray& a) {
    const Eigen::Index b = static_cast<Eigen::Index>(a.shape(0));
    if (first_.empty()) {
      first_ = name, first_shape_ = shape_string(a), size_ = b;
      return;
    }
    if (b != size_) {
      std::ostringstream s;
      s << "batch sizes disagree: " << first_ << " has shape " << first_shape_ << " (" << size_ << " worlds) but "
        << name << " has shape " << shape_string(a) << " (" << b << " worlds); every per-world array takes the same "
        << "leading batch dimension";
      throw ArgumentError(s.str());
    }
  }
  Eigen::Index size() const { return size_; }

 private:
  std::string first_, first_shape_;
  Eigen::Index size_ = 0;
};

// A per-world argument of shape (B, dims...) (None allowed when optional): world b's numbers.
class WorldArray {
 public:
  WorldArray(nb::handle h, const char* name, std::initializer_list<Eigen::Index> dims, BatchSize& batch,
             bool optional = false) {
    if (h.is_none()) {
      if (!optional) throw ArgumentError(std::string(name) + ": expected an array, got None");
      return;
    }
    array_ = as_array(h, name);
    std::vector<Eigen::Index> shape{-1};
    shape.insert(shape.end(), dims.begin(), dims.end());
    check_shape_list(array_, name, shape);
    batch.agree(name, array_);
    per_world_ = 1;
    for (size_t k = 1; k < array_.ndim(); ++k) per_world_ *= array_.shape(k);
  }
  bool given() const { return array_.is_valid(); }
  const double* world(Eigen::Index b) const { return array_.data() + b * per_world_; }
  Eigen::Index dim(size_t k) const { return static_cast<Eigen::Index>(array_.shape(k)); }

 private:
  static void check_shape_list(const ConstArray& a, const char* name, const std::vector<Eigen::Index>& shape) {
    switch (shape.size()) {
      case 2: check_shape(a, name, {shape[0], shape[1]}); break;
      case 3: check_shape(a, name, {shape[0], shape[1], shape[2]}); break;
      default: throw ArgumentError("internal: unexpected rank");
    }
  }
  ConstArray array_;
  size_t per_world_ = 0;
};

// The number of steps of a batched rollout: taus (B, T, nv) and ctrls (B, T, nu) must agree.
Eigen::Index batched_steps(const WorldArray& taus, const WorldArray& ctrls) {
  if (!taus.given() && !ctrls.given())
    throw ArgumentError("taus and ctrls are both None: give at least one of them (one row per step)");
  if (taus.given() && ctrls.given() && taus.dim(1) != ctrls.dim(1))
    throw ArgumentError("taus and ctrls disagree on the number of steps: taus has " + std::to_string(taus.dim(1)) +
                        " per world, ctrls " + std::to_string(ctrls.dim(1)));
  return taus.given() ? taus.dim(1) : ctrls.dim(1);
}

// The workspace of one world: the thread's own (fresh state), or the world's own model and Data
// when the batch gives per-world parameters.
class WorldWorkspace {
 public:
  WorldWorkspace(const Model& model, const WorldArray& params, Eigen::Index nparams, Eigen::Index world,
                 std::optional<Data>& thread_data) {
    if (params.given()) {
      try {
        own_model_.emplace(with_params<double>(model, Eigen::Map<const Eigen::VectorXd>(params.world(world), nparams)));
      } catch (const std::exception& e) {
        throw ArgumentError("params[" + std::to_string(world) + "]: " + e.what());
      }
      own_data_.emplace(*own_model_);
      model_ = &*own_model_;
      data_ = &*own_data_;
    } else {
      if (!thread_data) thread_data.emplace(model);
      forget_history(model, *thread_data);
      model_ = &model;
      data_ = &*thread_data;
    }
  }
  const Model& model() const { return *model_; }
  Data& data() { return *data_; }

 private:
  std::optional<Model> own_model_;
  std::optional<Data> own_data_;
  const Model* model_ = nullptr;
  Data* data_ = nullptr;
};

NumpyArray new_array3(size_t a, size_t b, size_t c, double** data) { return new_array({a, b, c}, data); }

template <class T>
nb::ndarray<nb::numpy, T> owned_vector(std::vector<T>&& v, std::initializer_list<size_t> shape) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(owned->data(), shape.size(), shape.begin(), owner);
}

}  // namespace

int threads_arg(std::optional<int> threads) {
  if (threads && *threads <= 0)
    throw ArgumentError("threads: expected a positive number of threads (None: all cores), got " +
                        std::to_string(*threads));
  return batch_threads(threads.value_or(0));
}

nb::object one_world(nb::handle x) {
  if (x.is_none()) return nb::none();
  nb::module_ np = nb::module_::import_("numpy");
  return np.attr("expand_dims")(np.attr("asarray")(x, "float64"), 0);
}

nb::object unbatched(nb::handle results) {
  nb::list out;
  for (nb::handle x : results) out.append(x[0]);
  return nb::tuple(out);
}

bool is_batched(nb::handle q) {
  if (nb::hasattr(q, "ndim")) return nb::cast<int>(q.attr("ndim")) == 2;
  if (nb::isinstance<nb::list>(q) || nb::isinstance<nb::tuple>(q)) {
    const nb::sequence seq = nb::borrow<nb::sequence>(q);
    return nb::len(seq) > 0 && (nb::isinstance<nb::list>(seq[0]) || nb::isinstance<nb::tuple>(seq[0]) ||
                                nb::hasattr(seq[0], "__len__"));
  }
  return false;
}

namespace {

using Vec = Eigen::Map<const Eigen::VectorXd>;
using Rows = Eigen::Map<const MatrixXr<double>>;

// What every batched call reads: the per-world parameters, the thread count and each thread's
// workspace. Further per-world arrays agree with `batch`.
struct Batch {
  Batch(const Model& model, nb::handle params, std::optional<int> threads)
      : model(model), nparams(static_cast<Eigen::Index>(get_params<double>(model).size())),
        P(params, "params", {nparams}, batch, true), threads(threads_arg(threads)),
        workspaces(static_cast<size_t>(this->threads)) {}
  const Model& model;
  const Eigen::Index nparams;
  BatchSize batch;
  const WorldArray P;
  const int threads;
  std::vector<std::optional<Data>> workspaces;
};

// The inputs of a batched step: q, v, tau (None: zeros), ctrl (None: no controls).
struct StepInputs : Batch {
  StepInputs(const Model& m, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, nb::handle params,
             std::optional<int> threads)
      : Batch(m, params, threads), Q(q, "q", {m.nq}, batch), V(v, "v", {m.nv}, batch),
        Tau(tau, "tau", {m.nv}, batch, true), Ctrl(ctrl, "ctrl", {m.nu()}, batch, true),
        zeros(Eigen::VectorXd::Zero(m.nv)) {}
  Eigen::Index worlds() const { return batch.size(); }
  Vec q(Eigen::Index b) const { return Vec(Q.world(b), model.nq); }
  Vec v(Eigen::Index b) const { return Vec(V.world(b), model.nv); }
  Vec tau(Eigen::Index b) const { return Tau.given() ? Vec(Tau.world(b), model.nv) : Vec(zeros.data(), model.nv); }
  Vec ctrl(Eigen::Index b) const { return Ctrl.given() ? Vec(Ctrl.world(b), model.nu()) : Vec(nullptr, 0); }

  const WorldArray Q, V, Tau, Ctrl;
  const Eigen::VectorXd zeros;
};

// The inputs of a batched rollout: q0, v0, taus (None: zeros), ctrls (None: no controls); T steps.
struct RolloutInputs : Batch {
  RolloutInputs(const Model& m, nb::handle q0, nb::handle v0, nb::handle taus, nb::handle ctrls, nb::handle params,
                std::optional<int> threads)
      : Batch(m, params, threads), Q0(q0, "q0", {m.nq}, batch), V0(v0, "v0", {m.nv}, batch),
        Taus(taus, "taus", {-1, m.nv}, batch, true), Ctrls(ctrls, "ctrls", {-1, m.nu()}, batch, true),
        T(batched_steps(Taus, Ctrls)), zeros(MatrixXr<double>::Zero(T, m.nv)) {}
  Eigen::Index worlds() const { return batch.size(); }
  Vec q0(Eigen::Index b) const { return Vec(Q0.world(b), model.nq); }
  Vec v0(Eigen::Index b) const { return Vec(V0.world(b), model.nv); }
  Rows taus(Eigen::Index b) const { return Rows(Taus.given() ? Taus.world(b) : zeros.data(), T, model.nv); }
  Rows ctrls(Eigen::Index b) const {
    return Ctrls.given() ? Rows(Ctrls.world(b), T, model.nu()) : Rows(nullptr, 0, 0);
  }

  const WorldArray Q0, V0, Taus, Ctrls;
  const Eigen::Index T;
  const MatrixXr<double> zeros;
};

}  // namespace

nb::object step_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                        Integrator scheme, bool return_status, nb::handle params, std::optional<int> threads) {
  const Model& model = s.model;
  StepInputs in(model, q, v, tau, ctrl, params, threads);
  const Eigen::Index B = in.worlds();
  double *qn, *vn;
  NumpyArray q_next = new_array({size_t(B), size_t(model.nq)}, &qn), v_next = new_array({size_t(B), size_t(model.nv)}, &vn);
  std::vector<std::uint32_t> status(static_cast<size_t>(B));
  {
    nb::gil_scoped_release no_gil;
    for_each_world(static_cast<int>(B), in.threads, [&](int b, int t) {
      WorldWorkspace w(model, in.P, in.nparams, b, in.workspaces[t]);
      step<double>(w.model(), w.data(), in.q(b), in.v(b), in.tau(b), in.ctrl(b), dt, scheme,
                   Eigen::Map<Eigen::VectorXd>(qn + b * model.nq, model.nq),
                   Eigen::Map<Eigen::VectorXd>(vn + b * model.nv, model.nv));
      status[b] = w.data().status;
    });
  }
  if (!return_status) return nb::make_tuple(q_next, v_next);
  return nb::make_tuple(q_next, v_next, owned_vector(std::move(status), {size_t(B)}));
}

nb::object step_vjp_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                            nb::handle q_next_bar, nb::handle v_next_bar, Integrator scheme, nb::handle params,
                            std::optional<int> threads) {
  const Model& model = s.model;
  StepInputs in(model, q, v, tau, ctrl, params, threads);
  const WorldArray Qn_bar(q_next_bar, "q_next_bar", {model.nq}, in.batch);
  const WorldArray Vn_bar(v_next_bar, "v_next_bar", {model.nv}, in.batch);
  const Eigen::Index B = in.worlds(), np = in.nparams;
  double *q_bar, *v_bar, *tau_bar, *params_bar, *ctrl_bar = nullptr;
  NumpyArray q_bar_out = new_array({size_t(B), size_t(model.nq)}, &q_bar);
  NumpyArray v_bar_out = new_array({size_t(B), size_t(model.nv)}, &v_bar);
  NumpyArray tau_bar_out = new_array({size_t(B), size_t(model.nv)}, &tau_bar);
  NumpyArray params_bar_out = new_array({size_t(B), size_t(np)}, &params_bar);
  std::optional<NumpyArray> ctrl_bar_out;
  if (in.Ctrl.given()) ctrl_bar_out = new_array({size_t(B), size_t(model.nu())}, &ctrl_bar);
  {
    nb::gil_scoped_release no_gil;
    for_each_world(static_cast<int>(B), in.threads, [&](int b, int t) {
      WorldWorkspace w(model, in.P, np, b, in.workspaces[t]);
      using Out = Eigen::Map<Eigen::VectorXd>;
      Out q_bar_b(q_bar + b * model.nq, model.nq), v_bar_b(v_bar + b * model.nv, model.nv),
          tau_bar_b(tau_bar + b * model.nv, model.nv);
      Out ctrl_bar_b(ctrl_bar ? ctrl_bar + b * model.nu() : nullptr, ctrl_bar ? model.nu() : 0);
      q_bar_b.setZero(), v_bar_b.setZero(), tau_bar_b.setZero(), ctrl_bar_b.setZero();
      ModelTangent tangent(w.model());
      step_vjp<double>(w.model(), w.data(), in.q(b), in.v(b), in.tau(b), in.ctrl(b), dt, scheme,
                       Vec(Qn_bar.world(b), model.nq), Vec(Vn_bar.world(b), model.nv), q_bar_b, v_bar_b, tau_bar_b,
                       ctrl_bar_b, tangent);
      Out(params_bar + b * np, np) = params_gradient<double>(w.model(), tangent);
    });
  }
  nb::list out;
  out.append(q_bar_out), out.append(v_bar_out), out.append(tau_bar_out), out.append(params_bar_out);
  if (ctrl_bar_out) out.append(*ctrl_bar_out);
  return nb::tuple(out);
}

nb::object step_jacobian_batched(PyModel& s, nb::handle q, nb::handle v, nb::handle tau, nb::handle ctrl, double dt,
                                 Integrator scheme, nb::handle params, std::optional<int> threads) {
  const Model& model = s.model;
  StepInputs in(model, q, v, tau, ctrl, params, threads);
  const Eigen::Index B = in.worlds();
  // Each world's matrices column-major (Eigen's layout), handed to NumPy with strides: no copy.
  const size_t rows = 2 * static_cast<size_t>(model.nv), nv = static_cast<size_t>(model.nv);
  const size_t nu = in.Ctrl.given() ? static_cast<size_t>(model.nu()) : 0, per_world = rows * (rows + nv + nu);
  double* buffer = new double[std::max<size_t>(per_world * static_cast<size_t>(B), 1)];
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<double*>(p); });
  {
    nb::gil_scoped_release no_gil;
    for_each_world(static_cast<int>(B), in.threads, [&](int b, int t) {
      WorldWorkspace w(model, in.P, in.nparams, b, in.workspaces[t]);
      double* world = buffer + per_world * static_cast<size_t>(b);
      Eigen::Map<Eigen::MatrixXd> A(world, rows, rows), Bm(world + rows * rows, rows, nv),
          B_ctrl(world + rows * (rows + nv), rows, nu);
      step_jacobian(w.model(), w.data(), in.q(b), in.v(b), in.tau(b), in.ctrl(b), dt, scheme, A, Bm, B_ctrl);
    });
  }
  const int64_t world_stride = static_cast<int64_t>(per_world);
  auto view = [&](size_t offset, size_t cols) {
    const size_t shape[3] = {static_cast<size_t>(B), rows, cols};
    const int64_t strides[3] = {world_stride, 1, static_cast<int64_t>(rows)};
    return NumpyArray(buffer + offset, 3, shape, owner, strides);
  };
  if (in.Ctrl.given()) return nb::make_tuple(view(0, rows), view(rows * rows, nv), view(rows * (rows + nv), nu));
  return nb::make_tuple(view(0, rows), view(rows * rows, nv));
}

nb::object rollout_batched(PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, nb::handle ctrls, double dt,
                           Integrator scheme, bool return_status, nb::handle params, std::optional<int> threads) {
  const Model& model = s.model;
  RolloutInputs in(model, q0, v0, taus, ctrls, params, threads);
  const Eigen::Index T = in.T, B = in.worlds();
  double *qs, *vs;
  NumpyArray qs_out = new_array3(size_t(B), size_t(T + 1), size_t(model.nq), &qs);
  NumpyArray vs_out = new_array3(size_t(B), size_t(T + 1), size_t(model.nv), &vs);
  std::vector<std::uint32_t> status(return_status ? static_cast<size_t>(B * T) : 0);
  {
    nb::gil_scoped_release no_gil;
    for_each_world(static_cast<int>(B), in.threads, [&](int b, int t) {
      WorldWorkspace w(model, in.P, in.nparams, b, in.workspaces[t]);
      std::span<std::uint32_t> status_b;
      if (return_status) status_b = std::span<std::uint32_t>(status.data() + b * T, static_cast<size_t>(T));
      rollout_into<double>(w.model(), w.data(), in.q0(b), in.v0(b), in.taus(b), in.ctrls(b), dt, scheme,
                           Eigen::Map<MatrixXr<double>>(qs + b * (T + 1) * model.nq, T + 1, model.nq),
                           Eigen::Map<MatrixXr<double>>(vs + b * (T + 1) * model.nv, T + 1, model.nv), status_b);
    });
  }
  if (!return_status) return nb::make_tuple(qs_out, vs_out);
  return nb::make_tuple(qs_out, vs_out, owned_vector(std::move(status), {size_t(B), size_t(T)}));
}

nb::object rollout_vjp_batched(PyModel& s, nb::handle q0, nb::handle v0, nb::handle taus, nb::handle ctrls, double dt,
                               nb::handle qs_bar, nb::handle vs_bar, Integrator scheme, const CheckpointOptions& options,
                               nb::handle qs, nb::handle vs, bool return_norms, nb::handle params,
                               std::optional<int> threads) {
  const Model& model = s.model;
  RolloutInputs in(model, q0, v0, taus, ctrls, params, threads);
  const Eigen::Index T = in.T, B = in.worlds(), np = in.nparams;
  const WorldArray Qs_bar(qs_bar, "qs_bar", {T + 1, model.nq}, in.batch, true);
  const WorldArray Vs_bar(vs_bar, "vs_bar", {T + 1, model.nv}, in.batch, true);
  if (qs.is_none() != vs.is_none()) throw ArgumentError("qs and vs: give both forward arrays or neither");
  const WorldArray Qs(qs, "qs", {T + 1, model.nq}, in.batch, true), Vs(vs, "vs", {T + 1, model.nv}, in.batch, true);
  double *q0_bar, *v0_bar, *taus_bar, *params_bar, *ctrls_bar = nullptr, *norms = nullptr;
  NumpyArray q0_bar_out = new_array({size_t(B), size_t(model.nq)}, &q0_bar);
  NumpyArray v0_bar_out = new_array({size_t(B), size_t(model.nv)}, &v0_bar);
  NumpyArray taus_bar_out = new_array3(size_t(B), size_t(T), size_t(model.nv), &taus_bar);
  NumpyArray params_bar_out = new_array({size_t(B), size_t(np)}, &params_bar);
  std::optional<NumpyArray> ctrls_bar_out, norms_out;
  if (in.Ctrls.given()) ctrls_bar_out = new_array3(size_t(B), size_t(T), size_t(model.nu()), &ctrls_bar);
  if (return_norms) norms_out = new_array({size_t(B), size_t(T + 1)}, &norms);
  const MatrixXr<double> zeros_q = MatrixXr<double>::Zero(T + 1, model.nq), zeros_v = MatrixXr<double>::Zero(T + 1, model.nv);
  {
    nb::gil_scoped_release no_gil;
    for_each_world(static_cast<int>(B), in.threads, [&](int b, int t) {
      WorldWorkspace w(model, in.P, np, b, in.workspaces[t]);
      using RowsOut = Eigen::Map<MatrixXr<double>>;
      const Rows qs_bar_b(Qs_bar.given() ? Qs_bar.world(b) : zeros_q.data(), T + 1, model.nq);
      const Rows vs_bar_b(Vs_bar.given() ? Vs_bar.world(b) : zeros_v.data(), T + 1, model.nv);
      Eigen::Map<Eigen::VectorXd> q0_bar_b(q0_bar + b * model.nq, model.nq), v0_bar_b(v0_bar + b * model.nv, model.nv);
      RowsOut taus_bar_b(taus_bar + b * T * model.nv, T, model.nv);
      RowsOut ctrls_bar_b(ctrls_bar ? ctrls_bar + b * T * model.nu() : nullptr, ctrls_bar ? T : 0, ctrls_bar ? model.nu() : 0);
      q0_bar_b.setZero(), v0_bar_b.setZero(), taus_bar_b.setZero(), ctrls_bar_b.setZero();
      ModelTangent tangent(w.model());
      if (Qs.given()) {
        const Rows qs_b(Qs.world(b), T + 1, model.nq), vs_b(Vs.world(b), T + 1, model.nv);
        if (qs_b.row(0).transpose() != in.q0(b) || vs_b.row(0).transpose() != in.v0(b))
          throw ArgumentError("qs, vs: world " + std::to_string(b) +
                              ": their first rows must be q0 and v0 (the arrays rollout returned)");
        rollout_vjp_from_states<double>(w.model(), w.data(), qs_b, vs_b, in.taus(b), in.ctrls(b), dt, scheme, qs_bar_b,
                                        vs_bar_b, q0_bar_b, v0_bar_b, taus_bar_b, ctrls_bar_b, tangent, options);
      } else {
        rollout_vjp<double>(w.model(), w.data(), in.q0(b), in.v0(b), in.taus(b), in.ctrls(b), dt, scheme, qs_bar_b,
                            vs_bar_b, q0_bar_b, v0_bar_b, taus_bar_b, ctrls_bar_b, tangent, options);
      }
      Eigen::Map<Eigen::VectorXd>(params_bar + b * np, np) = params_gradient<double>(w.model(), tangent);
      if (norms)
        for (Eigen::Index k = 0; k <= T; ++k) norms[b * (T + 1) + k] = w.data().rollout_adj_norms[k];
    });
  }
  nb::list out;
  out.append(q0_bar_out), out.append(v0_bar_out), out.append(taus_bar_out), out.append(params_bar_out);
  if (ctrls_bar_out) out.append(*ctrls_bar_out);
  if (norms_out) out.append(*norms_out);
  return nb::tuple(out);
}

}  // namespace gradyn::python
