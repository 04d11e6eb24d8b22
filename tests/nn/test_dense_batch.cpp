// The dense network over many evaluations (nn/dense_batch.hpp): dense_forward_rows gives every
// row's z and outputs as dense_forward does one input at a time; the z adjoints of dense_vjp_deltas
// and one dense_weight_grads per chunk give the weights' adjoint that dense_vjp accumulates one
// evaluation at a time, and the same input adjoints.
#include <gtest/gtest.h>

#include <random>

#include "gradyn/nn/dense.hpp"
#include "gradyn/nn/dense_batch.hpp"

namespace gradyn {
namespace {

TEST(DenseBatch, ChunkedWeightGradientsEqualThePerEvaluationOnes) {
  for (Activation hidden : {Activation::Tanh, Activation::Relu, Activation::Softplus}) {
    DenseShape shape;
    shape.widths = {5, 7, 6, 3};
    shape.hidden = hidden;
    shape.output = Activation::Sigmoid;
    const Eigen::VectorXd weights = dense_initial_weights(shape, 3, false);
    std::mt19937 rng(1);
    std::normal_distribution<double> normal;
    const int K = 10;
    DenseWorkspace work(shape);
    Eigen::VectorXd reference = Eigen::VectorXd::Zero(weights.size()), batched(weights.size());
    MatrixXr<double> inputs(K, 5), posts(K, shape.activation_count()), z_bars(K, shape.activation_count());
    for (int k = 0; k < K; ++k) {
      for (int i = 0; i < 5; ++i) work.input[i] = normal(rng);
      dense_forward<double>(shape, weights, work);
      Eigen::VectorXd y_bar(3), x_bar_one = Eigen::VectorXd::Zero(5), x_bar_chunk = x_bar_one;
      for (int i = 0; i < 3; ++i) y_bar[i] = normal(rng);
      dense_vjp<double>(shape, weights, work, y_bar, x_bar_one, reference);
      inputs.row(k) = work.input.transpose();
      posts.row(k) = work.post.transpose();
      dense_vjp_deltas<double>(shape, weights, work, y_bar, x_bar_chunk, z_bars.row(k).transpose());
      EXPECT_LT((x_bar_one - x_bar_chunk).cwiseAbs().maxCoeff(), 1e-15);
    }
    dense_weight_grads<double>(shape, inputs, posts, z_bars, batched);
    EXPECT_LT((reference - batched).cwiseAbs().maxCoeff(), 1e-13 * std::max(1.0, reference.cwiseAbs().maxCoeff()))
        << activation_name(hidden);
    EXPECT_GT(reference.cwiseAbs().maxCoeff(), 1e-3);
  }
}

TEST(DenseBatch, ForwardRowsEqualOneEvaluationAtATime) {
  for (Activation hidden : {Activation::Tanh, Activation::Relu, Activation::Elu}) {
    DenseShape shape;
    shape.widths = {4, 33, 17, 5};  // widths past a matrix product's blocking
    shape.hidden = hidden;
    shape.output = Activation::Softplus;
    const Eigen::VectorXd weights = dense_initial_weights(shape, 7, false);
    std::mt19937 rng(2);
    std::normal_distribution<double> normal;
    const int K = 13;
    MatrixXr<double> inputs(K, 4), pres(K, shape.activation_count()), posts(K, shape.activation_count());
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < 4; ++i) inputs(k, i) = normal(rng);
    dense_forward_rows<double>(shape, weights, inputs, pres, posts);
    DenseWorkspace work(shape);
    for (int k = 0; k < K; ++k) {
      work.input = inputs.row(k).transpose();
      dense_forward<double>(shape, weights, work);
      EXPECT_LT((pres.row(k).transpose() - work.pre).cwiseAbs().maxCoeff(), 1e-13 * (1 + work.pre.cwiseAbs().maxCoeff()))
          << activation_name(hidden) << " row " << k;
      EXPECT_LT((posts.row(k).transpose() - work.post).cwiseAbs().maxCoeff(), 1e-13 * (1 + work.post.cwiseAbs().maxCoeff()))
          << activation_name(hidden) << " row " << k;
    }
    EXPECT_GT(posts.cwiseAbs().maxCoeff(), 1e-2);
  }
}

}  // namespace
}  // namespace gradyn
