"""JAX bridge: gradyn.step and gradyn.rollout as differentiable JAX functions. ::

    import jax
    jax.config.update("jax_enable_x64", True)   # float64 arrays (recommended, see below)
    import gradyn, gradyn.jax
    model = gradyn.load("pendulum2.urdf")

    def loss(q0, v0, taus, p):
        qs, vs = gradyn.jax.rollout(model, q0, v0, taus, dt=0.01, params=p)
        return jnp.sum((qs[-1] - target) ** 2)

    grads = jax.grad(loss, argnums=(0, 1, 2, 3))(q0, v0, taus, jnp.asarray(model.params))

Each function is a ``jax.custom_vjp`` whose forward and backward passes call the C++ core through
``jax.pure_callback`` (``rollout(..., device="cuda")``: gradyn's GPU kernels as XLA FFI calls
instead, on the GPU end to end; gradyn.cuda.jax_rollout); they work under ``jax.jit``, ``jax.grad``/``jax.vjp`` (reverse mode only:
there is no JVP, so ``jax.jvp``/``jax.jacfwd`` are not available) and ``jax.vmap``.

Rules:

* Differentiable inputs: q, v, the torques and the flat parameter vector ``params`` (layout
  ``model.param_names``); ``params=None`` uses the model as it is, otherwise the model is
  rebuilt with ``model.with_params(params)`` (cached per distinct vector). The model, dt, the
  integrator and max_snapshots are static Python values, not traced.
* dtype: the core computes in float64 and casts the results back to the inputs' dtype. JAX
  uses float32 unless ``jax_enable_x64`` is on, so enable it (``jax.config.update(
  "jax_enable_x64", True)`` before creating arrays) for float64 precision, e.g. for gradient
  checks; float32 inputs work too, with float32 rounding of inputs and results.
* batch: one optional leading batch dimension, as in gradyn.torch: q (B, nq), v (B, nv),
  tau (B, nv) for ``step``; q0 (B, nq), v0 (B, nv), taus (B, T, nv) for ``rollout``; params
  (nparams,) for all worlds or (B, nparams). Unbatched inputs are shared by every world. This is
  ``jax.vmap`` of the single-world function, whose callback receives the whole batch at once
  (``vmap_method="broadcast_all"``) and loops over the worlds in C++ calls; nested vmaps work.
* q adjoints are ambient: one gradient entry per number of q (quaternion components included),
  as gradyn.step_vjp / gradyn.rollout_vjp return them, exact in every direction (finite
  differences that perturb single entries, off the unit sphere, agree). The dynamics and
  integrate read a quaternion normalised, so its adjoint has no component along it. Joint-axis parameters
  are normalised by ``model.with_params``, so their adjoint has no component along the axis.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _bridge

__all__ = ["policy_rollout", "rollout", "step"]


@dataclasses.dataclass(frozen=True, eq=False)  # hashed by identity: models are immutable
class _Static:
    model: object
    dt: float
    integrator: str
    max_snapshots: int = 0


def _shape(x, dtype=None):
    return jax.ShapeDtypeStruct(x.shape, x.dtype if dtype is None else dtype)


def _cast(array, dtype):
    return np.asarray(array, dtype=dtype)


def _result_dtype(*arrays):
    return jnp.result_type(*[a for a in arrays if a is not None])


def _callback(host, result_shapes, *args):
    # broadcast_all: under vmap the host receives every argument with the full batch shape in
    # front, and _bridge loops over it.
    return jax.pure_callback(host, result_shapes, *[a for a in args if a is not None],
                             vmap_method="broadcast_all")


def _unpack(flags, rest):
    """The optional arguments (params, ctrl) a callback received, None where absent (the callback
    gets only the arrays that exist)."""
    out, k = [], 0
    for present in flags:
        out.append(rest[k] if present else None)
        k += present
    return out


# --- one step -------------------------------------------------------------------------------


def _step_forward(static, q, v, tau, params, ctrl):
    dtype = _result_dtype(q, v, tau, params, ctrl)
    flags = (params is not None, ctrl is not None)

    def host(q, v, tau, *rest):
        p, c = _unpack(flags, rest)
        q_next, v_next, status = _bridge.step_forward(static.model, q, v, tau, p, static.dt, static.integrator, ctrl=c)
        return _cast(q_next, dtype), _cast(v_next, dtype), status

    status = jax.ShapeDtypeStruct((), np.uint32)
    return _callback(host, (_shape(q, dtype), _shape(v, dtype), status), q, v, tau, params, ctrl)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _step(static, q, v, tau, params, ctrl):
    return _step_forward(static, q, v, tau, params, ctrl)


def _step_fwd(static, q, v, tau, params, ctrl):
    return _step_forward(static, q, v, tau, params, ctrl), (q, v, tau, params, ctrl)


def _optional_grads(grads, optional):
    """The callback's gradients with None for the optional arguments (params, ctrl) not given."""
    grads, k = list(grads), 3
    out = grads[:3]
    for x in optional:
        out.append(grads[k] if x is not None else None)
        k += x is not None
    return tuple(out)


