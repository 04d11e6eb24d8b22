// rollout_vjp: backpropagation through time against forward-mode AD of the whole rollout, and
// binomial checkpointing against keeping every state (identical results, optimal recomputation).
#include <gtest/gtest.h>

#include "../support/ad_jacobian.hpp"
#include "../support/random_model.hpp"
#include "gradyn/autodiff.hpp"
#include "gradyn/io/load.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

struct RolloutGradient {
  Eigen::VectorXd q0_bar, v0_bar;
  MatrixXr<double> taus_bar;
  Eigen::VectorXd params_bar;
  long long forward_steps = 0;
};

RolloutGradient adjoint(const Model& model, const Eigen::VectorXd& q0, const Eigen::VectorXd& v0,
                        const MatrixXr<double>& taus, double dt, Integrator integrator, const MatrixXr<double>& qs_bar,
                        const MatrixXr<double>& vs_bar, int max_snapshots) {
  Data data(model);
  ModelTangent tangent(model);
  RolloutGradient g;
  g.q0_bar = Eigen::VectorXd::Zero(model.nq);
  g.v0_bar = Eigen::VectorXd::Zero(model.nv);
  g.taus_bar = MatrixXr<double>::Zero(taus.rows(), model.nv);
  rollout_vjp<double>(model, data, q0, v0, taus, dt, integrator, qs_bar, vs_bar, g.q0_bar, g.v0_bar, g.taus_bar,
                      tangent, CheckpointOptions{max_snapshots});
  g.params_bar = params_gradient<double>(model, tangent);
  g.forward_steps = data.rollout_adj_forward_steps;
  return g;
}

// Random running-loss adjoints on every row.
void random_adjoints(const Model& model, int T, std::mt19937& rng, MatrixXr<double>& qs_bar, MatrixXr<double>& vs_bar) {
  std::uniform_real_distribution<double> u(-1, 1);
  qs_bar.resize(T + 1, model.nq);
  vs_bar.resize(T + 1, model.nv);
  for (int i = 0; i < qs_bar.size(); ++i) qs_bar.data()[i] = u(rng);
  for (int i = 0; i < vs_bar.size(); ++i) vs_bar.data()[i] = u(rng);
}

class RolloutVjp : public ::testing::TestWithParam<Integrator> {};

// The loss sum_t qs_bar[t] . qs[t] + vs_bar[t] . vs[t]: its AD gradient with respect to
// (q0, v0, taus) is what rollout_vjp must return, raw and ambient: q0's quaternion entries are
// compared in every direction (the dynamics read them normalised), with q0 both on the unit
// sphere and off it (where the first state qs[0] = q0 is itself not unit).
TEST_P(RolloutVjp, RunningLossMatchesForwardModeAD) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const bool floating = seed == 2u;
    const Model model = test::random_model(5, seed, floating, seed != 3u);
    std::mt19937 rng(seed);
    const int T = 40, nq = model.nq, nv = model.nv;
    const double dt = 0.005;
    Eigen::VectorXd q0 = test::random_configuration(model, rng);
    const Eigen::VectorXd v0 = test::random_vector(nv, rng);
    MatrixXr<double> taus(T, nv), qs_bar, vs_bar;
    for (int t = 0; t < T; ++t) taus.row(t) = test::random_vector(nv, rng).transpose();
    random_adjoints(model, T, rng, qs_bar, vs_bar);
    if (seed == 3u)  // off the unit sphere
      for (int i = 0; i < model.nbodies(); ++i)
        if (joint_has_quaternion(model.joint_type[i]))
          q0.segment<4>(model.idx_q[i] + (model.joint_type[i] == JointType::Free ? 3 : 0)) *= 0.8;
    const RolloutGradient g = adjoint(model, q0, v0, taus, dt, GetParam(), qs_bar, vs_bar, 0);

    Eigen::VectorXd x0(nq + nv + T * nv);
    x0 << q0, v0, Eigen::Map<const Eigen::VectorXd>(taus.data(), T * nv);
    const ModelTpl<ADScalar> m = model.cast<ADScalar>();
    auto loss = [&](const VectorX<ADScalar>& x) {
      DataTpl<ADScalar> d(m);
      MatrixXr<ADScalar> ad_taus(T, nv), qs, vs;
      for (int t = 0; t < T; ++t) ad_taus.row(t) = x.segment(nq + nv + t * nv, nv).transpose();
      rollout<ADScalar>(m, d, x.head(nq), x.segment(nq, nv), ad_taus, ADScalar(dt), GetParam(), qs, vs);
      VectorX<ADScalar> L(1);
      L[0] = ADScalar(0.0);
      for (int t = 0; t <= T; ++t)
        L[0] += qs.row(t).dot(qs_bar.row(t).cast<ADScalar>()) + vs.row(t).dot(vs_bar.row(t).cast<ADScalar>());
      return L;
    };
    const Eigen::VectorXd g_ad = test::ad_jacobian(loss, x0).row(0).transpose();
    Eigen::VectorXd g_adj(x0.size());
    g_adj << g.q0_bar, g.v0_bar, Eigen::Map<const Eigen::VectorXd>(g.taus_bar.data(), T * nv);
    const double scale = g_ad.cwiseAbs().maxCoeff();
    EXPECT_LE((g_adj - g_ad).cwiseAbs().maxCoeff() / scale, 1e-9) << "seed " << seed;
  }
}

