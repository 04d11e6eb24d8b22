"""The NumPy core shared by the ML framework bridges (gradyn.torch and gradyn.jax).

Forward passes and vector-Jacobian products over a batch of worlds, in float64: rollouts (and
forward steps) as one batched C++ call that runs the worlds on all cores; step adjoints one C++
call per world. Every array argument has the same leading batch shape (any number of dimensions,
possibly none) followed by its per-world shape; the parameter vector ``params`` is None (use the
model's own parameters), one vector for all worlds, or one per world.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections import OrderedDict

import numpy as np

import gradyn as _gradyn

_CACHE_SIZE = 64


class _ModelCache:
    """Models rebuilt from a parameter vector, so that an unchanged vector costs a lookup.

    Keyed by the base model's identity and the vector's bytes; the base model is kept alive by
    its entry, so its id cannot be reused while the entry exists.
    """

    def __init__(self, size: int = _CACHE_SIZE):
        self._size = size
        self._entries: OrderedDict = OrderedDict()
        self._base_params: dict = {}
        self._lock = threading.Lock()

    def base_params(self, model) -> np.ndarray:
        with self._lock:
            hit = self._base_params.get(id(model))
            if hit is not None and hit[0] is model:
                return hit[1]
        params = np.asarray(model.params, dtype=np.float64)
        with self._lock:
            if len(self._base_params) >= self._size:
                self._base_params.pop(next(iter(self._base_params)))
            self._base_params[id(model)] = (model, params)
        return params

    def model_for(self, model, params: np.ndarray | None):
        """The model whose flat parameter vector is params (the model itself when they agree)."""
        if params is None:
            return model
        base = self.base_params(model)
        if params.shape != base.shape:
            raise ValueError(f"params: expected shape {base.shape}, got {params.shape}")
        if np.array_equal(params, base):
            return model
        key = (id(model), params.tobytes())
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit[1]
        rebuilt = model.with_params(params)
        with self._lock:
            self._entries[key] = (model, rebuilt)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return rebuilt

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._base_params.clear()


MODELS = _ModelCache()


class ModelHandle:
    """A reference to a model held by a framework's graph (a torch autograd node, a JAX trace),
    which may outlive the interpreter's clean-up of gradyn: at exit every handle lets go of its
    model, so that nanobind does not report the model as leaked."""

    __slots__ = ("model", "__weakref__")

    def __init__(self, model):
        self.model = model
        _HANDLES.add(self)


_HANDLES: "weakref.WeakSet[ModelHandle]" = weakref.WeakSet()


@atexit.register
def _release_models():
    for handle in list(_HANDLES):
        handle.model = None
    MODELS.clear()


def steps_without_taus(taus, ctrls_shape):
    """The number of steps when taus is None (zeros, one row per step of ctrls), else None.
    Both None is an error, as in gradyn.rollout."""
    if taus is not None:
        return None
    if ctrls_shape is None:
        raise ValueError("taus and ctrls are both None: give at least one of them (one row per step)")
    if len(ctrls_shape) < 2:
        raise ValueError(f"ctrls: expected shape (T, nu) or (B, T, nu), got {tuple(ctrls_shape)}")
    return int(ctrls_shape[-2])


def check_sizes(model, named: dict):
    """Raise ValueError unless every array's last dimension has its expected size.

    named: name -> (shape, expected size, or "nq", "nv", "nu", "nparams"). Done by the bridges before
    tracing, because an error raised later inside a JAX callback arrives wrapped."""
    sizes = {"nq": lambda: model.nq, "nv": lambda: model.nv, "nu": lambda: model.nu,
             "nparams": lambda: MODELS.base_params(model).size}
    for name, (shape, expected) in named.items():
        if shape is None:
            continue
        size = sizes[expected]()
        if len(shape) == 0 or shape[-1] != size:
            raise ValueError(f"{name}: expected last dimension {size} ({expected}), got shape {tuple(shape)}")


def _float64(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64))


def _flatten(x: np.ndarray, batch_shape: tuple, item_ndim: int) -> np.ndarray:
    return x.reshape((int(np.prod(batch_shape, dtype=np.int64)),) + x.shape[x.ndim - item_ndim:])


def _batch_shape(name: str, x: np.ndarray, item_ndim: int) -> tuple:
    if x.ndim < item_ndim:
        raise ValueError(f"{name}: expected at least {item_ndim} dimension(s), got shape {x.shape}")
    return x.shape[: x.ndim - item_ndim]


def _common_batch(named: dict) -> tuple:
    """The leading batch shape shared by every (name -> (array, per-world ndim)) entry."""
    shapes = {name: _batch_shape(name, x, nd) for name, (x, nd) in named.items()}
    first_name, first = next(iter(shapes.items()))
    for name, shape in shapes.items():
        if shape != first:
            raise ValueError(
                f"batch shapes differ: {first_name} has leading shape {first}, {name} has {shape}"
            )
    return first


def _params_rows(params, batch_shape: tuple, n: int):
    """params as one vector shared by every world (1-D) or an (n, nparams) array, one row per world."""
    params = _float64(params)
    if params.ndim == 1:
        return params
    if params.shape[:-1] != batch_shape:
        raise ValueError(
            f"params: expected shape (nparams,) or {batch_shape + (params.shape[-1],)}, got {params.shape}"
        )
    return params.reshape(n, params.shape[-1])


def _worlds(model, params, batch_shape: tuple, n: int):
    """(model, rows) for a batched C++ call. One vector for every world (params 1-D, or rows that
    are all equal, as a broadcast tensor gives) runs on that model, rebuilt once, with rows None;
    otherwise the base model and an (n, nparams) array that rebuilds one model per world. Both give
    the same numbers: each world's model is model.with_params(its row) (the model itself for its own
    parameters)."""
    if params is None:
        return model, None
    rows = _params_rows(params, batch_shape, n)
    if rows.ndim == 1:
        return MODELS.model_for(model, rows), None
    if n == 1 or rows.strides[0] == 0 or (rows == rows[0]).all():
        return MODELS.model_for(model, rows[0]), None
    return model, np.ascontiguousarray(rows)


def _params_bar(model, params, batch_shape: tuple, n: int, p_bar: np.ndarray):
    """The per-world parameter gradients (n, nparams) of a batched C++ call as (*batch, nparams)
    with respect to the raw params rows, or None when params is None. gradyn returns axis gradients
    at the rebuilt model's unit axis; with_params normalises the axis entries a, so the gradient with
    respect to the raw entries is that one divided by |a|."""
    if params is None:
        return None
    rows = _params_rows(params, batch_shape, n)
    for k in _axis_entries(model):
        p_bar[:, k:k + 3] /= np.linalg.norm(rows[..., k:k + 3], axis=-1, keepdims=True)
    return p_bar.reshape(batch_shape + (-1,))


def _axis_entries(model) -> list:
    """Indices of the "<joint>.axis.x" entries of the flat parameter vector."""
    return [k for k, name in enumerate(model.param_names) if name.endswith(".axis.x")]


def _controls(x, batch, item_ndim):
    """The actuators' controls flattened to the batch (None: none, every control zero)."""
    return None if x is None else np.ascontiguousarray(_flatten(_float64(x), batch, item_ndim))


