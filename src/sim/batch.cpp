// Many worlds at once (sim/batch.hpp): the thread pool is OpenMP's (this file alone is compiled
// with it: CMakeLists.txt), the worlds' workspaces are the caller's.
#include "gradyn/sim/batch.hpp"

#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "gradyn/autodiff.hpp"
#include "gradyn/contact/contact_models.hpp"
#include "gradyn/model/errors.hpp"

namespace gradyn {

int batch_threads(int threads) {
  if (threads < 0)
    throw ArgumentError("threads: expected a positive number of threads (or none for all " +
                        std::to_string(omp_get_num_procs()) + " cores), got " + std::to_string(threads));
  return threads > 0 ? threads : omp_get_num_procs();
}

namespace {
// Below this much work left (the first world's time times the worlds after it) the caller's thread
// runs the whole batch: starting the pool and joining it costs microseconds on an idle machine, and
// on a busy one the join waits for every pool thread to be scheduled again (measured: 8 cart-pole
// steps took 1.06 ms on the pool against 0.014 ms on one thread, 2 cores at load 3).
constexpr double kPoolWorthSeconds = 2e-4;
}  // namespace

void for_each_world(int worlds, int threads, const std::function<void(int world, int thread)>& f) {
  threads = batch_threads(threads);
  if (worlds <= 0) return;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(worlds));
  const auto run = [&](int w, int thread) {
    try {
      f(w, thread);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  // The first world always runs on the caller's thread (thread 0): its time says whether the rest
  // is worth the pool. Which thread runs a world never changes its numbers (see the header).
  const auto start = std::chrono::steady_clock::now();
  run(0, 0);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (threads == 1 || worlds == 1 || first * (worlds - 1) < kPoolWorthSeconds) {
    for (int w = 1; w < worlds; ++w) run(w, 0);
  } else {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int w = 1; w < worlds; ++w) run(w, omp_get_thread_num());
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

template <class S>
void forget_history(const ModelTpl<S>& model, DataTpl<S>& data) {
  data.status = kStatusOk;
  for (int g = 0; g < model.ngeoms(); ++g) data.sweep_order[g] = g;
  forget_contact_warm_starts<S>(data);
}

#define GRADYN_INSTANTIATE(S) template void forget_history<S>(const ModelTpl<S>&, DataTpl<S>&);
GRADYN_FOR_EACH_SCALAR(GRADYN_INSTANTIATE)

}  // namespace gradyn
