// Mixed LCP interior-point solver (paper 000, Eq. 2) and its backward pass (Eq. 3).
#include "gradyn/contact/lcp_ipm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gradyn/model/errors.hpp"

namespace gradyn {
namespace {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

MatrixXd random_matrix(std::mt19937& rng, Index rows, Index cols) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  MatrixXd out(rows, cols);
  for (Index i = 0; i < out.size(); ++i) out.data()[i] = u(rng);
  return out;
}

// A problem whose solution is planted: the first n_active inequality rows are active (s = 0,
// z in [0.5, 1.5]), the rest inactive (z = 0, s in [0.5, 1.5]): strictly complementary. M is SPD;
// F is 0 or negative definite, so that s = const + (G M^-1 G^T - F) z is a monotone LCP.
struct Planted {
  MixedLcp problem;
  VectorXd x, z, y, s;
};

Planted planted_problem(std::mt19937& rng, Index nx, Index ne, Index ni, Index n_active, bool with_F) {
  std::uniform_real_distribution<double> pos(0.5, 1.5);
  Planted out;
  MixedLcp& p = out.problem;
  const MatrixXd B = random_matrix(rng, nx, nx);
  p.M = B * B.transpose() + 0.5 * MatrixXd::Identity(nx, nx);
  p.G = random_matrix(rng, ni, nx);
  p.A = random_matrix(rng, ne, nx);
  if (with_F) {
    const MatrixXd C = random_matrix(rng, ni, ni);
    p.F = -0.3 * C * C.transpose() - 0.1 * MatrixXd::Identity(ni, ni);
  } else {
    p.F = MatrixXd::Zero(ni, ni);
  }
  out.x = random_matrix(rng, nx, 1);
  out.y = random_matrix(rng, ne, 1);
  out.z = VectorXd::Zero(ni);
  out.s = VectorXd::Zero(ni);
  for (Index i = 0; i < ni; ++i) (i < n_active ? out.z : out.s)[i] = pos(rng);
  p.q = -(p.M * out.x + p.G.transpose() * out.z + p.A.transpose() * out.y);
  p.m = p.G * out.x + p.F * out.z + out.s;
  p.b = p.A * out.x;
  return out;
}

struct KktError {
  double dual, ineq, eq, comp, min_s, min_z;
};

KktError kkt_error(const MixedLcp& p, const IpmWorkspace& ws) {
  KktError e;
  const VectorXd r_dual = p.M * ws.x + p.G.transpose() * ws.z + p.A.transpose() * ws.y + p.q;
  const VectorXd r_ineq = p.G * ws.x + p.F * ws.z + ws.s - p.m;
  const VectorXd r_eq = p.A * ws.x - p.b;
  e.dual = r_dual.lpNorm<Eigen::Infinity>();
  e.ineq = r_ineq.size() ? r_ineq.lpNorm<Eigen::Infinity>() : 0.0;
  e.eq = r_eq.size() ? r_eq.lpNorm<Eigen::Infinity>() : 0.0;
  e.comp = ws.s.size() ? ws.s.cwiseProduct(ws.z).lpNorm<Eigen::Infinity>() : 0.0;
  e.min_s = ws.s.size() ? ws.s.minCoeff() : 0.0;
  e.min_z = ws.z.size() ? ws.z.minCoeff() : 0.0;
  return e;
}

TEST(LcpIpm, PlantedSolutionsSatisfyKkt) {
  std::mt19937 rng(7);
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-12;
  int cases = 0;
  for (bool with_F : {false, true}) {
    for (int trial = 0; trial < 10; ++trial) {
      const Index nx = 6, ne = 2, ni = 5, n_active = trial % 5;
      const Planted planted = planted_problem(rng, nx, ne, ni, n_active, with_F);
      IpmWorkspace ws(nx, ne, ni);
      const LcpIpmResult result = solve_mixed_lcp(planted.problem, settings, ws);
      ASSERT_TRUE(result.converged) << "trial " << trial << " F " << with_F << " after " << result.iterations;
      EXPECT_GT(result.iterations, 0);
      EXPECT_LE(result.iterations, settings.max_iterations);
      const KktError e = kkt_error(planted.problem, ws);
      EXPECT_LT(e.dual, 1e-8);
      EXPECT_LT(e.ineq, 1e-8);
      EXPECT_LT(e.eq, 1e-8);
      EXPECT_LT(e.comp, 1e-8);
      EXPECT_GT(e.min_s, 0.0);  // the interior method keeps s, z strictly positive
      EXPECT_GT(e.min_z, 0.0);
      EXPECT_LT((ws.x - planted.x).lpNorm<Eigen::Infinity>(), 1e-8);
      EXPECT_LT((ws.z - planted.z).lpNorm<Eigen::Infinity>(), 1e-8);
      EXPECT_LT((ws.y - planted.y).lpNorm<Eigen::Infinity>(), 1e-8);
      EXPECT_LT((ws.s - planted.s).lpNorm<Eigen::Infinity>(), 1e-8);
      ++cases;
    }
  }
  EXPECT_EQ(cases, 20);
}

// All 2^n_ineq active sets: solve the equalities with z = 0 off the set and s = 0 on it, keep the
// ones with z >= 0 and s >= 0.
struct EnumeratedSolution {
  VectorXd x, z;
};

std::vector<EnumeratedSolution> enumerate_active_sets(const MixedLcp& p) {
  const Index nx = p.n_x(), ne = p.n_eq(), ni = p.n_ineq();
  std::vector<EnumeratedSolution> found;
  for (unsigned mask = 0; mask < (1u << ni); ++mask) {
    std::vector<Index> active;
    for (Index i = 0; i < ni; ++i)
      if (mask & (1u << i)) active.push_back(i);
    const Index na = Index(active.size()), n = nx + ne + na;
    MatrixXd K = MatrixXd::Zero(n, n);
    VectorXd rhs(n);
    K.topLeftCorner(nx, nx) = p.M;
    K.block(0, nx, nx, ne) = p.A.transpose();
    K.block(nx, 0, ne, nx) = p.A;
    rhs.head(nx) = -p.q;
    rhs.segment(nx, ne) = p.b;
    for (Index a = 0; a < na; ++a) {
      K.block(0, nx + ne + a, nx, 1) = p.G.row(active[a]).transpose();
      K.block(nx + ne + a, 0, 1, nx) = p.G.row(active[a]);
      for (Index c = 0; c < na; ++c) K(nx + ne + a, nx + ne + c) = p.F(active[a], active[c]);
      rhs[nx + ne + a] = p.m[active[a]];
    }
    const Eigen::FullPivLU<MatrixXd> lu(K);
    if (!lu.isInvertible()) continue;
    const VectorXd sol = lu.solve(rhs);
    EnumeratedSolution candidate{sol.head(nx), VectorXd::Zero(ni)};
    for (Index a = 0; a < na; ++a) candidate.z[active[a]] = sol[nx + ne + a];
    const VectorXd s = p.m - p.G * candidate.x - p.F * candidate.z;
    if (candidate.z.minCoeff() >= -1e-12 && s.minCoeff() >= -1e-12) found.push_back(candidate);
  }
  return found;
}

TEST(LcpIpm, MatchesActiveSetEnumeration) {
  std::mt19937 rng(11);
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-12;
  int compared = 0, active_rows = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Index nx = 3, ne = trial % 2, ni = 1 + trial % 4;
    MixedLcp p;
    const MatrixXd B = random_matrix(rng, nx, nx);
    p.M = B * B.transpose() + 0.3 * MatrixXd::Identity(nx, nx);
    p.q = 2.0 * random_matrix(rng, nx, 1);
    p.G = random_matrix(rng, ni, nx);
    p.F = trial % 3 == 0 ? MatrixXd(-0.2 * MatrixXd::Identity(ni, ni)) : MatrixXd(MatrixXd::Zero(ni, ni));
    // Feasible by construction (x0 strictly inside); which rows end up active is left to the data.
    const VectorXd x0 = random_matrix(rng, nx, 1);
    p.m = p.G * x0 + 0.5 * (VectorXd::Ones(ni) + random_matrix(rng, ni, 1));
    p.A = random_matrix(rng, ne, nx);
    p.b = p.A * x0;
    const std::vector<EnumeratedSolution> reference = enumerate_active_sets(p);
    ASSERT_FALSE(reference.empty()) << "trial " << trial;
    IpmWorkspace ws(nx, ne, ni);
    const LcpIpmResult result = solve_mixed_lcp(p, settings, ws);
    ASSERT_TRUE(result.converged) << "trial " << trial;
    for (const EnumeratedSolution& r : reference) {
      EXPECT_LT((ws.x - r.x).lpNorm<Eigen::Infinity>(), 1e-8) << "trial " << trial;
      EXPECT_LT((ws.z - r.z).lpNorm<Eigen::Infinity>(), 1e-8) << "trial " << trial;
    }
    ++compared;
    active_rows += int((ws.z.array() > 1e-6).count());
  }
  EXPECT_EQ(compared, 40);
  EXPECT_GT(active_rows, 10);  // the cases exercise active constraints, not only interior minima
}

