// The reverse kernel: the adjoint of T recorded steps of one world per thread
// (flat/rollout.hpp's rollout_vjp_world). Included by one .cu file per scalar.
#pragma once

#include "gradyn/flat/rollout.hpp"
#include "kernels.hpp"

namespace gradyn::cuda {

namespace detail {
template <class S, int MB, int MD, int MR>
__global__ void rollout_vjp_kernel(flat::FlatModel<S> m, int B, int T, S dt, const S* qs, const S* vs, const S* taus,
                                   const S* ctrls, const S* qs_bar, const S* vs_bar, S* q0_bar, S* v0_bar, S* taus_bar,
                                   S* ctrls_bar) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= B) return;
  flat::StepVjpWorkspace<S, MB, MD, MR> ws;
  flat::rollout_vjp_world(m, ws, B, T, dt, w, qs, vs, taus, ctrls, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar,
                          ctrls_bar);
}
}  // namespace detail

template <class S>
cudaError_t launch_rollout_vjp(const flat::FlatModel<S>& m, int B, int T, S dt, const S* qs, const S* vs,
                               const S* taus, const S* ctrls, const S* qs_bar, const S* vs_bar, S* q0_bar, S* v0_bar,
                               S* taus_bar, S* ctrls_bar, cudaStream_t stream) {
  const int blocks = (B + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (m.pgs_on()) {  // as launch_rollout
    if (m.nb <= 16 && m.nv <= 24 && m.max_rows() <= 48)
      detail::rollout_vjp_kernel<S, 16, 24, 48><<<blocks, kThreadsPerBlock, 0, stream>>>(
          m, B, T, dt, qs, vs, taus, ctrls, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar);
    else
      detail::rollout_vjp_kernel<S, 32, 48, 96><<<blocks, kThreadsPerBlock, 0, stream>>>(
          m, B, T, dt, qs, vs, taus, ctrls, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar);
  } else if (m.nb <= 16 && m.nv <= 24)
    detail::rollout_vjp_kernel<S, 16, 24, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, qs, vs, taus, ctrls, qs_bar,
                                                                         vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar);
  else if (m.nb <= 32 && m.nv <= 48)
    detail::rollout_vjp_kernel<S, 32, 48, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, qs, vs, taus, ctrls, qs_bar,
                                                                         vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar);
  else
    detail::rollout_vjp_kernel<S, 64, 96, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, qs, vs, taus, ctrls, qs_bar,
                                                                         vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar);
  return cudaGetLastError();
}

}  // namespace gradyn::cuda