def step_forward(model, q, v, tau, params, dt, integrator, ctrl=None):
    """(q_next, v_next, status) for every world; shapes (*batch, nq), (*batch, nv) and (*batch,),
    status the gradyn.Status bits of each world's step (uint32). One batched call: the worlds run
    on all cores (gradyn.step with a batch dimension). ctrl: the actuators' controls (*batch, nu)
    or None."""
    q, v, tau = _float64(q), _float64(v), _float64(tau)
    named = {"q": (q, 1), "v": (v, 1), "tau": (tau, 1)}
    if ctrl is not None:
        named["ctrl"] = (_float64(ctrl), 1)
    batch = _common_batch(named)
    qf, vf, tf = (np.ascontiguousarray(_flatten(x, batch, 1)) for x in (q, v, tau))
    n = qf.shape[0]
    world_model, rows = _worlds(model, params, batch, n)
    q_next, v_next, status = _gradyn.step(world_model, qf, vf, tf, dt, integrator, return_status=True, params=rows,
                                          ctrl=_controls(ctrl, batch, 1))
    return q_next.reshape(q.shape), v_next.reshape(v.shape), status.reshape(batch)


def step_backward(model, q, v, tau, params, dt, integrator, q_next_bar, v_next_bar, ctrl=None):
    """Adjoints (q_bar, v_bar, tau_bar, params_bar) of step_forward, and ctrl_bar (*batch, nu)
    after them when ctrl is given; params_bar is None when params is None, else one row per world
    (shape (*batch, nparams)). One batched call on all cores."""
    q, v, tau = _float64(q), _float64(v), _float64(tau)
    q_next_bar, v_next_bar = _float64(q_next_bar), _float64(v_next_bar)
    named = {"q": (q, 1), "v": (v, 1), "tau": (tau, 1), "q_next_bar": (q_next_bar, 1), "v_next_bar": (v_next_bar, 1)}
    if ctrl is not None:
        named["ctrl"] = (_float64(ctrl), 1)
    batch = _common_batch(named)
    qf, vf, tf, qbf, vbf = (np.ascontiguousarray(_flatten(x, batch, 1)) for x in (q, v, tau, q_next_bar, v_next_bar))
    n = qf.shape[0]
    world_model, rows = _worlds(model, params, batch, n)
    out = _gradyn.step_vjp(world_model, qf, vf, tf, dt, qbf, vbf, integrator=integrator, params=rows,
                           ctrl=_controls(ctrl, batch, 1))
    q_bar, v_bar, tau_bar, p_bar = out[:4]
    params_bar = _params_bar(model, params, batch, n, p_bar)
    grads = (q_bar.reshape(q.shape), v_bar.reshape(v.shape), tau_bar.reshape(tau.shape), params_bar)
    return grads if ctrl is None else grads + (out[4].reshape(np.shape(ctrl)),)


