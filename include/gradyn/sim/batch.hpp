// Many worlds at once: a batch of independent simulations run on a pool of threads (OpenMP), each
// world on one thread with that thread's own workspace (Data), so that a world's numbers never
// depend on the thread count, on the other worlds or on what ran before:
//
//   std::vector<std::optional<Data>> workspace(threads);
//   for_each_world(B, threads, [&](int world, int thread) {
//     if (!workspace[thread]) workspace[thread].emplace(model);
//     Data& data = *workspace[thread];
//     forget_history(model, data);       // the world starts from a fresh workspace's state
//     rollout(model, data, q0.row(world), ...);
//   });
//
// The Python API's batched step, rollout, step_vjp, rollout_vjp and step_jacobian (a leading batch
// dimension on the per-world arrays, threads=) are written this way (python/src/bind_batch.cpp).
#pragma once

#include <functional>

#include "gradyn/dynamics/kinematics.hpp"

namespace gradyn {

/// The threads a batch runs on: `threads` when positive, all hardware threads when 0. Throws
/// ArgumentError for a negative count.
int batch_threads(int threads);

/// Calls f(world, thread) once for every world in [0, worlds), on `threads` threads (a dynamic
/// schedule: one world per task); `thread` in [0, threads) names the calling thread, for its own
/// workspace. World 0 runs first on the caller's thread (thread 0); when its time says the rest of
/// the batch is under 0.2 ms of work, the caller's thread runs the rest too (the pool would cost
/// more than it saves, and far more on a busy machine). Returns when every world is done. An exception thrown for a world does not stop the
/// others; the one of the lowest such world is rethrown at the end.
void for_each_world(int worlds, int threads, const std::function<void(int world, int thread)>& f);

/// Forgets what a workspace carries from one simulation to the next: the contact solvers' warm
/// starts, the broadphase's sweep order and the status flags. Afterwards the next step depends on
/// its inputs alone, as with a workspace just constructed for the model. Never allocates.
template <class S>
void forget_history(const ModelTpl<S>& model, DataTpl<S>& data);

}  // namespace gradyn
