// A small dense (fully connected) network: the function a hybrid model inserts into the dynamics
// (paper 001; model/network.hpp says where). Layer l maps its input x to
//
//   z_l = W_l x + b_l,   y_l = act_l(z_l)
//
// with act_l the hidden activation for every layer but the last, which has the output activation
// (identity unless asked otherwise). Its weights are one flat vector, layer by layer: W_l row-major
// (entry [i, j] multiplies input j into output i), then b_l. That vector is a slice of the model's
// parameter vector (model/params.hpp), so every gradient of the engine reaches it.
//
// The forward pass keeps every layer's z and y in a workspace sized once; the VJP reads them back.
// Neither allocates. Templated on the scalar, so forward-mode AD (autodiff.hpp) runs through it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gradyn/spatial/spatial.hpp"

namespace gradyn {

enum class Activation : std::uint8_t { Identity, Tanh, Relu, Elu, Softplus, Sigmoid };

/// "identity", "tanh", "relu", "elu", "softplus", "sigmoid".
const char* activation_name(Activation activation);
/// The activation with that name; throws ArgumentError listing the valid names otherwise.
Activation activation_from_name(const std::string& name);

/// The layer widths and activations of a dense network. widths = {inputs, hidden..., outputs}: at
/// least two entries, all positive.
struct DenseShape {
  std::vector<int> widths;
  Activation hidden = Activation::Tanh;
  Activation output = Activation::Identity;

  int layers() const { return static_cast<int>(widths.size()) - 1; }
  int inputs() const { return widths.front(); }
  int outputs() const { return widths.back(); }
  /// Entries of the flat weight vector: sum over layers of (in + 1) out.
  int param_count() const;
  /// Offset of W_l in the flat weight vector; b_l follows it at weight_offset(l) + out_l in_l.
  int weight_offset(int layer) const;
  int bias_offset(int layer) const { return weight_offset(layer) + widths[layer + 1] * widths[layer]; }
  /// Offset of layer l's z and y in the workspace's pre/post buffers.
  int activation_offset(int layer) const;
  /// Entries of pre (and of post): sum of every layer's output width.
  int activation_count() const;
  int max_width() const;
  Activation activation_of(int layer) const { return layer + 1 == layers() ? output : hidden; }
};

/// Throws ArgumentError (prefixed by `what`, the user's name for the network) unless the shape has
/// an input and an output layer and every width is positive.
void check_dense_shape(const DenseShape& shape, const std::string& what);

/// Buffers of one network, allocated once.
template <class S>
struct DenseWorkspaceTpl {
  DenseWorkspaceTpl() = default;
  explicit DenseWorkspaceTpl(const DenseShape& shape) { resize(shape); }
  void resize(const DenseShape& shape);

  VectorX<S> input;  // the network's input, gathered by its caller
  VectorX<S> pre;    // every layer's z, layer after layer (DenseShape::activation_offset)
  VectorX<S> post;   // every layer's y; the last block is the output
  VectorX<S> delta, delta_next;  // dense_vjp: adjoint of one layer's y, of the next (max_width)
  VectorX<S> output_bar, input_bar;  // for dense_vjp's callers: the output's and input's adjoints
};
using DenseWorkspace = DenseWorkspaceTpl<double>;

/// Forward pass at the workspace's input: fills pre and post. Returns the output (the last layer's
/// block of post). weights: shape.param_count() entries.
template <class S>
Eigen::Ref<const VectorX<S>> dense_forward(const DenseShape& shape, const VecRef<S>& weights,
                                           DenseWorkspaceTpl<S>& work);

/// Adjoint of dense_forward, whose pre/post must be current in `work`: given the output's adjoint
/// y_bar, accumulates the input's adjoint into x_bar and the weights' into weights_bar (each skipped
/// when it is empty). y_bar may be work.output_bar.
template <class S>
void dense_vjp(const DenseShape& shape, const VecRef<S>& weights, DenseWorkspaceTpl<S>& work, const VecRef<S>& y_bar,
               VecOut<S> x_bar, VecOut<S> weights_bar);

/// Seeded initial weights: for each layer uniform in +-sqrt(6 / (in + out)) (Glorot) when the layer's
/// activation is identity, tanh or sigmoid, +-sqrt(6 / in) (He) for relu, elu and softplus; biases
/// zero. zero_last_layer zeroes the last layer's weights too, so the network starts at output 0 and a
/// hybrid model starts as its analytical part. The same seed gives the same weights on every machine
/// (a 64-bit Mersenne twister, mapped to [0, 1) by its top 53 bits).
Eigen::VectorXd dense_initial_weights(const DenseShape& shape, std::uint64_t seed, bool zero_last_layer);

/// Names of the flat weight vector's entries, prefixed by `prefix` and '.': "layer<l>.weight[i,j]",
/// then "layer<l>.bias[i]", layer after layer.
std::vector<std::string> dense_param_names(const DenseShape& shape, const std::string& prefix);

}  // namespace gradyn