def rollout_forward(model, q0, v0, taus, params, dt, integrator, ctrls=None):
    """(qs, vs, status) for every world; shapes (*batch, T + 1, nq) and (*batch, T + 1, nv), row 0
    the initial state, and (*batch, T): the gradyn.Status bits of each step (uint32). One batched
    call: the worlds run on all cores (gradyn.rollout with a batch dimension). ctrls: the
    actuators' controls (*batch, T, nu) or None."""
    q0, v0, taus = _float64(q0), _float64(v0), _float64(taus)
    named = {"q0": (q0, 1), "v0": (v0, 1), "taus": (taus, 2)}
    if ctrls is not None:
        named["ctrls"] = (_float64(ctrls), 2)
    batch = _common_batch(named)
    qf, vf = (np.ascontiguousarray(_flatten(x, batch, 1)) for x in (q0, v0))
    tf = np.ascontiguousarray(_flatten(taus, batch, 2))
    n, horizon = qf.shape[0], tf.shape[1]
    world_model, rows = _worlds(model, params, batch, n)
    qs, vs, status = _gradyn.rollout(world_model, qf, vf, tf, dt, integrator, return_status=True, params=rows,
                                     ctrls=_controls(ctrls, batch, 2))
    return qs.reshape(batch + qs.shape[1:]), vs.reshape(batch + vs.shape[1:]), status.reshape(batch + (horizon,))


def rollout_backward(model, q0, v0, taus, params, dt, integrator, qs_bar, vs_bar, max_snapshots=0,
                     qs=None, vs=None, ctrls=None):
    """Adjoints (q0_bar, v0_bar, taus_bar, params_bar) of rollout_forward, and ctrls_bar after them
    when ctrls is given; params_bar as in step_backward. qs, vs: rollout_forward's float64 results
    for these inputs, if still held (the backward pass then re-runs no forward step). One batched
    call on all cores."""
    q0, v0, taus = _float64(q0), _float64(v0), _float64(taus)
    qs_bar, vs_bar = _float64(qs_bar), _float64(vs_bar)
    named = {"q0": (q0, 1), "v0": (v0, 1), "taus": (taus, 2), "qs_bar": (qs_bar, 2), "vs_bar": (vs_bar, 2)}
    if ctrls is not None:
        named["ctrls"] = (_float64(ctrls), 2)
    batch = _common_batch(named)
    qf, vf = (np.ascontiguousarray(_flatten(x, batch, 1)) for x in (q0, v0))
    tf, qbf, vbf = (np.ascontiguousarray(_flatten(x, batch, 2)) for x in (taus, qs_bar, vs_bar))
    n = qf.shape[0]
    world_model, rows = _worlds(model, params, batch, n)
    states = {}
    if qs is not None:
        states = {"qs": np.ascontiguousarray(_flatten(_float64(qs), batch, 2)),
                  "vs": np.ascontiguousarray(_flatten(_float64(vs), batch, 2))}
    out = _gradyn.rollout_vjp(world_model, qf, vf, tf, dt, qbf, vbf, integrator=integrator, max_snapshots=max_snapshots,
                              params=rows, ctrls=_controls(ctrls, batch, 2), **states)
    q0_bar, v0_bar, taus_bar, p_bar = out[:4]
    params_bar = _params_bar(model, params, batch, n, p_bar)
    grads = (q0_bar.reshape(q0.shape), v0_bar.reshape(v0.shape), taus_bar.reshape(taus.shape), params_bar)
    return grads if ctrls is None else grads + (out[4].reshape(np.shape(ctrls)),)