def _step_bwd(static, residuals, cotangents):
    q, v, tau, params, ctrl = residuals
    q_next_bar, v_next_bar, _ = cotangents  # the status output has no cotangent (integer)
    flags = (params is not None, ctrl is not None)

    def host(q, v, tau, q_next_bar, v_next_bar, *rest):
        p, c = _unpack(flags, rest)
        grads = _bridge.step_backward(static.model, q, v, tau, p, static.dt, static.integrator, q_next_bar,
                                      v_next_bar, ctrl=c)
        out = (_cast(grads[0], q.dtype), _cast(grads[1], v.dtype), _cast(grads[2], tau.dtype))
        out += (_cast(grads[3], p.dtype),) if p is not None else ()
        return out + ((_cast(grads[4], c.dtype),) if c is not None else ())

    shapes = (_shape(q), _shape(v), _shape(tau)) + tuple(_shape(x) for x in (params, ctrl) if x is not None)
    grads = _callback(host, shapes, q, v, tau, q_next_bar, v_next_bar, params, ctrl)
    return _optional_grads(grads, (params, ctrl))


_step.defvjp(_step_fwd, _step_bwd)


# --- rollout --------------------------------------------------------------------------------


def _rollout_forward(static, q0, v0, taus, params, ctrls):
    dtype = _result_dtype(q0, v0, taus, params, ctrls)
    flags = (params is not None, ctrls is not None)
    horizon = taus.shape[-2]

    def host(q0, v0, taus, *rest):
        p, c = _unpack(flags, rest)
        qs, vs, status = _bridge.rollout_forward(static.model, q0, v0, taus, p, static.dt, static.integrator, ctrls=c)
        return _cast(qs, dtype), _cast(vs, dtype), status

    shapes = (jax.ShapeDtypeStruct((horizon + 1, q0.shape[-1]), dtype),
              jax.ShapeDtypeStruct((horizon + 1, v0.shape[-1]), dtype),
              jax.ShapeDtypeStruct((horizon,), np.uint32))
    return _callback(host, shapes, q0, v0, taus, params, ctrls)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _rollout(static, q0, v0, taus, params, ctrls):
    return _rollout_forward(static, q0, v0, taus, params, ctrls)


def _rollout_fwd(static, q0, v0, taus, params, ctrls):
    return _rollout_forward(static, q0, v0, taus, params, ctrls), (q0, v0, taus, params, ctrls)


def _rollout_bwd(static, residuals, cotangents):
    q0, v0, taus, params, ctrls = residuals
    qs_bar, vs_bar, _ = cotangents  # the status output has no cotangent (integer)
    flags = (params is not None, ctrls is not None)

    def host(q0, v0, taus, qs_bar, vs_bar, *rest):
        p, c = _unpack(flags, rest)
        grads = _bridge.rollout_backward(static.model, q0, v0, taus, p, static.dt, static.integrator, qs_bar, vs_bar,
                                         static.max_snapshots, ctrls=c)
        out = (_cast(grads[0], q0.dtype), _cast(grads[1], v0.dtype), _cast(grads[2], taus.dtype))
        out += (_cast(grads[3], p.dtype),) if p is not None else ()
        return out + ((_cast(grads[4], c.dtype),) if c is not None else ())

    shapes = (_shape(q0), _shape(v0), _shape(taus)) + tuple(_shape(x) for x in (params, ctrls) if x is not None)
    grads = _callback(host, shapes, q0, v0, taus, qs_bar, vs_bar, params, ctrls)
    return _optional_grads(grads, (params, ctrls))


_rollout.defvjp(_rollout_fwd, _rollout_bwd)


# --- public wrappers ------------------------------------------------------------------------


