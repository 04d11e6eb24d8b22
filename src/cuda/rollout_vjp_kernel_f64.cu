// The reverse kernel for double (rollout_vjp_kernel.cuh).
#include "rollout_vjp_kernel.cuh"

namespace gradyn::cuda {
template cudaError_t launch_rollout_vjp<double>(const flat::FlatModel<double>&, int, int, double, const double*, const double*,
                                            const double*, const double*, const double*, const double*, double*, double*, double*, double*,
                                            cudaStream_t);
}  // namespace gradyn::cuda
