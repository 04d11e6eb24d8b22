// A stand-in for libgradyn_cuda.so that runs on the CPU: the same C interface
// (gradyn/cuda/backend.h) and the same per-world code (gradyn/flat/rollout.hpp), one world after
// the other on host memory. tests/python/test_cuda.py compiles it, so that gradyn.cuda's Python
// side (shapes, layouts, dtypes, errors) is tested on machines without a GPU. It is no backend
// for users: device='cuda' never loads it unless GRADYN_CUDA_LIBRARY names it.
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gradyn/cuda/backend.h"
#include "gradyn/flat/rollout.hpp"

namespace {
thread_local std::string g_error;
struct Handle {
  int dtype;
  std::vector<int32_t> ints;
  std::vector<double> reals_d;
  std::vector<float> reals_f;
};

template <class S, class R>
int run(const Handle& h, const R& reals, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
        const void* ctrls, void* qs, void* vs, void* q_final, void* v_final, uint32_t* status, uint32_t* step_status) {
  const auto m = gradyn::flat::FlatModel<S>::view(h.ints.data(), reals.data());
  std::vector<S> q(static_cast<const S*>(q0), static_cast<const S*>(q0) + m.nq * B);
  std::vector<S> v(static_cast<const S*>(v0), static_cast<const S*>(v0) + m.nv * B);
  auto ws = std::make_unique<gradyn::flat::StepWorkspace<S, 64, 96, 96>>();
  for (int w = 0; w < B; ++w)
    status[w] = gradyn::flat::rollout_world(m, *ws, B, T, static_cast<S>(dt), w, q.data(), v.data(),
                                            static_cast<const S*>(taus), static_cast<const S*>(ctrls),
                                            static_cast<S*>(qs), static_cast<S*>(vs), step_status);
  if (q_final) std::memcpy(q_final, q.data(), sizeof(S) * q.size());
  if (v_final) std::memcpy(v_final, v.data(), sizeof(S) * v.size());
  return 0;
}
template <class S, class R>
int run_vjp(const Handle& h, const R& reals, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
            const void* ctrls, const void* qs_bar, const void* vs_bar, void* q0_bar, void* v0_bar, void* taus_bar,
            void* ctrls_bar) {
  const auto m = gradyn::flat::FlatModel<S>::view(h.ints.data(), reals.data());
  std::vector<S> q(static_cast<const S*>(q0), static_cast<const S*>(q0) + m.nq * B);
  std::vector<S> v(static_cast<const S*>(v0), static_cast<const S*>(v0) + m.nv * B);
  std::vector<S> qs(static_cast<std::size_t>(T + 1) * m.nq * B), vs(static_cast<std::size_t>(T + 1) * m.nv * B);
  auto ws = std::make_unique<gradyn::flat::StepWorkspace<S, 64, 96, 96>>();
  auto wsb = std::make_unique<gradyn::flat::StepVjpWorkspace<S, 64, 96, 96>>();
  for (int w = 0; w < B; ++w) {
    gradyn::flat::rollout_world(m, *ws, B, T, static_cast<S>(dt), w, q.data(), v.data(), static_cast<const S*>(taus),
                                static_cast<const S*>(ctrls), qs.data(), vs.data(), nullptr);
    gradyn::flat::rollout_vjp_world(m, *wsb, B, T, static_cast<S>(dt), w, qs.data(), vs.data(),
                                    static_cast<const S*>(taus), static_cast<const S*>(ctrls),
                                    static_cast<const S*>(qs_bar), static_cast<const S*>(vs_bar),
                                    static_cast<S*>(q0_bar), static_cast<S*>(v0_bar), static_cast<S*>(taus_bar),
                                    static_cast<S*>(ctrls_bar));
  }
  return 0;
}
}  // namespace

