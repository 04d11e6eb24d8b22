"""gradyn on a GPU: thousands of worlds of one model at once, one world per GPU thread.

``gradyn.rollout(model, q0, v0, taus, dt, ctrls=..., device="cuda")`` runs here. The kernels are the
flat per-world pipeline of ``include/gradyn/flat/`` (semi-implicit Euler; penalty or PGS contact, or
none; actuators, joint limits, damping and springs inside the step), the very source the CPU tests
compare against gradyn's own step, compiled by nvcc into ``libgradyn_cuda.so``. That library is
built when the CUDA toolkit (nvcc) is present at install time and is loaded only when a GPU is
asked for: a CPU-only install never needs CUDA.

Arrays: NumPy arrays are copied to the GPU and the results come back as NumPy arrays. PyTorch CUDA
tensors (and any GPU array that speaks DLPack, e.g. JAX or CuPy, through ``torch.from_dlpack``)
stay on the GPU: the results are PyTorch CUDA tensors, with no copy through the host.

What the GPU kernels do not run (interior-point contact, PGS's sweeps gradient, networks, ball or
planar joints, some geom pairs, PGS models over 32 bodies or 48 DoFs) is refused with a ValueError
that names it, before anything runs. Under PGS, each world keeps its warm start from step to step
as the CPU does, and the reverse differentiates each step from a cold start (as step_vjp does).
"""

from __future__ import annotations

import ctypes
import os
import pathlib

import numpy as np

__all__ = ["CudaError", "DeviceModel", "devices", "jax_rollout", "library_path", "rollout", "rollout_vjp"]

_DTYPES = {"float64": (0, np.float64), "float32": (1, np.float32)}


class CudaError(RuntimeError):
    """device='cuda' cannot run here: no CUDA backend in this install, no GPU, or the GPU said no
    (out of memory, a driver error). The message says which and what to do."""


def library_path() -> pathlib.Path | None:
    """Where libgradyn_cuda.so is: $GRADYN_CUDA_LIBRARY, else beside this file (an install built
    with nvcc puts it there); None when there is none."""
    env = os.environ.get("GRADYN_CUDA_LIBRARY")
    if env:
        return pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent / "libgradyn_cuda.so"
    return here if here.exists() else None


_lib = None


def _library():
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    if path is None or not path.exists():
        raise CudaError(
            "device='cuda' needs gradyn's CUDA backend, and this install has none: it is built when the "
            "CUDA toolkit's nvcc is found at install time. Install the CUDA toolkit and reinstall gradyn "
            "(bash scripts/setup.sh), or run on the CPU (device='cpu')"
            + (f" (GRADYN_CUDA_LIBRARY names {path}, which does not exist)" if path is not None else ""))
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise CudaError(f"device='cuda': cannot load gradyn's CUDA backend {path}: {e}") from None
    c = ctypes
    try:
        lib.gradyn_cuda_last_error.restype = c.c_char_p
        lib.gradyn_cuda_devices.argtypes = [c.POINTER(c.c_int), c.c_char_p, c.c_int, c.POINTER(c.c_double),
                                            c.POINTER(c.c_double)]
        lib.gradyn_cuda_model_create.argtypes = [c.c_void_p, c.c_int, c.c_void_p, c.c_int, c.c_int,
                                                 c.POINTER(c.c_void_p)]
        lib.gradyn_cuda_model_destroy.argtypes = [c.c_void_p]
        lib.gradyn_cuda_model_destroy.restype = None
        lib.gradyn_cuda_rollout.argtypes = [c.c_void_p, c.c_int, c.c_int, c.c_double] + [c.c_void_p] * 10 + [
            c.c_int, c.POINTER(c.c_float)]
        lib.gradyn_cuda_rollout_vjp.argtypes = [c.c_void_p, c.c_int, c.c_int, c.c_double] + [c.c_void_p] * 10 + [
            c.c_int, c.POINTER(c.c_float)]
    except AttributeError as e:  # a library from another gradyn version
        raise CudaError(f"device='cuda': gradyn's CUDA backend {path} does not match this gradyn ({e}); "
                        "reinstall gradyn (bash scripts/setup.sh)") from None
    _lib = lib
    return lib


