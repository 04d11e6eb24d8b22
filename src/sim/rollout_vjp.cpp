// Adjoint of rollout: backpropagation through time, one recomputed step at a time.
//
// The backward pass needs the state (q_t, v_t) of every step t = T-1 .. 0, in reverse order.
//  * max_snapshots = 0: one forward sweep keeps every state ((T+1) (nq + nv) numbers).
//  * max_snapshots = k > 0: binomial checkpointing (Griewank & Walther's "revolve"): at most k
//    states are kept at any time (the initial one included) and the others are recomputed from
//    the nearest earlier one. With r the smallest integer such that C(k + r, k) >= T, every step
//    is recomputed at most r times, and the total number of recomputed steps,
//    r T - C(k + r, k + 1), is the minimum for k snapshots (Data::rollout_adj_forward_steps
//    reports the count of the last call).
// Both paths feed step and step_vjp bit-identical inputs in the same order, so their results are
// identical, not merely close.
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {

namespace {

// C(c + r, c) (the number of steps c snapshots reverse with r recomputations per step),
// saturating at `cap`.
long long binomial_range(long long c, long long r, long long cap) {
  if (r < 0) return 0;
  long long b = 1;
  for (long long i = 1; i <= r; ++i) {
    b = b * (c + i) / i;  // exact: C(c+i, i) = C(c+i-1, i-1) (c+i) / i
    if (b >= cap) return cap;
  }
  return b;
}

// The smallest r with C(c + r, c) >= n.
long long repetitions(long long n, long long c) {
  long long r = 0;
  while (binomial_range(c, r, n) < n) ++r;
  return r;
}

template <class S>
class Reverser {
 public:
  using Mat = MatrixXr<S>;
  Reverser(const ModelTpl<S>& model, DataTpl<S>& data, const Eigen::Ref<const Mat>& taus,
           const Eigen::Ref<const Mat>& ctrls, const S& dt, Integrator integrator, const Eigen::Ref<const Mat>& qs_bar,
           const Eigen::Ref<const Mat>& vs_bar, Eigen::Ref<Mat> taus_bar, Eigen::Ref<Mat> ctrls_bar,
           ModelTangentTpl<S>& model_bar, const CheckpointOptions& options)
      : model_(model), data_(data), taus_(taus), ctrls_(ctrls), dt_(dt), integrator_(integrator), qs_bar_(qs_bar),
        vs_bar_(vs_bar), taus_bar_(taus_bar), ctrls_bar_(ctrls_bar), model_bar_(model_bar), options_(options) {}

  // Starts the backward pass: the adjoint of state T is its loss adjoint.
  void start(Eigen::Index T) {
    if (options_.clip_norm < 0.0 || !std::isfinite(options_.clip_norm))
      throw ArgumentError("clip_norm: expected a finite number >= 0 (0: no clipping), got " +
                          std::to_string(options_.clip_norm));
    data_.rollout_adj_norms.assign(T + 1, 0.0);
    data_.rollout_adj_clipped = 0;
    data_.rollout_adj_lambda_q[0] = qs_bar_.row(T).transpose();
    data_.rollout_adj_lambda_v[0] = vs_bar_.row(T).transpose();
    visit(T);
  }

  // state (q, v) = state t+1 from state t; both in Data's rollout buffers (aligned, so that the
  // arithmetic does not depend on where the caller's arrays lie).
  void advance(Eigen::Index t) {
    data_.rollout_adj_tau = taus_.row(t).transpose();
    step<S>(model_, data_, data_.rollout_adj_q[0], data_.rollout_adj_v[0], data_.rollout_adj_tau, ctrl(t), dt_,
            integrator_, data_.rollout_adj_q[1], data_.rollout_adj_v[1]);
    data_.rollout_adj_q[0].swap(data_.rollout_adj_q[1]);
    data_.rollout_adj_v[0].swap(data_.rollout_adj_v[1]);
    ++data_.rollout_adj_forward_steps;
  }

  // Reverses step t from the state in the current buffer: lambda_t = qs_bar[t] + step_vjp(lambda_{t+1}).
  void reverse_step(Eigen::Index t) {
    auto& lq = data_.rollout_adj_lambda_q;
    auto& lv = data_.rollout_adj_lambda_v;
    lq[1] = qs_bar_.row(t).transpose();
    lv[1] = vs_bar_.row(t).transpose();
    data_.rollout_adj_tau = taus_.row(t).transpose();
    if (ctrls_.size() == 0) {
      step_vjp<S>(model_, data_, data_.rollout_adj_q[0], data_.rollout_adj_v[0], data_.rollout_adj_tau, dt_,
                  integrator_, lq[0], lv[0], lq[1], lv[1], taus_bar_.row(t).transpose(), model_bar_);
    } else {
      step_vjp<S>(model_, data_, data_.rollout_adj_q[0], data_.rollout_adj_v[0], data_.rollout_adj_tau, ctrl(t), dt_,
                  integrator_, lq[0], lv[0], lq[1], lv[1], taus_bar_.row(t).transpose(),
                  ctrls_bar_.row(t).transpose(), model_bar_);
    }
    lq[0].swap(lq[1]);
    lv[0].swap(lv[1]);
    visit(t);
  }

  // The report, the clipping and the user's hook on lambda_t (in rollout_adj_lambda_*[0]).
  void visit(Eigen::Index t) {
    auto& lq = data_.rollout_adj_lambda_q[0];
    auto& lv = data_.rollout_adj_lambda_v[0];
    const double norm = std::sqrt(value_of(S(lq.squaredNorm() + lv.squaredNorm())));
    data_.rollout_adj_norms[t] = norm;
    if (options_.clip_norm > 0.0 && norm > options_.clip_norm) {
      const S scale = S(options_.clip_norm / norm);
      lq *= scale;
      lv *= scale;
      ++data_.rollout_adj_clipped;
    }
    if constexpr (std::is_same_v<S, double>)
      if (options_.hook) options_.hook(static_cast<long>(t), lq, lv);
  }

  template <class M>
  void load(const M& qs, const M& vs, Eigen::Index row) {
    data_.rollout_adj_q[0] = qs.row(row).transpose();
    data_.rollout_adj_v[0] = vs.row(row).transpose();
  }
  void store(Mat& qs, Mat& vs, Eigen::Index row) const {
    qs.row(row) = data_.rollout_adj_q[0].transpose();
    vs.row(row) = data_.rollout_adj_v[0].transpose();
  }

  // Binomial checkpointing: reverses steps [a, b) when the state a is in snapshot `slot` of
  // (snap_q, snap_v); the slots above it are free.
  void revolve(Mat& snap_q, Mat& snap_v, Eigen::Index slot, Eigen::Index a, Eigen::Index b) {
    const Eigen::Index capacity = snap_q.rows();
    while (b > a) {
      const long long n = b - a, c = capacity - slot;  // snapshots usable, the one holding a included
      load(snap_q, snap_v, slot);
      if (n == 1) {
        reverse_step(a);
        return;
      }
      if (c == 1) {  // no free slot: recompute from a up to the last step, reverse it
        for (Eigen::Index t = a; t < b - 1; ++t) advance(t);
        reverse_step(b - 1);
        --b;
        continue;
      }
      // Split at a + m: the right part [a + m, b) is reversed with one snapshot fewer, then the
      // left part with all of them. This m minimises the recomputations (checked against the
      // dynamic-programming optimum; Griewank & Walther 2000).
      const long long r = repetitions(n, c);
      long long m = std::max({binomial_range(c, r - 2, n), n - binomial_range(c - 1, r, n), 1LL});
      m = std::min(m, n - 1);
      for (Eigen::Index t = a; t < a + m; ++t) advance(t);
      store(snap_q, snap_v, slot + 1);
      revolve(snap_q, snap_v, slot + 1, a + m, b);
      b = a + m;
    }
  }

 private:
  // The controls of step t (empty when every control is zero), in Data's aligned buffer.
  const VectorX<S>& ctrl(Eigen::Index t) {
    if (ctrls_.size() == 0) return empty_;
    data_.rollout_adj_ctrl = ctrls_.row(t).transpose();
    return data_.rollout_adj_ctrl;
  }

  const ModelTpl<S>& model_;
  DataTpl<S>& data_;
  const Eigen::Ref<const Mat>& taus_;
  const Eigen::Ref<const Mat>& ctrls_;
  const VectorX<S> empty_;
  const S dt_;
  const Integrator integrator_;
  const Eigen::Ref<const Mat>& qs_bar_;
  const Eigen::Ref<const Mat>& vs_bar_;
  Eigen::Ref<Mat> taus_bar_;
  Eigen::Ref<Mat> ctrls_bar_;
  ModelTangentTpl<S>& model_bar_;
  const CheckpointOptions& options_;
};

void check_shape(const char* what, Eigen::Index rows, Eigen::Index cols, Eigen::Index expected_rows,
                 Eigen::Index expected_cols) {
  if (rows == expected_rows && cols == expected_cols) return;
  std::ostringstream s;
  s << what << ": expected shape (" << expected_rows << ", " << expected_cols << "), got (" << rows << ", " << cols
    << ")";
  throw ArgumentError(s.str());
}

}  // namespace

template <class S>
void rollout_vjp(const ModelTpl<S>& model, DataTpl<S>& data, const VecRef<S>& q0, const VecRef<S>& v0,
                 const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt, Integrator integrator,
                 const RowsRef<S>& qs_bar, const RowsRef<S>& vs_bar, VecOut<S> q0_bar, VecOut<S> v0_bar,
                 RowsOut<S> taus_bar, RowsOut<S> ctrls_bar, ModelTangentTpl<S>& model_bar,
                 const CheckpointOptions& options) {
  check_size("q0", q0.size(), model.nq);
  check_size("v0", v0.size(), model.nv);
  check_size("q0_bar", q0_bar.size(), model.nq);
  check_size("v0_bar", v0_bar.size(), model.nv);
  if (taus.cols() != model.nv) check_shape("taus", taus.rows(), taus.cols(), taus.rows(), model.nv);
  const Eigen::Index T = taus.rows();
  check_shape("qs_bar", qs_bar.rows(), qs_bar.cols(), T + 1, model.nq);
  check_shape("vs_bar", vs_bar.rows(), vs_bar.cols(), T + 1, model.nv);
  check_shape("taus_bar", taus_bar.rows(), taus_bar.cols(), T, model.nv);
  check_controls_shape(model.nu(), ctrls.rows(), ctrls.cols(), T);
  if (ctrls.size() != 0) check_shape("ctrls_bar", ctrls_bar.rows(), ctrls_bar.cols(), T, model.nu());
  if (options.max_snapshots < 0)
    throw ArgumentError("max_snapshots: expected 0 (keep every state) or a positive count, got " +
                        std::to_string(options.max_snapshots));

  using Mat = MatrixXr<S>;
  Reverser<S> reverser(model, data, taus, ctrls, dt, integrator, qs_bar, vs_bar, taus_bar, ctrls_bar, model_bar,
                       options);
  data.rollout_adj_forward_steps = 0;
  data.rollout_adj_q[0] = q0;
  data.rollout_adj_v[0] = v0;
  reverser.start(T);
  if (T > 0) {
    if (options.max_snapshots == 0) {
      // keep states 0 .. T-1 (the last one is never needed)
      Mat qs(T, model.nq), vs(T, model.nv);
      reverser.store(qs, vs, 0);
      for (Eigen::Index t = 0; t + 1 < T; ++t) {
        reverser.advance(t);
        reverser.store(qs, vs, t + 1);
      }
      for (Eigen::Index t = T - 1; t >= 0; --t) {
        reverser.load(qs, vs, t);
        reverser.reverse_step(t);
      }
    } else {
      const Eigen::Index k = std::min<Eigen::Index>(options.max_snapshots, T);
      Mat snap_q(k, model.nq), snap_v(k, model.nv);
      reverser.store(snap_q, snap_v, 0);
      reverser.revolve(snap_q, snap_v, 0, 0, T);
    }
  }
  q0_bar += data.rollout_adj_lambda_q[0];
  v0_bar += data.rollout_adj_lambda_v[0];
}

template <class S>
void rollout_vjp_from_states(const ModelTpl<S>& model, DataTpl<S>& data, const RowsRef<S>& qs, const RowsRef<S>& vs,
                             const RowsRef<S>& taus, const RowsRef<S>& ctrls, const NoDeduce<S>& dt,
                             Integrator integrator, const RowsRef<S>& qs_bar, const RowsRef<S>& vs_bar,
                             VecOut<S> q0_bar, VecOut<S> v0_bar, RowsOut<S> taus_bar, RowsOut<S> ctrls_bar,
                             ModelTangentTpl<S>& model_bar, const CheckpointOptions& options) {
  check_size("q0_bar", q0_bar.size(), model.nq);
  check_size("v0_bar", v0_bar.size(), model.nv);
  if (taus.cols() != model.nv) check_shape("taus", taus.rows(), taus.cols(), taus.rows(), model.nv);
  const Eigen::Index T = taus.rows();
  check_shape("qs", qs.rows(), qs.cols(), T + 1, model.nq);
  check_shape("vs", vs.rows(), vs.cols(), T + 1, model.nv);
  check_shape("qs_bar", qs_bar.rows(), qs_bar.cols(), T + 1, model.nq);
  check_shape("vs_bar", vs_bar.rows(), vs_bar.cols(), T + 1, model.nv);
  check_shape("taus_bar", taus_bar.rows(), taus_bar.cols(), T, model.nv);
  check_controls_shape(model.nu(), ctrls.rows(), ctrls.cols(), T);
  if (ctrls.size() != 0) check_shape("ctrls_bar", ctrls_bar.rows(), ctrls_bar.cols(), T, model.nu());
  Reverser<S> reverser(model, data, taus, ctrls, dt, integrator, qs_bar, vs_bar, taus_bar, ctrls_bar, model_bar,
                       options);
  data.rollout_adj_forward_steps = 0;
  reverser.start(T);
  for (Eigen::Index t = T - 1; t >= 0; --t) {  // the caller's states are the checkpoints
    reverser.load(qs, vs, t);
    reverser.reverse_step(t);
  }
  q0_bar += data.rollout_adj_lambda_q[0];
  v0_bar += data.rollout_adj_lambda_v[0];
}

#define GRADYN_INSTANTIATE(S)                                                                                        \
  template void rollout_vjp<S>(const ModelTpl<S>&, DataTpl<S>&, const VecRef<S>&, const VecRef<S>&,                \
                               const RowsRef<S>&, const RowsRef<S>&, const NoDeduce<S>&, Integrator,               \
                               const RowsRef<S>&, const RowsRef<S>&, VecOut<S>, VecOut<S>, RowsOut<S>, RowsOut<S>,  \
                               ModelTangentTpl<S>&, const CheckpointOptions&);                                     \
  template void rollout_vjp_from_states<S>(const ModelTpl<S>&, DataTpl<S>&, const RowsRef<S>&, const RowsRef<S>&,   \
                                           const RowsRef<S>&, const RowsRef<S>&, const NoDeduce<S>&, Integrator,   \
                                           const RowsRef<S>&, const RowsRef<S>&, VecOut<S>, VecOut<S>, RowsOut<S>, \
                                           RowsOut<S>, ModelTangentTpl<S>&, const CheckpointOptions&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
