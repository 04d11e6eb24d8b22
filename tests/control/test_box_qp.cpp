// The control-limited QP of one iLQR step (control/ilqr.hpp, box_qp): random problems against the
// best feasible stationary point of every pattern of active bounds; warm starts; one-sided and
// infinite bounds; a Hessian that is not positive definite reported, not thrown.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "gradyn/control/ilqr.hpp"

namespace gradyn {
namespace {

using BoolArray = Eigen::Array<bool, Eigen::Dynamic, 1>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every control free, at its lower or at its upper bound: the best feasible stationary point.
Eigen::VectorXd brute_force(const Eigen::MatrixXd& H, const Eigen::VectorXd& g, const Eigen::VectorXd& lower,
                            const Eigen::VectorXd& upper) {
  const int n = static_cast<int>(g.size());
  int patterns = 1;
  for (int i = 0; i < n; ++i) patterns *= 3;
  Eigen::VectorXd best;
  double best_value = kInf;
  for (int p = 0; p < patterns; ++p) {
    Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
    std::vector<int> free;
    for (int i = 0, code = p; i < n; ++i, code /= 3) {
      if (code % 3 == 0) free.push_back(i);
      else x[i] = code % 3 == 1 ? lower[i] : upper[i];
    }
    const int nf = static_cast<int>(free.size());
    Eigen::MatrixXd Hf(nf, nf);
    Eigen::VectorXd rhs(nf);
    for (int a = 0; a < nf; ++a) {
      rhs[a] = g[free[a]];
      for (int j = 0; j < n; ++j) rhs[a] += (std::find(free.begin(), free.end(), j) == free.end()) ? H(free[a], j) * x[j] : 0;
      for (int b = 0; b < nf; ++b) Hf(a, b) = H(free[a], free[b]);
    }
    const Eigen::VectorXd xf = Hf.ldlt().solve(-rhs);
    for (int a = 0; a < nf; ++a) x[free[a]] = xf[a];
    if ((x.array() < lower.array() - 1e-12).any() || (x.array() > upper.array() + 1e-12).any()) continue;
    const double value = g.dot(x) + 0.5 * x.dot(H * x);
    if (value < best_value) best_value = value, best = x;
  }
  return best;
}

TEST(BoxQp, MatchesTheBestActiveSetOnRandomProblems) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0.1, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 1 + trial % 4;
    Eigen::MatrixXd M(n, n);
    Eigen::VectorXd g(n), lower(n), upper(n);
    for (int i = 0; i < n; ++i) {
      g[i] = 3 * normal(rng), lower[i] = -uniform(rng), upper[i] = uniform(rng);
      for (int j = 0; j < n; ++j) M(i, j) = normal(rng);
    }
    const Eigen::MatrixXd H = M * M.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
    const Eigen::VectorXd expected = brute_force(H, g, lower, upper);
    BoxQpWorkspace ws(n);
    for (int start = 0; start < 2; ++start) {  // cold, then warm from a point inside the box
      Eigen::VectorXd x = start == 0 ? Eigen::VectorXd::Zero(n) : Eigen::VectorXd(0.5 * (lower + upper));
      BoolArray free(n);
      ASSERT_TRUE(box_qp(H, g, lower, upper, x, free, ws)) << "trial " << trial;
      EXPECT_LT((x - expected).cwiseAbs().maxCoeff(), 1e-8) << "trial " << trial << " start " << start;
      EXPECT_TRUE((x.array() >= lower.array()).all() && (x.array() <= upper.array()).all());
      const Eigen::VectorXd grad = g + H * x;
      for (int i = 0; i < n; ++i) {
        if (free[i]) EXPECT_NEAR(grad[i], 0.0, 1e-7) << "trial " << trial;
        else EXPECT_TRUE((x[i] == lower[i] && grad[i] >= 0) || (x[i] == upper[i] && grad[i] <= 0));
      }
      // The factor is H's on the free controls.
      Eigen::MatrixXd Hf(ws.free_count, ws.free_count);
      for (int a = 0; a < ws.free_count; ++a)
        for (int b = 0; b < ws.free_count; ++b) Hf(a, b) = H(ws.free_index[a], ws.free_index[b]);
      if (ws.free_count > 0) {
        const Eigen::MatrixXd L = ws.llt.matrixL();
        EXPECT_LT((L * L.transpose() - Hf).cwiseAbs().maxCoeff(), 1e-12);
      }
    }
  }
}

TEST(BoxQp, InfiniteAndOneSidedBounds) {
  Eigen::MatrixXd H(2, 2);
  H << 2, 0.5, 0.5, 1;
  const Eigen::Vector2d g(1, -2);
  BoxQpWorkspace ws(2);
  BoolArray free(2);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2);
  ASSERT_TRUE(box_qp(H, g, Eigen::Vector2d::Constant(-kInf), Eigen::Vector2d::Constant(kInf), x, free, ws));
  EXPECT_LT((x - H.ldlt().solve(-g)).norm(), 1e-14);
  EXPECT_TRUE(free.all());
  x.setZero();
  ASSERT_TRUE(box_qp(H, g, Eigen::Vector2d::Constant(-kInf), Eigen::Vector2d(kInf, 1.0), x, free, ws));
  EXPECT_EQ(x[1], 1.0);
  EXPECT_TRUE(free[0] && !free[1]);
  EXPECT_NEAR(x[0], -(g[0] + H(0, 1)) / H(0, 0), 1e-12);
}

TEST(BoxQp, AHessianThatIsNotPositiveDefiniteIsReported) {
  const Eigen::MatrixXd H = -Eigen::MatrixXd::Identity(2, 2);
  BoxQpWorkspace ws(2);
  BoolArray free(2);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2);
  EXPECT_FALSE(box_qp(H, Eigen::Vector2d(1, 1), Eigen::Vector2d::Constant(-kInf), Eigen::Vector2d::Constant(kInf), x,
                      free, ws));
  EXPECT_TRUE(x.allFinite());
}

}  // namespace
}  // namespace gradyn