def _check(lib, code: int, doing: str) -> None:
    if code != 0:
        raise CudaError(f"device='cuda': {doing}: {lib.gradyn_cuda_last_error().decode()}")


def devices() -> dict:
    """The GPU gradyn would use: {'count', 'name', 'total_gib', 'free_gib'}. Raises CudaError when
    there is no CUDA backend or no usable GPU, saying why."""
    lib = _library()
    count = ctypes.c_int(0)
    name = ctypes.create_string_buffer(256)
    total, free = ctypes.c_double(0), ctypes.c_double(0)
    code = lib.gradyn_cuda_devices(ctypes.byref(count), name, 256, ctypes.byref(total), ctypes.byref(free))
    if code != 0:
        raise CudaError("device='cuda': no usable GPU here (" + lib.gradyn_cuda_last_error().decode() +
                        "); run on the CPU (device='cpu')")
    return {"count": count.value, "name": name.value.decode(), "total_gib": total.value, "free_gib": free.value}


class DeviceModel:
    """A model on the GPU in one precision ('float64' or 'float32'), ready for rollouts of any
    number of worlds. Build it once (``DeviceModel(model)``) and pass it to ``rollout`` to skip the
    upload on each call."""

    def __init__(self, model=None, dtype: str = "float64", *, arrays=None):
        if dtype not in _DTYPES:
            raise ValueError(f"dtype: expected 'float64' or 'float32', got {dtype!r}")
        if arrays is None:
            from . import _core  # the flat arrays come from gradyn's model

            arrays = _core._flat_model(model)
        ints, reals = (np.ascontiguousarray(arrays[0], dtype=np.int32),
                       np.ascontiguousarray(arrays[1], dtype=np.float64))
        self.dtype = dtype
        self.nq, self.nv, self.nu = int(ints[3]), int(ints[4]), int(ints[5])
        self._handle = None
        lib = _library()
        devices()  # a clear error first when there is no GPU
        handle = ctypes.c_void_p()
        _check(lib, lib.gradyn_cuda_model_create(ints.ctypes.data, ints.size, reals.ctypes.data, reals.size,
                                                 _DTYPES[dtype][0], ctypes.byref(handle)),
               "copying the model to the GPU")
        self._lib, self._handle = lib, handle

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.gradyn_cuda_model_destroy(self._handle)
            self._handle = None


def check_options(integrator: str = "euler", **cpu_only) -> None:
    """Raises ValueError for what device='cuda' does not take: an integrator other than 'euler', or
    any of the CPU-only options given (cpu_only: name -> whether the caller set it)."""
    if integrator not in ("euler", "semi_implicit_euler"):
        raise ValueError(f"integrator: device='cuda' steps with 'euler' (semi-implicit Euler); {integrator!r} "
                         "runs on the CPU (device='cpu')")
    for name, given in cpu_only.items():
        if given:
            raise ValueError(f"{name}: not available with device='cuda' (the GPU runs the model as it is and keeps "
                             "every state); run it on the CPU (device='cpu')")


def _is_gpu_array(x) -> bool:
    if x is None or isinstance(x, np.ndarray):
        return False
    mod = type(x).__module__
    if mod.startswith("torch"):
        return x.is_cuda
    return hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2


def _check_fits(dm, B: int, T: int, per_world_numbers: int, what: str) -> None:
    """Raises CudaError, saying how many worlds fit, when B worlds of per_world_numbers scalars each
    (plus a status word) exceed the GPU's free memory; the library checks again before it allocates."""
    per_world = per_world_numbers * (8 if dm.dtype == "float64" else 4) + 4
    free = devices()["free_gib"] * 1024 ** 3
    if B * per_world > free:
        raise CudaError(f"device='cuda': out of GPU memory: {what} of {B} worlds x {T} steps needs "
                        f"{B * per_world / 1024 ** 3:.2f} GiB on the GPU and {free / 1024 ** 3:.2f} GiB are free: "
                        f"at most {int(free // per_world)} worlds fit (or keep only the final states, or split the "
                        "steps into several calls)")


def _shape_error(name, expected, got):
    return ValueError(f"{name}: expected shape {expected}, got {tuple(got)}")