// Every entry of every problem field, as a list of pointers (for finite differences).
std::vector<std::pair<double*, double*>> all_entries(MixedLcp& p, MixedLcp& g) {
  std::vector<std::pair<double*, double*>> out;
  auto add = [&](auto& a, auto& b) {
    for (Index i = 0; i < a.size(); ++i) out.emplace_back(a.data() + i, b.data() + i);
  };
  add(p.M, g.M);
  add(p.q, g.q);
  add(p.G, g.G);
  add(p.F, g.F);
  add(p.m, g.m);
  add(p.A, g.A);
  add(p.b, g.b);
  return out;
}

// Checks mixed_lcp_vjp against central differences of l = gx.x + gz.z + gy.y + gs.s over every entry.
void check_vjp_against_fd(MixedLcp p, const LcpIpmSettings<double>& settings, std::mt19937& rng, double step,
                          double tol, MixedLcp* grad_out = nullptr) {
  const Index nx = p.n_x(), ne = p.n_eq(), ni = p.n_ineq();
  IpmWorkspace ws(nx, ne, ni);
  const VectorXd gx = random_matrix(rng, nx, 1), gz = random_matrix(rng, ni, 1), gy = random_matrix(rng, ne, 1),
                 gs = random_matrix(rng, ni, 1);
  auto loss = [&]() {
    const LcpIpmResult r = solve_mixed_lcp(p, settings, ws);
    EXPECT_TRUE(r.converged);
    return gx.dot(ws.x) + gz.dot(ws.z) + gy.dot(ws.y) + gs.dot(ws.s);
  };
  ASSERT_TRUE(solve_mixed_lcp(p, settings, ws).converged);
  MixedLcp grad(nx, ne, ni);
  mixed_lcp_vjp(p, ws, gx, gz, gy, gs, grad);
  // Accumulation: a second call doubles the gradient.
  MixedLcp twice = grad;
  mixed_lcp_vjp(p, ws, gx, gz, gy, gs, twice);
  EXPECT_LT((twice.q - 2 * grad.q).norm(), 1e-12 * (1 + grad.q.norm()));

  int checked = 0;
  for (auto [value, analytic] : all_entries(p, grad)) {
    const double saved = *value;
    *value = saved + step;
    const double plus = loss();
    *value = saved - step;
    const double minus = loss();
    *value = saved;
    const double fd = (plus - minus) / (2 * step);
    EXPECT_NEAR(*analytic, fd, tol * (1 + std::abs(fd)));
    ++checked;
  }
  EXPECT_EQ(checked, nx * nx + nx + ni * nx + ni * ni + ni + ne * nx + ne);
  if (grad_out) *grad_out = grad;
}

