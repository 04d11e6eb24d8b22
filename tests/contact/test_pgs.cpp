#include "gradyn/contact/pgs.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <random>

#include "gradyn/model/errors.hpp"

namespace gradyn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Contacts with one normal row ([0, inf)) and `tangents` friction rows each, then `limit_rows` joint-limit
// rows (alternating one-sided [0, inf) and two-sided [-0.5, 0.5]). A = G G^T / m + shift I (SPD).
BoxedLcp random_problem(std::mt19937& rng, int contacts, int tangents, int limit_rows, double shift = 0.5) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_real_distribution<double> friction(0.3, 1.0);
  const int n = contacts * (1 + tangents) + limit_rows;
  BoxedLcp p;
  const int m = n + 3;
  Eigen::MatrixXd G(n, m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) G(i, j) = normal(rng);
  p.A = G * G.transpose() / m + shift * Eigen::MatrixXd::Identity(n, n);
  p.b.resize(n);
  p.lo.setZero(n);
  p.hi.setConstant(n, kInf);
  p.mu.setZero(n);
  p.normal_row.assign(static_cast<size_t>(n), -1);
  int row = 0;
  for (int c = 0; c < contacts; ++c) {
    const int normal_index = row;
    p.b(row++) = uniform(rng) - 0.3;  // mostly approaching
    const double mu = friction(rng);
    for (int t = 0; t < tangents; ++t, ++row) {
      p.b(row) = 2.0 * uniform(rng);
      p.mu(row) = mu;
      p.normal_row[static_cast<size_t>(row)] = normal_index;
    }
  }
  for (int k = 0; k < limit_rows; ++k, ++row) {
    p.b(row) = uniform(rng);
    if (k % 2 == 1) {
      p.lo(row) = -0.5;
      p.hi(row) = 0.5;
      p.b(row) *= 3.0;
    }
  }
  return p;
}

Eigen::VectorXd velocity_residual(const BoxedLcp& p, const Eigen::VectorXd& lambda) {
  return p.A * lambda + p.cfm * lambda + p.b;
}

// The boxed-LCP conditions, row by row, to tolerance tol.
void expect_boxed_lcp_solution(const BoxedLcp& p, const Eigen::VectorXd& lambda, double tol) {
  const Eigen::VectorXd w = velocity_residual(p, lambda);
  Eigen::VectorXd lo(p.size()), hi(p.size());
  pgs_bounds(p, lambda, lo, hi);
  for (int i = 0; i < p.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_GE(lambda(i), lo(i) - tol);
    EXPECT_LE(lambda(i), hi(i) + tol);
    const bool at_lo = lambda(i) <= lo(i) + tol;
    const bool at_hi = lambda(i) >= hi(i) - tol;
    if (at_lo && at_hi) continue;  // zero-width box (friction under a separated contact)
    if (at_lo)
      EXPECT_GE(w(i), -tol);
    else if (at_hi)
      EXPECT_LE(w(i), tol);
    else
      EXPECT_NEAR(w(i), 0.0, tol);
  }
}

TEST(Pgs, ConvergedSolutionSatisfiesBoxedLcpWithFriction) {
  std::mt19937 rng(7);
  int clamped_friction = 0, free_friction = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const BoxedLcp p = random_problem(rng, 4, 2 + 2 * (trial % 2), 3);
    PgsWorkspace ws(p.size(), 5000);
    PgsOptions options;
    options.max_iterations = 5000;
    options.tolerance = 1e-14;
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(p.size());
    const PgsResult result = pgs_solve(p, options, ws, lambda);
    ASSERT_TRUE(result.converged) << "trial " << trial << " residual " << result.residual;
    EXPECT_LT(result.residual, 1e-9);
    expect_boxed_lcp_solution(p, lambda, 1e-9);
    // Friction stays inside the pyramid of its own normal impulse.
    for (int i = 0; i < p.size(); ++i) {
      const int n = p.normal_row[static_cast<size_t>(i)];
      if (n < 0) continue;
      EXPECT_LE(std::abs(lambda(i)), p.mu(i) * lambda(n) + 1e-12) << "row " << i;
      if (lambda(n) > 1e-6) (std::abs(lambda(i)) > p.mu(i) * lambda(n) - 1e-9 ? clamped_friction : free_friction)++;
    }
  }
  // The random problems exercise both sticking and sliding friction.
  EXPECT_GT(clamped_friction, 0);
  EXPECT_GT(free_friction, 0);
}