// Binomial checkpointing: the same numbers as keeping every state, and the recomputation count
// of Griewank & Walther's bound: r T - C(k + r, k + 1), r the least with C(k + r, k) >= T.
long long binomial(long long n, long long k) {
  if (k < 0 || k > n) return 0;
  long long b = 1;
  for (long long i = 1; i <= k; ++i) b = b * (n - k + i) / i;
  return b;
}
long long revolve_bound(long long T, long long k) {
  k = std::min(k, T);
  long long r = 0;
  while (binomial(k + r, k) < T) ++r;
  return r * T - binomial(k + r, k + 1);
}

TEST_P(RolloutVjp, CheckpointingIsExactAndRecomputesTheOptimalNumberOfSteps) {
  const Model model = test::random_model(6, 4, true, true);
  std::mt19937 rng(4);
  const int T = 97;
  const Eigen::VectorXd q0 = test::random_configuration(model, rng), v0 = test::random_vector(model.nv, rng);
  MatrixXr<double> taus(T, model.nv), qs_bar, vs_bar;
  for (int t = 0; t < T; ++t) taus.row(t) = test::random_vector(model.nv, rng).transpose();
  random_adjoints(model, T, rng, qs_bar, vs_bar);
  const RolloutGradient full = adjoint(model, q0, v0, taus, 0.01, GetParam(), qs_bar, vs_bar, 0);
  EXPECT_EQ(full.forward_steps, T - 1);
  for (int k : {1, 2, 3, 5, 8, 20, 96, 97, 500}) {
    const RolloutGradient ck = adjoint(model, q0, v0, taus, 0.01, GetParam(), qs_bar, vs_bar, k);
    // bitwise: both paths feed step and step_vjp the same inputs in the same order
    EXPECT_TRUE(ck.q0_bar == full.q0_bar) << "k " << k;
    EXPECT_TRUE(ck.v0_bar == full.v0_bar) << "k " << k;
    EXPECT_TRUE(ck.taus_bar == full.taus_bar) << "k " << k;
    EXPECT_TRUE(ck.params_bar == full.params_bar) << "k " << k;
    EXPECT_EQ(ck.forward_steps, revolve_bound(T, k)) << "k " << k;
  }
  EXPECT_EQ(revolve_bound(T, 1), T * (T - 1) / 2);  // one snapshot: recompute from the start every time
}

INSTANTIATE_TEST_SUITE_P(Integrators, RolloutVjp, ::testing::Values(Integrator::SemiImplicitEuler, Integrator::RK4),
                         [](const auto& info) {
                           return info.param == Integrator::RK4 ? std::string("RK4") : std::string("Euler");
                         });

// 10^5 steps with 12 snapshots: O(k) memory, the same gradient as keeping all 10^5 states.
TEST(RolloutVjpLong, HundredThousandStepsWithTwelveSnapshots) {
  const Model model = load_urdf(GRADYN_MODELS "/pendulums/pendulum2.urdf");
  const int T = 100000;
  Eigen::VectorXd q0(model.nq), v0 = Eigen::VectorXd::Zero(model.nv);
  q0.setConstant(0.3);
  MatrixXr<double> taus = MatrixXr<double>::Zero(T, model.nv);
  MatrixXr<double> qs_bar = MatrixXr<double>::Zero(T + 1, model.nq), vs_bar = MatrixXr<double>::Zero(T + 1, model.nv);
  qs_bar.row(T).setOnes();
  vs_bar.row(T / 2).setConstant(0.5);
  const RolloutGradient full = adjoint(model, q0, v0, taus, 1e-4, Integrator::SemiImplicitEuler, qs_bar, vs_bar, 0);
  const RolloutGradient ck = adjoint(model, q0, v0, taus, 1e-4, Integrator::SemiImplicitEuler, qs_bar, vs_bar, 12);
  EXPECT_TRUE(ck.q0_bar == full.q0_bar);
  EXPECT_TRUE(ck.taus_bar == full.taus_bar);
  EXPECT_TRUE(ck.params_bar == full.params_bar);
  EXPECT_EQ(ck.forward_steps, revolve_bound(T, 12));
  // C(12 + 7, 12) = 50388 < 10^5 <= C(12 + 8, 12) = 125970: each step recomputed at most 8 times
  EXPECT_LE(ck.forward_steps, 8LL * T);
  EXPECT_GT(full.q0_bar.cwiseAbs().maxCoeff(), 0.0);
}