def _as_float_array(x, name: str = "argument"):
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):  # astype below would drop the imaginary part
        raise TypeError(f"{name}: expected real numbers, got a complex array ({x.dtype}); pass its real part")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(jnp.result_type(float))
    return x


def _checked_dt(dt) -> float:
    """dt checked here, before JAX traces the host callback (an error inside it is an opaque
    XlaRuntimeError)."""
    dt = float(dt)
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected a positive finite time step [s], got {dt}")
    return dt


def _checked_integrator(integrator: str) -> str:
    if integrator not in ("euler", "semi_implicit_euler", "rk4"):
        raise ValueError(f"integrator: expected 'euler' or 'rk4', got {integrator!r}")
    return integrator


def _batch_axes(named: dict):
    """in_axes for jax.vmap (0 for inputs with a leading batch dimension, None for shared ones),
    or None when no input is batched. named: name -> (array or None, per-world ndim)."""
    batch, batch_from, axes = None, None, []
    for name, (x, item_ndim) in named.items():
        if x is None or x.ndim == item_ndim:
            axes.append(None)
        elif x.ndim == item_ndim + 1:
            if batch is not None and x.shape[0] != batch:
                raise ValueError(f"batch sizes differ: {batch_from} has {batch} worlds, {name} has {x.shape[0]}")
            batch, batch_from = x.shape[0], name
            axes.append(0)
        else:
            raise ValueError(f"{name}: expected {item_ndim} dimension(s), or {item_ndim + 1} with a leading "
                             f"batch dimension, got shape {tuple(x.shape)}")
    return None if batch is None else tuple(axes)


def _call(function, static, named):
    """function(static, *args), vmapped over the inputs with a batch dimension.
    named: name -> (array or None, per-world ndim, size of its last dimension: "nq", ...)."""
    args = [x for x, _, _ in named.values()]
    _bridge.check_sizes(static.model, {name: (None if x is None else x.shape, size)
                                       for name, (x, _, size) in named.items()})
    axes = _batch_axes({name: (x, item_ndim) for name, (x, item_ndim, _) in named.items()})
    bound = functools.partial(function, static)
    if axes is None:
        return bound(*args)
    return jax.vmap(bound, in_axes=axes)(*args)


def step(model, q, v, tau, dt: float, params=None, integrator: str = "euler", return_status: bool = False,
         ctrl=None):
    """Differentiable :func:`gradyn.step`: returns (q_next, v_next) as JAX arrays.

    q (nq,), v (nv,), tau (nv,) or with a leading batch dimension B (see the module docstring);
    tau None: zeros; params: None or the flat parameter vector (nparams,) / (B, nparams);
    ctrl: None or the actuators' controls (nu,) / (B, nu) (model.actuator_names), differentiable.
    return_status: also return status, a uint32 array of shape () or (B,) holding the
    gradyn.Status bits of each world's step (0: all went well; numerical trouble never raises).
    """
    params = None if params is None else _as_float_array(params, "params")
    ctrl = None if ctrl is None else _as_float_array(ctrl, "ctrl")
    v = _as_float_array(v, "v")
    tau = jnp.zeros(model.nv, dtype=v.dtype) if tau is None else _as_float_array(tau, "tau")  # None: zeros
    named = {"q": (_as_float_array(q, "q"), 1, "nq"), "v": (v, 1, "nv"),
             "tau": (tau, 1, "nv"), "params": (params, 1, "nparams"), "ctrl": (ctrl, 1, "nu")}
    out = _call(_step, _Static(model, _checked_dt(dt), _checked_integrator(integrator)), named)
    return out if return_status else out[:2]


