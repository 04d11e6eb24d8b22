// The activations of nn/dense.hpp and their derivatives, shared by the forward pass and its adjoint.
// Each derivative is written in terms of z (the layer's input) and y = act(z), whichever is cheaper.
#pragma once

#include <cmath>

#include "gradyn/autodiff.hpp"
#include "gradyn/nn/dense.hpp"

namespace gradyn::detail {

// log(1 + x) for x in [0, 1]; AutoDiffScalar has no log1p
inline double log1p_of(double x) { return std::log1p(x); }
inline ADScalar log1p_of(const ADScalar& x) {
  using std::log;
  return log(ADScalar(1.0) + x);
}

template <class S>
S activate(Activation act, const S& z) {
  using std::exp;
  using std::tanh;
  switch (act) {
    case Activation::Identity: return z;
    case Activation::Tanh: return tanh(z);
    case Activation::Relu: return value_of(z) > 0.0 ? z : S(0);
    case Activation::Elu: return value_of(z) > 0.0 ? z : S(exp(z) - S(1));
    case Activation::Softplus:  // log(1 + e^z) = max(z, 0) + log(1 + e^-|z|): no overflow
      return value_of(z) > 0.0 ? S(z + log1p_of(S(exp(-z)))) : log1p_of(S(exp(z)));
    case Activation::Sigmoid:
      return value_of(z) >= 0.0 ? S(S(1) / (S(1) + exp(-z))) : S(exp(z) / (S(1) + exp(z)));
  }
  return z;
}

// d act / d z at z, given y = act(z). At a kink (relu, elu at 0) the branch for z <= 0 is taken,
// as the forward pass takes it.
template <class S>
S activation_derivative(Activation act, const S& z, const S& y) {
  using std::exp;
  switch (act) {
    case Activation::Identity: return S(1);
    case Activation::Tanh: return S(1) - y * y;
    case Activation::Relu: return value_of(z) > 0.0 ? S(1) : S(0);
    case Activation::Elu: return value_of(z) > 0.0 ? S(1) : S(y + S(1));
    case Activation::Softplus:  // the sigmoid of z
      return value_of(z) >= 0.0 ? S(S(1) / (S(1) + exp(-z))) : S(exp(z) / (S(1) + exp(z)));
    case Activation::Sigmoid: return y * (S(1) - y);
  }
  return S(1);
}

}  // namespace gradyn::detail
