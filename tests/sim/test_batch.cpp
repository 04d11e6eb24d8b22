// Many worlds at once (sim/batch.hpp): every world runs exactly once, whatever the thread count, and
// slow worlds are spread over the pool;
// an exception for one world does not stop the others and the lowest world's is rethrown;
// forget_history gives a used workspace the state of a fresh one (a PGS warm start is forgotten).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/laikago_scene.hpp"
#include "gradyn/model/errors.hpp"
#include "gradyn/sim/batch.hpp"
#include "gradyn/sim/step.hpp"

namespace gradyn {
namespace {

TEST(Batch, EveryWorldRunsOnceOnEveryThreadCount) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> runs(100);
    std::vector<int> thread_of(100, -1);
    for_each_world(100, threads, [&](int world, int thread) {
      ++runs[world];
      thread_of[world] = thread;
    });
    for (int w = 0; w < 100; ++w) {
      EXPECT_EQ(runs[w].load(), 1) << "threads " << threads << " world " << w;
      EXPECT_GE(thread_of[w], 0);
      EXPECT_LT(thread_of[w], threads);
    }
  }
  EXPECT_GE(batch_threads(0), 1);  // all hardware threads
  EXPECT_EQ(batch_threads(3), 3);
  EXPECT_THROW(batch_threads(-1), ArgumentError);
}

// Worlds of real work go to the pool (each sleeps 2 ms here, far above the 0.2 ms the batch must
// be worth), so more than the caller's thread runs them; a batch of trivial worlds may stay on the
// caller's thread (its first world's time decides), and either way every world runs once.
TEST(Batch, SlowWorldsUseThePool) {
  constexpr int kWorlds = 50;
  std::vector<std::atomic<int>> runs(kWorlds);
  std::vector<int> thread_of(kWorlds, -1);
  for_each_world(kWorlds, 2, [&](int world, int thread) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ++runs[world];
    thread_of[world] = thread;
  });
  int on_other_threads = 0;
  for (int w = 0; w < kWorlds; ++w) {
    EXPECT_EQ(runs[w].load(), 1) << "world " << w;
    on_other_threads += thread_of[w] == 1;
  }
  EXPECT_EQ(thread_of[0], 0);  // the first world measures the work on the caller's thread
  EXPECT_GT(on_other_threads, 0);
}

TEST(Batch, AFailingWorldStopsNoOtherAndTheLowestIsRethrown) {
  std::vector<std::atomic<int>> runs(40);
  try {
    for_each_world(40, 2, [&](int world, int) {
      ++runs[world];
      if (world == 31 || world == 7) throw std::runtime_error("world " + std::to_string(world));
    });
    FAIL() << "expected the failing worlds' exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "world 7");
  }
  for (int w = 0; w < 40; ++w) EXPECT_EQ(runs[w].load(), 1) << w;
}

TEST(Batch, ForgetHistoryMakesAUsedWorkspaceFresh) {
  for (ContactModel contact : {ContactModel::Pgs, ContactModel::Ipm, ContactModel::Penalty}) {
    SCOPED_TRACE(contact_model_name(contact));
    test::LaikagoScene s = test::laikago_standing(contact);
    if (contact == ContactModel::Ipm) s.model.contact.ipm_warm_start = true;
    const Model& m = s.model;
    const Eigen::VectorXd v = Eigen::VectorXd::Constant(m.nv, 0.01), tau = Eigen::VectorXd::Zero(m.nv);
    Eigen::VectorXd q1(m.nq), v1(m.nv), q2(m.nq), v2(m.nv);
    Data fresh(m);
    step<double>(m, fresh, s.q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q1, v1);
    Data used(m);  // a history: 20 steps from elsewhere, leaving warm starts behind
    Eigen::VectorXd q = s.q, w = v;
    for (int t = 0; t < 20; ++t) step<double>(m, used, q, w, tau, 1e-3, Integrator::SemiImplicitEuler, q, w);
    if (contact != ContactModel::Penalty) {  // the history matters: without forgetting, other bits
      Data remembering = used;
      Eigen::VectorXd q3(m.nq), v3(m.nv);
      step<double>(m, remembering, s.q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q3, v3);
      EXPECT_NE(v3, v1);
    }
    forget_history(m, used);
    EXPECT_EQ(used.status, kStatusOk);
    step<double>(m, used, s.q, v, tau, 1e-3, Integrator::SemiImplicitEuler, q2, v2);
    EXPECT_EQ(q2, q1);
    EXPECT_EQ(v2, v1);
    EXPECT_EQ(used.status, fresh.status);
  }
}

}  // namespace
}  // namespace gradyn
