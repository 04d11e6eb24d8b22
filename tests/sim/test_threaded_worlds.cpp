// Many worlds on many threads, the way the Python API runs them (python/src/bind_batch.cpp): one
// Model shared read-only by every thread, one workspace (Data) per thread reused from world to
// world after forget_history. Every world's rollout, rollout_vjp (with checkpointing) and step
// Jacobian must equal, bit for bit, the same world run alone on a fresh workspace, under every
// contact model; and one Model used from several std::threads at once (what several Python
// threads do) must give the results of sequential use. scripts/sanitize.sh runs these tests under
// ThreadSanitizer, which reports any data race on state the threads share.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "../support/laikago_scene.hpp"
#include "gradyn/model/params.hpp"
#include "gradyn/sim/batch.hpp"
#include "gradyn/sim/step.hpp"
#include "gradyn/sim/step_jacobian.hpp"

namespace gradyn {
namespace {

constexpr int kSteps = 40;
constexpr double kDt = 1e-3;

// What one world computes: its trajectory, the gradient of a running loss, and the step Jacobian
// at its initial state.
struct WorldResult {
  MatrixXr<double> qs, vs, taus_bar;
  Eigen::VectorXd q0_bar, v0_bar, params_bar;
  Eigen::MatrixXd A, B;
  std::vector<std::uint32_t> status;
};

struct WorldInputs {
  Eigen::VectorXd q0, v0;
  MatrixXr<double> taus, qs_bar, vs_bar;
};

// Worlds that differ: a push on the base, random leg torques, random loss weights.
std::vector<WorldInputs> worlds_of(const test::LaikagoScene& s, int count) {
  const Model& m = s.model;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<WorldInputs> worlds(count);
  for (WorldInputs& w : worlds) {
    w.q0 = s.q;
    w.v0 = Eigen::VectorXd::Zero(m.nv);
    for (int i = 0; i < 6; ++i) w.v0[i] = 0.2 * u(rng);
    w.taus.resize(kSteps, m.nv);
    w.qs_bar.resize(kSteps + 1, m.nq);
    w.vs_bar.resize(kSteps + 1, m.nv);
    for (int i = 0; i < w.taus.size(); ++i) w.taus.data()[i] = 2.0 * u(rng);
    w.taus.leftCols(6).setZero();  // the free base is not actuated
    for (int i = 0; i < w.qs_bar.size(); ++i) w.qs_bar.data()[i] = u(rng);
    for (int i = 0; i < w.vs_bar.size(); ++i) w.vs_bar.data()[i] = u(rng);
  }
  return worlds;
}

WorldResult run_world(const Model& m, Data& data, const WorldInputs& in) {
  WorldResult r;
  r.status.resize(kSteps);
  rollout<double>(m, data, in.q0, in.v0, in.taus, kDt, Integrator::SemiImplicitEuler, r.qs, r.vs, r.status);
  forget_history(m, data);
  ModelTangent tangent(m);
  r.q0_bar = Eigen::VectorXd::Zero(m.nq);
  r.v0_bar = Eigen::VectorXd::Zero(m.nv);
  r.taus_bar = MatrixXr<double>::Zero(kSteps, m.nv);
  CheckpointOptions checkpoints;
  checkpoints.max_snapshots = 5;  // recomputation from snapshots, as for long horizons
  rollout_vjp<double>(m, data, in.q0, in.v0, in.taus, kDt, Integrator::SemiImplicitEuler, in.qs_bar, in.vs_bar,
                      r.q0_bar, r.v0_bar, r.taus_bar, tangent, checkpoints);
  r.params_bar = params_gradient<double>(m, tangent);
  forget_history(m, data);
  r.A.resize(2 * m.nv, 2 * m.nv);
  r.B.resize(2 * m.nv, m.nv);
  step_jacobian(m, data, in.q0, in.v0, Eigen::VectorXd(in.taus.row(0).transpose()), kDt,
                Integrator::SemiImplicitEuler, r.A, r.B);
  return r;
}

void expect_bitwise_equal(const WorldResult& a, const WorldResult& b, int world) {
  SCOPED_TRACE("world " + std::to_string(world));
  EXPECT_EQ(a.qs, b.qs);
  EXPECT_EQ(a.vs, b.vs);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.q0_bar, b.q0_bar);
  EXPECT_EQ(a.v0_bar, b.v0_bar);
  EXPECT_EQ(a.taus_bar, b.taus_bar);
  EXPECT_EQ(a.params_bar, b.params_bar);
  EXPECT_EQ(a.A, b.A);
  EXPECT_EQ(a.B, b.B);
}

std::vector<WorldResult> one_by_one(const Model& m, const std::vector<WorldInputs>& worlds) {
  std::vector<WorldResult> results;
  for (const WorldInputs& w : worlds) {
    Data fresh(m);
    results.push_back(run_world(m, fresh, w));
  }
  return results;
}

class ThreadedWorlds : public ::testing::TestWithParam<ContactModel> {};

TEST_P(ThreadedWorlds, APooledBatchEqualsEachWorldRunAlone) {
  const test::LaikagoScene s = test::laikago_standing(GetParam());
  const Model& m = s.model;
  const std::vector<WorldInputs> worlds = worlds_of(s, 6);
  const std::vector<WorldResult> alone = one_by_one(m, worlds);
  for (int threads : {2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::vector<std::optional<Data>> workspace(threads);
    std::vector<WorldResult> pooled(worlds.size());
    for_each_world(static_cast<int>(worlds.size()), threads, [&](int world, int thread) {
      if (!workspace[thread]) workspace[thread].emplace(m);
      forget_history(m, *workspace[thread]);
      pooled[world] = run_world(m, *workspace[thread], worlds[world]);
    });
    for (size_t w = 0; w < worlds.size(); ++w) expect_bitwise_equal(pooled[w], alone[w], static_cast<int>(w));
  }
}

TEST_P(ThreadedWorlds, OneModelUsedFromSeveralThreadsAtOnceGivesTheSequentialResults) {
  const test::LaikagoScene s = test::laikago_standing(GetParam());
  const Model& m = s.model;
  const std::vector<WorldInputs> worlds = worlds_of(s, 4);
  const std::vector<WorldResult> alone = one_by_one(m, worlds);
  std::vector<WorldResult> concurrent(worlds.size());
  {
    std::vector<std::jthread> callers;
    for (size_t w = 0; w < worlds.size(); ++w)
      callers.emplace_back([&, w] {
        Data data(m);
        concurrent[w] = run_world(m, data, worlds[w]);
      });
  }
  for (size_t w = 0; w < worlds.size(); ++w) expect_bitwise_equal(concurrent[w], alone[w], static_cast<int>(w));
}

INSTANTIATE_TEST_SUITE_P(EveryContactModel, ThreadedWorlds,
                         ::testing::Values(ContactModel::Penalty, ContactModel::Pgs, ContactModel::Ipm),
                         [](const ::testing::TestParamInfo<ContactModel>& info) {
                           return std::string(contact_model_name(info.param));
                         });

}  // namespace
}  // namespace gradyn
