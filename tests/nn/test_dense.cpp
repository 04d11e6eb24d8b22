// The dense network (nn/dense.hpp): the forward pass against the formula for every activation, the
// adjoint against forward-mode AD and central differences, the seeded initialisation, the names.
#include <gtest/gtest.h>

#include <cmath>

#include "../support/ad_jacobian.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/nn/dense.hpp"

namespace gradyn {
namespace {

constexpr Activation kAll[] = {Activation::Identity, Activation::Tanh,     Activation::Relu,
                               Activation::Elu,      Activation::Softplus, Activation::Sigmoid};

DenseShape shape_with(Activation hidden, Activation output = Activation::Identity) {
  DenseShape s;
  s.widths = {3, 5, 4, 2};
  s.hidden = hidden, s.output = output;
  return s;
}

// Weights and input that put pre-activations on both sides of 0 (relu, elu kinks): none on it.
Eigen::VectorXd weights_of(const DenseShape& s, unsigned seed) {
  Eigen::VectorXd w = dense_initial_weights(s, seed, /*zero_last_layer=*/false);
  for (int l = 0; l < s.layers(); ++l)
    for (int i = 0; i < s.widths[l + 1]; ++i) w[s.bias_offset(l) + i] = 0.3 * std::sin(1.0 + 7.0 * i + l);
  return w;
}

double reference_activation(Activation a, double z) {
  switch (a) {
    case Activation::Identity: return z;
    case Activation::Tanh: return std::tanh(z);
    case Activation::Relu: return z > 0 ? z : 0;
    case Activation::Elu: return z > 0 ? z : std::exp(z) - 1;
    case Activation::Softplus: return std::log(1 + std::exp(z));
    case Activation::Sigmoid: return 1 / (1 + std::exp(-z));
  }
  return NAN;
}

TEST(Dense, ForwardIsTheLayerFormula) {
  for (Activation a : kAll) {
    SCOPED_TRACE(activation_name(a));
    const DenseShape s = shape_with(a, Activation::Sigmoid);
    const Eigen::VectorXd w = weights_of(s, 3);
    DenseWorkspace work(s);
    work.input << 0.4, -1.2, 0.7;
    const Eigen::VectorXd y = dense_forward<double>(s, w, work);
    Eigen::VectorXd x = work.input;
    for (int l = 0; l < s.layers(); ++l) {
      const Eigen::Map<const MatrixXr<double>> W(w.data() + s.weight_offset(l), s.widths[l + 1], s.widths[l]);
      Eigen::VectorXd z = W * x + w.segment(s.bias_offset(l), s.widths[l + 1]);
      for (int i = 0; i < z.size(); ++i) z[i] = reference_activation(s.activation_of(l), z[i]);
      x = z;
    }
    ASSERT_EQ(y.size(), 2);
    EXPECT_LT((y - x).cwiseAbs().maxCoeff(), 1e-14);
  }
  // softplus and sigmoid far out: no overflow
  DenseShape s;
  s.widths = {1, 1};
  s.output = Activation::Softplus;
  DenseWorkspace work(s);
  work.input << 800.0;
  const Eigen::VectorXd w = (Eigen::VectorXd(2) << 1.0, 0.0).finished();
  EXPECT_DOUBLE_EQ(dense_forward<double>(s, w, work)[0], 800.0);
  work.input << -800.0;
  EXPECT_EQ(dense_forward<double>(s, w, work)[0], 0.0);
}

// The adjoint of y . c (c random) w.r.t. input and weights, against AD and central differences.
TEST(Dense, VjpMatchesForwardModeAndFiniteDifferences) {
  for (Activation a : kAll) {
    SCOPED_TRACE(activation_name(a));
    const DenseShape s = shape_with(a, a);
    const Eigen::VectorXd w = weights_of(s, 11);
    const Eigen::Vector3d x0(0.4, -1.2, 0.7);
    const Eigen::Vector2d c(0.8, -1.7);
    const int nw = s.param_count();
    Eigen::VectorXd xw(3 + nw);
    xw << x0, w;

    DenseWorkspace work(s);
    work.input = x0;
    dense_forward<double>(s, w, work);
    Eigen::VectorXd x_bar = Eigen::VectorXd::Zero(3), w_bar = Eigen::VectorXd::Zero(nw);
    dense_vjp<double>(s, w, work, c, x_bar, w_bar);
    Eigen::VectorXd adjoint(3 + nw);
    adjoint << x_bar, w_bar;

    const auto loss_ad = [&](const VectorX<ADScalar>& z) {
      DenseWorkspaceTpl<ADScalar> wk(s);
      wk.input = z.head(3);
      const VectorX<ADScalar> weights = z.tail(nw);
      const VectorX<ADScalar> y = dense_forward<ADScalar>(s, weights, wk);
      VectorX<ADScalar> out(1);
      out[0] = y[0] * c[0] + y[1] * c[1];
      return out;
    };
    const auto loss = [&](const Eigen::VectorXd& z) {
      DenseWorkspace wk(s);
      wk.input = z.head(3);
      const Eigen::VectorXd weights = z.tail(nw);
      const Eigen::VectorXd y = dense_forward<double>(s, weights, wk);
      return Eigen::VectorXd::Constant(1, y.dot(c));
    };
    const Eigen::VectorXd ad = test::ad_jacobian(loss_ad, xw).row(0).transpose();
    const Eigen::VectorXd fd = test::fd_jacobian(loss, xw, 1e-6).row(0).transpose();
    const double scale = adjoint.cwiseAbs().maxCoeff();
    ASSERT_GT(scale, 0.1);
    EXPECT_LT((adjoint - ad).cwiseAbs().maxCoeff(), 1e-13 * scale);
    EXPECT_LT((adjoint - fd).cwiseAbs().maxCoeff(), 1e-7 * scale);

    // accumulates; an empty x_bar skips the input's adjoint
    Eigen::VectorXd none;
    dense_vjp<double>(s, w, work, c, none, w_bar);
    EXPECT_LT((w_bar - 2 * adjoint.tail(nw)).cwiseAbs().maxCoeff(), 1e-14 * scale);
  }
}

TEST(Dense, SeededInitialisation) {
  DenseShape s = shape_with(Activation::Relu, Activation::Identity);
  const Eigen::VectorXd a = dense_initial_weights(s, 7, true), b = dense_initial_weights(s, 7, true);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, dense_initial_weights(s, 8, true));
  const Eigen::VectorXd full = dense_initial_weights(s, 7, false);
  for (int l = 0; l < s.layers(); ++l) {
    const int in = s.widths[l], out = s.widths[l + 1];
    const double bound = std::sqrt(6.0 / (s.activation_of(l) == Activation::Relu ? in : in + out));
    const auto W = full.segment(s.weight_offset(l), in * out);
    EXPECT_LE(W.cwiseAbs().maxCoeff(), bound);
    EXPECT_GT(W.cwiseAbs().maxCoeff(), 0.3 * bound);
    EXPECT_TRUE(full.segment(s.bias_offset(l), out).isZero(0.0));
    if (l + 1 < s.layers()) EXPECT_EQ(W, a.segment(s.weight_offset(l), in * out));  // the flag changes the last layer only
    else EXPECT_TRUE(a.segment(s.weight_offset(l), in * out).isZero(0.0));
  }
}

TEST(Dense, NamesAndShapeChecks) {
  DenseShape s;
  s.widths = {2, 3, 1};
  EXPECT_EQ(s.param_count(), 3 * 2 + 3 + 1 * 3 + 1);
  const std::vector<std::string> names = dense_param_names(s, "drag");
  ASSERT_EQ(static_cast<int>(names.size()), s.param_count());
  EXPECT_EQ(names[0], "drag.layer0.weight[0,0]");
  EXPECT_EQ(names[1], "drag.layer0.weight[0,1]");
  EXPECT_EQ(names[6], "drag.layer0.bias[0]");
  EXPECT_EQ(names[9], "drag.layer1.weight[0,0]");
  EXPECT_EQ(names.back(), "drag.layer1.bias[0]");
  s.widths = {2, 0, 1};
  try {
    check_dense_shape(s, "network 'drag'");
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("hidden layer (widths[1])"), std::string::npos) << e.what();
  }
  s.widths = {2};
  EXPECT_THROW(check_dense_shape(s, "n"), ArgumentError);
  EXPECT_THROW(activation_from_name("gelu"), ArgumentError);
  for (Activation a : kAll) EXPECT_EQ(activation_from_name(activation_name(a)), a);
}

}  // namespace
}  // namespace gradyn