def rollout(model, q0, v0, taus, dt: float, params=None, integrator: str = "euler", max_snapshots: int = 0,
            return_status: bool = False, ctrls=None, device: str = "cpu"):
    """Differentiable :func:`gradyn.rollout`: returns (qs, vs) of shapes (T+1, nq), (T+1, nv), row 0
    the initial state; with a batch dimension (B, T+1, nq), (B, T+1, nv).

    q0 (nq,), v0 (nv,), taus (T, nv) or with a leading batch dimension B (None: zeros, T from ctrls);
    params: None or the flat parameter vector (nparams,) / (B, nparams);
    ctrls: None or the actuators' controls (T, nu) / (B, T, nu), differentiable.
    max_snapshots: memory/compute trade-off of the backward pass (0: keep every state).
    return_status: also return status, a uint32 array of shape (T,) or (B, T) holding the
    gradyn.Status bits of each step (0: all went well; numerical trouble never raises).
    device: 'cpu' (the C++ engine through callbacks, the default) or 'cuda': gradyn's GPU kernels
    as XLA FFI calls (gradyn.cuda.jax_rollout) on JAX's stream and buffers, so a jitted loss and
    its gradient never leave the GPU; they compute in the inputs' precision; params must be None,
    the integrator 'euler', and max_snapshots and return_status are CPU options.
    """
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    if device == "cuda":
        from . import cuda

        cuda.check_options(integrator, params=params is not None, max_snapshots=max_snapshots != 0,
                           return_status=bool(return_status))
        q0, v0 = jnp.asarray(q0), jnp.asarray(v0)
        single = q0.ndim == 1
        if single:
            q0, v0 = q0[None], v0[None]
        B = q0.shape[0]
        v0 = jnp.broadcast_to(v0, (B, v0.shape[-1]))
        steps = _bridge.steps_without_taus(taus, None if ctrls is None else jnp.shape(ctrls))
        # an input without the batch dimension is shared by every world (its gradient: the sum)
        taus = jnp.zeros((steps, model.nv), dtype=v0.dtype) if taus is None else jnp.asarray(taus)
        taus = taus if taus.ndim == 3 else jnp.broadcast_to(taus, (B,) + taus.shape)
        if ctrls is not None:
            ctrls = jnp.asarray(ctrls)
            ctrls = ctrls if ctrls.ndim == 3 else jnp.broadcast_to(ctrls, (B,) + ctrls.shape)
        qs, vs = cuda.jax_rollout(model, q0, v0, taus, dt, ctrls)
        return (qs[0], vs[0]) if single else (qs, vs)
    params = None if params is None else _as_float_array(params, "params")
    ctrls = None if ctrls is None else _as_float_array(ctrls, "ctrls")
    v0 = _as_float_array(v0, "v0")
    # taus None: no generalised forces, one zero row per step of ctrls (as in gradyn.rollout).
    steps = _bridge.steps_without_taus(taus, None if ctrls is None else ctrls.shape)
    taus = jnp.zeros((steps, model.nv), dtype=v0.dtype) if taus is None else _as_float_array(taus, "taus")
    named = {"q0": (_as_float_array(q0, "q0"), 1, "nq"), "v0": (v0, 1, "nv"),
             "taus": (taus, 2, "nv"), "params": (params, 1, "nparams"), "ctrls": (ctrls, 2, "nu")}
    static = _Static(model, _checked_dt(dt), _checked_integrator(integrator), int(max_snapshots))
    out = _call(_rollout, static, named)
    return out if return_status else out[:2]


# --- a policy's closed loop -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)  # hashed by identity
class _PolicyStatic:
    policy: object
    steps: int
    dt: float
    decay: float
    integrator: str
    clip_norm: float = 0.0


def _flat_worlds(x, item_ndim):
    """(..., item) -> (worlds, item) and the leading shape (vmap's broadcast_all batch dims)."""
    lead = x.shape[:x.ndim - item_ndim]
    return x.reshape((-1,) + x.shape[x.ndim - item_ndim:]), lead


def _policy_forward(static, weights, q0, v0, task):
    dtype = _result_dtype(weights, q0, v0, task)
    model = static.policy.model

    def host(weights, q0, v0, *rest):
        q, lead = _flat_worlds(np.asarray(q0, np.float64), 1)
        w = _flat_worlds(np.asarray(weights, np.float64), 1)[0]
        t = _flat_worlds(np.asarray(rest[0], np.float64), 1)[0] if rest else None
        qs, vs, ctrls, _ = static.policy.rollout(q, _flat_worlds(np.asarray(v0, np.float64), 1)[0], static.steps,
                                                 static.dt, weights=w if w.shape[0] > 1 else w[0],
                                                 task=None if t is None else (t if t.shape[0] > 1 else t[0]),
                                                 integrator=static.integrator)
        return tuple(_cast(a.reshape(lead + a.shape[1:]), dtype) for a in (qs, vs, ctrls))

    shapes = (jax.ShapeDtypeStruct((static.steps + 1, model.nq), dtype),
              jax.ShapeDtypeStruct((static.steps + 1, model.nv), dtype),
              jax.ShapeDtypeStruct((static.steps, model.nu), dtype))
    return _callback(host, shapes, weights, q0, v0, task)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _policy_rollout(static, weights, q0, v0, task):
    return _policy_forward(static, weights, q0, v0, task)


