// Adjoint of the dense network's forward pass (nn/dense.hpp): back through the layers, reading each
// layer's z and y from the workspace.
#include "gradyn/autodiff.hpp"
#include "gradyn/nn/dense.hpp"
#include "gradyn/nn/detail/activation.hpp"

namespace gradyn {

template <class S>
void dense_vjp(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work, const VecRef<S>& y_bar,
               VecOut<S> x_bar, VecOut<S> weights_bar) {
  using RowMajor = MatrixXr<S>;
  // delta: adjoint of the current layer's y, then (in place) of its z
  work.delta.head(shape.outputs()) = y_bar;
  for (int l = shape.layers() - 1; l >= 0; --l) {
    const int in = shape.widths[l], out = shape.widths[l + 1], at = shape.activation_offset(l);
    const Activation act = shape.activation_of(l);
    auto z_bar = work.delta.head(out);
    for (int i = 0; i < out; ++i) z_bar[i] *= detail::activation_derivative(act, work.pre[at + i], work.post[at + i]);
    const auto x = l == 0 ? work.input.head(in) : work.post.segment(shape.activation_offset(l - 1), in);
    if (weights_bar.size() != 0) {
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

#define GRADYN_INSTANTIATE(S)                                                                                  \
  template void dense_vjp<S>(const DenseShape&, const VecRef<S>&, DenseWorkspaceTpl<S>&, const VecRef<S>&,     \
                             VecOut<S>, VecOut<S>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
