// Dense network (nn/dense.hpp): shape bookkeeping, forward pass, seeded initialisation, names. The
// adjoint is beside it, in dense_vjp.cpp.
#include "gradyn/nn/dense.hpp"
#include "gradyn/nn/dense_batch.hpp"

#include <cmath>
#include <random>

#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/nn/detail/activation.hpp"

namespace gradyn {

const char* activation_name(Activation activation) {
  switch (activation) {
    case Activation::Identity: return "identity";
    case Activation::Tanh: return "tanh";
    case Activation::Relu: return "relu";
    case Activation::Elu: return "elu";
    case Activation::Softplus: return "softplus";
    case Activation::Sigmoid: return "sigmoid";
  }
  return "unknown";
}

Activation activation_from_name(const std::string& name) {
  for (Activation a : {Activation::Identity, Activation::Tanh, Activation::Relu, Activation::Elu, Activation::Softplus,
                       Activation::Sigmoid})
    if (name == activation_name(a)) return a;
  throw ArgumentError("activation: expected one of 'identity', 'tanh', 'relu', 'elu', 'softplus', 'sigmoid', got '" +
                      name + "'");
}

int DenseShape::param_count() const { return weight_offset(layers()); }

int DenseShape::weight_offset(int layer) const {
  int offset = 0;
  for (int l = 0; l < layer; ++l) offset += (widths[l] + 1) * widths[l + 1];
  return offset;
}

int DenseShape::activation_offset(int layer) const {
  int offset = 0;
  for (int l = 0; l < layer; ++l) offset += widths[l + 1];
  return offset;
}

int DenseShape::activation_count() const { return activation_offset(layers()); }

int DenseShape::max_width() const {
  int w = 0;
  for (int x : widths) w = std::max(w, x);
  return w;
}

void check_dense_shape(const DenseShape& shape, const std::string& what) {
  if (shape.widths.size() < 2)
    throw ArgumentError(what + ": a network needs at least an input and an output layer, got " +
                        std::to_string(shape.widths.size()) + " layer widths");
  for (size_t l = 0; l < shape.widths.size(); ++l)
    if (shape.widths[l] <= 0) {
      const char* role = l == 0 ? "input" : l + 1 == shape.widths.size() ? "output" : "hidden";
      throw ArgumentError(what + ": every layer needs at least one unit, got width " + std::to_string(shape.widths[l]) +
                          " for the " + role + " layer (widths[" + std::to_string(l) + "])");
    }
}

template <class S>
void DenseWorkspaceTpl<S>::resize(const DenseShape& shape) {
  input = VectorX<S>::Zero(shape.inputs());
  pre = VectorX<S>::Zero(shape.activation_count());
  post = VectorX<S>::Zero(shape.activation_count());
  delta = VectorX<S>::Zero(shape.max_width());
  delta_next = VectorX<S>::Zero(shape.max_width());
  output_bar = VectorX<S>::Zero(shape.outputs());
  input_bar = VectorX<S>::Zero(shape.inputs());
}

template <class S>
Eigen::Ref<const VectorX<S>> dense_forward(const DenseShape& shape, const VecRef<S>& weights,
                                           DenseWorkspaceTpl<S>& work) {
  using RowMajor = MatrixXr<S>;
  for (int l = 0; l < shape.layers(); ++l) {
    const int in = shape.widths[l], out = shape.widths[l + 1], at = shape.activation_offset(l);
    const Eigen::Map<const RowMajor> W(weights.data() + shape.weight_offset(l), out, in);
    const auto b = weights.segment(shape.bias_offset(l), out);
    auto z = work.pre.segment(at, out);
    auto y = work.post.segment(at, out);
    if (l == 0) z.noalias() = W * work.input;
    else z.noalias() = W * work.post.segment(shape.activation_offset(l - 1), in);
    z += b;
    const Activation act = shape.activation_of(l);
    for (int i = 0; i < out; ++i) y[i] = detail::activate(act, z[i]);
  }
  return work.post.segment(shape.activation_offset(shape.layers() - 1), shape.outputs());
}

template <class S>
void dense_forward_rows(const DenseShape& shape, const VecRef<S>& weights, const Eigen::Ref<const MatrixXr<S>>& inputs,
                        Eigen::Ref<MatrixXr<S>> pres, Eigen::Ref<MatrixXr<S>> posts) {
  using RowMajor = MatrixXr<S>;
  const Eigen::Index K = inputs.rows();
  if (inputs.cols() != shape.inputs() || pres.rows() != K || posts.rows() != K ||
      pres.cols() != shape.activation_count() || posts.cols() != shape.activation_count())
    throw ArgumentError("network on a batch of inputs: inputs " + std::to_string(inputs.rows()) + "x" +
                        std::to_string(inputs.cols()) + ", pres and posts expected " + std::to_string(K) + "x" +
                        std::to_string(shape.activation_count()));
  for (int l = 0; l < shape.layers(); ++l) {
    const int in = shape.widths[l], out = shape.widths[l + 1], at = shape.activation_offset(l);
    const Eigen::Map<const RowMajor> W(weights.data() + shape.weight_offset(l), out, in);
    const auto b = weights.segment(shape.bias_offset(l), out);
    auto Z = pres.middleCols(at, out);
    if (l == 0) Z.noalias() = inputs * W.transpose();
    else Z.noalias() = posts.middleCols(shape.activation_offset(l - 1), in) * W.transpose();
    Z.rowwise() += b.transpose();
    const Activation act = shape.activation_of(l);
    auto Y = posts.middleCols(at, out);
    for (Eigen::Index k = 0; k < K; ++k)
      for (int i = 0; i < out; ++i) Y(k, i) = detail::activate(act, Z(k, i));
  }
}

Eigen::VectorXd dense_initial_weights(const DenseShape& shape, std::uint64_t seed, bool zero_last_layer) {
  check_dense_shape(shape, "network");
  Eigen::VectorXd w = Eigen::VectorXd::Zero(shape.param_count());
  std::mt19937_64 engine(seed);
  // top 53 bits -> [0, 1): the same numbers everywhere (std::uniform_real_distribution is not)
  const auto uniform = [&] { return static_cast<double>(engine() >> 11) * 0x1.0p-53; };
  for (int l = 0; l < shape.layers(); ++l) {
    const int in = shape.widths[l], out = shape.widths[l + 1];
    const Activation act = shape.activation_of(l);
    const bool he = act == Activation::Relu || act == Activation::Elu || act == Activation::Softplus;
    const double bound = std::sqrt(6.0 / (he ? in : in + out));
    const bool zero = zero_last_layer && l + 1 == shape.layers();
    for (int k = 0; k < in * out; ++k) {
      const double u = uniform();  // drawn even when zeroed: the other layers do not depend on the flag
      w[shape.weight_offset(l) + k] = zero ? 0.0 : bound * (2.0 * u - 1.0);
    }
  }
  return w;
}

std::vector<std::string> dense_param_names(const DenseShape& shape, const std::string& prefix) {
  std::vector<std::string> names;
  names.reserve(shape.param_count());
  for (int l = 0; l < shape.layers(); ++l) {
    const std::string layer = prefix + ".layer" + std::to_string(l);
    for (int i = 0; i < shape.widths[l + 1]; ++i)
      for (int j = 0; j < shape.widths[l]; ++j)
        names.push_back(layer + ".weight[" + std::to_string(i) + "," + std::to_string(j) + "]");
    for (int i = 0; i < shape.widths[l + 1]; ++i) names.push_back(layer + ".bias[" + std::to_string(i) + "]");
  }
  return names;
}

#define GRADYN_INSTANTIATE(S)                                                                        \
  template struct DenseWorkspaceTpl<S>;                                                              \
  template Eigen::Ref<const VectorX<S>> dense_forward<S>(const DenseShape&, const VecRef<S>&, DenseWorkspaceTpl<S>&); \
  template void dense_forward_rows<S>(const DenseShape&, const VecRef<S>&, const Eigen::Ref<const MatrixXr<S>>&,      \
                                      Eigen::Ref<MatrixXr<S>>, Eigen::Ref<MatrixXr<S>>);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