def _policy_fwd(static, weights, q0, v0, task):
    out = _policy_forward(static, weights, q0, v0, task)
    return out, (weights, q0, v0, task, out[0], out[1])


def _policy_bwd(static, residuals, cotangents):
    weights, q0, v0, task, qs, vs = residuals
    qs_bar, vs_bar, ctrls_bar = cotangents

    def host(weights, q0, v0, qs, vs, qs_bar, vs_bar, ctrls_bar, *rest):
        flat = lambda a, n: _flat_worlds(np.asarray(a, np.float64), n)[0]  # noqa: E731
        lead = q0.shape[:-1]
        t = flat(rest[0], 1) if rest else None
        grads = static.policy.rollout_vjp(flat(qs, 2), flat(vs, 2), flat(qs_bar, 2), flat(vs_bar, 2), static.dt,
                                          weights=flat(weights, 1), task=t, ctrls_bar=flat(ctrls_bar, 2),
                                          decay=static.decay, reduce="none", integrator=static.integrator,
                                          clip_norm=static.clip_norm)
        out = (_cast(grads["weights"].reshape(weights.shape), weights.dtype),
               _cast(grads["q0"].reshape(lead + q0.shape[-1:]), q0.dtype),
               _cast(grads["v0"].reshape(lead + v0.shape[-1:]), v0.dtype))
        return out + ((_cast(grads["task"].reshape(rest[0].shape), rest[0].dtype),) if rest else ())

    shapes = (_shape(weights), _shape(q0), _shape(v0)) + ((_shape(task),) if task is not None else ())
    grads = _callback(host, shapes, weights, q0, v0, qs, vs, qs_bar, vs_bar, ctrls_bar, task)
    return tuple(grads) + ((None,) if task is None else ())


_policy_rollout.defvjp(_policy_fwd, _policy_bwd)


def policy_rollout(policy, q0, v0, steps: int, dt: float, weights=None, task=None, decay: float = 1.0,
                   integrator: str = "euler", clip_norm: float = 0.0):
    """Differentiable gradyn.Policy rollout: (qs, vs, ctrls) of shapes (T+1, nq), (T+1, nv), (T, nu)
    for one world, differentiable with respect to the weights, q0, v0 and the task (jax.grad);
    jax.vmap over any of them runs the worlds in one batched C++ call. decay < 1 multiplies the
    adjoint carried back one step by it (paper 002); clip_norm > 0 clips its norm (see
    Policy.rollout_vjp)."""
    weights = _as_float_array(policy.weights if weights is None else weights, "weights")
    q0, v0 = _as_float_array(q0, "q0"), _as_float_array(v0, "v0")
    task = None if task is None else _as_float_array(task, "task")
    for name, x, n in (("weights", weights, policy.param_count), ("q0", q0, policy.model.nq),
                       ("v0", v0, policy.model.nv)):
        if x.ndim != 1 or x.shape[0] != n:
            raise ValueError(f"{name}: expected shape ({n},) (jax.vmap adds batch dimensions), got {tuple(x.shape)}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps: expected at least 1, got {steps!r}")
    if not 0 <= float(decay) <= 1:
        raise ValueError(f"decay: expected a number in [0, 1], got {decay!r}")
    if not (np.isfinite(float(clip_norm)) and float(clip_norm) >= 0):
        raise ValueError(f"clip_norm: expected a finite number >= 0 (0: no clipping), got {clip_norm!r}")
    static = _PolicyStatic(policy, int(steps), _checked_dt(dt), float(decay), _checked_integrator(integrator),
                           float(clip_norm))
    return _policy_rollout(static, weights, q0, v0, task)


# --- the ray-cast camera ------------------------------------------------------------------------
# gradyn.render as a custom_vjp: differentiable w.r.t. q, the camera's pos and quat, the colours and
# the background (textures, the flat parameters and the rest of the appearance are static here; use
# gradyn.torch.render or gradyn.render_vjp for their gradients). Under jax.vmap the callback gets the
# whole batch and renders world after world (each with its own camera pose and colours).

__all__ += ["render"]


@dataclasses.dataclass(frozen=True, eq=False)
class _RenderStatic:
    model: object
    camera: object
    appearance: object


