// The CUDA backend's C interface (gradyn/cuda/backend.h): models on the GPU, memory, copies and
// errors in words. The kernels are in rollout_kernel.cu and rollout_vjp_kernel_*.cu (kernels.hpp).
// Built into libgradyn_cuda.so when CMake finds nvcc.
#include "gradyn/cuda/backend.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace {

using gradyn::flat::FlatModel;
using gradyn::cuda::launch_rollout;
using gradyn::cuda::launch_rollout_vjp;

thread_local std::string g_last_error;

int fail(const std::string& message) {
  g_last_error = message;
  return 1;
}

// A CUDA call that failed, in words: what gradyn was doing and what CUDA said.
int cuda_fail(const char* doing, cudaError_t e) {
  return fail(std::string(doing) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")");
}

struct ModelHandle {
  int dtype = 0;  // 0 double, 1 float
  std::vector<std::int32_t> ints;  // host copy (the view's offsets are read from it)
  std::int32_t* d_ints = nullptr;
  void* d_reals = nullptr;
  int nb = 0, nq = 0, nv = 0, nu = 0;
};

template <class S>
FlatModel<S> device_view(const ModelHandle& h) {
  FlatModel<S> m = FlatModel<S>::view(h.ints.data(), nullptr);
  m.ints = h.d_ints;
  m.reals = static_cast<const S*>(h.d_reals);
  return m;
}

}  // namespace

template <class S>
FlatModel<S> gradyn::cuda::device_model_view(const void* handle) {
  return device_view<S>(*static_cast<const ModelHandle*>(handle));
}
template FlatModel<double> gradyn::cuda::device_model_view<double>(const void*);
template FlatModel<float> gradyn::cuda::device_model_view<float>(const void*);
int gradyn::cuda::device_model_dtype(const void* handle) { return static_cast<const ModelHandle*>(handle)->dtype; }

namespace {

// Device buffers of one call, freed when it returns.
struct Buffers {
  std::vector<void*> owned;
  ~Buffers() {
    for (void* p : owned) cudaFree(p);
  }
  void* get(std::size_t bytes, cudaError_t& e) {
    void* p = nullptr;
    e = cudaMalloc(&p, bytes);
    if (e == cudaSuccess) owned.push_back(p);
    return p;
  }
};

std::string gib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return s;
}

