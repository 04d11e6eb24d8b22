// RNEA, CRBA and ABA are three views of one equation, tau = M(q) a + C(q, v) v + g(q):
// on random trees with every joint kind they must agree with each other.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "../support/random_model.hpp"
#include "gradyn/dynamics/aba.hpp"
#include "gradyn/dynamics/crba.hpp"
#include "gradyn/dynamics/rnea.hpp"

namespace gradyn {
namespace {

struct Case {
  int n;
  unsigned seed;
  bool floating;
};

class DynamicsConsistency : public ::testing::TestWithParam<Case> {};

TEST_P(DynamicsConsistency, MassMatrixIsSymmetricPositiveDefiniteAndMatchesRnea) {
  const Case c = GetParam();
  Model model = test::random_model(c.n, c.seed, c.floating, true);
  Data data(model);
  std::mt19937 rng(c.seed + 1);
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::MatrixXd M = crba<double>(model, data, q);
    EXPECT_LE((M - M.transpose()).cwiseAbs().maxCoeff(), 1e-12 * M.cwiseAbs().maxCoeff());
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(M);
    EXPECT_GT(eig.eigenvalues().minCoeff(), 0.0);
    // Column k of M is rnea(q, 0, e_k) - rnea(q, 0, 0).
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
    const Eigen::VectorXd g = rnea<double>(model, data, q, zero, zero);
    for (int k = 0; k < model.nv; ++k) {
      const Eigen::VectorXd col = rnea<double>(model, data, q, zero, Eigen::VectorXd::Unit(model.nv, k)) - g;
      EXPECT_LE((col - M.col(k)).norm(), 1e-10 * (1 + M.col(k).norm())) << "column " << k;
    }
  }
}

TEST_P(DynamicsConsistency, AbaInvertsRnea) {
  const Case c = GetParam();
  Model model = test::random_model(c.n, c.seed, c.floating, true);
  Data data(model);
  std::mt19937 rng(c.seed + 2);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::VectorXd v = test::random_vector(model.nv, rng, 2.0);
    const Eigen::VectorXd a = test::random_vector(model.nv, rng, 3.0);
    const Eigen::VectorXd tau = rnea<double>(model, data, q, v, a);
    const Eigen::VectorXd a2 = aba<double>(model, data, q, v, tau);
    EXPECT_LE((a2 - a).norm(), 1e-9 * (1 + a.norm())) << "trial " << trial;
    EXPECT_EQ(data.status, kStatusOk);
  }
}

TEST_P(DynamicsConsistency, AbaEqualsMassMatrixSolve) {
  const Case c = GetParam();
  Model model = test::random_model(c.n, c.seed, c.floating, true);
  Data data(model);
  std::mt19937 rng(c.seed + 3);
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::VectorXd q = test::random_configuration(model, rng);
    const Eigen::VectorXd v = test::random_vector(model.nv, rng, 2.0);
    const Eigen::VectorXd tau = test::random_vector(model.nv, rng, 5.0);
    const Eigen::VectorXd nle = nonlinear_effects<double>(model, data, q, v);
    const Eigen::MatrixXd M = crba<double>(model, data, q);
    const Eigen::VectorXd expected = M.ldlt().solve(tau - nle);
    const Eigen::VectorXd a = aba<double>(model, data, q, v, tau);
    EXPECT_LE((a - expected).norm(), 1e-9 * (1 + expected.norm()));
  }
}

INSTANTIATE_TEST_SUITE_P(RandomTrees, DynamicsConsistency,
                         ::testing::Values(Case{1, 1, false}, Case{5, 2, false}, Case{12, 3, false},
                                           Case{7, 4, true}, Case{15, 5, true}, Case{20, 6, false}));

TEST(Dynamics, WrongSizesNameExpectedAndActual) {
  Model model = test::random_model(4, 9);
  Data data(model);
  const Eigen::VectorXd q = Eigen::VectorXd::Zero(model.nq + 1);
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv);
  try {
    aba(model, data, q, v, v);  // the scalar is deduced from the model alone
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("q: expected shape (" + std::to_string(model.nq) + ",)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got (" + std::to_string(model.nq + 1) + ",)"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace gradyn
