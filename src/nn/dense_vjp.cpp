// Adjoint of the dense network's forward pass (nn/dense.hpp, nn/dense_batch.hpp): back through the
// layers, reading each layer's z and y from the workspace.
#include "gradyn/autodiff.hpp"
#include "gradyn/nn/dense.hpp"
#include "gradyn/nn/dense_batch.hpp"
#include "gradyn/nn/detail/activation.hpp"

namespace gradyn {

namespace {

// Back through the layers. Each layer's z adjoint goes to the weights' adjoint (weights_bar, a rank-1
// update) or is kept in z_bars for a later batched accumulation; either may be empty.
template <class S>
void backward(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work, const VecRef<S>& y_bar,
              VecOut<S> x_bar, VecOut<S> weights_bar, VecOut<S> z_bars) {
  using RowMajor = MatrixXr<S>;
  // delta: adjoint of the current layer's y, then (in place) of its z
  work.delta.head(shape.outputs()) = y_bar;
  for (int l = shape.layers() - 1; l >= 0; --l) {
    const int in = shape.widths[l], out = shape.widths[l + 1], at = shape.activation_offset(l);
    const Activation act = shape.activation_of(l);
    auto z_bar = work.delta.head(out);
    for (int i = 0; i < out; ++i) z_bar[i] *= detail::activation_derivative(act, work.pre[at + i], work.post[at + i]);
    if (z_bars.size() != 0) z_bars.segment(at, out) = z_bar;
    if (weights_bar.size() != 0) {
      const auto x = l == 0 ? work.input.head(in) : work.post.segment(shape.activation_offset(l - 1), in);
      Eigen::Map<RowMajor> W_bar(weights_bar.data() + shape.weight_offset(l), out, in);
      W_bar.noalias() += z_bar * x.transpose();
      weights_bar.segment(shape.bias_offset(l), out) += z_bar;
    }
    if (l == 0 && x_bar.size() == 0) break;
    const Eigen::Map<const RowMajor> W(weights.data() + shape.weight_offset(l), out, in);
    auto in_bar = work.delta_next.head(in);
    in_bar.noalias() = W.transpose() * z_bar;
    if (l == 0) x_bar += in_bar;
    else work.delta.swap(work.delta_next);
  }
}

}  // namespace

template <class S>
void dense_vjp(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work, const VecRef<S>& y_bar,
               VecOut<S> x_bar, VecOut<S> weights_bar) {
  VectorX<S> no_z_bars;
  backward<S>(shape, weights, work, y_bar, x_bar, weights_bar, no_z_bars);
}

template <class S>
void dense_vjp_deltas(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work,
                      const VecRef<S>& y_bar, VecOut<S> x_bar, VecOut<S> z_bars) {
  VectorX<S> no_weights_bar;
  backward<S>(shape, weights, work, y_bar, x_bar, no_weights_bar, z_bars);
}

template <class S>
void dense_weight_grads(const DenseShape& shape, const Eigen::Ref<const MatrixXr<S>>& inputs,
                        const Eigen::Ref<const MatrixXr<S>>& posts, const Eigen::Ref<const MatrixXr<S>>& z_bars,
                        VecOut<S> grads) {
  for (int l = 0; l < shape.layers(); ++l) {
    const int in = shape.widths[l], out = shape.widths[l + 1], at = shape.activation_offset(l);
    const auto Z = z_bars.middleCols(at, out);  // K x out
    Eigen::Map<MatrixXr<S>> W_bar(grads.data() + shape.weight_offset(l), out, in);
    if (l == 0) W_bar.noalias() = Z.transpose() * inputs.leftCols(in);
    else W_bar.noalias() = Z.transpose() * posts.middleCols(shape.activation_offset(l - 1), in);
    grads.segment(shape.bias_offset(l), out) = Z.colwise().sum().transpose();
  }
}

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void dense_vjp<S>(const DenseShape&, const VecRef<S>&, DenseWorkspaceTpl<S>&, const VecRef<S>&,     \
                             VecOut<S>, VecOut<S>);                                                           \
  template void dense_vjp_deltas<S>(const DenseShape&, const VecRef<S>&, DenseWorkspaceTpl<S>&,                \
                                    const VecRef<S>&, VecOut<S>, VecOut<S>);                                  \
  template void dense_weight_grads<S>(const DenseShape&, const Eigen::Ref<const MatrixXr<S>>&,               \
                                      const Eigen::Ref<const MatrixXr<S>>&, const Eigen::Ref<const MatrixXr<S>>&, \
                                      VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
