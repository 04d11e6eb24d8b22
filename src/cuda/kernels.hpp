// The CUDA kernels of the backend, one world per thread, behind two launch functions
// (rollout_kernel.cu; rollout_vjp_kernel.cuh, instantiated once per scalar in its own file so
// that the heavy reverse kernels compile in parallel). Each picks the workspace size the model
// needs and returns the launch's error.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "gradyn/flat/flat_model.hpp"

namespace gradyn::cuda {

inline constexpr int kThreadsPerBlock = 128;

/// T steps of B worlds (flat/rollout.hpp's rollout_world): state q (nq, B), v (nv, B) in place or
/// the trajectories qs, vs; status (B); step_status (T, B) or null.
template <class S>
cudaError_t launch_rollout(const flat::FlatModel<S>& m, int B, int T, S dt, S* q, S* v, const S* taus, const S* ctrls,
                           S* qs, S* vs, std::uint32_t* status, std::uint32_t* step_status, cudaStream_t stream = 0,
                           bool write_final = true);

/// The reverse of a recorded rollout (flat/rollout.hpp's rollout_vjp_world).
template <class S>
cudaError_t launch_rollout_vjp(const flat::FlatModel<S>& m, int B, int T, S dt, const S* qs, const S* vs,
                               const S* taus, const S* ctrls, const S* qs_bar, const S* vs_bar, S* q0_bar, S* v0_bar,
                               S* taus_bar, S* ctrls_bar, cudaStream_t stream = 0);

/// The device view of a model made by gradyn_cuda_model_create (backend.cu), and its scalar
/// (0 double, 1 float).
template <class S>
flat::FlatModel<S> device_model_view(const void* handle);
int device_model_dtype(const void* handle);

}  // namespace gradyn::cuda