extern "C" {
const char* gradyn_cuda_last_error(void) { return g_error.c_str(); }

int gradyn_cuda_devices(int* count, char* name, int name_len, double* total_gib, double* free_gib) {
  *count = 1;
  std::strncpy(name, "host stand-in (tests/python/host_backend)", name_len - 1);
  name[name_len - 1] = '\0';
  *total_gib = *free_gib = 4;  // a pretend GPU of 4 GiB (the memory checks of gradyn.cuda are tested with it)
  return 0;
}

int gradyn_cuda_model_create(const int32_t* ints, int nints, const double* reals, int nreals, int dtype, void** handle) {
  auto* h = new Handle{dtype, std::vector<int32_t>(ints, ints + nints), {}, {}};
  h->reals_d.assign(reals, reals + nreals);
  h->reals_f.assign(reals, reals + nreals);
  *handle = h;
  return 0;
}

void gradyn_cuda_model_destroy(void* handle) { delete static_cast<Handle*>(handle); }

int gradyn_cuda_rollout(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                        const void* ctrls, void* qs, void* vs, void* q_final, void* v_final, uint32_t* status,
                        uint32_t* step_status, int on_device, float* kernel_ms) {
  if (on_device) {
    g_error = "the host stand-in takes host memory only";
    return 1;
  }
  const Handle& h = *static_cast<Handle*>(model);
  const auto start = std::chrono::steady_clock::now();
  const int code =
      h.dtype == 0
          ? run<double>(h, h.reals_d, B, T, dt, q0, v0, taus, ctrls, qs, vs, q_final, v_final, status, step_status)
          : run<float>(h, h.reals_f, B, T, dt, q0, v0, taus, ctrls, qs, vs, q_final, v_final, status, step_status);
  if (kernel_ms)  // the CPU time of the loop, as the GPU reports its kernel's
    *kernel_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  return code;
}

int gradyn_cuda_rollout_vjp(void* model, int B, int T, double dt, const void* q0, const void* v0, const void* taus,
                            const void* ctrls, const void* qs_bar, const void* vs_bar, void* q0_bar, void* v0_bar,
                            void* taus_bar, void* ctrls_bar, int on_device, float* kernel_ms) {
  if (on_device) {
    g_error = "the host stand-in takes host memory only";
    return 1;
  }
  const Handle& h = *static_cast<Handle*>(model);
  const auto start = std::chrono::steady_clock::now();
  const int code = h.dtype == 0 ? run_vjp<double>(h, h.reals_d, B, T, dt, q0, v0, taus, ctrls, qs_bar, vs_bar, q0_bar,
                                                  v0_bar, taus_bar, ctrls_bar)
                                : run_vjp<float>(h, h.reals_f, B, T, dt, q0, v0, taus, ctrls, qs_bar, vs_bar, q0_bar,
                                                 v0_bar, taus_bar, ctrls_bar);
  if (kernel_ms) {  // (forward and reverse together, in the second slot)
    kernel_ms[0] = 0;
    kernel_ms[1] = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  return code;
}
}

#ifdef GRADYN_HOST_JAX
// The XLA FFI handlers of src/cuda/xla_ffi.cu, on host buffers (registered for JAX's CPU platform
// by gradyn.cuda, which asks gradyn_cuda_jax_platform where to register them).
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {
template <ffi::DataType D>
ffi::Error host_rollout(int64_t model, double dt, ffi::Buffer<D> q0, ffi::Buffer<D> v0, ffi::Buffer<D> taus,
                        ffi::Buffer<D> ctrls, ffi::ResultBuffer<D> qs, ffi::ResultBuffer<D> vs,
                        ffi::ResultBuffer<ffi::U32> status) {
  using S = ffi::NativeType<D>;
  const Handle& h = *reinterpret_cast<const Handle*>(model);
  const int B = static_cast<int>(q0.dimensions()[1]), T = static_cast<int>(taus.dimensions()[0]);
  std::vector<S> reals(h.reals_d.begin(), h.reals_d.end());
  const auto m = gradyn::flat::FlatModel<S>::view(h.ints.data(), reals.data());
  auto ws = std::make_unique<gradyn::flat::StepWorkspace<S, 64, 96, 96>>();
  for (int w = 0; w < B; ++w)
    status->typed_data()[w] = gradyn::flat::rollout_world(
        m, *ws, B, T, static_cast<S>(dt), w, const_cast<S*>(q0.typed_data()), const_cast<S*>(v0.typed_data()),
        taus.typed_data(), ctrls.typed_data(), qs->typed_data(), vs->typed_data(), nullptr, false);
  return ffi::Error::Success();
}

template <ffi::DataType D>
ffi::Error host_rollout_vjp(int64_t model, double dt, ffi::Buffer<D> qs, ffi::Buffer<D> vs, ffi::Buffer<D> taus,
                            ffi::Buffer<D> ctrls, ffi::Buffer<D> qs_bar, ffi::Buffer<D> vs_bar,
                            ffi::ResultBuffer<D> q0_bar, ffi::ResultBuffer<D> v0_bar, ffi::ResultBuffer<D> taus_bar,
                            ffi::ResultBuffer<D> ctrls_bar) {
  using S = ffi::NativeType<D>;
  const Handle& h = *reinterpret_cast<const Handle*>(model);
  const int B = static_cast<int>(q0_bar->dimensions()[1]), T = static_cast<int>(taus.dimensions()[0]);
  std::vector<S> reals(h.reals_d.begin(), h.reals_d.end());
  const auto m = gradyn::flat::FlatModel<S>::view(h.ints.data(), reals.data());
  auto ws = std::make_unique<gradyn::flat::StepVjpWorkspace<S, 64, 96, 96>>();
  for (int w = 0; w < B; ++w)
    gradyn::flat::rollout_vjp_world(m, *ws, B, T, static_cast<S>(dt), w, qs.typed_data(), vs.typed_data(),
                                    taus.typed_data(), ctrls.typed_data(), qs_bar.typed_data(), vs_bar.typed_data(),
                                    q0_bar->typed_data(), v0_bar->typed_data(), taus_bar->typed_data(),
                                    ctrls_bar->typed_data());
  return ffi::Error::Success();
}
}  // namespace

#define HOST_ROLLOUT(D)                                                                                           \
  ffi::Ffi::Bind().Attr<int64_t>("model").Attr<double>("dt").Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>()        \
      .Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>().Ret<ffi::Buffer<D>>().Ret<ffi::Buffer<D>>()                    \
      .Ret<ffi::Buffer<ffi::U32>>()
#define HOST_ROLLOUT_VJP(D)                                                                                       \
  ffi::Ffi::Bind().Attr<int64_t>("model").Attr<double>("dt").Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>()        \
      .Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>().Arg<ffi::Buffer<D>>()                    \
      .Ret<ffi::Buffer<D>>().Ret<ffi::Buffer<D>>().Ret<ffi::Buffer<D>>().Ret<ffi::Buffer<D>>()

XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_f64, host_rollout<ffi::F64>, HOST_ROLLOUT(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_f32, host_rollout<ffi::F32>, HOST_ROLLOUT(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_vjp_f64, host_rollout_vjp<ffi::F64>, HOST_ROLLOUT_VJP(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_vjp_f32, host_rollout_vjp<ffi::F32>, HOST_ROLLOUT_VJP(ffi::F32));

extern "C" const char* gradyn_cuda_jax_platform(void) { return "cpu"; }
#endif