TEST(Pgs, MatchesDirectSolveWhenNoBoundIsActive) {
  std::mt19937 rng(11);
  BoxedLcp p = random_problem(rng, 0, 0, 12);
  p.lo.setConstant(-kInf);
  p.hi.setConstant(kInf);
  p.cfm = 1e-3;
  PgsWorkspace ws(p.size(), 5000);
  PgsOptions options;
  options.max_iterations = 5000;
  options.tolerance = 1e-15;
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(p.size());
  const PgsResult result = pgs_solve(p, options, ws, lambda);
  ASSERT_TRUE(result.converged);
  const Eigen::MatrixXd A_cfm = p.A + p.cfm * Eigen::MatrixXd::Identity(p.size(), p.size());
  const Eigen::VectorXd direct = A_cfm.llt().solve(-p.b);
  EXPECT_LT((lambda - direct).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Pgs, WarmStartReducesIterations) {
  std::mt19937 rng(3);
  const BoxedLcp p = random_problem(rng, 4, 2, 2);
  PgsWorkspace ws(p.size(), 5000);
  PgsOptions options;
  options.max_iterations = 5000;
  options.tolerance = 1e-12;
  Eigen::VectorXd previous = Eigen::VectorXd::Zero(p.size());
  ASSERT_TRUE(pgs_solve(p, options, ws, previous).converged);

  // The next step's problem differs slightly; warm-start it with the last solution.
  BoxedLcp next = p;
  std::uniform_real_distribution<double> small(-1e-3, 1e-3);
  for (int i = 0; i < next.size(); ++i) next.b(i) += small(rng);
  Eigen::VectorXd cold = Eigen::VectorXd::Zero(p.size());
  const PgsResult cold_result = pgs_solve(next, options, ws, cold);
  Eigen::VectorXd warm = previous;
  const PgsResult warm_result = pgs_solve(next, options, ws, warm);
  ASSERT_TRUE(cold_result.converged);
  ASSERT_TRUE(warm_result.converged);
  EXPECT_LT(warm_result.iterations, cold_result.iterations);
  EXPECT_LT((warm - cold).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Pgs, IterationCapOneReportsNotConverged) {
  std::mt19937 rng(5);
  const BoxedLcp p = random_problem(rng, 3, 2, 2);
  PgsWorkspace ws(p.size(), 1);
  PgsOptions options;
  options.max_iterations = 1;
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(p.size());
  PgsResult result;
  EXPECT_NO_THROW(result = pgs_solve(p, options, ws, lambda));
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.iterations, 1);
  EXPECT_GT(result.max_change, options.tolerance);
  EXPECT_GT(result.residual, 0.0);
}

TEST(Pgs, RejectsWrongShapes) {
  std::mt19937 rng(5);
  BoxedLcp p = random_problem(rng, 2, 2, 1);
  PgsWorkspace ws(p.size(), 10);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(p.size() - 1);
  EXPECT_THROW(pgs_solve(p, PgsOptions{}, ws, lambda), ArgumentError);  // lambda size
  lambda.setZero(p.size());
  EXPECT_THROW(pgs_solve(p, PgsOptions{}, ws, lambda), ArgumentError);  // 100 sweeps > capacity 10
  p.normal_row[1] = 1;  // a friction row referring to itself
  PgsOptions few;
  few.max_iterations = 10;
  EXPECT_THROW(pgs_solve(p, few, ws, lambda), ArgumentError);
}

// Random tangent of every differentiable input (infinite bounds get none).
struct Direction {
  Eigen::MatrixXd A;
  Eigen::VectorXd b, lo, hi, mu, lambda0;
  double cfm = 0.0;
};

Direction random_direction(std::mt19937& rng, const BoxedLcp& p) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = p.size();
  Direction d;
  d.A.resize(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) d.A(i, j) = 0.1 * normal(rng);
  d.b.resize(n);
  d.lo.resize(n);
  d.hi.resize(n);
  d.mu.resize(n);
  d.lambda0.resize(n);
  for (int i = 0; i < n; ++i) {
    const bool friction = p.normal_row[static_cast<size_t>(i)] >= 0;
    d.b(i) = normal(rng);
    d.lo(i) = !friction && std::isfinite(p.lo(i)) ? normal(rng) : 0.0;
    d.hi(i) = !friction && std::isfinite(p.hi(i)) ? normal(rng) : 0.0;
    d.mu(i) = friction ? 0.1 * normal(rng) : 0.0;
    d.lambda0(i) = normal(rng);
  }
  d.cfm = 0.01 * normal(rng);
  return d;
}