def _render_worlds(static, q, pos, quat, colors, background, image_bar=None):
    """Renders (or, with image_bar, differentiates) every world of the leading batch shape."""
    from .render import Appearance, Camera, render as _render_np, render_vjp as _render_vjp_np

    cam, look = static.camera, static.appearance
    batch = q.shape[:-1]
    n = int(np.prod(batch, dtype=int))
    q2, p2, r2 = (np.asarray(x, np.float64).reshape(n, -1) for x in (q, pos, quat))
    c2 = np.asarray(colors, np.float64).reshape((n,) + colors.shape[-2:])
    b2 = np.asarray(background, np.float64).reshape(n, 3)
    outs = []
    for w in range(n):
        c = Camera(cam.width, cam.height, cam.fovy, p2[w], r2[w], cam.body)
        a = Appearance(colors=c2[w], textures=look.textures, tiles=look.tiles, background=b2[w],
                       lighting=look.lighting, light_dir=look.light_dir, ambient=look.ambient, diffuse=look.diffuse)
        if image_bar is None:
            outs.append(_render_np(static.model, q2[w], c, a))
        else:
            bar = np.asarray(image_bar, np.float64).reshape((n,) + image_bar.shape[len(batch):])[w]
            outs.append(_render_vjp_np(static.model, q2[w], c, bar, a))
    return batch, outs


def _render_forward(static, q, pos, quat, colors, background):
    dtype = _result_dtype(q, pos, quat, colors, background)
    shape = (static.camera.height, static.camera.width, 3)

    def host(q, pos, quat, colors, background):
        batch, images = _render_worlds(static, q, pos, quat, colors, background)
        return _cast(np.stack(images).reshape(batch + shape), dtype)

    return _callback(host, jax.ShapeDtypeStruct(q.shape[:-1] + shape, dtype), q, pos, quat, colors, background)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _render(static, q, pos, quat, colors, background):
    return _render_forward(static, q, pos, quat, colors, background)


def _render_fwd(static, q, pos, quat, colors, background):
    return _render_forward(static, q, pos, quat, colors, background), (q, pos, quat, colors, background)


def _render_bwd(static, residuals, image_bar):
    q, pos, quat, colors, background = residuals

    def host(q, pos, quat, colors, background, image_bar):
        batch, grads = _render_worlds(static, q, pos, quat, colors, background, image_bar)
        pick = lambda key, x: _cast(np.stack([g[key] for g in grads]).reshape(x.shape), x.dtype)
        return (pick("q", q), pick("camera_pos", pos), pick("camera_quat", quat), pick("colors", colors),
                pick("background", background))

    return _callback(host, tuple(_shape(x) for x in residuals), q, pos, quat, colors, background, image_bar)


_render.defvjp(_render_fwd, _render_bwd)


def render(model, q, camera, appearance=None, camera_pos=None, camera_quat=None, colors=None, background=None):
    """Differentiable :func:`gradyn.render` for JAX: the image (H, W, 3) of q (nq,); gradients flow
    into q, camera_pos (3,), camera_quat (4,), colors (ngeom, 3) and background (3,) (None: the camera's
    and appearance's own values). Batches: ``jax.vmap`` (every argument may carry the batch). The
    geom each pixel sees is held fixed: silhouette edges give no gradient (see gradyn.render_vjp)."""
    from .render import Appearance, Camera, _check_model

    _check_model(model)
    camera, appearance = Camera.of(camera, model), Appearance.of(appearance)
    plain = appearance._plain(model)
    q = _as_float_array(q, "q")
    if q.shape != (model.nq,):
        raise ValueError(f"q: expected shape ({model.nq},) (use jax.vmap for batches), got {q.shape}")
    pos = _as_float_array(camera.pos if camera_pos is None else camera_pos, "camera_pos")
    quat = _as_float_array(camera.quat if camera_quat is None else camera_quat, "camera_quat")
    cols = _as_float_array(plain["colors"] if colors is None else colors, "colors")
    bg = _as_float_array(appearance.background if background is None else background, "background")
    for name, x, shape in (("camera_pos", pos, (3,)), ("camera_quat", quat, (4,)),
                           ("colors", cols, (len(model.geom_names), 3)), ("background", bg, (3,))):
        if x.shape != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {x.shape}")
    look = Appearance(colors=plain["colors"], textures=dict(zip(plain["texture_names"], plain["textures"])),
                      tiles=appearance.tiles, background=appearance.background, lighting=appearance.lighting,
                      light_dir=appearance.light_dir, ambient=appearance.ambient, diffuse=appearance.diffuse)
    return _render(_RenderStatic(model, camera, look), q, pos, quat, cols, bg)
