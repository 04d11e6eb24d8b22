/* The CUDA backend of gradyn as a C library (libgradyn_cuda.so), loaded by the Python package only
 * when a user asks for device='cuda' (python/gradyn/cuda.py): a CPU-only install never needs CUDA,
 * and the library works with any Python version. It runs the flat kernels (gradyn/flat/step.hpp),
 * one world per GPU thread.
 *
 * Arrays are world-last ("structure of arrays"): a state of B worlds is (n, B), a trajectory
 * (T + 1, n, B), controls (T, nu, B), so that neighbouring threads read neighbouring numbers.
 * Their scalar is the batch's: double (dtype 0) or float (dtype 1). Every function returns 0 on
 * success; otherwise gradyn_cuda_last_error() says what went wrong, in words. */
#ifndef GRADYN_CUDA_BACKEND_H
#define GRADYN_CUDA_BACKEND_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last failed call in this thread. */
const char* gradyn_cuda_last_error(void);

/* How many GPUs CUDA sees; the name and memory of device 0 (name: a buffer of name_len bytes). */
int gradyn_cuda_devices(int* count, char* name, int name_len, double* total_gib, double* free_gib);

/* A model on the GPU for batches of worlds: the flat arrays of gradyn/flat/export.hpp (reals in
 * double; a float batch converts them). dtype: 0 double, 1 float. *handle receives the model. */
int gradyn_cuda_model_create(const int32_t* ints, int nints, const double* reals, int nreals, int dtype, void** handle);
void gradyn_cuda_model_destroy(void* handle);

/* T steps of B worlds (semi-implicit Euler, step dt). Inputs: q0 (nq, B), v0 (nv, B); taus
 * (T, nv, B) and ctrls (T, nu, B) may be null (zeros). Outputs (each may be null): qs (T+1, nq, B)
 * and vs (T+1, nv, B), the trajectories; q_final (nq, B) and v_final (nv, B); status (B) the OR of
 * each world's step flags (gradyn.Status), step_status (T, B) each step's (both host memory). on_device: 0 every pointer is host memory (copied), 1
 * every pointer is device memory of this GPU (zero copy). kernel_ms (may be null): the time the
 * kernels took, measured with CUDA events. */
int gradyn_cuda_rollout(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                        const void* ctrls, void* qs, void* vs, void* q_final, void* v_final, uint32_t* status,
                        uint32_t* step_status, int on_device, float* kernel_ms);

/* Reverse mode of gradyn_cuda_rollout (backpropagation through time; every state of the forward
 * pass is kept on the GPU and each step is recomputed from its state). Inputs as for the rollout,
 * plus qs_bar (T+1, nq, B) and vs_bar (T+1, nv, B), the adjoints of the trajectory (either may be
 * null: zeros). Outputs: q0_bar (nq, B; ambient) and v0_bar (nv, B); taus_bar (T, nv, B) and
 * ctrls_bar (T, nu, B) when not null. kernel_ms (may be null): two numbers, the forward and the
 * reverse kernels' times. */
int gradyn_cuda_rollout_vjp(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                            const void* ctrls, const void* qs_bar, const void* vs_bar, void* q0_bar, void* v0_bar,
                            void* taus_bar, void* ctrls_bar, int on_device, float* kernel_ms);

#ifdef __cplusplus
}
#endif

#endif