double pair(const BoxedLcpAdjoint& adjoint, const Direction& d, bool with_warm_start) {
  double sum = adjoint.A.cwiseProduct(d.A).sum() + adjoint.b.dot(d.b) + adjoint.lo.dot(d.lo) +
               adjoint.hi.dot(d.hi) + adjoint.mu.dot(d.mu) + adjoint.cfm * d.cfm;
  if (with_warm_start) sum += adjoint.lambda0.dot(d.lambda0);
  return sum;
}

TEST(Pgs, ReverseSweepVjpMatchesForwardModeAd) {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 4; ++trial) {
    BoxedLcp p = random_problem(rng, 3, 2 + 2 * (trial % 2), 2);
    p.cfm = 1e-2;
    const int n = p.size();
    std::uniform_real_distribution<double> positive(0.0, 0.5);
    Eigen::VectorXd lambda0(n);
    for (int i = 0; i < n; ++i) lambda0(i) = positive(rng);
    PgsOptions options;
    options.max_iterations = 25 + 10 * trial;
    options.tolerance = 1e-13;

    PgsWorkspace ws(n, options.max_iterations);
    Eigen::VectorXd lambda = lambda0;
    const PgsResult result = pgs_solve(p, options, ws, lambda);

    Eigen::VectorXd lambda_bar(n);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < n; ++i) lambda_bar(i) = normal(rng);
    PgsAdjointWorkspace aws(n);
    BoxedLcpAdjoint adjoint(n);
    pgs_sweeps_vjp(p, ws, lambda_bar, aws, adjoint);

    // Forward-mode AD through the same sweeps, kADChunk random directions at once.
    std::vector<Direction> directions;
    for (int k = 0; k < kADChunk; ++k) directions.push_back(random_direction(rng, p));
    auto seeded = [&](double value, auto tangent_of) {
      ADScalar s(value);
      s.derivatives().setZero();
      for (int k = 0; k < kADChunk; ++k) s.derivatives()[k] = tangent_of(directions[static_cast<size_t>(k)]);
      return s;
    };
    BoxedLcpTpl<ADScalar> pad;
    pad.A.resize(n, n);
    pad.b.resize(n);
    pad.lo.resize(n);
    pad.hi.resize(n);
    pad.mu.resize(n);
    pad.normal_row = p.normal_row;
    pad.cfm = p.cfm;  // cfm is a double in the problem: its tangent enters through the diagonal of A
    VectorX<ADScalar> lambda_ad(n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        pad.A(i, j) = seeded(p.A(i, j), [&](const Direction& d) { return d.A(i, j) + (i == j ? d.cfm : 0.0); });
      pad.b(i) = seeded(p.b(i), [&](const Direction& d) { return d.b(i); });
      pad.lo(i) = seeded(p.lo(i), [&](const Direction& d) { return d.lo(i); });
      pad.hi(i) = seeded(p.hi(i), [&](const Direction& d) { return d.hi(i); });
      pad.mu(i) = seeded(p.mu(i), [&](const Direction& d) { return d.mu(i); });
      lambda_ad(i) = seeded(lambda0(i), [&](const Direction& d) { return d.lambda0(i); });
    }
    PgsWorkspaceTpl<ADScalar> ws_ad(n, options.max_iterations);
    const PgsResult result_ad = pgs_solve(pad, options, ws_ad, lambda_ad);
    ASSERT_EQ(result_ad.iterations, result.iterations);

    for (int k = 0; k < kADChunk; ++k) {
      double forward = 0.0;
      for (int i = 0; i < n; ++i) {
        ASSERT_EQ(lambda_ad(i).value(), lambda(i));
        forward += lambda_bar(i) * lambda_ad(i).derivatives()[k];
      }
      const double reverse = pair(adjoint, directions[static_cast<size_t>(k)], true);
      EXPECT_NEAR(reverse, forward, 1e-9 * (1.0 + std::abs(forward))) << "trial " << trial << " direction " << k;
    }
    // The warm start matters before convergence; check its adjoint is not trivially zero.
    if (!result.converged) EXPECT_GT(adjoint.lambda0.norm(), 0.0);
  }
}