def rollout(model, q0, v0, taus, dt: float, ctrls=None, *, dtype: str = "float64", return_status: bool = False,
            keep: str = "all", steps: int | None = None, timing: dict | None = None):
    """T steps of B worlds on the GPU (semi-implicit Euler). Arguments as gradyn.rollout: q0 (B, nq)
    or (nq,), v0 (B, nv) or (nv,), taus (B, T, nv) or (T, nv) or None, ctrls (B, T, nu) or (T, nu)
    or None (one of them sets T; with neither, steps=T runs T steps of zero torques and controls).
    model: a gradyn.Model or a DeviceModel.
    dtype: 'float64' or 'float32' (the GPU's fast precision; a DeviceModel brings its own).

    Returns (qs, vs): (B, T + 1, nq) and (B, T + 1, nv) (without B for one world); keep='final'
    returns only the final states (B, nq) and (B, nv) (no trajectory is stored: the most worlds
    per GPU). return_status=True adds status: (B, T) uint32, entry t the gradyn.Status flags step t
    raised, as gradyn.rollout gives them; with keep='final', (B,), each world's flags of all its steps
    together. A world that diverges flags itself; the others are untouched. timing: a dict that
    receives 'kernel_s', the GPU time of the kernel alone."""
    if keep not in ("all", "final"):
        raise ValueError(f"keep: expected 'all' or 'final', got {keep!r}")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive finite time step [s], got {dt}")
    dm = model if isinstance(model, DeviceModel) else DeviceModel(model, dtype)
    on_gpu = any(_is_gpu_array(x) for x in (q0, v0, taus, ctrls))
    if on_gpu:
        return _rollout_torch(dm, q0, v0, taus, dt, ctrls, return_status, keep, steps, timing)
    np_dtype = _DTYPES[dm.dtype][1]
    q0 = np.asarray(q0, dtype=np_dtype)
    single = q0.ndim == 1
    batch = (lambda x: None if x is None else np.asarray(x, dtype=np_dtype)[None]) if single else (
        lambda x: None if x is None else np.asarray(x, dtype=np_dtype))
    q0, v0, taus, ctrls = batch(q0), batch(v0), batch(taus), batch(ctrls)
    B, T = _check_shapes(dm, q0, v0, taus, ctrls, steps)
    _check_fits(dm, B, T, (dm.nq + dm.nv) * (1 if keep == "final" else T + 2) + T * (
        (dm.nv if taus is not None else 0) + (dm.nu if ctrls is not None else 0)), "a rollout")
    world_last = lambda x: None if x is None else np.ascontiguousarray(np.moveaxis(x, 0, -1))  # noqa: E731
    q0_, v0_, taus_, ctrls_ = world_last(q0), world_last(v0), world_last(taus), world_last(ctrls)
    status = np.zeros(B, dtype=np.uint32)
    step_status = np.zeros((T, B), dtype=np.uint32) if return_status and keep == "all" else None
    if keep == "all":
        qs = np.empty((T + 1, dm.nq, B), dtype=np_dtype)
        vs = np.empty((T + 1, dm.nv, B), dtype=np_dtype)
        qf = vf = None
    else:
        qs = vs = None
        qf = np.empty((dm.nq, B), dtype=np_dtype)
        vf = np.empty((dm.nv, B), dtype=np_dtype)
    ptr = lambda x: None if x is None else x.ctypes.data  # noqa: E731
    ms = ctypes.c_float(0)
    _check(dm._lib, dm._lib.gradyn_cuda_rollout(dm._handle, B, T, float(dt), ptr(q0_), ptr(v0_), ptr(taus_),
                                                ptr(ctrls_), ptr(qs), ptr(vs), ptr(qf), ptr(vf), ptr(status),
                                                ptr(step_status), 0, ctypes.byref(ms)),
           f"rolling out {B} worlds x {T} steps")
    if timing is not None:
        timing["kernel_s"] = ms.value / 1e3
    if keep == "all":
        out = (np.moveaxis(qs, -1, 0), np.moveaxis(vs, -1, 0))  # (B, T+1, n)
    else:
        out = (np.ascontiguousarray(qf.T), np.ascontiguousarray(vf.T))
    return _finish(out, single, return_status, status, step_status)