template <class S>
int rollout(const ModelHandle& h, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
            const void* ctrls, void* qs, void* vs, void* q_final, void* v_final, std::uint32_t* status,
            std::uint32_t* step_status, int on_device, float* kernel_ms) {
  const std::size_t nq = h.nq, nv = h.nv, nu = h.nu, b = B, t = T;
  // What this call puts on the GPU, to say how many worlds fit when it does not.
  const std::size_t per_world = sizeof(S) * ((nq + nv) + (taus && !on_device ? t * nv : 0) +
                                             (ctrls && !on_device ? t * nu : 0) +
                                             (qs && !on_device ? (t + 1) * nq : 0) + (vs && !on_device ? (t + 1) * nv : 0)) +
                                sizeof(std::uint32_t) * (1 + (step_status ? t : 0));
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e != cudaSuccess) return cuda_fail("reading the GPU's free memory", e);
  if (per_world * b > free_bytes)
    return fail("out of GPU memory: " + std::to_string(B) + " worlds x " + std::to_string(T) + " steps need " +
                gib(static_cast<double>(per_world * b)) + " on the GPU and " + gib(static_cast<double>(free_bytes)) +
                " are free: at most " + std::to_string(free_bytes / per_world) +
                " worlds fit (or keep only the final states, or split the steps into several calls)");
  Buffers buffers;
  auto alloc = [&](std::size_t count, auto* type_tag) {
    using T_ = std::remove_pointer_t<decltype(type_tag)>;
    return static_cast<T_*>(buffers.get(count * sizeof(T_), e));
  };
  S* d_q = alloc(nq * b, static_cast<S*>(nullptr));
  S* d_v = e == cudaSuccess ? alloc(nv * b, static_cast<S*>(nullptr)) : nullptr;
  std::uint32_t* d_status = e == cudaSuccess ? alloc(b, static_cast<std::uint32_t*>(nullptr)) : nullptr;
  std::uint32_t* d_step_status =
      e == cudaSuccess && step_status ? alloc(t * b, static_cast<std::uint32_t*>(nullptr)) : nullptr;
  if (e != cudaSuccess) return cuda_fail("allocating the state on the GPU", e);
  const cudaMemcpyKind in_kind = on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  if ((e = cudaMemcpy(d_q, q0, nq * b * sizeof(S), in_kind)) != cudaSuccess ||
      (e = cudaMemcpy(d_v, v0, nv * b * sizeof(S), in_kind)) != cudaSuccess)
    return cuda_fail("copying the initial states to the GPU", e);
  const S* d_taus = static_cast<const S*>(taus);
  const S* d_ctrls = static_cast<const S*>(ctrls);
  S* d_qs = static_cast<S*>(qs);
  S* d_vs = static_cast<S*>(vs);
  if (!on_device) {
    if (taus) {
      S* p = alloc(t * nv * b, static_cast<S*>(nullptr));
      if (e != cudaSuccess || (e = cudaMemcpy(p, taus, t * nv * b * sizeof(S), cudaMemcpyHostToDevice)) != cudaSuccess)
        return cuda_fail("copying taus to the GPU", e);
      d_taus = p;
    }
    if (ctrls) {
      S* p = alloc(t * nu * b, static_cast<S*>(nullptr));
      if (e != cudaSuccess || (e = cudaMemcpy(p, ctrls, t * nu * b * sizeof(S), cudaMemcpyHostToDevice)) != cudaSuccess)
        return cuda_fail("copying ctrls to the GPU", e);
      d_ctrls = p;
    }
    if (qs) d_qs = alloc((t + 1) * nq * b, static_cast<S*>(nullptr));
    if (vs && e == cudaSuccess) d_vs = alloc((t + 1) * nv * b, static_cast<S*>(nullptr));
    if (e != cudaSuccess) return cuda_fail("allocating the trajectories on the GPU", e);
  }
  if ((qs == nullptr) != (vs == nullptr)) return fail("qs and vs: record both trajectories or neither");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  e = launch_rollout<S>(device_view<S>(h), B, T, static_cast<S>(dt), d_q, d_v, d_taus, d_ctrls, d_qs, d_vs, d_status,
                         d_step_status);
  cudaEventRecord(stop);
  if (e == cudaSuccess) e = cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (e != cudaSuccess) return cuda_fail("running the rollout kernel", e);
  if (kernel_ms) *kernel_ms = ms;
  const cudaMemcpyKind out_kind = on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  if (!on_device && qs) {
    if ((e = cudaMemcpy(qs, d_qs, (t + 1) * nq * b * sizeof(S), cudaMemcpyDeviceToHost)) != cudaSuccess ||
        (e = cudaMemcpy(vs, d_vs, (t + 1) * nv * b * sizeof(S), cudaMemcpyDeviceToHost)) != cudaSuccess)
      return cuda_fail("copying the trajectories from the GPU", e);
  }
  if (q_final && (e = cudaMemcpy(q_final, d_q, nq * b * sizeof(S), out_kind)) != cudaSuccess)
    return cuda_fail("copying the final states from the GPU", e);
  if (v_final && (e = cudaMemcpy(v_final, d_v, nv * b * sizeof(S), out_kind)) != cudaSuccess)
    return cuda_fail("copying the final states from the GPU", e);
  if (status && (e = cudaMemcpy(status, d_status, b * sizeof(std::uint32_t), cudaMemcpyDeviceToHost)) != cudaSuccess)
    return cuda_fail("copying the status flags from the GPU", e);
  if (step_status &&
      (e = cudaMemcpy(step_status, d_step_status, t * b * sizeof(std::uint32_t), cudaMemcpyDeviceToHost)) != cudaSuccess)
    return cuda_fail("copying the status flags from the GPU", e);
  return 0;
}