TEST(LcpIpm, VjpMatchesCentralDifferences) {
  std::mt19937 rng(23);
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-13;
  for (bool with_F : {false, true}) {
    for (int trial = 0; trial < 3; ++trial) {
      const Planted planted = planted_problem(rng, 4, 1, 3, 1 + trial % 3, with_F);
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " F " << with_F);
      check_vjp_against_fd(planted.problem, settings, rng, 1e-5, 1e-6);
    }
  }
}

TEST(LcpIpm, KappaGivesSmoothGradientAtDegeneratePoint) {
  // min 1/2 |x|^2 - x0  s.t.  x0 <= m: at m = 1 the unconstrained minimum lies on the boundary, so
  // s = z = 0 (no strict complementarity) and x0(m) = min(m, 1) has a kink. On the central path
  // z (m - 1 + z) = kappa, which gives dx0/dm = 1/2 exactly at m = 1 for every kappa > 0.
  MixedLcp p(2, 0, 1);
  p.M.setIdentity();
  p.q << -1.0, 0.0;
  p.G << 1.0, 0.0;
  p.m << 1.0;
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-13;
  settings.kappa = 1e-4;
  std::mt19937 rng(5);
  MixedLcp grad;
  check_vjp_against_fd(p, settings, rng, 1e-6, 1e-6, &grad);

  IpmWorkspace ws(2, 0, 1);
  ASSERT_TRUE(solve_mixed_lcp(p, settings, ws).converged);
  EXPECT_NEAR(ws.z[0], std::sqrt(settings.kappa), 1e-12);
  EXPECT_NEAR(ws.s[0] * ws.z[0], settings.kappa, 1e-13);
  MixedLcp dx0(2, 0, 1);
  const VectorXd e0 = VectorXd::Unit(2, 0), none;
  mixed_lcp_vjp(p, ws, e0, none, none, none, dx0);
  EXPECT_NEAR(dx0.m[0], 0.5, 1e-9);
  EXPECT_TRUE(std::isfinite(dx0.q[0]));

  // Without relaxation the one-sided derivatives of x0(m) are 1 and 0: the exact solver is not smooth.
  settings.kappa = 0;
  auto x0_of = [&](double m) {
    p.m[0] = m;
    EXPECT_TRUE(solve_mixed_lcp(p, settings, ws).converged);
    return ws.x[0];
  };
  // (the exact solver reaches the degenerate point only to ~sqrt(tolerance), hence the wide step)
  const double h = 0.1;
  EXPECT_NEAR((x0_of(1.0) - x0_of(1.0 - h)) / h, 1.0, 1e-5);
  EXPECT_NEAR((x0_of(1.0 + h) - x0_of(1.0)) / h, 0.0, 1e-5);
}