struct StableProblem {
  BoxedLcp problem;
  Eigen::VectorXd lambda;
};

// Margin of the active set at a solution: how far free rows are from their bounds and how hard
// clamped rows push against theirs (the smaller, the closer to a change of active set).
double active_set_margin(const BoxedLcp& p, const Eigen::VectorXd& lambda, int& clamped, int& free_rows) {
  const Eigen::VectorXd w = velocity_residual(p, lambda);
  Eigen::VectorXd lo(p.size()), hi(p.size());
  pgs_bounds(p, lambda, lo, hi);
  double margin = kInf;
  clamped = free_rows = 0;
  for (int i = 0; i < p.size(); ++i) {
    const int n = p.normal_row[static_cast<size_t>(i)];
    if (n >= 0) margin = std::min(margin, std::abs(lambda(n)));  // lambda_n = 0 makes the pyramid degenerate
    const double gap = std::min(lambda(i) - lo(i), hi(i) - lambda(i));
    if (gap < 1e-9) {
      ++clamped;
      margin = std::min(margin, std::abs(w(i)));
    } else {
      ++free_rows;
      margin = std::min(margin, gap);
    }
  }
  return margin;
}

StableProblem find_stable_problem(std::mt19937& rng, PgsWorkspace& ws, const PgsOptions& options) {
  for (int attempt = 0; attempt < 500; ++attempt) {
    BoxedLcp p = random_problem(rng, 3, 2, 2);
    p.cfm = 1e-3;
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(p.size());
    if (!pgs_solve(p, options, ws, lambda).converged) continue;
    int clamped = 0, free_rows = 0;
    if (active_set_margin(p, lambda, clamped, free_rows) > 1e-2 && clamped > 0 && free_rows > 0)
      return {p, lambda};
  }
  ADD_FAILURE() << "no random problem with a stable active set";
  return {};
}

// Sweeps until nothing changes by more than rounding (no iterates recorded).
PgsOptions converged_options() {
  PgsOptions options;
  options.max_iterations = 5000;
  options.tolerance = 1e-15;
  options.record_iterates = false;
  return options;
}

StableProblem find_converged_stable_problem(std::mt19937& rng) {
  PgsWorkspace ws(11, 0);
  return find_stable_problem(rng, ws, converged_options());
}

TEST(Pgs, ImplicitVjpMatchesCentralDifferencesOnStableActiveSet) {
  std::mt19937 rng(31);
  PgsOptions options;
  options.max_iterations = 5000;
  options.tolerance = 1e-15;
  options.record_iterates = false;
  PgsWorkspace ws(11, 0);
  for (int trial = 0; trial < 3; ++trial) {
    const StableProblem stable = find_stable_problem(rng, ws, options);
    const BoxedLcp& p = stable.problem;
    const int n = p.size();
    ASSERT_EQ(n, 11);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::VectorXd lambda_bar(n);
    for (int i = 0; i < n; ++i) lambda_bar(i) = normal(rng);
    PgsAdjointWorkspace aws(n);
    BoxedLcpAdjoint adjoint(n);
    ASSERT_TRUE(pgs_implicit_vjp(p, stable.lambda, lambda_bar, aws, adjoint));
    EXPECT_EQ(adjoint.lambda0.norm(), 0.0);

    for (int k = 0; k < 4; ++k) {
      const Direction d = random_direction(rng, p);
      const double h = 1e-6;
      auto solve_at = [&](double t) {
        BoxedLcp q = p;
        q.A += t * d.A;
        q.b += t * d.b;
        for (int i = 0; i < n; ++i) {
          if (std::isfinite(q.lo(i))) q.lo(i) += t * d.lo(i);
          if (std::isfinite(q.hi(i))) q.hi(i) += t * d.hi(i);
        }
        q.mu += t * d.mu;
        q.cfm += t * d.cfm;
        Eigen::VectorXd lambda = stable.lambda;
        EXPECT_TRUE(pgs_solve(q, options, ws, lambda).converged);
        return lambda;
      };
      const double central = lambda_bar.dot(solve_at(h) - solve_at(-h)) / (2 * h);
      const double implicit = pair(adjoint, d, false);
      EXPECT_NEAR(implicit, central, 1e-6 * (1.0 + std::abs(central))) << "trial " << trial << " direction " << k;
    }
  }
}