def _finish(out, single, return_status, status, step_status):
    if single:
        out = (out[0][0], out[1][0])
    if not return_status:
        return out
    flags = status if step_status is None else np.ascontiguousarray(step_status.T)  # (B,) or (B, T)
    return out + (flags[0] if single else flags,)


def _check_shapes(dm, q0, v0, taus, ctrls, steps=None):
    B = q0.shape[0]
    if tuple(q0.shape) != (B, dm.nq):
        raise _shape_error("q0", f"(B, {dm.nq})", q0.shape)
    if tuple(v0.shape) != (B, dm.nv):
        raise _shape_error("v0", f"({B}, {dm.nv})", v0.shape)
    if taus is None and ctrls is None:
        if steps is None:
            raise ValueError("taus and ctrls: give at least one (it sets the number of steps T), or steps=T")
        T = int(steps)
    else:
        T = (taus if taus is not None else ctrls).shape[1]
    if steps is not None and int(steps) != T:
        raise ValueError(f"steps: {steps}, but taus or ctrls hold {T} steps")
    if taus is not None and tuple(taus.shape) != (B, T, dm.nv):
        raise _shape_error("taus", f"({B}, T, {dm.nv})", taus.shape)
    if ctrls is not None and tuple(ctrls.shape) != (B, T, dm.nu):
        raise _shape_error("ctrls", f"({B}, {T}, {dm.nu}) (model.nu = {dm.nu} controls per step)", ctrls.shape)
    return B, T


def _rollout_torch(dm, q0, v0, taus, dt, ctrls, return_status, keep, steps, timing):
    import torch

    tdtype = torch.float64 if dm.dtype == "float64" else torch.float32

    def on_gpu(x):
        if x is None:
            return None
        t = x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)
        if not t.is_cuda:
            t = t.cuda()
        return t.to(tdtype)

    q0, v0, taus, ctrls = on_gpu(q0), on_gpu(v0), on_gpu(taus), on_gpu(ctrls)
    single = q0.dim() == 1
    if single:
        q0, v0 = q0[None], v0[None]
        taus = None if taus is None else taus[None]
        ctrls = None if ctrls is None else ctrls[None]
    B, T = _check_shapes(dm, q0, v0, taus, ctrls, steps)
    _check_fits(dm, B, T, (dm.nq + dm.nv) * (2 if keep == "final" else T + 2), "a rollout")
    world_last = lambda x: None if x is None else x.movedim(0, -1).contiguous()  # noqa: E731
    q0_, v0_, taus_, ctrls_ = world_last(q0), world_last(v0), world_last(taus), world_last(ctrls)
    dev = q0_.device
    if keep == "all":
        qs = torch.empty((T + 1, dm.nq, B), dtype=tdtype, device=dev)
        vs = torch.empty((T + 1, dm.nv, B), dtype=tdtype, device=dev)
        qf = vf = None
    else:
        qs = vs = None
        qf = torch.empty((dm.nq, B), dtype=tdtype, device=dev)
        vf = torch.empty((dm.nv, B), dtype=tdtype, device=dev)
    status = np.zeros(B, dtype=np.uint32)
    step_status = np.zeros((T, B), dtype=np.uint32) if return_status and keep == "all" else None
    ptr = lambda x: None if x is None else x.data_ptr()  # noqa: E731
    torch.cuda.synchronize(dev)  # the inputs are ready before the backend's own stream reads them
    ms = ctypes.c_float(0)
    _check(dm._lib, dm._lib.gradyn_cuda_rollout(dm._handle, B, T, float(dt), ptr(q0_), ptr(v0_), ptr(taus_),
                                                ptr(ctrls_), ptr(qs), ptr(vs), ptr(qf), ptr(vf),
                                                status.ctypes.data,
                                                None if step_status is None else step_status.ctypes.data, 1,
                                                ctypes.byref(ms)),
           f"rolling out {B} worlds x {T} steps")
    if timing is not None:
        timing["kernel_s"] = ms.value / 1e3
    out = (qs.movedim(-1, 0), vs.movedim(-1, 0)) if keep == "all" else (qf.T.contiguous(), vf.T.contiguous())
    return _finish(out, single, return_status, status, step_status)