TEST(RolloutVjpReport, NormsClippingAndHook) {
  const Model model = test::random_model(4, 2, true, true);
  std::mt19937 rng(5);
  const Eigen::VectorXd q0 = test::random_configuration(model, rng), v0 = test::random_vector(model.nv, rng, 1.0);
  const int T = 40;
  const MatrixXr<double> taus = MatrixXr<double>::Random(T, model.nv);
  MatrixXr<double> qs_bar = MatrixXr<double>::Random(T + 1, model.nq), vs_bar = MatrixXr<double>::Random(T + 1, model.nv);
  Data d(model);
  auto run = [&](const CheckpointOptions& options, Eigen::VectorXd& q0_bar, Eigen::VectorXd& v0_bar) {
    q0_bar.setZero(model.nq);
    v0_bar.setZero(model.nv);
    MatrixXr<double> taus_bar = MatrixXr<double>::Zero(T, model.nv);
    ModelTangent model_bar(model);
    rollout_vjp<double>(model, d, q0, v0, taus, 1e-2, Integrator::SemiImplicitEuler, qs_bar, vs_bar, q0_bar, v0_bar,
                        taus_bar, model_bar, options);
  };
  Eigen::VectorXd q0_bar, v0_bar;
  run({}, q0_bar, v0_bar);
  // the report: one norm per state; the last is the loss adjoint's, the first the returned one's
  ASSERT_EQ(d.rollout_adj_norms.size(), std::size_t(T + 1));
  EXPECT_DOUBLE_EQ(d.rollout_adj_norms[T], std::sqrt(qs_bar.row(T).squaredNorm() + vs_bar.row(T).squaredNorm()));
  EXPECT_NEAR(d.rollout_adj_norms[0], std::sqrt(q0_bar.squaredNorm() + v0_bar.squaredNorm()), 1e-12);
  EXPECT_EQ(d.rollout_adj_clipped, 0);
  const std::vector<double> unclipped = d.rollout_adj_norms;
  const double largest = *std::max_element(unclipped.begin(), unclipped.end());
  // clipping: every state adjoint leaves with at most clip_norm
  CheckpointOptions clip;
  clip.clip_norm = 0.5 * largest;
  std::vector<long> visited;
  clip.hook = [&](long t, Eigen::Ref<Eigen::VectorXd> qb, Eigen::Ref<Eigen::VectorXd> vb) {
    visited.push_back(t);
    EXPECT_LE(std::sqrt(qb.squaredNorm() + vb.squaredNorm()), clip.clip_norm * (1 + 1e-12));
  };
  run(clip, q0_bar, v0_bar);
  EXPECT_GT(d.rollout_adj_clipped, 0);
  ASSERT_EQ(visited.size(), std::size_t(T + 1));
  for (int k = 0; k <= T; ++k) EXPECT_EQ(visited[k], T - k);  // from the last state back to the first
  EXPECT_LE(std::sqrt(q0_bar.squaredNorm() + v0_bar.squaredNorm()), clip.clip_norm * (1 + 1e-12));
  // a hook that zeroes the adjoint of state 10 cuts every earlier dependence on the loss of later states
  CheckpointOptions cut;
  cut.hook = [](long t, Eigen::Ref<Eigen::VectorXd> qb, Eigen::Ref<Eigen::VectorXd> vb) {
    if (t == 10) qb.setZero(), vb.setZero();
  };
  run(cut, q0_bar, v0_bar);
  Eigen::VectorXd q0_ref, v0_ref;
  qs_bar.bottomRows(T + 1 - 10).setZero();
  vs_bar.bottomRows(T + 1 - 10).setZero();
  run({}, q0_ref, v0_ref);
  EXPECT_LT((q0_bar - q0_ref).norm() + (v0_bar - v0_ref).norm(), 1e-12);
  EXPECT_GT(q0_ref.norm(), 0.0);
  CheckpointOptions bad;
  bad.clip_norm = -1;
  EXPECT_THROW(run(bad, q0_bar, v0_bar), ArgumentError);
}

TEST(RolloutVjpShapes, WrongShapesNameExpectedAndActual) {
  const Model model = test::random_model(3, 1);
  Data data(model);
  ModelTangent tangent(model);
  const Eigen::VectorXd q0 = neutral_configuration<double>(model), v0 = Eigen::VectorXd::Zero(model.nv);
  MatrixXr<double> taus = MatrixXr<double>::Zero(4, model.nv), taus_bar = taus;
  MatrixXr<double> qs_bar = MatrixXr<double>::Zero(4, model.nq), vs_bar = MatrixXr<double>::Zero(5, model.nv);
  Eigen::VectorXd q0_bar = Eigen::VectorXd::Zero(model.nq), v0_bar = Eigen::VectorXd::Zero(model.nv);
  try {
    rollout_vjp<double>(model, data, q0, v0, taus, 0.01, Integrator::RK4, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar,
                        tangent);
    FAIL() << "no error for a wrong qs_bar";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("qs_bar: expected shape (5, " + std::to_string(model.nq) + "), got (4,"),
              std::string::npos)
        << e.what();
  }
  const MatrixXr<double> qs_bar_ok = MatrixXr<double>::Zero(5, model.nq);
  EXPECT_THROW(rollout_vjp<double>(model, data, q0, v0, taus, 0.01, Integrator::RK4, qs_bar_ok, vs_bar, q0_bar, v0_bar,
                                   taus_bar, tangent, CheckpointOptions{-1}),
               ArgumentError);
}

}  // namespace
}  // namespace gradyn