TEST(Pgs, SweepAndImplicitVjpsAgreeAtConvergence) {
  std::mt19937 rng(41);
  const StableProblem stable = find_converged_stable_problem(rng);
  const BoxedLcp& p = stable.problem;
  const int n = p.size();

  PgsOptions options = converged_options();
  options.record_iterates = true;
  PgsWorkspace ws(n, options.max_iterations);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(n);
  ASSERT_TRUE(pgs_solve(p, options, ws, lambda).converged);

  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd lambda_bar(n);
  for (int i = 0; i < n; ++i) lambda_bar(i) = normal(rng);
  PgsAdjointWorkspace aws(n);
  BoxedLcpAdjoint sweeps(n), implicit(n);
  pgs_sweeps_vjp(p, ws, lambda_bar, aws, sweeps);
  ASSERT_TRUE(pgs_implicit_vjp(p, lambda, lambda_bar, aws, implicit));
  const double scale = 1.0 + implicit.A.cwiseAbs().maxCoeff();
  EXPECT_LT((sweeps.A - implicit.A).cwiseAbs().maxCoeff(), 1e-6 * scale);
  EXPECT_LT((sweeps.b - implicit.b).cwiseAbs().maxCoeff(), 1e-6 * scale);
  EXPECT_LT((sweeps.mu - implicit.mu).cwiseAbs().maxCoeff(), 1e-6 * scale);
  EXPECT_LT((sweeps.lo - implicit.lo).cwiseAbs().maxCoeff(), 1e-6 * scale);
  EXPECT_LT((sweeps.hi - implicit.hi).cwiseAbs().maxCoeff(), 1e-6 * scale);
  EXPECT_NEAR(sweeps.cfm, implicit.cfm, 1e-6 * scale);
  // Converged from a cold start: the solution no longer depends on where the sweeps began.
  EXPECT_LT(sweeps.lambda0.cwiseAbs().maxCoeff(), 1e-6 * scale);
}

// pgs_implicit_jvp_left is the same linear map applied from the left: outputs * jvp(D) equals
// jvp_left(outputs) * D (a converged problem with free and clamped rows).
TEST(Pgs, ImplicitJvpLeftIsTheJvpMapFromTheLeft) {
  std::mt19937 rng(43);
  const StableProblem stable = find_converged_stable_problem(rng);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto check = [&](const BoxedLcp& p, const Eigen::VectorXd& lambda, bool expect_regular) {
    const int n = p.size(), k = 4, m = 7;
    Eigen::MatrixXd outputs(k, n), directions(n, m);
    for (int i = 0; i < k * n; ++i) outputs.data()[i] = normal(rng);
    for (int i = 0; i < n * m; ++i) directions.data()[i] = normal(rng);
    PgsAdjointWorkspace aws(n);
    Eigen::MatrixXd dlambda = directions, left = outputs;
    EXPECT_EQ(pgs_implicit_jvp(p, lambda, aws, dlambda), expect_regular);
    EXPECT_EQ(pgs_implicit_jvp_left(p, lambda, aws, left), expect_regular);
    const Eigen::MatrixXd expected = outputs * dlambda, got = left * directions;
    EXPECT_LT((expected - got).cwiseAbs().maxCoeff(), 1e-10 * (1.0 + expected.cwiseAbs().maxCoeff()));
  };
  check(stable.problem, stable.lambda, true);
}