def rollout_vjp(model, q0, v0, taus, dt: float, qs_bar, vs_bar, ctrls=None, *, dtype: str = "float64",
                steps: int | None = None, timing: dict | None = None, max_snapshots: int = 0):
    """Reverse mode of rollout on the GPU (backpropagation through time, each step's forward pass
    recomputed from its state): the arguments of rollout, plus qs_bar (B, T + 1, nq) and vs_bar
    (B, T + 1, nv), the gradients of a loss with respect to the arrays rollout returns (either may
    be None: zeros; without B for one world).

    Memory: by default every state of the T steps is kept on the GPU. max_snapshots = k >= 2 keeps
    k states instead (the initial one and one every ceil(T / k) steps, from a forward pass that
    stores nothing else) and recomputes one segment of ceil(T / k) steps at a time in the reverse
    pass: GPU memory for about k + T / k states, one more forward pass of compute. (The CPU's
    max_snapshots is binomial checkpointing; this is its two-level form.) The numbers are those of
    the default under penalty contact or none; under PGS each segment's solves start from zero
    impulses, so the gradient is that of a rollout whose warm start restarts at every snapshot
    (a difference of the order of the PGS tolerance per segment).

    Returns (q0_bar, v0_bar, taus_bar, None, ctrls_bar) as gradyn.rollout_vjp returns them
    (ctrls_bar only when ctrls is given): q0_bar is ambient, taus_bar (B, T, nv), ctrls_bar
    (B, T, nu). The fourth entry, the model parameters' gradient, is None: the GPU does not
    compute it (gradyn.rollout_vjp on the CPU does). timing: receives 'forward_s' and 'reverse_s',
    the GPU times of the forward and reverse kernels (summed over segments)."""
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive finite time step [s], got {dt}")
    dm = model if isinstance(model, DeviceModel) else DeviceModel(model, dtype)
    if max_snapshots:
        return _checkpointed_rollout_vjp(dm, q0, v0, taus, dt, qs_bar, vs_bar, ctrls, steps, timing, max_snapshots)
    if any(_is_gpu_array(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar)):
        return _rollout_vjp_torch(dm, q0, v0, taus, dt, qs_bar, vs_bar, ctrls, steps, timing)
    np_dtype = _DTYPES[dm.dtype][1]
    single = np.asarray(q0).ndim == 1
    batch = (lambda x: None if x is None else np.asarray(x, dtype=np_dtype)[None]) if single else (
        lambda x: None if x is None else np.asarray(x, dtype=np_dtype))
    q0, v0, taus, ctrls, qs_bar, vs_bar = (batch(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    B, T = _check_shapes(dm, q0, v0, taus, ctrls, steps)
    _check_adjoint_shapes(dm, B, T, qs_bar, vs_bar)
    _check_fits(dm, B, T, (T + 1) * (dm.nq + dm.nv) * (1 + (qs_bar is not None or vs_bar is not None))
                + 3 * (dm.nq + dm.nv) + T * (2 * dm.nv + 2 * dm.nu), "the gradient")
    world_last = lambda x: None if x is None else np.ascontiguousarray(np.moveaxis(x, 0, -1))  # noqa: E731
    args = [world_last(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar)]
    q0_bar = np.empty((dm.nq, B), dtype=np_dtype)
    v0_bar = np.empty((dm.nv, B), dtype=np_dtype)
    taus_bar = np.empty((T, dm.nv, B), dtype=np_dtype)
    ctrls_bar = np.empty((T, dm.nu, B), dtype=np_dtype) if ctrls is not None else None
    ptr = lambda x: None if x is None else x.ctypes.data  # noqa: E731
    ms = (ctypes.c_float * 2)()
    _check(dm._lib, dm._lib.gradyn_cuda_rollout_vjp(dm._handle, B, T, float(dt), *(ptr(x) for x in args),
                                                    ptr(q0_bar), ptr(v0_bar), ptr(taus_bar), ptr(ctrls_bar), 0, ms),
           f"the gradient of {B} worlds x {T} steps")
    if timing is not None:
        timing["forward_s"], timing["reverse_s"] = ms[0] / 1e3, ms[1] / 1e3
    out = [q0_bar.T, v0_bar.T, np.moveaxis(taus_bar, -1, 0), None]
    if ctrls_bar is not None:
        out.append(np.moveaxis(ctrls_bar, -1, 0))
    if single:
        out = [None if x is None else x[0] for x in out]
    return tuple(np.ascontiguousarray(x) if x is not None else None for x in out)


def _checkpointed_rollout_vjp(dm, q0, v0, taus, dt, qs_bar, vs_bar, ctrls, steps, timing, max_snapshots):
    """rollout_vjp with max_snapshots states kept (see there): segments of ceil(T / k) steps, each
    recomputed from its snapshot and reversed with the adjoint of its last state carried in from
    the segment after it. Works on NumPy arrays and on GPU tensors alike (the calls it makes do)."""
    if isinstance(max_snapshots, bool) or not isinstance(max_snapshots, (int, np.integer)) or max_snapshots < 2:
        raise ValueError(f"max_snapshots: expected an integer >= 2 (the states kept on the GPU), or 0 to keep "
                         f"every state; got {max_snapshots!r}")
    gpu = any(_is_gpu_array(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    if gpu:
        import torch

        tdtype = torch.float64 if dm.dtype == "float64" else torch.float32
        as_array = lambda x: None if x is None else (  # noqa: E731
            x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)).cuda().to(tdtype)
        zeros = lambda shape, like: torch.zeros(shape, dtype=tdtype, device=like.device)  # noqa: E731
        concat = lambda xs: torch.cat(xs, dim=1)  # noqa: E731
        copy = lambda x: x.clone()  # noqa: E731
    else:
        np_dtype = _DTYPES[dm.dtype][1]
        as_array = lambda x: None if x is None else np.asarray(x, dtype=np_dtype)  # noqa: E731
        zeros = lambda shape, like: np.zeros(shape, dtype=np_dtype)  # noqa: E731
        concat = lambda xs: np.concatenate(xs, axis=1)  # noqa: E731
        copy = lambda x: x.copy()  # noqa: E731
    q0, v0, taus, ctrls, qs_bar, vs_bar = (as_array(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    single = q0.ndim == 1
    if single:
        q0, v0, taus, ctrls, qs_bar, vs_bar = (None if x is None else x[None]
                                               for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    B, T = _check_shapes(dm, q0, v0, taus, ctrls, steps)
    _check_adjoint_shapes(dm, B, T, qs_bar, vs_bar)
    length = -(-T // int(max_snapshots))
    bounds = [(s, min(T, s + length)) for s in range(0, T, length)]
    seg = lambda x, s, e: None if x is None else x[:, s:e]  # noqa: E731
    forward_s = reverse_s = 0.0
    snapshots = [(q0, v0)]
    for s, e in bounds[:-1]:  # the forward pass keeps only the segments' first states
        t = {}
        snapshots.append(rollout(dm, *snapshots[-1], seg(taus, s, e), dt, seg(ctrls, s, e), keep="final", steps=e - s,
                                 timing=t))
        forward_s += t["kernel_s"]
    q_carry = copy(qs_bar[:, T]) if qs_bar is not None else zeros((B, dm.nq), q0)
    v_carry = copy(vs_bar[:, T]) if vs_bar is not None else zeros((B, dm.nv), q0)
    taus_parts, ctrls_parts = [], []
    for (s, e), (qa, va) in zip(reversed(bounds), reversed(snapshots)):
        qb = concat([qs_bar[:, s:e], q_carry[:, None]]) if qs_bar is not None else concat(
            [zeros((B, e - s, dm.nq), q0), q_carry[:, None]])
        vb = concat([vs_bar[:, s:e], v_carry[:, None]]) if vs_bar is not None else concat(
            [zeros((B, e - s, dm.nv), q0), v_carry[:, None]])
        t = {}
        out = rollout_vjp(dm, qa, va, seg(taus, s, e), dt, qb, vb, seg(ctrls, s, e), steps=e - s, timing=t)
        forward_s += t["forward_s"]
        reverse_s += t["reverse_s"]
        q_carry, v_carry = out[0], out[1]
        taus_parts.append(out[2])
        if ctrls is not None:
            ctrls_parts.append(out[4])
    if timing is not None:
        timing["forward_s"], timing["reverse_s"] = forward_s, reverse_s
    result = [q_carry, v_carry, concat(taus_parts[::-1]), None]
    if ctrls is not None:
        result.append(concat(ctrls_parts[::-1]))
    if single:
        result = [None if x is None else x[0] for x in result]
    return tuple(result)


def _check_adjoint_shapes(dm, B, T, qs_bar, vs_bar):
    if qs_bar is not None and tuple(qs_bar.shape) != (B, T + 1, dm.nq):
        raise _shape_error("qs_bar", f"({B}, {T + 1}, {dm.nq}) (one row per state, the initial one first)",
                           qs_bar.shape)
    if vs_bar is not None and tuple(vs_bar.shape) != (B, T + 1, dm.nv):
        raise _shape_error("vs_bar", f"({B}, {T + 1}, {dm.nv}) (one row per state, the initial one first)",
                           vs_bar.shape)


def _rollout_vjp_torch(dm, q0, v0, taus, dt, qs_bar, vs_bar, ctrls, steps, timing):
    import torch

    tdtype = torch.float64 if dm.dtype == "float64" else torch.float32

    def on_gpu(x):
        if x is None:
            return None
        t = x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)
        return (t if t.is_cuda else t.cuda()).to(tdtype)

    q0, v0, taus, ctrls, qs_bar, vs_bar = (on_gpu(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    single = q0.dim() == 1
    if single:
        q0, v0, taus, ctrls, qs_bar, vs_bar = (None if x is None else x[None]
                                               for x in (q0, v0, taus, ctrls, qs_bar, vs_bar))
    B, T = _check_shapes(dm, q0, v0, taus, ctrls, steps)
    _check_adjoint_shapes(dm, B, T, qs_bar, vs_bar)
    _check_fits(dm, B, T, (T + 1) * (dm.nq + dm.nv) * 3 + 3 * (dm.nq + dm.nv) + T * (2 * dm.nv + 2 * dm.nu),
                "the gradient")
    world_last = lambda x: None if x is None else x.movedim(0, -1).contiguous()  # noqa: E731
    args = [world_last(x) for x in (q0, v0, taus, ctrls, qs_bar, vs_bar)]
    dev = args[0].device
    q0_bar = torch.empty((dm.nq, B), dtype=tdtype, device=dev)
    v0_bar = torch.empty((dm.nv, B), dtype=tdtype, device=dev)
    taus_bar = torch.empty((T, dm.nv, B), dtype=tdtype, device=dev)
    ctrls_bar = torch.empty((T, dm.nu, B), dtype=tdtype, device=dev) if ctrls is not None else None
    ptr = lambda x: None if x is None else x.data_ptr()  # noqa: E731
    torch.cuda.synchronize(dev)
    ms = (ctypes.c_float * 2)()
    _check(dm._lib, dm._lib.gradyn_cuda_rollout_vjp(dm._handle, B, T, float(dt), *(ptr(x) for x in args),
                                                    ptr(q0_bar), ptr(v0_bar), ptr(taus_bar), ptr(ctrls_bar), 1, ms),
           f"the gradient of {B} worlds x {T} steps")
    if timing is not None:
        timing["forward_s"], timing["reverse_s"] = ms[0] / 1e3, ms[1] / 1e3
    out = [q0_bar.T.contiguous(), v0_bar.T.contiguous(), taus_bar.movedim(-1, 0).contiguous(), None]
    if ctrls_bar is not None:
        out.append(ctrls_bar.movedim(-1, 0).contiguous())
    if single:
        out = [None if x is None else x[0] for x in out]
    return tuple(out)


# --- JAX: the kernels as XLA FFI calls on JAX's stream and buffers -----------------------------------

_jax_targets = set()
_jax_models = []  # device models referenced by traced JAX computations: kept for the process's life


def _register_jax_targets(lib, suffix: str) -> None:
    import jax

    for name in (f"gradyn_xla_rollout_{suffix}", f"gradyn_xla_rollout_vjp_{suffix}"):
        if name in _jax_targets:
            continue
        try:
            handler = getattr(lib, name)
        except AttributeError:
            raise CudaError("device='cuda' with JAX needs gradyn's CUDA backend built with JAX's FFI headers (jaxlib "
                            "installed when gradyn was built); reinstall gradyn with jax present, or use "
                            "gradyn.rollout(device='cuda') (NumPy) or gradyn.torch") from None
        # (a host stand-in of the library, tests/python/host_backend, registers for JAX's CPU)
        platform = "CUDA"
        if hasattr(lib, "gradyn_cuda_jax_platform"):
            lib.gradyn_cuda_jax_platform.restype = ctypes.c_char_p
            platform = lib.gradyn_cuda_jax_platform().decode()
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(handler), platform=platform)
        _jax_targets.add(name)


def jax_rollout(model, q0, v0, taus, dt: float, ctrls=None, *, dtype: str | None = None):
    """Differentiable rollout of B worlds on the GPU as a JAX operation (jax.custom_vjp over two XLA
    FFI calls on JAX's own CUDA stream and buffers: nothing leaves the GPU, and it works under
    jax.jit and jax.grad). q0 (B, nq), v0 (B, nv), taus (B, T, nv), ctrls (B, T, nu) or None;
    returns (qs (B, T+1, nq), vs (B, T+1, nv)). dtype: the kernels' precision, by default the
    inputs' (float64 needs jax_enable_x64). model: a gradyn.Model or a DeviceModel (kept alive for
    the process, since compiled JAX functions refer to it)."""
    import jax
    import jax.numpy as jnp

    q0, v0, taus = jnp.asarray(q0), jnp.asarray(v0), jnp.asarray(taus)
    if dtype is None:
        dtype = "float64" if jnp.result_type(q0, v0, taus) == jnp.float64 else "float32"
    dm = model if isinstance(model, DeviceModel) else DeviceModel(model, dtype)
    if dm.dtype != dtype:
        raise ValueError(f"dtype: {dtype!r}, but the DeviceModel computes in {dm.dtype!r}")
    _jax_models.append(dm)
    suffix = "f64" if dm.dtype == "float64" else "f32"
    _register_jax_targets(dm._lib, suffix)
    jdt = jnp.float64 if dm.dtype == "float64" else jnp.float32
    B, T = q0.shape[0], taus.shape[1]
    if ctrls is None:
        ctrls = jnp.zeros((B, T, dm.nu), dtype=jdt)
    ctrls = jnp.asarray(ctrls)
    _check_shapes(dm, q0, v0, taus, ctrls)
    attrs = dict(model=np.int64(dm._handle.value), dt=np.float64(dt))
    last = lambda x: jnp.moveaxis(x.astype(jdt), 0, -1)  # noqa: E731  (B, ...) -> (..., B)
    first = lambda x: jnp.moveaxis(x, -1, 0)  # noqa: E731
    sds = jax.ShapeDtypeStruct

    def forward(q0, v0, taus, ctrls):
        qs, vs, _ = jax.ffi.ffi_call(f"gradyn_xla_rollout_{suffix}", (
            sds((T + 1, dm.nq, B), jdt), sds((T + 1, dm.nv, B), jdt), sds((B,), jnp.uint32)))(
                last(q0), last(v0), last(taus), last(ctrls), **attrs)
        return qs, vs

    @jax.custom_vjp
    def run(q0, v0, taus, ctrls):
        qs, vs = forward(q0, v0, taus, ctrls)
        return first(qs), first(vs)

    dtypes = (q0.dtype, v0.dtype, taus.dtype, ctrls.dtype)  # the gradients' (each input's own)

    def run_fwd(q0, v0, taus, ctrls):
        qs, vs = forward(q0, v0, taus, ctrls)
        return (first(qs), first(vs)), (qs, vs, last(taus), last(ctrls))

    def run_bwd(res, g):
        qs, vs, taus_, ctrls_ = res
        q0b, v0b, tb, cb = jax.ffi.ffi_call(f"gradyn_xla_rollout_vjp_{suffix}", (
            sds((dm.nq, B), jdt), sds((dm.nv, B), jdt), sds((T, dm.nv, B), jdt), sds((T, dm.nu, B), jdt)))(
                qs, vs, taus_, ctrls_, last(g[0]), last(g[1]), **attrs)
        return tuple(first(x).astype(d) for x, d in zip((q0b, v0b, tb, cb), dtypes))

    run.defvjp(run_fwd, run_bwd)
    return run(q0, v0, taus, ctrls)
