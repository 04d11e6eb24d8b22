// XLA FFI handlers: gradyn's GPU kernels as JAX operations that run on JAX's own CUDA stream and
// buffers, so that gradyn.jax.rollout(..., device="cuda") stays on the GPU inside jax.jit
// (python/gradyn/cuda.py registers them). Built when jaxlib's FFI headers are found at configure
// time. Layouts are the C interface's (gradyn/cuda/backend.h): world-last.
#include <string>

#include "kernels.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using gradyn::cuda::device_model_dtype;
using gradyn::cuda::device_model_view;

template <ffi::DataType T>
constexpr int kDtype = T == ffi::DataType::F64 ? 0 : 1;

ffi::Error cuda_error(const char* doing, cudaError_t e) {
  return ffi::Error::Internal(std::string("gradyn: ") + doing + ": " + cudaGetErrorString(e));
}

// Worlds and steps from q0 (nq, B) and taus (T, nv, B), checked against the model.
template <class S, class Q, class U>
ffi::Error dims(const gradyn::flat::FlatModel<S>& m, const Q& q0, const U& taus, int& B, int& T) {
  const auto qd = q0.dimensions();
  const auto td = taus.dimensions();
  if (qd.size() != 2 || td.size() != 3 || qd[0] != m.nq || td[1] != m.nv || td[2] != qd[1])
    return ffi::Error::InvalidArgument("gradyn: array shapes do not match the model (world-last layout expected)");
  B = static_cast<int>(qd[1]);
  T = static_cast<int>(td[0]);
  return ffi::Error::Success();
}

template <ffi::DataType D>
ffi::Error rollout(cudaStream_t stream, int64_t model, double dt, ffi::Buffer<D> q0, ffi::Buffer<D> v0,
                   ffi::Buffer<D> taus, ffi::Buffer<D> ctrls, ffi::ResultBuffer<D> qs, ffi::ResultBuffer<D> vs,
                   ffi::ResultBuffer<ffi::U32> status) {
  using S = ffi::NativeType<D>;
  const void* handle = reinterpret_cast<const void*>(model);
  if (device_model_dtype(handle) != kDtype<D>) return ffi::Error::InvalidArgument("gradyn: model of another dtype");
  const auto m = device_model_view<S>(handle);
  int B = 0, T = 0;
  if (ffi::Error e = dims(m, q0, taus, B, T); e.failure()) return e;
  // q0, v0 are read, never written (write_final = false): the trajectory holds every state.
  const cudaError_t e = gradyn::cuda::launch_rollout<S>(
      m, B, T, static_cast<S>(dt), const_cast<S*>(q0.typed_data()), const_cast<S*>(v0.typed_data()),
      taus.typed_data(), ctrls.typed_data(), qs->typed_data(), vs->typed_data(), status->typed_data(), nullptr, stream,
      /*write_final=*/false);
  return e == cudaSuccess ? ffi::Error::Success() : cuda_error("launching the rollout kernel", e);
}

template <ffi::DataType D>
ffi::Error rollout_vjp(cudaStream_t stream, int64_t model, double dt, ffi::Buffer<D> qs, ffi::Buffer<D> vs,
                       ffi::Buffer<D> taus, ffi::Buffer<D> ctrls, ffi::Buffer<D> qs_bar, ffi::Buffer<D> vs_bar,
                       ffi::ResultBuffer<D> q0_bar, ffi::ResultBuffer<D> v0_bar, ffi::ResultBuffer<D> taus_bar,
                       ffi::ResultBuffer<D> ctrls_bar) {
  using S = ffi::NativeType<D>;
  const void* handle = reinterpret_cast<const void*>(model);
  if (device_model_dtype(handle) != kDtype<D>) return ffi::Error::InvalidArgument("gradyn: model of another dtype");
  const auto m = device_model_view<S>(handle);
  int B = 0, T = 0;
  if (ffi::Error e = dims(m, *q0_bar, taus, B, T); e.failure()) return e;
  const cudaError_t e = gradyn::cuda::launch_rollout_vjp<S>(
      m, B, T, static_cast<S>(dt), qs.typed_data(), vs.typed_data(), taus.typed_data(), ctrls.typed_data(),
      qs_bar.typed_data(), vs_bar.typed_data(), q0_bar->typed_data(), v0_bar->typed_data(), taus_bar->typed_data(),
      ctrls_bar->typed_data(), stream);
  return e == cudaSuccess ? ffi::Error::Success() : cuda_error("launching the gradient kernel", e);
}

}  // namespace

#define GRADYN_ROLLOUT_BINDING(D)                                                                               \
  ffi::Ffi::Bind()                                                                                              \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                                \
      .Attr<int64_t>("model")                                                                                   \
      .Attr<double>("dt")                                                                                       \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<ffi::U32>>()
#define GRADYN_ROLLOUT_VJP_BINDING(D)                                                                           \
  ffi::Ffi::Bind()                                                                                              \
      .Ctx<ffi::PlatformStream<cudaStream_t>>()                                                                \
      .Attr<int64_t>("model")                                                                                   \
      .Attr<double>("dt")                                                                                       \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Arg<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()                                                                                    \
      .Ret<ffi::Buffer<D>>()

XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_f64, rollout<ffi::F64>, GRADYN_ROLLOUT_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_f32, rollout<ffi::F32>, GRADYN_ROLLOUT_BINDING(ffi::F32));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_vjp_f64, rollout_vjp<ffi::F64>, GRADYN_ROLLOUT_VJP_BINDING(ffi::F64));
XLA_FFI_DEFINE_HANDLER_SYMBOL(gradyn_xla_rollout_vjp_f32, rollout_vjp<ffi::F32>, GRADYN_ROLLOUT_VJP_BINDING(ffi::F32));
