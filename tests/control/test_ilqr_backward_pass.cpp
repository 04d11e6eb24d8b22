// The iLQR backward sweep (control/ilqr.hpp, ilqr_backward_pass): on a linear-quadratic problem
// its gains are the discrete Riccati recursion's and its expected reduction is exact; limits
// clamp k and zero the gains of a clamped control; mu regularises; shapes are checked.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "gradyn/control/ilqr.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct LqProblem {
  int T = 12, nx = 4, nu = 2;
  Eigen::MatrixXd A, B, Q, R, Qf;
  MatrixXr<double> As, Bs, lx, lu, lxx, luu, lux, u;
  Eigen::VectorXd x0;

  // Stacks the derivatives of sum 1/2 (x'Qx + u'Ru) + 1/2 x_T'Qf x_T about the trajectory from x0
  // under the controls u (zero by default).
  explicit LqProblem(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal;
    auto random = [&](int r, int c) {
      Eigen::MatrixXd m(r, c);
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) m(i, j) = normal(rng);
      return m;
    };
    A = Eigen::MatrixXd::Identity(nx, nx) + 0.1 * random(nx, nx);
    B = 0.1 * random(nx, nu);
    const Eigen::MatrixXd q = random(nx, nx), r = random(nu, nu);
    Q = q * q.transpose() * 0.1 + 0.1 * Eigen::MatrixXd::Identity(nx, nx);
    R = r * r.transpose() * 0.1 + 0.1 * Eigen::MatrixXd::Identity(nu, nu);
    Qf = 10 * Q;
    x0 = random(nx, 1);
    u = MatrixXr<double>::Zero(T, nu);
    linearise();
  }

  std::vector<Eigen::VectorXd> trajectory(const MatrixXr<double>& controls) const {
    std::vector<Eigen::VectorXd> x{x0};
    for (int t = 0; t < T; ++t) x.push_back(A * x.back() + B * controls.row(t).transpose());
    return x;
  }
  double cost(const MatrixXr<double>& controls) const {
    const auto x = trajectory(controls);
    double c = 0.5 * x[T].dot(Qf * x[T]);
    for (int t = 0; t < T; ++t)
      c += 0.5 * (x[t].dot(Q * x[t]) + controls.row(t).dot(R * controls.row(t).transpose()));
    return c;
  }
  void linearise() {
    const auto x = trajectory(u);
    As.resize(T * nx, nx), Bs.resize(T * nx, nu), lx.resize(T + 1, nx), lu.resize(T, nu);
    lxx.resize((T + 1) * nx, nx), luu.resize(T * nu, nu), lux = MatrixXr<double>::Zero(T * nu, nx);
    for (int t = 0; t < T; ++t) {
      As.middleRows(t * nx, nx) = A, Bs.middleRows(t * nx, nx) = B;
      lx.row(t) = (Q * x[t]).transpose(), lu.row(t) = (R * u.row(t).transpose()).transpose();
      lxx.middleRows(t * nx, nx) = Q, luu.middleRows(t * nu, nu) = R;
    }
    lx.row(T) = (Qf * x[T]).transpose();
    lxx.middleRows(T * nx, nx) = Qf;
  }
  LqrProblem view(const Eigen::VectorXd& u_min, const Eigen::VectorXd& u_max) const {
    return LqrProblem{As, Bs, lx, lu, lxx, luu, lux, u, u_min, u_max};
  }
};

