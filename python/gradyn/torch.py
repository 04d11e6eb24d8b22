"""PyTorch bridge: gradyn.step, gradyn.rollout, gradyn.sensors and a gradyn.Policy's closed loop
(``policy_rollout``) as differentiable torch operations. ::

    import gradyn, gradyn.torch
    model = gradyn.load("pendulum2.urdf")
    p = torch.tensor(model.params, requires_grad=True)
    qs, vs = gradyn.torch.rollout(model, q0, v0, taus, dt=0.01, params=p)
    loss = (qs[-1] - target).square().sum()
    loss.backward()            # gradients in q0.grad, v0.grad, taus.grad, p.grad

Rules:

* Differentiable inputs: q, v, the torques (tau / taus) and the flat parameter vector ``params``
  (layout ``model.param_names``). ``params=None`` uses the model as it is; otherwise the model is
  rebuilt with ``model.with_params(params)`` (cached: an unchanged vector is not rebuilt, and a
  vector equal to ``model.params`` uses the model itself). dt, the integrator and the model are
  not differentiable.
* dtype: float32 and float64 tensors are accepted; the C++ core computes in float64 and the
  results are cast back to the inputs' promoted dtype (gradients to each input's own dtype).
  Other dtypes (integers) are converted to torch's default floating dtype.
* device: tensors on any device work; they are copied to the CPU for the C++ call and results
  come back on the device of q. ``rollout(..., device="cuda")`` instead runs gradyn's GPU backend
  (gradyn.cuda): CUDA tensors stay on the GPU in both passes, and the kernels compute in the
  inputs' precision (float32 or float64); ``params`` must then be None.
* batch: one optional leading batch dimension. A batch of B worlds has q (B, nq), v (B, nv),
  tau (B, nv) for ``step`` and q0 (B, nq), v0 (B, nv), taus (B, T, nv) for ``rollout``;
  ``params`` is (nparams,) for all worlds or (B, nparams) for one vector per world. An input
  without the batch dimension is shared by every world (its gradient is the sum over worlds).
  The worlds are simulated one after another in C++.
* q adjoints are ambient: one gradient entry per number of q (quaternion components included),
  as gradyn.step_vjp / gradyn.rollout_vjp return them, exact in every direction (finite
  differences that perturb single entries, off the unit sphere, agree). The dynamics and
  integrate read a quaternion normalised, so its adjoint has no component along it. Joint-axis parameters
  are normalised by ``model.with_params``, so their adjoint has no component along the axis.
* Gradients are first order (the backward pass is itself not differentiable).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from . import _bridge

__all__ = ["CudaRolloutFunction", "PolicyRolloutFunction", "RolloutFunction", "SensorsFunction", "StepFunction",
           "policy_rollout", "rollout", "sensors", "step"]


def _numpy(t):
    return None if t is None else t.detach().to(device="cpu", dtype=torch.float64).numpy()


def _tensor(array, like: torch.Tensor, dtype: torch.dtype):
    return torch.as_tensor(np.ascontiguousarray(array), device=like.device).to(dtype)


def _grad(array, input_: torch.Tensor | None, needed: bool):
    if not needed or input_ is None or array is None:
        return None
    return _tensor(array, input_, input_.dtype)


def _result_dtype(*tensors):
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t is not None:
            dtype = torch.promote_types(dtype, t.dtype)
    return dtype


class StepFunction(torch.autograd.Function):
    """One time step for a batch of worlds: apply(model, q (B, nq), v (B, nv), tau (B, nv),
    params (B, nparams) or None, dt, integrator[, ctrl (B, nu) or None]) -> (q_next (B, nq),
    v_next (B, nv), status (B,)), status the gradyn.Status bits of each world's step (int32, not
    differentiable); ctrl: the actuators' controls.

    All tensors share the batch size B; the friendly wrapper :func:`step` broadcasts for you.
    """

    @staticmethod
    def forward(ctx, model, q, v, tau, params, dt, integrator, *ctrl_arg):
        ctrl = ctrl_arg[0] if ctrl_arg else None
        q_next, v_next, status = _bridge.step_forward(model, _numpy(q), _numpy(v), _numpy(tau), _numpy(params),
                                                      dt, integrator, ctrl=_numpy(ctrl))
        ctx.save_for_backward(q, v, tau, params, ctrl)
        ctx.handle, ctx.dt, ctx.integrator = _bridge.ModelHandle(model), dt, integrator
        ctx.ctrl_arg = bool(ctrl_arg)
        dtype = _result_dtype(q, v, tau, params, ctrl)
        status = _tensor(status.astype(np.int32), q, torch.int32)
        ctx.mark_non_differentiable(status)
        return _tensor(q_next, q, dtype), _tensor(v_next, q, dtype), status

    @staticmethod
    @once_differentiable
    def backward(ctx, q_next_bar, v_next_bar, status_bar):
        q, v, tau, params, ctrl = ctx.saved_tensors
        q_next_bar = torch.zeros_like(q) if q_next_bar is None else q_next_bar
        v_next_bar = torch.zeros_like(v) if v_next_bar is None else v_next_bar
        grads = _bridge.step_backward(
            ctx.handle.model, _numpy(q), _numpy(v), _numpy(tau), _numpy(params), ctx.dt, ctx.integrator,
            _numpy(q_next_bar), _numpy(v_next_bar), ctrl=_numpy(ctrl))
        q_bar, v_bar, tau_bar, params_bar = grads[:4]
        needs = ctx.needs_input_grad
        out = (None, _grad(q_bar, q, needs[1]), _grad(v_bar, v, needs[2]), _grad(tau_bar, tau, needs[3]),
               _grad(params_bar, params, needs[4]), None, None)
        if ctx.ctrl_arg:
            out += (None if ctrl is None else _grad(grads[4], ctrl, needs[7]),)
        return out


class SensorsFunction(torch.autograd.Function):
    """The model's sensors for a batch of worlds: apply(model, q (B, nq), v (B, nv), tau (B, nv), dt,
    integrator[, ctrl (B, nu) or None]) -> readings (B, model.nsensordata), differentiable w.r.t. q, v,
    tau and ctrl (gradyn.sensors_vjp). dt may be None when no sensor reads a step."""

    @staticmethod
    def forward(ctx, model, q, v, tau, dt, integrator, *ctrl_arg):
        ctrl = ctrl_arg[0] if ctrl_arg else None
        from . import sensors as _sensors
        readings = _sensors(model, _numpy(q), _numpy(v), tau=_numpy(tau), dt=dt, ctrl=_numpy(ctrl),
                            integrator=integrator)
        ctx.save_for_backward(q, v, tau, ctrl)
        ctx.handle, ctx.dt, ctx.integrator, ctx.ctrl_arg = _bridge.ModelHandle(model), dt, integrator, bool(ctrl_arg)
        return _tensor(readings, q, _result_dtype(q, v, tau, ctrl))

    @staticmethod
    @once_differentiable
    def backward(ctx, readings_bar):
        from . import sensors_vjp as _sensors_vjp
        q, v, tau, ctrl = ctx.saved_tensors
        grads = _sensors_vjp(ctx.handle.model, _numpy(q), _numpy(v), _numpy(readings_bar), tau=_numpy(tau),
                             dt=ctx.dt, ctrl=_numpy(ctrl), integrator=ctx.integrator)
        needs = ctx.needs_input_grad
        out = (None, _grad(grads[0], q, needs[1]), _grad(grads[1], v, needs[2]), _grad(grads[2], tau, needs[3]),
               None, None)
        if ctx.ctrl_arg:
            out += (None if ctrl is None else _grad(grads[3], ctrl, needs[6]),)
        return out


class RolloutFunction(torch.autograd.Function):
    """T time steps for a batch of worlds: apply(model, q0 (B, nq), v0 (B, nv), taus (B, T, nv),
    params (B, nparams) or None, dt, integrator, max_snapshots[, ctrls (B, T, nu) or None]) -> (qs (B, T+1, nq),
    vs (B, T+1, nv), status (B, T)), row 0 the initial state; status the gradyn.Status bits of each
    step (int32, not differentiable).

    max_snapshots: 0 keeps every state for the backward pass; k > 0 keeps at most k per world
    and recomputes the rest (for long horizons).
    """

    @staticmethod
    def forward(ctx, model, q0, v0, taus, params, dt, integrator, max_snapshots, *ctrls_arg):
        ctrls = ctrls_arg[0] if ctrls_arg else None
        qs, vs, status = _bridge.rollout_forward(model, _numpy(q0), _numpy(v0), _numpy(taus), _numpy(params),
                                                 dt, integrator, ctrls=_numpy(ctrls))
        ctx.save_for_backward(q0, v0, taus, params, ctrls)
        ctx.ctrls_arg = bool(ctrls_arg)
        ctx.handle = _bridge.ModelHandle(model)
        ctx.dt, ctx.integrator, ctx.max_snapshots = dt, integrator, max_snapshots
        # The float64 trajectory is the backward pass's checkpoints (no forward re-run), unless
        # the caller asked for bounded memory.
        ctx.states = (qs, vs) if max_snapshots == 0 else (None, None)
        dtype = _result_dtype(q0, v0, taus, params, ctrls)
        status = _tensor(status.astype(np.int32), q0, torch.int32)
        ctx.mark_non_differentiable(status)
        return _tensor(qs, q0, dtype), _tensor(vs, q0, dtype), status

    @staticmethod
    @once_differentiable
    def backward(ctx, qs_bar, vs_bar, status_bar):
        q0, v0, taus, params, ctrls = ctx.saved_tensors
        horizon = taus.shape[-2]
        if qs_bar is None:
            qs_bar = q0.new_zeros(q0.shape[:-1] + (horizon + 1, q0.shape[-1]))
        if vs_bar is None:
            vs_bar = v0.new_zeros(v0.shape[:-1] + (horizon + 1, v0.shape[-1]))
        grads = _bridge.rollout_backward(
            ctx.handle.model, _numpy(q0), _numpy(v0), _numpy(taus), _numpy(params), ctx.dt, ctx.integrator,
            _numpy(qs_bar), _numpy(vs_bar), ctx.max_snapshots, *ctx.states, ctrls=_numpy(ctrls))
        q0_bar, v0_bar, taus_bar, params_bar = grads[:4]
        needs = ctx.needs_input_grad
        out = (None, _grad(q0_bar, q0, needs[1]), _grad(v0_bar, v0, needs[2]),
               _grad(taus_bar, taus, needs[3]), _grad(params_bar, params, needs[4]), None, None, None)
        if ctx.ctrls_arg:
            out += (None if ctrls is None else _grad(grads[4], ctrls, needs[8]),)
        return out


class CudaRolloutFunction(torch.autograd.Function):
    """T time steps of a batch of worlds on gradyn's GPU backend: apply(device_model, q0 (B, nq),
    v0 (B, nv), taus (B, T, nv), dt, ctrls (B, T, nu) or None) -> (qs (B, T+1, nq), vs (B, T+1, nv)).
    The backward pass is gradyn.cuda.rollout_vjp (every state kept on the GPU). CUDA tensors never
    leave the GPU; CPU tensors go through NumPy (e.g. with a host stand-in of the backend)."""

    @staticmethod
    def forward(ctx, device_model, q0, v0, taus, dt, ctrls):
        from . import cuda

        qs, vs = cuda.rollout(device_model, *(_native(x) for x in (q0, v0, taus)), dt, _native(ctrls))
        ctx.save_for_backward(q0, v0, taus, ctrls)
        ctx.device_model, ctx.dt = device_model, dt
        return _like(qs, q0), _like(vs, q0)

    @staticmethod
    @once_differentiable
    def backward(ctx, qs_bar, vs_bar):
        from . import cuda

        q0, v0, taus, ctrls = ctx.saved_tensors
        grads = cuda.rollout_vjp(ctx.device_model, *(_native(x) for x in (q0, v0, taus)), ctx.dt, _native(qs_bar),
                                 _native(vs_bar), _native(ctrls))
        needs = ctx.needs_input_grad
        ctrls_bar = grads[4] if ctrls is not None else None
        return (None, _grad_like(grads[0], q0, needs[1]), _grad_like(grads[1], v0, needs[2]),
                _grad_like(grads[2], taus, needs[3]), None, _grad_like(ctrls_bar, ctrls, needs[5]))


def _native(t):
    """A CUDA tensor as it is (the GPU backend reads it in place), anything else as NumPy."""
    if t is None:
        return None
    return t.detach() if t.is_cuda else t.detach().numpy()


def _like(x, ref: torch.Tensor):
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.ascontiguousarray(x), device=ref.device)


def _grad_like(x, input_, needed: bool):
    if not needed or x is None or input_ is None:
        return None
    return _like(x, input_).to(input_.dtype)


def _as_float_tensor(x, name: str, device=None):
    t = torch.as_tensor(x, device=device)
    if t.is_complex():  # before the conversion below, which would drop the imaginary part
        raise TypeError(f"{name}: expected real numbers, got a complex tensor ({t.dtype}); pass its real part")
    if not t.is_floating_point():
        t = t.to(torch.get_default_dtype())
    return t


def _batched(named: dict):
    """Broadcast inputs to one leading batch dimension.

    named: name -> (tensor or None, per-world ndim). Returns (batch size or None when nothing is
    batched, dict of tensors each with a leading batch dimension).
    """
    batch = None
    batch_from = None
    for name, (t, item_ndim) in named.items():
        if t is None:
            continue
        if t.dim() == item_ndim + 1:
            if batch is not None and t.shape[0] != batch:
                raise ValueError(f"batch sizes differ: {batch_from} has {batch} worlds, {name} has {t.shape[0]}")
            batch, batch_from = t.shape[0], name
        elif t.dim() != item_ndim:
            raise ValueError(f"{name}: expected {item_ndim} dimension(s), or {item_ndim + 1} with a leading "
                             f"batch dimension, got shape {tuple(t.shape)}")
    size = 1 if batch is None else batch
    out = {}
    for name, (t, item_ndim) in named.items():
        if t is None or t.dim() == item_ndim + 1:
            out[name] = t
        else:
            out[name] = t.unsqueeze(0).expand((size,) + tuple(t.shape))
    return batch, out


def _params(params, device):
    return None if params is None else _as_float_tensor(params, "params", device)


def step(model, q, v, tau, dt: float, params=None, integrator: str = "euler", return_status: bool = False,
         ctrl=None):
    """Differentiable :func:`gradyn.step`: returns (q_next, v_next) as tensors.

    q (nq,), v (nv,), tau (nv,) or with a leading batch dimension B (see the module docstring);
    tau None: zeros; params: None or the flat parameter vector (nparams,) / (B, nparams);
    ctrl: None or the actuators' controls (nu,) / (B, nu) (model.actuator_names), differentiable.
    return_status: also return status, an int32 tensor of shape () or (B,) holding the
    gradyn.Status bits of each world's step (0: all went well; numerical trouble never raises).
    """
    q = _as_float_tensor(q, "q")
    v = _as_float_tensor(v, "v", q.device)
    # tau None: no generalised forces (zeros shared by every world), as in gradyn.step.
    tau = torch.zeros(model.nv, dtype=v.dtype, device=q.device) if tau is None else \
        _as_float_tensor(tau, "tau", q.device)
    params = _params(params, q.device)
    ctrl = None if ctrl is None else _as_float_tensor(ctrl, "ctrl", q.device)
    _bridge.check_sizes(model, {"q": (q.shape, "nq"), "v": (v.shape, "nv"), "tau": (tau.shape, "nv"),
                                "params": (None if params is None else params.shape, "nparams"),
                                "ctrl": (None if ctrl is None else ctrl.shape, "nu")})
    batch, t = _batched({"q": (q, 1), "v": (v, 1), "tau": (tau, 1), "params": (params, 1), "ctrl": (ctrl, 1)})
    out = StepFunction.apply(model, t["q"], t["v"], t["tau"], t["params"], float(dt), integrator, t["ctrl"])
    if batch is None:
        out = tuple(x[0] for x in out)
    return out if return_status else out[:2]


def sensors(model, q, v, tau=None, dt=None, ctrl=None, integrator: str = "euler"):
    """Differentiable :func:`gradyn.sensors`: the readings (model.nsensordata,) or (B, nsensordata).

    q (nq,), v (nv,), tau (nv,) or None (zeros), ctrl (nu,) or None, each optionally with a leading
    batch dimension B; gradients flow into q, v, tau and ctrl (gradyn.sensors_vjp: sensors of (q, v)
    give tau and ctrl none; an accelerometer's flows through the step; touch readings are not
    differentiated). dt: the step's length, needed when an accelerometer or touch sensor reads a step.
    """
    q = _as_float_tensor(q, "q")
    v = _as_float_tensor(v, "v", q.device)
    tau = torch.zeros(model.nv, dtype=v.dtype, device=q.device) if tau is None else \
        _as_float_tensor(tau, "tau", q.device)
    ctrl = None if ctrl is None else _as_float_tensor(ctrl, "ctrl", q.device)
    _bridge.check_sizes(model, {"q": (q.shape, "nq"), "v": (v.shape, "nv"), "tau": (tau.shape, "nv"),
                                "ctrl": (None if ctrl is None else ctrl.shape, "nu")})
    batch, t = _batched({"q": (q, 1), "v": (v, 1), "tau": (tau, 1), "ctrl": (ctrl, 1)})
    dt = None if dt is None else float(dt)
    out = SensorsFunction.apply(model, t["q"], t["v"], t["tau"], dt, integrator, t["ctrl"])
    return out if batch is not None else out[0]


def rollout(model, q0, v0, taus, dt: float, params=None, integrator: str = "euler", max_snapshots: int = 0,
            return_status: bool = False, ctrls=None, device: str = "cpu"):
    """Differentiable :func:`gradyn.rollout`: returns (qs, vs), shapes (T+1, nq), (T+1, nv), row 0
    the initial state; with a batch dimension (B, T+1, nq), (B, T+1, nv).

    q0 (nq,), v0 (nv,), taus (T, nv) or with a leading batch dimension B (None: zeros, T from ctrls);
    params: None or the flat parameter vector (nparams,) / (B, nparams);
    ctrls: None or the actuators' controls (T, nu) / (B, T, nu), differentiable.
    max_snapshots: memory/compute trade-off of the backward pass (0: keep every state).
    return_status: also return status, an int32 tensor of shape (T,) or (B, T) holding the
    gradyn.Status bits of each step (0: all went well; numerical trouble never raises).
    device: 'cpu' (gradyn's C++ engine, the default) or 'cuda' (gradyn's GPU backend, gradyn.cuda:
    CUDA tensors stay on the GPU, the kernels compute in the inputs' dtype; params must be None,
    the integrator 'euler', and return_status and max_snapshots are CPU options).
    """
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        return _rollout_cuda(model, q0, v0, taus, dt, params, integrator, max_snapshots, return_status, ctrls)
    q0 = _as_float_tensor(q0, "q0")
    v0 = _as_float_tensor(v0, "v0", q0.device)
    params = _params(params, q0.device)
    ctrls = None if ctrls is None else _as_float_tensor(ctrls, "ctrls", q0.device)
    # taus None: no generalised forces, one zero row per step of ctrls (as in gradyn.rollout).
    steps = _bridge.steps_without_taus(taus, None if ctrls is None else ctrls.shape)
    taus = torch.zeros(steps, model.nv, dtype=v0.dtype, device=q0.device) if taus is None else \
        _as_float_tensor(taus, "taus", q0.device)
    _bridge.check_sizes(model, {"q0": (q0.shape, "nq"), "v0": (v0.shape, "nv"), "taus": (taus.shape, "nv"),
                                "params": (None if params is None else params.shape, "nparams"),
                                "ctrls": (None if ctrls is None else ctrls.shape, "nu")})
    batch, t = _batched({"q0": (q0, 1), "v0": (v0, 1), "taus": (taus, 2), "params": (params, 1),
                         "ctrls": (ctrls, 2)})
    out = RolloutFunction.apply(model, t["q0"], t["v0"], t["taus"], t["params"], float(dt), integrator,
                                int(max_snapshots), t["ctrls"])
    if batch is None:
        out = tuple(x[0] for x in out)
    return out if return_status else out[:2]


def _rollout_cuda(model, q0, v0, taus, dt, params, integrator, max_snapshots, return_status, ctrls):
    from . import cuda

    cuda.check_options(integrator, params=params is not None, max_snapshots=max_snapshots != 0,
                       return_status=bool(return_status))
    q0 = _as_float_tensor(q0, "q0")
    v0 = _as_float_tensor(v0, "v0", q0.device)
    ctrls = None if ctrls is None else _as_float_tensor(ctrls, "ctrls", q0.device)
    steps = _bridge.steps_without_taus(taus, None if ctrls is None else ctrls.shape)
    taus = torch.zeros(steps, model.nv, dtype=v0.dtype, device=q0.device) if taus is None else \
        _as_float_tensor(taus, "taus", q0.device)
    _bridge.check_sizes(model, {"q0": (q0.shape, "nq"), "v0": (v0.shape, "nv"), "taus": (taus.shape, "nv"),
                                "ctrls": (None if ctrls is None else ctrls.shape, "nu")})
    batch, t = _batched({"q0": (q0, 1), "v0": (v0, 1), "taus": (taus, 2), "ctrls": (ctrls, 2)})
    dtype = _result_dtype(t["q0"], t["v0"], t["taus"], t["ctrls"])
    dtype = dtype if dtype in (torch.float32, torch.float64) else torch.float64
    cast = lambda x: None if x is None else x.to(dtype).contiguous()  # noqa: E731
    device_model = cuda.DeviceModel(model, "float64" if dtype == torch.float64 else "float32")
    qs, vs = CudaRolloutFunction.apply(device_model, cast(t["q0"]), cast(t["v0"]), cast(t["taus"]), float(dt),
                                       cast(t["ctrls"]))
    return (qs[0], vs[0]) if batch is None else (qs, vs)


class PolicyRolloutFunction(torch.autograd.Function):
    """A gradyn.Policy's closed loop as a torch operation: (weights, q0, v0, task) -> (qs, vs, ctrls),
    the backward pass by Policy.rollout_vjp (one reverse sweep in C++, decayed by `decay`)."""

    @staticmethod
    def forward(ctx, weights, q0, v0, task, policy, steps, dt, decay, integrator, threads, clip_norm):
        w, q, v = _numpy(weights), _numpy(q0), _numpy(v0)
        t = _numpy(task)
        qs, vs, ctrls, _ = policy.rollout(q, v, steps, dt, weights=w, task=t, integrator=integrator,
                                          threads=threads)
        # Through a handle, as the other Functions hold their model: released at exit, so a graph
        # still alive then does not make nanobind report the policy's model as leaked.
        ctx.handle = _bridge.ModelHandle(policy)
        ctx.dt, ctx.decay, ctx.integrator, ctx.threads, ctx.clip_norm = dt, decay, integrator, threads, clip_norm
        ctx.arrays = (w, t, qs, vs)
        ctx.save_for_backward(weights, q0, v0, task)
        dtype = _result_dtype(weights, q0, v0)
        return _tensor(qs, q0, dtype), _tensor(vs, q0, dtype), _tensor(ctrls, q0, dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, qs_bar, vs_bar, ctrls_bar):
        w, t, qs, vs = ctx.arrays
        zeros = lambda g, a: np.zeros_like(a) if g is None else _numpy(g)  # noqa: E731
        grads = ctx.handle.model.rollout_vjp(qs, vs, zeros(qs_bar, qs), zeros(vs_bar, vs), ctx.dt, weights=w,
                                             task=t, ctrls_bar=None if ctrls_bar is None else _numpy(ctrls_bar),
                                             decay=ctx.decay, reduce="sum", integrator=ctx.integrator,
                                             threads=ctx.threads, clip_norm=ctx.clip_norm)
        out = []
        for key, input_ in zip(("weights", "q0", "v0", "task"), ctx.saved_tensors):
            g = None if input_ is None else np.asarray(grads[key])
            if g is not None and g.shape != tuple(input_.shape):  # shared by the worlds: summed
                g = g.reshape((-1,) + tuple(input_.shape)).sum(axis=0)
            out.append(_grad(g, input_, ctx.needs_input_grad[len(out)]))
        return tuple(out) + (None,) * 7


def policy_rollout(policy, q0, v0, steps: int, dt: float, weights=None, task=None, decay: float = 1.0,
                   integrator: str = "euler", threads: int | None = None, clip_norm: float = 0.0):
    """Differentiable gradyn.Policy rollout: returns (qs, vs, ctrls) tensors, shapes (T+1, nq),
    (T+1, nv), (T, nu), with a leading B when q0 is (B, nq). Differentiable with respect to the
    weights ((P,) shared or (B, P); None: policy.weights, not differentiated), q0, v0 and task
    ((k,) or (B, k)); decay < 1 multiplies the adjoint carried back one step by it (paper 002);
    clip_norm > 0 clips its norm (see Policy.rollout_vjp). Worlds whose trajectory diverged get zero gradients (see Policy.rollout_vjp)."""
    q0 = _as_float_tensor(q0, "q0")
    v0 = _as_float_tensor(v0, "v0", q0.device)
    weights = torch.as_tensor(policy.weights, dtype=torch.float64) if weights is None else \
        _as_float_tensor(weights, "weights", q0.device)
    task = None if task is None else _as_float_tensor(task, "task", q0.device)
    qs, vs, ctrls = PolicyRolloutFunction.apply(weights, q0, v0, task, policy, int(steps), float(dt), float(decay),
                                                integrator, threads, float(clip_norm))
    return qs, vs, ctrls


# The ray-cast camera (gradyn.render): differentiable w.r.t. q, the flat parameters (geom sizes and
# origins, joint origins and axes), the camera's pos and quat, the colours, the textures and the
# background. The geom each pixel sees is held fixed: silhouette edges give no gradient.
__all__ += ["RenderFunction", "render"]


class RenderFunction(torch.autograd.Function):
    """apply(model, camera, appearance, texture_names, q (B, nq), params or None, camera_pos (3,),
    camera_quat (4,), colors (ngeom, 3), background (3,), ``*textures``) -> images (B, H, W, 3). camera and
    appearance (gradyn.Camera, gradyn.Appearance) give everything else; the tensors replace their
    values. The backward pass is gradyn.render_vjp."""

    @staticmethod
    def forward(ctx, model, camera, appearance, texture_names, q, params, pos, quat, colors, background, *textures):
        from .render import Appearance, Camera, render as _render

        m = _bridge.MODELS.model_for(model, _numpy(params))
        cam = Camera(camera.width, camera.height, camera.fovy, _numpy(pos), _numpy(quat), camera.body)
        look = Appearance(colors=_numpy(colors), textures=dict(zip(texture_names, (_numpy(t) for t in textures))),
                          tiles=appearance.tiles, background=_numpy(background), lighting=appearance.lighting,
                          light_dir=appearance.light_dir, ambient=appearance.ambient, diffuse=appearance.diffuse)
        images = _render(m, _numpy(q), cam, look)
        ctx.save_for_backward(q, params, pos, quat, colors, background, *textures)
        ctx.handle, ctx.camera, ctx.look, ctx.names = _bridge.ModelHandle(m), cam, look, texture_names
        return _tensor(images, q, _result_dtype(q, pos, colors, *textures))

    @staticmethod
    @once_differentiable
    def backward(ctx, images_bar):
        from .render import render_vjp as _render_vjp

        q, params, pos, quat, colors, background, *textures = ctx.saved_tensors
        g = _render_vjp(ctx.handle.model, _numpy(q), ctx.camera, _numpy(images_bar), ctx.look)
        needs = ctx.needs_input_grad
        out = [None, None, None, None, _grad(g["q"], q, needs[4]), _grad(g["params"], params, needs[5]),
               _grad(g["camera_pos"], pos, needs[6]), _grad(g["camera_quat"], quat, needs[7]),
               _grad(g["colors"], colors, needs[8]), _grad(g["background"], background, needs[9])]
        out += [_grad(g["textures"][n], t, needs[10 + k]) for k, (n, t) in enumerate(zip(ctx.names, textures))]
        return tuple(out)


def render(model, q, camera, appearance=None, params=None, camera_pos=None, camera_quat=None, colors=None,
           textures=None, background=None):
    """Differentiable :func:`gradyn.render`: the image (H, W, 3), or (B, H, W, 3) for q (B, nq).

    Gradients flow into q, params (the flat parameter vector: geom sizes and origins, joint origins and
    axes; None: the model as it is), camera_pos (3,) and camera_quat (4,) (None: the camera's own),
    colors (ngeom, 3) (None: the appearance's), textures (dict geom name -> (h, w, 3) tensor; geoms not
    named keep the appearance's texture, undifferentiated) and background (3,). Tensors without the
    batch dimension are shared by the worlds (their gradients summed). Silhouette edges give no
    gradient (see gradyn.render_vjp)."""
    from .render import Appearance, Camera, _check_model

    _check_model(model)
    camera, appearance = Camera.of(camera, model), Appearance.of(appearance)
    q = _as_float_tensor(q, "q")
    dev = q.device
    if q.ndim not in (1, 2) or q.shape[-1] != model.nq:
        raise ValueError(f"q: expected shape ({model.nq},) or (B, {model.nq}), got {tuple(q.shape)}")
    plain = appearance._plain(model)

    def tensor(x, default, name, shape):
        t = torch.as_tensor(default, dtype=torch.float64, device=dev) if x is None else _as_float_tensor(x, name, dev)
        if tuple(t.shape) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {tuple(t.shape)}")
        return t

    pos = tensor(camera_pos, camera.pos, "camera_pos", (3,))
    quat = tensor(camera_quat, camera.quat, "camera_quat", (4,))
    ng = len(model.geom_names)
    cols = tensor(colors, plain["colors"], "colors", (ng, 3))
    bg = tensor(background, appearance.background, "background", (3,))
    given = {} if textures is None else dict(textures)
    unknown = [n for n in given if n not in model.geom_names]
    if unknown:
        raise ValueError(f"textures: the model has no geom {unknown[0]!r}")
    names = [n for n in model.geom_names if n in given or n in plain["texture_names"]]
    texs = []
    for n in names:
        if n in given:
            t = _as_float_tensor(given[n], f"textures['{n}']", dev)
            if t.ndim != 3 or t.shape[2] != 3:
                raise ValueError(f"textures['{n}']: expected shape (h, w, 3), got {tuple(t.shape)}")
        else:
            t = torch.as_tensor(plain["textures"][plain["texture_names"].index(n)], device=dev)
        texs.append(t)
    p = None if params is None else _as_float_tensor(params, "params", dev)
    batched = q.ndim == 2
    out = RenderFunction.apply(model, camera, appearance, names, q if batched else q[None], p, pos, quat, cols, bg,
                               *texs)
    return out if batched else out[0]