// A row whose Jacobian is zero (a friction direction the mechanism cannot move in) has A_ii = 0: it
// is inert (u_i = 0), the solve stays finite and solves the other rows, and both VJPs work.
TEST(Pgs, InertRowStaysFiniteAndAtZero) {
  std::mt19937 rng(21);
  BoxedLcp p = random_problem(rng, 3, 2, 1);
  const int n = p.size(), inert = 2;  // the second friction row of contact 0
  p.A.row(inert).setZero();
  p.A.col(inert).setZero();
  PgsOptions options;
  options.max_iterations = 2000;
  options.tolerance = 1e-13;
  PgsWorkspace ws(n, options.max_iterations);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(n);
  ASSERT_TRUE(pgs_solve(p, options, ws, lambda).converged);
  EXPECT_TRUE(lambda.allFinite());
  EXPECT_EQ(lambda(inert), 0.0);
  BoxedLcp rest = p;  // the inert row's w_i = b_i is whatever it is: check the others
  rest.b(inert) = 0.0;
  expect_boxed_lcp_solution(rest, lambda, 1e-9);
  Eigen::VectorXd lambda_bar = Eigen::VectorXd::Ones(n);
  PgsAdjointWorkspace aws(n);
  BoxedLcpAdjoint sweeps(n), implicit(n);
  pgs_sweeps_vjp(p, ws, lambda_bar, aws, sweeps);
  ASSERT_TRUE(pgs_implicit_vjp(p, lambda, lambda_bar, aws, implicit));
  EXPECT_TRUE(sweeps.A.allFinite() && sweeps.b.allFinite());
  EXPECT_LT((sweeps.b - implicit.b).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_EQ(implicit.b(inert), 0.0);
}

// The same problem in larger storage (BoxedLcp::rows, a longer lambda, a bigger workspace) gives
// the same iterates and the same adjoints, whatever the unused storage holds.
TEST(Pgs, CapacitySizedStorageSolvesTheLeadingBlock) {
  std::mt19937 rng(22);
  const BoxedLcp p = random_problem(rng, 3, 2, 2);
  const int n = p.size(), capacity = n + 5;
  BoxedLcp big;
  big.A = Eigen::MatrixXd::Constant(capacity, capacity, 7.0);
  big.A.topLeftCorner(n, n) = p.A;
  big.b = Eigen::VectorXd::Constant(capacity, -3.0);
  big.b.head(n) = p.b;
  big.lo = Eigen::VectorXd::Constant(capacity, 1.0);
  big.lo.head(n) = p.lo;
  big.hi = Eigen::VectorXd::Constant(capacity, 2.0);
  big.hi.head(n) = p.hi;
  big.mu = Eigen::VectorXd::Constant(capacity, 0.5);
  big.mu.head(n) = p.mu;
  big.normal_row = p.normal_row;
  big.normal_row.resize(static_cast<size_t>(capacity), 0);  // invalid beyond the rows in use: unread
  big.rows = n;
  big.cfm = p.cfm;
  PgsOptions options;
  options.max_iterations = 40;
  options.tolerance = 0.0;  // run all sweeps
  PgsWorkspace ws(n, 40), big_ws(capacity, 40);
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(n), big_lambda = Eigen::VectorXd::Constant(capacity, 9.0);
  big_lambda.head(n).setZero();
  const PgsResult a = pgs_solve(p, options, ws, lambda);
  const PgsResult b = pgs_solve(big, options, big_ws, big_lambda.head(n));
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(lambda, big_lambda.head(n));
  EXPECT_EQ(big_lambda.tail(5), Eigen::VectorXd::Constant(5, 9.0)) << "storage past the rows untouched";
  Eigen::VectorXd lambda_bar(n);
  for (int i = 0; i < n; ++i) lambda_bar(i) = std::sin(1.0 + i);
  PgsAdjointWorkspace aws(n);
  BoxedLcpAdjoint exact(n), capacity_sized(n);
  pgs_sweeps_vjp(p, ws, lambda_bar, aws, exact);
  pgs_sweeps_vjp(big, big_ws, lambda_bar, aws, capacity_sized);
  EXPECT_EQ(exact.A, capacity_sized.A);
  EXPECT_EQ(exact.b, capacity_sized.b);
  EXPECT_EQ(exact.lambda0, capacity_sized.lambda0);
  BoxedLcpAdjoint exact_implicit(n), capacity_implicit(n);
  const bool ok = pgs_implicit_vjp(p, lambda, lambda_bar, aws, exact_implicit);
  EXPECT_EQ(ok, pgs_implicit_vjp(big, big_lambda.head(n), lambda_bar, aws, capacity_implicit));
  EXPECT_EQ(exact_implicit.A, capacity_implicit.A);
  // Storage smaller than the rows claimed is refused.
  BoxedLcp short_storage = big;
  short_storage.rows = capacity + 1;
  Eigen::VectorXd longer = Eigen::VectorXd::Zero(capacity + 1);
  PgsWorkspace longer_ws(capacity + 1, 40);
  EXPECT_THROW(pgs_solve(short_storage, options, longer_ws, longer), ArgumentError);
}

}  // namespace
}  // namespace gradyn