// Near a strictly complementary solution Newton's method converges superlinearly; the step length
// must let it (a fixed 0.99 of the step to the boundary leaves 1% of every active s_i or z_i per
// iteration: 1e-4 -> 1e-12 in 4 iterations). From the first iterate within 1e-4, 1e-12 takes at most 2.
TEST(LcpIpm, LocalConvergenceIsSuperlinear) {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 12; ++trial) {
    const Index nx = 6 + trial % 4, ne = trial % 3, ni = 4 + trial % 5;
    const Planted planted = planted_problem(rng, nx, ne, ni, ni / 2, trial % 2 == 1);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    LcpIpmSettings<double> settings;
    settings.tolerance = 1e-12;
    int near = -1, done = -1;
    for (int k = 1; k <= 30 && done < 0; ++k) {  // the k-th iterate: the solve stopped after k iterations
      settings.max_iterations = k;
      IpmWorkspace ws(nx, ne, ni);
      const LcpIpmResult r = solve_mixed_lcp(planted.problem, settings, ws);
      const double residual = std::max({r.primal_residual, r.dual_residual, r.complementarity_residual});
      if (near < 0 && residual <= 1e-4) near = k;
      if (r.converged) done = r.iterations;
    }
    ASSERT_GE(near, 0);
    ASSERT_GE(done, 0);
    EXPECT_LE(done - near, 2) << "reached 1e-4 at iteration " << near << ", 1e-12 at " << done;
  }
}

TEST(LcpIpm, IterationCapSetsFlagWithoutThrowing) {
  std::mt19937 rng(3);
  const Planted planted = planted_problem(rng, 6, 2, 5, 2, true);
  IpmWorkspace ws(6, 2, 5);
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-12;
  settings.max_iterations = 1;
  LcpIpmResult result;
  EXPECT_NO_THROW(result = solve_mixed_lcp(planted.problem, settings, ws));
  EXPECT_FALSE(result.converged);
  EXPECT_EQ(result.iterations, 1);
  EXPECT_GT(std::max({result.primal_residual, result.dual_residual, result.complementarity_residual}), 1e-12);
  settings.max_iterations = 50;
  result = solve_mixed_lcp(planted.problem, settings, ws);
  EXPECT_TRUE(result.converged);
}

// The reduced KKT matrix K = [M G^T A^T; G F - D 0; A 0 0] at the workspace's point, D = diag(s / z).
MatrixXd kkt_matrix(const MixedLcp& p, const IpmWorkspace& ws) {
  const Index nx = p.n_x(), ni = p.n_ineq(), ne = p.n_eq();
  MatrixXd K = MatrixXd::Zero(nx + ni + ne, nx + ni + ne);
  K.topLeftCorner(nx, nx) = p.M;
  K.block(0, nx, nx, ni) = p.G.transpose();
  K.block(0, nx + ni, nx, ne) = p.A.transpose();
  K.block(nx, 0, ni, nx) = p.G;
  K.block(nx, nx, ni, ni) = p.F;
  K.block(nx, nx, ni, ni).diagonal() -= ws.s.cwiseQuotient(ws.z);
  K.block(nx + ni, 0, ne, nx) = p.A;
  return K;
}