TEST(IlqrBackwardPass, OnALinearQuadraticProblemItIsTheRiccatiRecursion) {
  for (unsigned seed : {1u, 2u, 3u}) {
    LqProblem p(seed);
    const Eigen::VectorXd free_min = Eigen::VectorXd::Constant(p.nu, -kInf), free_max = -free_min;
    MatrixXr<double> k = MatrixXr<double>::Zero(p.T, p.nu), K(p.T * p.nu, p.nx);
    Eigen::Vector2d expected;
    ASSERT_TRUE(ilqr_backward_pass(p.view(free_min, free_max), 0.0, k, K, expected));
    // Riccati: P_T = Qf, K_t = -(R + B'PB)^-1 B'PA, P = Q + A'P(A + B K).
    Eigen::MatrixXd P = p.Qf;
    for (int t = p.T - 1; t >= 0; --t) {
      const Eigen::MatrixXd gain = -(p.R + p.B.transpose() * P * p.B).ldlt().solve(p.B.transpose() * P * p.A);
      EXPECT_LT((K.middleRows(t * p.nu, p.nu) - gain).cwiseAbs().maxCoeff(), 1e-10) << "seed " << seed << " t " << t;
      P = p.Q + p.A.transpose() * P * (p.A + p.B * gain);
    }
    // A full step u + k + K dx lands on the optimum, and the cost falls by exactly the expectation.
    const auto x_old = p.trajectory(p.u);
    MatrixXr<double> u_new(p.T, p.nu);
    Eigen::VectorXd x = p.x0;
    for (int t = 0; t < p.T; ++t) {
      u_new.row(t) = (p.u.row(t).transpose() + k.row(t).transpose() + K.middleRows(t * p.nu, p.nu) * (x - x_old[t]))
                         .transpose();
      x = p.A * x + p.B * u_new.row(t).transpose();
    }
    EXPECT_NEAR(p.cost(u_new) - p.cost(p.u), expected[0] + expected[1], 1e-10);
    // The minimum: the gradient w.r.t. every control vanishes (central differences of the exact cost).
    for (int t = 0; t < p.T; t += 3)
      for (int i = 0; i < p.nu; ++i) {
        MatrixXr<double> plus = u_new, minus = u_new;
        plus(t, i) += 1e-5, minus(t, i) -= 1e-5;
        EXPECT_NEAR((p.cost(plus) - p.cost(minus)) / 2e-5, 0.0, 1e-7);
      }
  }
}

TEST(IlqrBackwardPass, LimitsClampTheStepAndZeroTheGainsOfAClampedControl) {
  LqProblem p(4);
  p.x0 *= 20;  // far from the goal: the controls saturate
  p.linearise();
  const Eigen::VectorXd u_min = Eigen::VectorXd::Constant(p.nu, -0.1), u_max = Eigen::VectorXd::Constant(p.nu, 0.1);
  MatrixXr<double> k = MatrixXr<double>::Zero(p.T, p.nu), K(p.T * p.nu, p.nx);
  Eigen::Vector2d expected;
  ASSERT_TRUE(ilqr_backward_pass(p.view(u_min, u_max), 0.0, k, K, expected));
  int clamped = 0;
  for (int t = 0; t < p.T; ++t)
    for (int i = 0; i < p.nu; ++i) {
      EXPECT_LE(std::abs(k(t, i)), 0.1 + 1e-15);
      if (std::abs(std::abs(k(t, i)) - 0.1) < 1e-15) {
        ++clamped;
        EXPECT_EQ(K.row(t * p.nu + i).cwiseAbs().maxCoeff(), 0.0) << "t " << t << " control " << i;
      }
    }
  EXPECT_GT(clamped, 0);
  EXPECT_LT(expected[0] + expected[1], 0.0);  // still a descent step
}

TEST(IlqrBackwardPass, RegularisationShortensTheStepAndShapesAreChecked) {
  LqProblem p(5);
  const Eigen::VectorXd free_min = Eigen::VectorXd::Constant(p.nu, -kInf), free_max = -free_min;
  MatrixXr<double> k0 = MatrixXr<double>::Zero(p.T, p.nu), k1 = k0, K(p.T * p.nu, p.nx);
  Eigen::Vector2d e0, e1;
  ASSERT_TRUE(ilqr_backward_pass(p.view(free_min, free_max), 0.0, k0, K, e0));
  ASSERT_TRUE(ilqr_backward_pass(p.view(free_min, free_max), 1e3, k1, K, e1));
  EXPECT_LT(k1.norm(), k0.norm());
  EXPECT_GT(e1[0] + e1[1], e0[0] + e0[1]);  // a smaller expected reduction
  // A cost that is concave in the controls has no descent step: reported, not thrown.
  p.luu *= -100;
  EXPECT_FALSE(ilqr_backward_pass(p.view(free_min, free_max), 0.0, k0, K, e0));
  MatrixXr<double> wrong(p.T, p.nu + 1);
  EXPECT_THROW(ilqr_backward_pass(p.view(free_min, free_max), 0.0, wrong, K, e0), ArgumentError);
}

}  // namespace
}  // namespace gradyn