template <class S>
int rollout_vjp(const ModelHandle& h, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                const void* ctrls, const void* qs_bar, const void* vs_bar, void* q0_bar, void* v0_bar, void* taus_bar,
                void* ctrls_bar, int on_device, float* kernel_ms) {
  const std::size_t nq = h.nq, nv = h.nv, nu = h.nu, b = B, t = T;
  const bool host = !on_device;
  // What this call puts on the GPU per world: the trajectory, and on the host path every array.
  const std::size_t per_world =
      sizeof(S) * ((t + 1) * (nq + nv) + (host ? (nq + nv) * 2 : 0) + (host && taus ? t * nv : 0) +
                   (host && ctrls ? t * nu : 0) + (host && qs_bar ? (t + 1) * nq : 0) +
                   (host && vs_bar ? (t + 1) * nv : 0) + (host && taus_bar ? t * nv : 0) +
                   (host && ctrls_bar ? t * nu : 0)) +
      sizeof(std::uint32_t);
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e != cudaSuccess) return cuda_fail("reading the GPU's free memory", e);
  if (per_world * b > free_bytes)
    return fail("out of GPU memory: the gradient of " + std::to_string(B) + " worlds x " + std::to_string(T) +
                " steps needs " + gib(static_cast<double>(per_world * b)) + " on the GPU (every state is kept) and " +
                gib(static_cast<double>(free_bytes)) + " are free: at most " + std::to_string(free_bytes / per_world) +
                " worlds fit (or split the horizon into several calls)");
  Buffers buffers;
  auto alloc = [&](std::size_t count) { return static_cast<S*>(buffers.get(count * sizeof(S), e)); };
  auto to_device = [&](const void* src, std::size_t count) -> const S* {
    if (!src || e != cudaSuccess) return static_cast<const S*>(src);
    if (!host) return static_cast<const S*>(src);
    S* p = alloc(count);
    if (e == cudaSuccess) e = cudaMemcpy(p, src, count * sizeof(S), cudaMemcpyHostToDevice);
    return p;
  };
  auto out_buffer = [&](void* dst, std::size_t count) -> S* {
    if (!dst || e != cudaSuccess) return static_cast<S*>(dst);
    return host ? alloc(count) : static_cast<S*>(dst);
  };
  S* d_qs = alloc((t + 1) * nq * b);
  S* d_vs = e == cudaSuccess ? alloc((t + 1) * nv * b) : nullptr;
  S* d_q = e == cudaSuccess ? alloc(nq * b) : nullptr;
  S* d_v = e == cudaSuccess ? alloc(nv * b) : nullptr;
  std::uint32_t* d_status = e == cudaSuccess ? static_cast<std::uint32_t*>(buffers.get(b * 4, e)) : nullptr;
  const cudaMemcpyKind in_kind = host ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
  if (e == cudaSuccess) e = cudaMemcpy(d_q, q0, nq * b * sizeof(S), in_kind);
  if (e == cudaSuccess) e = cudaMemcpy(d_v, v0, nv * b * sizeof(S), in_kind);
  const S* d_taus = to_device(taus, t * nv * b);
  const S* d_ctrls = to_device(ctrls, t * nu * b);
  const S* d_qs_bar = to_device(qs_bar, (t + 1) * nq * b);
  const S* d_vs_bar = to_device(vs_bar, (t + 1) * nv * b);
  S* d_q0_bar = out_buffer(q0_bar, nq * b);
  S* d_v0_bar = out_buffer(v0_bar, nv * b);
  S* d_taus_bar = out_buffer(taus_bar, t * nv * b);
  S* d_ctrls_bar = out_buffer(ctrls_bar, t * nu * b);
  if (e != cudaSuccess) return cuda_fail("putting the gradient's arrays on the GPU", e);
  cudaEvent_t ev[3];
  for (auto& x : ev) cudaEventCreate(&x);
  cudaEventRecord(ev[0]);
  e = launch_rollout<S>(device_view<S>(h), B, T, static_cast<S>(dt), d_q, d_v, d_taus, d_ctrls, d_qs, d_vs, d_status,
                         nullptr);
  cudaEventRecord(ev[1]);
  if (e == cudaSuccess)
    e = launch_rollout_vjp<S>(device_view<S>(h), B, T, static_cast<S>(dt), d_qs, d_vs, d_taus, d_ctrls, d_qs_bar,
                              d_vs_bar, d_q0_bar, d_v0_bar, d_taus_bar, d_ctrls_bar);
  cudaEventRecord(ev[2]);
  if (e == cudaSuccess) e = cudaEventSynchronize(ev[2]);
  float ms[2] = {0, 0};
  cudaEventElapsedTime(&ms[0], ev[0], ev[1]);
  cudaEventElapsedTime(&ms[1], ev[1], ev[2]);
  for (auto& x : ev) cudaEventDestroy(x);
  if (e != cudaSuccess) return cuda_fail("running the gradient kernels", e);
  if (kernel_ms) kernel_ms[0] = ms[0], kernel_ms[1] = ms[1];
  if (host) {
    auto back = [&](void* dst, const S* src, std::size_t count) {
      if (dst && e == cudaSuccess) e = cudaMemcpy(dst, src, count * sizeof(S), cudaMemcpyDeviceToHost);
    };
    back(q0_bar, d_q0_bar, nq * b);
    back(v0_bar, d_v0_bar, nv * b);
    back(taus_bar, d_taus_bar, t * nv * b);
    back(ctrls_bar, d_ctrls_bar, t * nu * b);
    if (e != cudaSuccess) return cuda_fail("copying the gradients from the GPU", e);
  }
  return 0;
}

}  // namespace

