// The dense network over many evaluations at once (nn/dense.hpp): when one network runs at every
// step of a rollout, a step at a time is a matrix-vector product per layer that reads every weight
// (memory-bound for large networks). Where the inputs of K steps are known in advance (a rollout's
// adjoint, which replays a recorded trajectory), dense_forward_rows evaluates them with one matrix
// product per layer. Likewise for the weights' adjoint: accumulating d loss / d W one step at a time
// is a rank-1 update of every weight per step; instead each step keeps its layers' z adjoints
// (dense_vjp_deltas) and its layers' inputs, and dense_weight_grads turns a chunk of K steps into
// the weights' adjoint with one matrix product per layer.
#pragma once

#include "gradyn/nn/dense.hpp"

namespace gradyn {

/// dense_forward on K inputs at once (inputs: K x shape.inputs(), one row per evaluation): fills pres
/// and posts (K x activation_count, the rows of workspace.pre and .post). The same numbers as K
/// dense_forward calls up to rounding (a matrix product sums in another order).
template <class S>
void dense_forward_rows(const DenseShape& shape, const VecRef<S>& weights, const Eigen::Ref<const MatrixXr<S>>& inputs,
                        Eigen::Ref<MatrixXr<S>> pres, Eigen::Ref<MatrixXr<S>> posts);

/// dense_vjp without the weights' adjoint: accumulates the input's adjoint into x_bar (skipped when
/// empty) and writes every layer's z adjoint into z_bars (shape.activation_count() entries, layer l at
/// shape.activation_offset(l)). The workspace's pre/post must be current.
template <class S>
void dense_vjp_deltas(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work,
                      const VecRef<S>& y_bar, VecOut<S> x_bar, VecOut<S> z_bars);

/// The weights' adjoint of K evaluations, written (not added) into grads (param_count entries):
/// inputs (K x shape.inputs()) their inputs, posts (K x activation_count) their layers' outputs
/// (workspace.post), z_bars (K x activation_count) their z adjoints (dense_vjp_deltas), one row per
/// evaluation. The caller adds grads to its running sum: a buffer of its own, so the products' rounding
/// does not depend on where the running sum lives (a batch's worlds equal single worlds bit for bit).
template <class S>
void dense_weight_grads(const DenseShape& shape, const Eigen::Ref<const MatrixXr<S>>& inputs,
                        const Eigen::Ref<const MatrixXr<S>>& posts, const Eigen::Ref<const MatrixXr<S>>& z_bars,
                        VecOut<S> grads);

}  // namespace gradyn
