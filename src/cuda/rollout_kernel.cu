// The forward kernel: T steps of one world per thread (flat/rollout.hpp).
#include "kernels.hpp"

#include "gradyn/flat/rollout.hpp"

namespace gradyn::cuda {

namespace {
template <class S, int MB, int MD, int MR>
__global__ void rollout_kernel(flat::FlatModel<S> m, int B, int T, S dt, S* q, S* v, const S* taus, const S* ctrls,
                               S* qs, S* vs, std::uint32_t* status, std::uint32_t* step_status, bool write_final) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= B) return;
  flat::StepWorkspace<S, MB, MD, MR> ws;
  status[w] = flat::rollout_world(m, ws, B, T, dt, w, q, v, taus, ctrls, qs, vs, step_status, write_final);
}
}  // namespace

template <class S>
cudaError_t launch_rollout(const flat::FlatModel<S>& m, int B, int T, S dt, S* q, S* v, const S* taus, const S* ctrls,
                           S* qs, S* vs, std::uint32_t* status, std::uint32_t* step_status, cudaStream_t stream,
                           bool write_final) {
  const int blocks = (B + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (m.pgs_on()) {  // PGS's rows (flat/export.hpp sizes them and keeps such models within 32 bodies, 48 DoFs)
    if (m.nb <= 16 && m.nv <= 24 && m.max_rows() <= 48)
      rollout_kernel<S, 16, 24, 48><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, q, v, taus, ctrls, qs, vs,
                                                                         status, step_status, write_final);
    else
      rollout_kernel<S, 32, 48, 96><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, q, v, taus, ctrls, qs, vs,
                                                                         status, step_status, write_final);
  } else if (m.nb <= 16 && m.nv <= 24)
    rollout_kernel<S, 16, 24, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, q, v, taus, ctrls, qs, vs, status,
                                                                  step_status, write_final);
  else if (m.nb <= 32 && m.nv <= 48)
    rollout_kernel<S, 32, 48, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, q, v, taus, ctrls, qs, vs, status,
                                                                  step_status, write_final);
  else
    rollout_kernel<S, 64, 96, 0><<<blocks, kThreadsPerBlock, 0, stream>>>(m, B, T, dt, q, v, taus, ctrls, qs, vs, status,
                                                                  step_status, write_final);
  return cudaGetLastError();
}

template cudaError_t launch_rollout<double>(const flat::FlatModel<double>&, int, int, double, double*, double*,
                                            const double*, const double*, double*, double*, std::uint32_t*,
                                            std::uint32_t*, cudaStream_t, bool);
template cudaError_t launch_rollout<float>(const flat::FlatModel<float>&, int, int, float, float*, float*, const float*,
                                           const float*, float*, float*, std::uint32_t*, std::uint32_t*, cudaStream_t,
                                           bool);

}  // namespace gradyn::cuda