// The Schur path (M factored once, x eliminated) and the full LU of K take the same iterates: same
// solution to 1e-10, the same iteration count (to one), same backward pass; kkt solves invert K and K^T.
TEST(LcpIpm, SchurPathEqualsFullKkt) {
  std::mt19937 rng(31);
  int schur_solves = 0;
  for (int trial = 0; trial < 24; ++trial) {
    // At most nx - ne active rows: the active constraints stay independent, so z and y are unique
    // (with more, the multipliers are not, and the two paths' roundings may pick different ones).
    const Index nx = 3 + trial % 5, ne = trial % 3, ni = 2 + trial % 6;
    const Planted planted = planted_problem(rng, nx, ne, ni, trial % std::min(ni, nx - ne + 1), trial % 2 == 1);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " nx " << nx << " ne " << ne << " ni " << ni);
    MixedLcp p = planted.problem;
    if (trial % 4 == 3) {  // a non-symmetric F with the friction cone's skew coupling
      const MatrixXd C = random_matrix(rng, ni, ni);
      p.F += 0.5 * (C - C.transpose());
      p.m = p.G * planted.x + p.F * planted.z + planted.s;
    }
    LcpIpmSettings<double> schur_settings, full_settings;
    schur_settings.tolerance = full_settings.tolerance = 1e-12;
    full_settings.schur = false;
    IpmWorkspace schur(nx, ne, ni), full(nx, ne, ni);
    const LcpIpmResult rs = solve_mixed_lcp(p, schur_settings, schur);
    const LcpIpmResult rf = solve_mixed_lcp(p, full_settings, full);
    ASSERT_TRUE(rs.converged);
    ASSERT_TRUE(rf.converged);
    EXPECT_TRUE(schur.use_schur);
    EXPECT_FALSE(full.use_schur);
    schur_solves += schur.use_schur;
    // The same iterates in exact arithmetic (the Schur path iterates on w alone, x = x(w)); at this
    // tolerance rounding may decide one iteration either way.
    EXPECT_LE(std::abs(rs.iterations - rf.iterations), 1);
    EXPECT_LT((schur.x - full.x).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LT((schur.z - full.z).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LT((schur.s - full.s).lpNorm<Eigen::Infinity>(), 1e-10);
    if (ne) EXPECT_LT((schur.y - full.y).lpNorm<Eigen::Infinity>(), 1e-10);

    // K sol = rhs and K^T sol = rhs, against K assembled here (backward stable: the residual is
    // rounding relative to |K| |sol|; at a converged point D = s / z spans ~1e-12 .. 1e12, so K is
    // too ill-conditioned to compare the two solutions entry by entry).
    const MatrixXd K = kkt_matrix(p, schur);
    const double K_norm = K.lpNorm<Eigen::Infinity>();
    const VectorXd rhs = random_matrix(rng, nx + ni + ne, 1);
    for (bool transposed : {false, true}) {
      for (IpmWorkspace* ws : {&schur, &full}) {
        VectorXd sol = VectorXd::Zero(rhs.size());
        mixed_lcp_kkt_solve(p, *ws, rhs, sol, transposed);
        const VectorXd residual = transposed ? VectorXd(K.transpose() * sol - rhs) : VectorXd(K * sol - rhs);
        EXPECT_LT(residual.lpNorm<Eigen::Infinity>(), 1e-13 * K_norm * (1 + sol.lpNorm<Eigen::Infinity>()))
            << (ws == &schur ? "schur" : "full") << " transposed " << transposed;
        VectorXd in_place = rhs;  // sol may be rhs
        mixed_lcp_kkt_solve(p, *ws, in_place, in_place, transposed);
        EXPECT_EQ(in_place, sol);
      }
    }

    // The backward pass through either path.
    const VectorXd gx = random_matrix(rng, nx, 1), gz = random_matrix(rng, ni, 1), gy = random_matrix(rng, ne, 1),
                   gs = random_matrix(rng, ni, 1);
    MixedLcp grad_schur(nx, ne, ni), grad_full(nx, ne, ni);
    mixed_lcp_vjp(p, schur, gx, gz, gy, gs, grad_schur);
    mixed_lcp_vjp(p, full, gx, gz, gy, gs, grad_full);
    const double scale = 1 + grad_full.q.lpNorm<Eigen::Infinity>() + grad_full.m.lpNorm<Eigen::Infinity>();
    EXPECT_LT((grad_schur.q - grad_full.q).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
    EXPECT_LT((grad_schur.m - grad_full.m).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
    EXPECT_LT((grad_schur.M - grad_full.M).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
    EXPECT_LT((grad_schur.G - grad_full.G).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
    EXPECT_LT((grad_schur.F - grad_full.F).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
    if (ne) EXPECT_LT((grad_schur.b - grad_full.b).lpNorm<Eigen::Infinity>(), 1e-8 * scale);
  }
  EXPECT_EQ(schur_solves, 24);
}

// Warm start from the last solve (as from the previous time step): a slightly changed problem
// converges to the cold solve's solution in fewer iterations; a warm start from a far-off solution
// still converges (falling back to the cold point if needed).
TEST(LcpIpm, WarmStartReachesTheColdSolution) {
  std::mt19937 rng(41);
  int warm_total = 0, cold_total = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Index nx = 6, ne = trial % 2, ni = 5;
    const Planted planted = planted_problem(rng, nx, ne, ni, 1 + trial % 4, trial % 3 != 0);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    LcpIpmSettings<double> cold_settings, warm_settings;
    cold_settings.tolerance = warm_settings.tolerance = 1e-11;
    warm_settings.warm_start = true;
    IpmWorkspace warm(nx, ne, ni);
    ASSERT_TRUE(solve_mixed_lcp(planted.problem, warm_settings, warm).converged);  // no solution yet: cold
    MixedLcp next = planted.problem;  // the next "step": data moved by 1e-4
    next.q += 1e-4 * random_matrix(rng, nx, 1);
    next.m += 1e-4 * random_matrix(rng, ni, 1);
    IpmWorkspace cold(nx, ne, ni);
    const LcpIpmResult rc = solve_mixed_lcp(next, cold_settings, cold);
    const LcpIpmResult rw = solve_mixed_lcp(next, warm_settings, warm);
    ASSERT_TRUE(rc.converged);
    ASSERT_TRUE(rw.converged);
    EXPECT_LT((warm.x - cold.x).lpNorm<Eigen::Infinity>(), 1e-9);
    EXPECT_LT((warm.z - cold.z).lpNorm<Eigen::Infinity>(), 1e-9);
    EXPECT_LT((warm.s - cold.s).lpNorm<Eigen::Infinity>(), 1e-9);
    EXPECT_GT(warm.s.minCoeff(), 0.0);
    EXPECT_GT(warm.z.minCoeff(), 0.0);
    warm_total += rw.iterations;
    cold_total += rc.iterations;
    // The backward pass at the warm solution is the cold one's.
    const VectorXd gx = random_matrix(rng, nx, 1), none;
    MixedLcp grad_warm(nx, ne, ni), grad_cold(nx, ne, ni);
    mixed_lcp_vjp(next, warm, gx, none, none, none, grad_warm);
    mixed_lcp_vjp(next, cold, gx, none, none, none, grad_cold);
    EXPECT_LT((grad_warm.q - grad_cold.q).lpNorm<Eigen::Infinity>(), 1e-6 * (1 + grad_cold.q.lpNorm<Eigen::Infinity>()));
    EXPECT_LT((grad_warm.m - grad_cold.m).lpNorm<Eigen::Infinity>(), 1e-6 * (1 + grad_cold.m.lpNorm<Eigen::Infinity>()));

    // From an unrelated problem's solution (same shape): still the right answer.
    const Planted other = planted_problem(rng, nx, ne, ni, 4 - trial % 4, trial % 2 == 0);
    IpmWorkspace stale(nx, ne, ni);
    ASSERT_TRUE(solve_mixed_lcp(other.problem, cold_settings, stale).converged);
    const LcpIpmResult rs = solve_mixed_lcp(next, warm_settings, stale);
    ASSERT_TRUE(rs.converged);
    EXPECT_LT((stale.x - cold.x).lpNorm<Eigen::Infinity>(), 1e-9);
    EXPECT_LT((stale.z - cold.z).lpNorm<Eigen::Infinity>(), 1e-9);
  }
  EXPECT_LT(4 * warm_total, 3 * cold_total) << "warm " << warm_total << " cold " << cold_total;
}

// A mass matrix that is not exactly symmetric (or not positive definite) takes the full path.
TEST(LcpIpm, NonSymmetricMTakesTheFullPath) {
  std::mt19937 rng(37);
  Planted planted = planted_problem(rng, 5, 1, 4, 2, true);
  MixedLcp& p = planted.problem;
  p.M(0, 1) += 1e-3;  // still monotone; replant q for the changed M
  p.q = -(p.M * planted.x + p.G.transpose() * planted.z + p.A.transpose() * planted.y);
  LcpIpmSettings<double> settings;
  settings.tolerance = 1e-12;
  IpmWorkspace ws(5, 1, 4);
  ASSERT_TRUE(solve_mixed_lcp(p, settings, ws).converged);
  EXPECT_FALSE(ws.use_schur);
  EXPECT_LT((ws.x - planted.x).lpNorm<Eigen::Infinity>(), 1e-8);
  EXPECT_LT((ws.z - planted.z).lpNorm<Eigen::Infinity>(), 1e-8);
  p.M = -p.M.transpose() * p.M;  // symmetric, negative definite: the LLT fails
  IpmWorkspace indefinite(5, 1, 4);
  solve_mixed_lcp(p, settings, indefinite);
  EXPECT_FALSE(indefinite.use_schur);
}

// A contact-shaped LCP (as contact/ipm_contact.cpp builds it): per contact a normal row, N friction
// rows d_j = cos_j t1 + sin_j t2 and a gamma row, F with -cfm, the cone's E and mu. The row basis
// that turns each contact's friction rows into two tangent rows and N - 2 zero rows (which the
// solver eliminates within the contact) must not change the solution: x and the impulses in the
// contact frame agree with the identity basis and with the full path. With more contact rows than
// unknowns (3 nc > nx) the multipliers are not unique; x is.
MixedLcp contact_lcp(std::mt19937& rng, Index nx, int nc, int N, double cfm, MatrixXd& basis) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const Index ni = (N + 2) * nc;
  MixedLcp p(nx, 0, ni);
  const MatrixXd B = random_matrix(rng, nx, nx);
  p.M = B * B.transpose() + 0.5 * MatrixXd::Identity(nx, nx);
  const MatrixXd frame = random_matrix(rng, 3 * nc, nx);  // normal, t1, t2 rows per contact
  const VectorXd v_free = 2.0 * random_matrix(rng, nx, 1);
  const VectorXd reachable = random_matrix(rng, nx, 1);  // opens every contact at least as fast as asked:
  p.q = -p.M * v_free;                                     // feasible even with more contact rows than nx
  basis = MatrixXd::Identity(ni, ni);
  MatrixXd C(N, 2);
  for (int j = 0; j < N; ++j) C.row(j) << std::cos(2 * M_PI * j / N), std::sin(2 * M_PI * j / N);
  // An orthonormal basis whose first two columns span C's: Gram-Schmidt on [C, I].
  MatrixXd U(N, N);
  int filled = 0;
  for (int c = 0; c < N + 2 && filled < N; ++c) {
    VectorXd v = c < 2 ? VectorXd(C.col(c)) : VectorXd(VectorXd::Unit(N, c - 2));
    for (int k = 0; k < filled; ++k) v -= U.col(k).dot(v) * U.col(k);
    if (v.norm() > 1e-8) U.col(filled++) = v.normalized();
  }
  for (int k = 0; k < nc; ++k) {
    const double mu = 0.1 + 0.9 * u(rng);
    const int gamma = nc + N * nc + k;
    p.G.row(k) = -frame.row(3 * k);
    p.F(k, k) = -cfm;
    p.m[k] = -(frame.row(3 * k).dot(reachable) - 0.5 * u(rng));  // minus the separation velocity to reach
    for (int j = 0; j < N; ++j) {
      const int r = nc + N * k + j;
      p.G.row(r) = -(C(j, 0) * frame.row(3 * k + 1) + C(j, 1) * frame.row(3 * k + 2));
      p.F(r, r) = -cfm;
      p.F(r, gamma) = -1;
      p.F(gamma, r) = 1;
    }
    p.F(gamma, k) = -mu;
    basis.block(nc + N * k, nc + N * k, N, N) = U;
  }
  return p;
}

TEST(LcpIpm, RowBasisKeepsTheSolution) {
  std::mt19937 rng(53);
  int reduced = 0;
  for (int trial = 0; trial < 36; ++trial) {
    const Index nx = 4 + trial % 5;
    const int nc = 1 + trial % 4, N = 3 + trial % 4;
    const double cfm = trial % 3 == 0 ? 1e-6 : 0.0;
    MatrixXd basis;
    const MixedLcp p = contact_lcp(rng, nx, nc, N, cfm, basis);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " nx " << nx << " nc " << nc << " N " << N);
    const Index ni = p.n_ineq();
    LcpIpmSettings<double> settings, full_settings;
    settings.tolerance = full_settings.tolerance = 1e-11;
    full_settings.schur = false;
    IpmWorkspace plain(nx, 0, ni), with_basis(nx, 0, ni), full(nx, 0, ni);
    with_basis.row_basis = basis;
    const LcpIpmResult rp = solve_mixed_lcp(p, settings, plain);
    const LcpIpmResult rb = solve_mixed_lcp(p, settings, with_basis);
    const LcpIpmResult rf = solve_mixed_lcp(p, full_settings, full);
    ASSERT_TRUE(rp.converged);
    ASSERT_TRUE(rb.converged) << "iterations " << rb.iterations << " residuals " << rb.primal_residual << " "
                              << rb.dual_residual << " " << rb.complementarity_residual;
    ASSERT_TRUE(rf.converged);
    EXPECT_LT(rb.primal_residual, 1e-11);
    EXPECT_LT(rb.dual_residual, 1e-11);
    EXPECT_LT((with_basis.x - plain.x).lpNorm<Eigen::Infinity>(), 1e-8);
    EXPECT_LT((with_basis.x - full.x).lpNorm<Eigen::Infinity>(), 1e-8);
    EXPECT_LE(std::abs(rb.iterations - rp.iterations), 2);
    reduced += with_basis.n_core < plain.n_core;
    // The same factorisation at the solution: equal backward passes.
    const VectorXd gx = random_matrix(rng, nx, 1), none;
    MixedLcp grad_plain(nx, 0, ni), grad_basis(nx, 0, ni);
    mixed_lcp_vjp(p, plain, gx, none, none, none, grad_plain);
    mixed_lcp_vjp(p, with_basis, gx, none, none, none, grad_basis);
    EXPECT_LT((grad_basis.q - grad_plain.q).lpNorm<Eigen::Infinity>(), 1e-6 * (1 + grad_plain.q.lpNorm<Eigen::Infinity>()));
  }
  EXPECT_EQ(reduced, 36) << "the basis makes the core smaller in every trial";
}

// M on a kinematic tree (IpmWorkspace::mass_parent): the solver factors M = L^T L without fill-in, and
// solution and backward pass equal those of the dense factorisation. An M off the tree's pattern is
// factored densely instead (and solved as well).
TEST(LcpIpm, MassTreeKeepsTheSolution) {
  std::mt19937 rng(71);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 24; ++trial) {
    const Index nx = 3 + trial % 9;
    const int nc = 1 + trial % 3, N = 4;
    MatrixXd basis;
    MixedLcp p = contact_lcp(rng, nx, nc, N, trial % 2 == 0 ? 1e-6 : 0.0, basis);
    Eigen::VectorXi parent(nx);
    for (Index k = 0; k < nx; ++k) parent[k] = static_cast<int>(std::floor(u(rng) * static_cast<double>(k + 1))) - 1;
    MatrixXd L = MatrixXd::Zero(nx, nx);  // lower, nonzero at (k, ancestor of k): M = L^T L keeps to the tree
    for (Index k = 0; k < nx; ++k) {
      L(k, k) = 0.5 + u(rng);
      for (int i = parent[k]; i >= 0; i = parent[i]) L(k, i) = u(rng) - 0.5;
    }
    p.M = L.transpose() * L;
    p.M = (0.5 * (p.M + p.M.transpose())).eval();  // exactly symmetric
    const bool off_tree = trial % 4 == 3;           // an entry between two branches (if there are two)
    Index a = -1, b = -1;
    for (Index j = 0; off_tree && j < nx && a < 0; ++j)
      for (Index i = 0; i < j && a < 0; ++i) {
        bool related = false;
        for (int k = parent[j]; k >= 0; k = parent[k]) related = related || k == i;
        if (!related) a = i, b = j;
      }
    if (a >= 0) p.M(a, b) = p.M(b, a) = 0.1 * std::min(p.M(a, a), p.M(b, b));  // stays positive definite
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " nx " << nx << " off the tree " << (a >= 0));
    const Index ni = p.n_ineq();
    LcpIpmSettings<double> settings;
    settings.tolerance = 1e-11;
    IpmWorkspace dense(nx, 0, ni), tree(nx, 0, ni);
    dense.row_basis = tree.row_basis = basis;
    tree.mass_parent = parent;
    const LcpIpmResult rd = solve_mixed_lcp(p, settings, dense);
    const LcpIpmResult rt = solve_mixed_lcp(p, settings, tree);
    ASSERT_TRUE(rd.converged);
    ASSERT_TRUE(rt.converged);
    EXPECT_FALSE(dense.mass_tree);
    EXPECT_EQ(tree.mass_tree, a < 0);
    EXPECT_LT(rt.primal_residual, 1e-11);
    EXPECT_LT(rt.dual_residual, 1e-11);
    EXPECT_LT((tree.x - dense.x).lpNorm<Eigen::Infinity>(), 1e-8);
    const VectorXd gx = random_matrix(rng, nx, 1), none;
    MixedLcp grad_dense(nx, 0, ni), grad_tree(nx, 0, ni);
    mixed_lcp_vjp(p, dense, gx, none, none, none, grad_dense);
    mixed_lcp_vjp(p, tree, gx, none, none, none, grad_tree);
    EXPECT_LT((grad_tree.q - grad_dense.q).lpNorm<Eigen::Infinity>(), 1e-6 * (1 + grad_dense.q.lpNorm<Eigen::Infinity>()));
    EXPECT_LT((grad_tree.M - grad_dense.M).lpNorm<Eigen::Infinity>(), 1e-6 * (1 + grad_dense.M.lpNorm<Eigen::Infinity>()));
  }
}

// A workspace reused for problems of one shape keeps F's nonzeros and its blocks' setup while F and
// the row basis stay the same; a changed F (friction, cfm) or basis must be seen: every solve equals
// a fresh workspace's, bit for bit.
TEST(LcpIpm, ReusedWorkspaceFollowsChangesOfFAndTheBasis) {
  std::mt19937 rng(71);
  const Index nx = 7;
  const int nc = 3, N = 4;
  MatrixXd basis;
  IpmWorkspace reused(nx, 0, (N + 2) * nc);
  LcpIpmSettings<double> settings;
  for (int trial = 0; trial < 8; ++trial) {
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    MixedLcp p = contact_lcp(rng, nx, nc, N, trial % 2 == 0 ? 0.0 : 1e-6, basis);  // new mu, every other cfm
    if (trial % 4 == 3) p = contact_lcp(rng, nx, nc, N, 0.0, basis), basis.setIdentity();  // the identity basis
    IpmWorkspace fresh(nx, 0, p.n_ineq());
    fresh.row_basis = basis;
    reused.row_basis = basis;
    const LcpIpmResult rf = solve_mixed_lcp(p, settings, fresh);
    const LcpIpmResult rr = solve_mixed_lcp(p, settings, reused);
    ASSERT_TRUE(rf.converged);
    EXPECT_EQ(rr.iterations, rf.iterations);
    EXPECT_EQ(reused.x, fresh.x);
    EXPECT_EQ(reused.z, fresh.z);
    // and the same problem again (the setup kept): the same solution
    const LcpIpmResult again = solve_mixed_lcp(p, settings, reused);
    EXPECT_EQ(again.iterations, rf.iterations);
    EXPECT_EQ(reused.x, fresh.x);
  }
}

TEST(LcpIpm, ShapeMismatchThrows) {
  MixedLcp p(3, 1, 2);
  p.M.setIdentity();
  IpmWorkspace ws(3, 1, 3);
  EXPECT_THROW(solve_mixed_lcp(p, LcpIpmSettings<double>{}, ws), ArgumentError);
  IpmWorkspace fresh(3, 1, 2);
  MixedLcp grad(3, 1, 2);
  const VectorXd none;
  EXPECT_THROW(mixed_lcp_vjp(p, fresh, none, none, none, none, grad), ArgumentError);  // no solve yet
  VectorXd rhs = VectorXd::Zero(6);
  EXPECT_THROW(mixed_lcp_kkt_solve(p, fresh, rhs, rhs, false), ArgumentError);  // no solve yet
  solve_mixed_lcp(p, LcpIpmSettings<double>{}, fresh);
  VectorXd short_rhs = VectorXd::Zero(5);
  EXPECT_THROW(mixed_lcp_kkt_solve(p, fresh, short_rhs, short_rhs, false), ArgumentError);
}

}  // namespace
}  // namespace gradyn
