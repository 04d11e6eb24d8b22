// The reverse kernel for float (rollout_vjp_kernel.cuh).
#include "rollout_vjp_kernel.cuh"

namespace gradyn::cuda {
template cudaError_t launch_rollout_vjp<float>(const flat::FlatModel<float>&, int, int, float, const float*, const float*,
                                            const float*, const float*, const float*, const float*, float*, float*, float*, float*,
                                            cudaStream_t);
}  // namespace gradyn::cuda