extern "C" {

const char* gradyn_cuda_last_error(void) { return g_last_error.c_str(); }

int gradyn_cuda_devices(int* count, char* name, int name_len, double* total_gib, double* free_gib) {
  *count = 0;
  cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess) {
    *count = 0;
    return cuda_fail("looking for a GPU", e);
  }
  if (*count == 0) return fail("looking for a GPU: CUDA sees none");
  cudaDeviceProp prop;
  if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) return cuda_fail("reading the GPU's properties", e);
  if (name && name_len > 0) {
    std::strncpy(name, prop.name, static_cast<std::size_t>(name_len) - 1);
    name[name_len - 1] = '\0';
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  if ((e = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess) return cuda_fail("reading the GPU's memory", e);
  if (total_gib) *total_gib = total_bytes / (1024.0 * 1024.0 * 1024.0);
  if (free_gib) *free_gib = free_bytes / (1024.0 * 1024.0 * 1024.0);
  return 0;
}

int gradyn_cuda_model_create(const int32_t* ints, int nints, const double* reals, int nreals, int dtype, void** handle) {
  *handle = nullptr;
  if (nints < gradyn::flat::kIntHeader || ints[0] != gradyn::flat::kMagic)
    return fail("not a gradyn flat model (wrong header)");
  if (ints[1] != gradyn::flat::kVersion)
    return fail("flat model version " + std::to_string(ints[1]) + ", this library reads version " +
                std::to_string(gradyn::flat::kVersion) + ": rebuild gradyn");
  if (dtype != 0 && dtype != 1) return fail("dtype: expected 0 (float64) or 1 (float32), got " + std::to_string(dtype));
  const FlatModel<double> view = FlatModel<double>::view(ints, reals);
  if (view.total_ints() != nints || view.total_reals() != nreals) return fail("flat model arrays of the wrong sizes");
  auto* h = new ModelHandle;
  h->dtype = dtype;
  h->ints.assign(ints, ints + nints);
  h->nb = view.nb, h->nq = view.nq, h->nv = view.nv, h->nu = view.nu;
  cudaError_t e = cudaMalloc(&h->d_ints, sizeof(int32_t) * nints);
  if (e == cudaSuccess) e = cudaMemcpy(h->d_ints, ints, sizeof(int32_t) * nints, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    if (dtype == 0) {
      e = cudaMalloc(&h->d_reals, sizeof(double) * nreals);
      if (e == cudaSuccess) e = cudaMemcpy(h->d_reals, reals, sizeof(double) * nreals, cudaMemcpyHostToDevice);
    } else {
      std::vector<float> f(reals, reals + nreals);
      e = cudaMalloc(&h->d_reals, sizeof(float) * nreals);
      if (e == cudaSuccess) e = cudaMemcpy(h->d_reals, f.data(), sizeof(float) * nreals, cudaMemcpyHostToDevice);
    }
  }
  if (e != cudaSuccess) {
    gradyn_cuda_model_destroy(h);
    return cuda_fail("copying the model to the GPU", e);
  }
  *handle = h;
  return 0;
}

void gradyn_cuda_model_destroy(void* handle) {
  auto* h = static_cast<ModelHandle*>(handle);
  if (!h) return;
  cudaFree(h->d_ints);
  cudaFree(h->d_reals);
  delete h;
}

int gradyn_cuda_rollout(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                        const void* ctrls, void* qs, void* vs, void* q_final, void* v_final, uint32_t* status,
                        uint32_t* step_status, int on_device, float* kernel_ms) {
  if (!model) return fail("no model");
  if (B < 1 || T < 0) return fail("B >= 1 worlds and T >= 0 steps expected, got B = " + std::to_string(B) +
                                  ", T = " + std::to_string(T));
  const auto& h = *static_cast<const ModelHandle*>(model);
  if (h.dtype == 0)
    return rollout<double>(h, B, T, dt, q0, v0, taus, ctrls, qs, vs, q_final, v_final, status, step_status, on_device,
                            kernel_ms);
  return rollout<float>(h, B, T, dt, q0, v0, taus, ctrls, qs, vs, q_final, v_final, status, step_status, on_device,
                        kernel_ms);
}

int gradyn_cuda_rollout_vjp(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                            const void* ctrls, const void* qs_bar, const void* vs_bar, void* q0_bar, void* v0_bar,
                            void* taus_bar, void* ctrls_bar, int on_device, float* kernel_ms) {
  if (!model) return fail("no model");
  if (B < 1 || T < 0) return fail("B >= 1 worlds and T >= 0 steps expected, got B = " + std::to_string(B) +
                                  ", T = " + std::to_string(T));
  const auto& h = *static_cast<const ModelHandle*>(model);
  if (h.dtype == 0)
    return rollout_vjp<double>(h, B, T, dt, q0, v0, taus, ctrls, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar,
                               on_device, kernel_ms);
  return rollout_vjp<float>(h, B, T, dt, q0, v0, taus, ctrls, qs_bar, vs_bar, q0_bar, v0_bar, taus_bar, ctrls_bar,
                            on_device, kernel_ms);
}

}  // extern "C"
