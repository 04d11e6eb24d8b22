"""Trajectory optimisation and model-predictive control on gradyn's analytic step Jacobians. ::

    import gradyn, numpy as np
    from gradyn import control

    dynamics = control.GradynDynamics(model, dt=0.02)        # controls: the actuators' ctrl
    cost = control.QuadraticCost(dynamics, q_goal=q_up, Q=..., R=..., Q_final=...)
    result = control.ilqr(dynamics, cost, q0, v0, np.zeros((T, dynamics.nu)))
    result.u, result.q, result.v, result.K     # controls, trajectory, feedback gains

``ilqr`` is box-constrained iLQR (Tassa, Mansard and Todorov, "Control-limited differential dynamic
programming", ICRA 2014): a Gauss-Newton backward pass on the step Jacobians (A, B) and the cost's
derivatives, a projected-Newton QP per step for the control limits (both in C++), and a line search
whose candidates (step sizes 1, 1/2, 1/4, ...) are rolled out in rounds of one batch of worlds per
core, each candidate's closed loop in C++.
:class:`MPC` re-plans from each measured state over a receding horizon, warm-started from the
previous plan shifted by one step.

States are (q, v) in the dynamics' own coordinates; linearisations are in its tangent space: a state
error is [dq; dv] with dq = difference(q_ref, q), 2 nv numbers (no rows for quaternion components).
Any object with the methods of :class:`GradynDynamics` (``step``, ``rollout``, ``jacobians``,
``difference`` and the attributes ``nq``, ``nv``, ``nu``, ``u_min``, ``u_max``) can be planned on;
``bench/ilqr_speed.py`` plans with the same solver on MuJoCo's finite-difference Jacobians.

Convergence (``ILQRResult.reason``): the solver stops with ``converged=True`` when an accepted step
improves the cost by less than ``tolerance`` relative to it, or when the control update is below
``gradient_tolerance`` (mean over steps of ``max |k_t| / (max |u_t| + 1)``) with the regularisation
below 1e-5 (Tassa et al.'s rules). It stops with
``converged=False`` at ``max_iterations``, or when the regularisation needed to make progress
exceeds ``max_regularization`` (no descent direction found: e.g. every candidate step diverged).
It never raises for numerical trouble: the result is always the best trajectory found.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable, Protocol, Sequence

import numpy as np

from . import _core
from .policy import _real_array

__all__ = [
    "Cost",
    "Dynamics",
    "GradynDynamics",
    "ILQRResult",
    "IterationReport",
    "MPC",
    "QuadraticCost",
    "box_qp",
    "ilqr",
    "run_mpc",
]

_EUCLIDEAN_JOINTS = {"revolute", "continuous", "prismatic"}


def _shape_error(name: str, expected, actual) -> ValueError:
    return ValueError(f"{name}: expected shape {tuple(expected)}, got {tuple(actual)}")


def _as_array(name: str, value, shape, finite: bool = True) -> np.ndarray:
    array = _real_array(name, value)
    if array.shape != tuple(shape):
        raise _shape_error(name, shape, array.shape)
    if finite:
        _check_finite(name, array)
    return array


def _check_finite(name: str, array: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        index = np.unravel_index(bad[0], array.shape) if array.ndim > 1 else bad[0]
        raise ValueError(f"{name}: expected finite numbers, got {array.flat[bad[0]]} at index {index}")


class Dynamics(Protocol):
    """What the planners need from a simulator (see :class:`GradynDynamics` for the semantics)."""

    nq: int
    nv: int
    nu: int
    u_min: np.ndarray
    u_max: np.ndarray

    def step(self, q, v, u): ...

    def rollout(self, q0, v0, us): ...

    def jacobians(self, qs, vs, us): ...

    def difference(self, q_from, q_to): ...


class GradynDynamics:
    """A gradyn model stepped at a fixed dt, as the planners see it.

    controls: ``'ctrl'`` (the actuators' controls, model.nu of them, limited by their ctrlrange),
    ``'tau'`` (generalised forces, nv of them, limited by the model's effort limits) or ``'auto'``
    (ctrl when the model has actuators, else tau). u_min / u_max (shape (nu,)) override the limits
    (``-inf`` / ``inf`` leave a control free); for ctrl they must lie within the actuators'
    ctrlrange, which the step itself applies. threads: for the batched calls (None: all cores).
    """

    def __init__(self, model, dt: float, *, controls: str = "auto", integrator: str = "euler",
                 u_min=None, u_max=None, threads: int | None = None):
        if not isinstance(model, _core.Model):
            raise TypeError(f"model: expected a gradyn.Model, got {type(model).__name__}")
        if not (dt > 0 and np.isfinite(dt)):
            raise ValueError(f"dt: expected a positive finite time step, got {dt}")
        if controls == "auto":
            controls = "ctrl" if model.nu > 0 else "tau"
        if controls not in ("ctrl", "tau"):
            raise ValueError(f"controls: expected 'ctrl', 'tau' or 'auto', got {controls!r}")
        if controls == "ctrl" and model.nu == 0:
            raise ValueError("controls='ctrl' but the model has no actuators; use controls='tau' "
                             "(generalised forces) or add actuators to the model")
        self.model = model
        self.dt = float(dt)
        self.controls = controls
        self.integrator = integrator
        self.threads = threads
        self.nq, self.nv = model.nq, model.nv
        self.nu = model.nu if controls == "ctrl" else model.nv
        if controls == "ctrl":
            lower = [a["ctrlrange"][0] if a["ctrlrange"] else -np.inf for a in model.actuators]
            upper = [a["ctrlrange"][1] if a["ctrlrange"] else np.inf for a in model.actuators]
        else:
            effort = np.asarray(model.effort_limit, dtype=np.float64)
            lower, upper = -effort, effort
        self.u_min = np.asarray(lower, dtype=np.float64) if u_min is None else \
            _as_array("u_min", u_min, (self.nu,), finite=False)
        self.u_max = np.asarray(upper, dtype=np.float64) if u_max is None else \
            _as_array("u_max", u_max, (self.nu,), finite=False)
        if controls == "ctrl":
            # The step clamps each control to its actuator's ctrlrange: wider limits would plan
            # with controls the model never applies.
            for i, actuator in enumerate(model.actuators):
                if actuator["ctrlrange"] and (self.u_min[i] < actuator["ctrlrange"][0]
                                              or self.u_max[i] > actuator["ctrlrange"][1]):
                    raise ValueError(
                        f"control limits [{self.u_min[i]}, {self.u_max[i]}] of actuator "
                        f"{actuator['name']!r} are wider than its ctrlrange "
                        f"{tuple(actuator['ctrlrange'])}, to which every step clamps the "
                        "control; give limits within it (or a model without the ctrlrange)")
        if np.any(self.u_min > self.u_max):
            bad = int(np.argmax(self.u_min > self.u_max))
            raise ValueError(f"control limits: u_min[{bad}] = {self.u_min[bad]} is above "
                             f"u_max[{bad}] = {self.u_max[bad]}")
        self._euclidean = all(t in _EUCLIDEAN_JOINTS for t in model.joint_types)

    def _forces(self, u):
        return (None, u) if self.controls == "ctrl" else (u, None)

    def step(self, q, v, u):
        """One step of B worlds: q (B, nq), v (B, nv), u (B, nu) -> q, v, status (B,)."""
        tau, ctrl = self._forces(u)
        return _core.step(self.model, q, v, tau, self.dt, self.integrator, return_status=True,
                          ctrl=ctrl, threads=self.threads)

    def rollout(self, q0, v0, us):
        """T steps under us (T, nu) -> qs (T + 1, nq), vs (T + 1, nv), status (T,)."""
        taus, ctrls = self._forces(us)
        return _core.rollout(self.model, q0, v0, taus, self.dt, self.integrator,
                             return_status=True, ctrls=ctrls, threads=self.threads)

    def jacobians(self, qs, vs, us):
        """A (T, 2nv, 2nv), B (T, 2nv, nu) of the steps from qs[t], vs[t] under us[t] (tangent)."""
        tau, ctrl = self._forces(us)
        out = _core.step_jacobian(self.model, qs, vs, tau, self.dt, self.integrator, ctrl=ctrl,
                                  threads=self.threads)
        return (out[0], out[2]) if self.controls == "ctrl" else (out[0], out[1])

    def feedback_rollout(self, q_ref, v_ref, u_ref, k, K, alphas):
        """The plan's closed loop for each step size alpha, as one batch of worlds (in C++):
        u_t = clip(u_ref[t] + alpha k[t] + K[t] [q_ref[t] (-) q_t; v_t - v_ref[t]]) from
        (q_ref[0], v_ref[0]). Returns qs (n, T + 1, nq), vs, us (n, T, nu), status (n, T)."""
        c = np.ascontiguousarray
        return _core._feedback_rollout(self.model, c(q_ref), c(v_ref), c(u_ref), c(k), c(K),
                                       np.asarray(alphas, dtype=np.float64), self.u_min,
                                       self.u_max, self.controls, self.dt, self.integrator,
                                       self.threads)

    def difference(self, q_from, q_to):
        """q_to (-) q_from per row: the tangent vectors, shape (..., nv)."""
        q_from = np.asarray(q_from, dtype=np.float64)
        q_to = np.asarray(q_to, dtype=np.float64)
        if self._euclidean:
            return q_to - q_from
        q_from, q_to = np.broadcast_arrays(q_from, q_to)
        flat_from = q_from.reshape(-1, self.nq)
        flat_to = q_to.reshape(-1, self.nq)
        out = np.full((flat_from.shape[0], self.nv), np.nan)
        # a diverged state (NaN or inf, which difference refuses) gives NaN tangents: its cost is NaN
        finite = np.isfinite(flat_from).all(axis=1) & np.isfinite(flat_to).all(axis=1)
        if finite.any():
            out[finite] = _core.difference(self.model, flat_from[finite], flat_to[finite])
        return out.reshape(q_from.shape[:-1] + (self.nv,))


class Cost(Protocol):
    """A cost sum_t running(q_t, v_t, u_t) + terminal(q_T, v_T), in the dynamics' tangent space.

    evaluate(qs (K, T + 1, nq), vs (K, T + 1, nv), us (K, T, nu)) -> (K,) totals;
    derivatives(qs (T + 1, nq), vs (T + 1, nv), us (T, nu)) -> (lx (T + 1, 2nv), lu (T, nu),
    lxx (T + 1, 2nv, 2nv), luu (T, nu, nu), lux (T, nu, 2nv)), where row T of lx/lxx is the
    terminal cost's, and x derivatives are with respect to the tangent error [dq; dv].
    """

    def evaluate(self, qs, vs, us): ...

    def derivatives(self, qs, vs, us): ...


class QuadraticCost:
    """sum_t 1/2 (e_t' Q e_t + (u_t - u_ref)' R (u_t - u_ref)) + 1/2 e_T' Q_final e_T.

    e = [difference(q_goal, q); v - v_goal] (2 nv numbers). Q, Q_final: (2nv, 2nv), or a vector of
    2nv diagonal weights; R: (nu, nu) or nu diagonal weights. q_goal defaults to the model's q0
    (for GradynDynamics), v_goal and u_ref to zeros. For free and ball joints the derivative of
    difference() is taken as the identity (exact at the goal; a Gauss-Newton approximation away
    from it); the line search always uses the exact cost.
    """

    def __init__(self, dynamics, *, Q, R, Q_final=None, q_goal=None, v_goal=None, u_ref=None):
        nv, nu = dynamics.nv, dynamics.nu
        self.dynamics = dynamics
        self.Q = self._matrix("Q", Q, 2 * nv)
        self.R = self._matrix("R", R, nu)
        self.Q_final = self.Q if Q_final is None else self._matrix("Q_final", Q_final, 2 * nv)
        if q_goal is None:
            if not hasattr(dynamics, "model"):
                raise ValueError("q_goal: required for this dynamics (no model to take q0 from)")
            q_goal = dynamics.model.q0
        self.q_goal = _as_array("q_goal", q_goal, (dynamics.nq,))
        self.v_goal = np.zeros(nv) if v_goal is None else _as_array("v_goal", v_goal, (nv,))
        self.u_ref = np.zeros(nu) if u_ref is None else _as_array("u_ref", u_ref, (nu,))

    @staticmethod
    def _matrix(name, value, n):
        array = np.asarray(value, dtype=np.float64)
        if array.ndim == 0:
            array = np.full(n, float(array))
        if array.shape == (n,):
            array = np.diag(array)
        if array.shape != (n, n):
            raise ValueError(f"{name}: expected shape ({n}, {n}) or ({n},) (diagonal weights), got "
                             f"{array.shape}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name}: weights must be finite")
        array = 0.5 * (array + array.T)
        lowest = np.linalg.eigvalsh(array).min() if n else 0.0
        if lowest < -1e-12 * max(1.0, np.abs(array).max()):
            raise ValueError(f"{name}: expected non-negative weights (a positive semi-definite matrix); it has the "
                             f"eigenvalue {lowest:.3g}, and iLQR's cost would have no minimum")
        return array

    def errors(self, qs, vs):
        """The state errors [dq; dv], shape (..., 2nv)."""
        dq = self.dynamics.difference(self.q_goal, qs)
        return np.concatenate([dq, np.asarray(vs) - self.v_goal], axis=-1)

    def evaluate(self, qs, vs, us):
        e = self.errors(qs, vs)
        du = np.asarray(us) - self.u_ref
        running_e = e[..., :-1, :]
        running = 0.5 * (np.sum((running_e @ self.Q) * running_e, axis=(-2, -1))
                         + np.sum((du @ self.R) * du, axis=(-2, -1)))
        final = 0.5 * np.sum((e[..., -1, :] @ self.Q_final) * e[..., -1, :], axis=-1)
        return running + final

    def derivatives(self, qs, vs, us):
        e = self.errors(qs, vs)
        T = us.shape[0]
        lx = np.empty_like(e)
        lx[:T] = e[:T] @ self.Q
        lx[T] = self.Q_final @ e[T]
        lu = (us - self.u_ref) @ self.R
        lxx = np.empty((T + 1,) + self.Q.shape)
        lxx[:T] = self.Q
        lxx[T] = self.Q_final
        luu = np.broadcast_to(self.R, (T,) + self.R.shape)
        lux = np.zeros((T, us.shape[1], e.shape[1]))
        return lx, lu, lxx, luu, lux


def box_qp(H, g, lower, upper, x0=None):
    """Minimise 1/2 x'Hx + g'x subject to lower <= x <= upper (bounds may be -inf / inf).

    Returns (x, free, ok): the minimiser, a boolean array marking the controls not held at a
    bound, and False when H is not positive definite on the free controls (x is then the best
    point reached). Projected Newton (Tassa et al. 2014, Algorithm 1), warm-started at x0; the
    kernel iLQR's backward pass runs for each step (C++, control/ilqr.hpp).
    """
    for name, value in (("H", H), ("g", g), ("x0", x0)):
        if value is not None:
            _check_finite(name, np.asarray(value, dtype=np.float64))
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    if lower.shape == upper.shape and not np.all(lower <= upper):
        k = int(np.flatnonzero(~(lower <= upper))[0])
        raise ValueError(f"lower, upper: expected lower <= upper (bounds may be -inf and inf, not NaN), got "
                         f"lower[{k}] = {lower[k]} and upper[{k}] = {upper[k]}")
    x, free, ok = _core._box_qp(H, g, lower, upper, x0)
    return x, np.array(free, dtype=bool), ok


@dataclasses.dataclass
class IterationReport:
    """One iLQR iteration: the cost after it, the step taken (0 when rejected) and its bookkeeping."""

    iteration: int
    cost: float
    step: float
    expected_reduction: float
    actual_reduction: float
    regularization: float
    control_update: float
    seconds: float

    def __str__(self):
        return (f"iter {self.iteration:4d}  cost {self.cost:.6e}  step {self.step:.4g}  "
                f"reduction {self.actual_reduction:.3e} (expected {self.expected_reduction:.3e})  "
                f"reg {self.regularization:.1e}  |k| {self.control_update:.2e}  "
                f"{self.seconds * 1e3:.1f} ms")


@dataclasses.dataclass
class ILQRResult:
    """The best trajectory found: q (T + 1, nq), v (T + 1, nv), u (T, nu); feedback gains K
    (T, nu, 2nv) and feed-forward k (T, nu) of the last backward pass (u = u_t + K_t [dq; dv]
    tracks the plan from nearby states); the cost; whether it converged and why it stopped; the
    per-iteration reports; status (T,) the gradyn.Status flags of the trajectory's steps."""

    q: np.ndarray
    v: np.ndarray
    u: np.ndarray
    K: np.ndarray
    k: np.ndarray
    cost: float
    converged: bool
    reason: str
    iterations: list
    status: np.ndarray


_NON_FINITE = int(_core.Status.NON_FINITE)


def _line_search_steps(count: int) -> np.ndarray:
    return 0.5 ** np.arange(count)


def _backward_pass(A, B, lx, lu, lxx, luu, lux, us, u_min, u_max, mu, k_previous):
    """The Riccati-like sweep (C++); (k, K, expected) or None when a Q_uu is not positive definite."""
    c = np.ascontiguousarray
    out = _core._ilqr_backward_pass(c(A), c(B), c(lx), c(lu), c(lxx), c(luu), c(lux), c(us),
                                    u_min, u_max, mu, c(k_previous))
    if out is None:
        return None
    k, K, expected = out
    return k, K, np.array(expected)


def _forward_candidates(dynamics, q_ref, v_ref, u_ref, k, K, steps):
    """Roll the plan's closed loop out for every step size at once (one batch of worlds):
    the dynamics' own feedback_rollout when it has one (GradynDynamics: in C++), else step by step."""
    if hasattr(dynamics, "feedback_rollout"):
        return dynamics.feedback_rollout(q_ref, v_ref, u_ref, k, K, steps)
    count = len(steps)
    T = u_ref.shape[0]
    qs = np.empty((count, T + 1, dynamics.nq))
    vs = np.empty((count, T + 1, dynamics.nv))
    us = np.empty((count, T, dynamics.nu))
    status = np.zeros((count, T), dtype=np.uint32)
    qs[:, 0] = q_ref[0]
    vs[:, 0] = v_ref[0]
    for t in range(T):
        dx = np.concatenate([dynamics.difference(q_ref[t], qs[:, t]), vs[:, t] - v_ref[t]], axis=1)
        u = u_ref[t] + steps[:, None] * k[t] + dx @ K[t].T
        us[:, t] = np.clip(u, dynamics.u_min, dynamics.u_max)
        q_next, v_next, st = dynamics.step(qs[:, t], vs[:, t], us[:, t])
        qs[:, t + 1], vs[:, t + 1], status[:, t] = q_next, v_next, st
    return qs, vs, us, status


def _finite_cost(cost, qs, vs, us, status):
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged candidate costs inf
        values = np.asarray(cost.evaluate(qs, vs, us), dtype=np.float64)
    diverged = (status & _NON_FINITE).any(axis=-1) | ~np.isfinite(values)
    return np.where(diverged, np.inf, values)


def ilqr(dynamics, cost, q0, v0, u_init, *, max_iterations: int = 100, tolerance: float = 1e-7,
         gradient_tolerance: float = 1e-5, regularization: float = 0.0,
         max_regularization: float = 1e10, line_search_steps: int = 10,
         line_search_batch: int | None = None, callback: Callable[[IterationReport], None] | None = None,
         verbose: bool = False) -> ILQRResult:
    """Box-constrained iLQR from (q0, v0), starting from the controls u_init (T, nu).

    Controls stay within dynamics.u_min / u_max (the actuators' ctrlrange for GradynDynamics).
    regularization: the initial mu added to V_xx in the backward pass (raised by a factor when a
    Q_uu is not positive definite or no step size reduces the cost, lowered after a success).
    line_search_steps: how many step sizes (1, 1/2, ..., 2^-(n-1)) are tried, largest first, in
    rounds of line_search_batch (default: the number of cores) rolled out as one batch of worlds:
    a round costs about one rollout's wall time, and the next round runs only when none of its
    steps reduced the cost.
    callback(report) runs after every iteration; verbose prints each report. See the module
    docstring for the stopping rules; the result is the best trajectory found, never an exception.
    """
    nq, nv, nu = dynamics.nq, dynamics.nv, dynamics.nu
    q0 = _as_array("q0", q0, (nq,))
    v0 = _as_array("v0", v0, (nv,))
    u = _real_array("u_init", u_init)
    if u.ndim != 2 or u.shape[1] != nu or u.shape[0] < 1:
        raise ValueError(f"u_init: expected shape (T, {nu}) with T >= 1 steps (the horizon), "
                         f"got {u.shape}")
    _check_finite("u_init", u)
    if max_iterations < 0 or line_search_steps < 1:
        raise ValueError("max_iterations must be >= 0 and line_search_steps >= 1")
    batch = line_search_batch or getattr(dynamics, "threads", None) or os.cpu_count() or 1
    if batch < 1:
        raise ValueError(f"line_search_batch: expected a positive number, got {batch}")
    u = np.clip(u, dynamics.u_min, dynamics.u_max)
    T = u.shape[0]
    steps = _line_search_steps(line_search_steps)
    qs, vs, status = dynamics.rollout(q0, v0, u)
    status = np.asarray(status, dtype=np.uint32)
    J = float(_finite_cost(cost, qs[None], vs[None], u[None], status[None])[0])
    k = np.zeros((T, nu))
    K = np.zeros((T, nu, 2 * nv))
    reports: list[IterationReport] = []
    if not np.isfinite(J):
        return ILQRResult(qs, vs, u, K, k, J, False,
                          "the initial controls diverge (non-finite state or cost): start from "
                          "smaller controls or a shorter horizon", reports, status)
    mu = float(regularization)
    mu_min, factor0 = 1e-6, 2.0
    delta = 1.0
    reason = f"reached max_iterations={max_iterations}"
    converged = False
    need_derivatives = True
    for iteration in range(1, max_iterations + 1):
        started = time.perf_counter()
        if need_derivatives:
            A, B = dynamics.jacobians(qs[:-1], vs[:-1], u)
            lx, lu, lxx, luu, lux = cost.derivatives(qs, vs, u)
            need_derivatives = False
        sweep = _backward_pass(A, B, lx, lu, lxx, luu, lux, u, dynamics.u_min, dynamics.u_max,
                               mu, k)
        accepted = False
        step_taken = expected = actual = 0.0
        update = 0.0
        if sweep is not None:
            k, K, dV = sweep
            update = float(np.mean(np.max(np.abs(k), axis=1) / (np.max(np.abs(u), axis=1) + 1)))
            # A small update under heavy regularisation is not convergence, only caution.
            if update < gradient_tolerance and mu < 1e-5:
                reports.append(IterationReport(iteration, J, 0.0, 0.0, 0.0, mu, update,
                                               time.perf_counter() - started))
                if callback:
                    callback(reports[-1])
                if verbose:
                    print(reports[-1])
                reason = f"control update below gradient_tolerance={gradient_tolerance:g}"
                converged = True
                break
            # The step sizes in rounds of `batch`, each round one batched rollout; the largest
            # step that reduces the cost (actual / expected reduction > 0) is taken.
            for first in range(0, len(steps), batch):
                round_steps = steps[first:first + batch]
                cq, cv, cu, cst = _forward_candidates(dynamics, qs, vs, u, k, K, round_steps)
                costs = _finite_cost(cost, cq, cv, cu, cst)
                expected_all = -(round_steps * dV[0] + round_steps**2 * dV[1])
                for i, alpha in enumerate(round_steps):
                    z = (J - costs[i]) / expected_all[i] if expected_all[i] > 0 else -1.0
                    if np.isfinite(costs[i]) and costs[i] < J and z > 0:
                        accepted = True
                        step_taken, expected, actual = alpha, expected_all[i], J - costs[i]
                        qs, vs, u, status = cq[i], cv[i], cu[i], cst[i]
                        J = float(costs[i])
                        break
                if accepted:
                    break
        if accepted:
            delta = min(delta / factor0, 1 / factor0)
            mu = mu * delta if mu * delta > mu_min else 0.0
            need_derivatives = True
        else:
            delta = max(delta * factor0, factor0)
            mu = max(mu * delta, mu_min)
        reports.append(IterationReport(iteration, J, step_taken, expected, actual, mu, update,
                                       time.perf_counter() - started))
        if callback:
            callback(reports[-1])
        if verbose:
            print(reports[-1])
        if accepted and actual < tolerance * max(abs(J), 1e-12):
            reason = f"relative cost reduction below tolerance={tolerance:g}"
            converged = True
            break
        if mu > max_regularization:
            reason = (f"no step reduced the cost with regularization up to {max_regularization:g} "
                      "(the plan may be at a non-smooth point or the candidates diverge); "
                      "returning the best trajectory found")
            break
    return ILQRResult(qs, vs, u, K, k, J, converged, reason, reports, status)


class MPC:
    """Receding-horizon control: each call re-plans over `horizon` steps from the measured state. ::

        mpc = control.MPC(dynamics, cost, horizon=30, iterations=5)
        for t in range(steps):
            u = mpc(q, v)              # the plan's first control
            q, v = ...                 # apply it to the system (simulated or real)

    The plan is warm-started from the previous one shifted by a step (its last control repeated).
    iterations: at most this many iLQR iterations per call (a real-time budget; the plan improves
    across calls). ``mpc.last`` is the latest ILQRResult. Options are passed on to :func:`ilqr`.
    """

    def __init__(self, dynamics, cost, horizon: int, *, iterations: int = 5, u_init=None,
                 **ilqr_options):
        if horizon < 1:
            raise ValueError(f"horizon: expected at least 1 step, got {horizon}")
        self.dynamics = dynamics
        self.cost = cost
        self.horizon = int(horizon)
        self.iterations = int(iterations)
        self.options = ilqr_options
        if u_init is None:
            u_init = np.clip(np.zeros((horizon, dynamics.nu)), dynamics.u_min, dynamics.u_max)
        self.plan = np.asarray(u_init, dtype=np.float64)
        if self.plan.shape != (horizon, dynamics.nu):
            raise _shape_error("u_init", (horizon, dynamics.nu), self.plan.shape)
        self.last: ILQRResult | None = None

    def reset(self, u_init=None):
        """Forget the warm start."""
        self.plan = np.zeros((self.horizon, self.dynamics.nu)) if u_init is None else \
            _as_array("u_init", u_init, (self.horizon, self.dynamics.nu))
        self.last = None

    def __call__(self, q, v) -> np.ndarray:
        result = ilqr(self.dynamics, self.cost, q, v, self.plan, max_iterations=self.iterations,
                      **self.options)
        self.last = result
        self.plan = np.concatenate([result.u[1:], result.u[-1:]], axis=0)
        return result.u[0].copy()


def run_mpc(mpc: MPC, q0, v0, steps: int, *, plant=None, progress: bool = False):
    """Close the loop for `steps` steps: returns qs (steps + 1, nq), vs, us (steps, nu).

    plant(q, v, u) -> (q, v) is the system controlled (default: mpc.dynamics itself, one world).
    progress: a tqdm bar.
    """
    dynamics = mpc.dynamics
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps: expected a non-negative whole number of steps, got {steps!r}")
    steps = int(steps)
    qs = np.empty((steps + 1, dynamics.nq))
    vs = np.empty((steps + 1, dynamics.nv))
    us = np.empty((steps, dynamics.nu))
    qs[0] = _as_array("q0", q0, (dynamics.nq,))
    vs[0] = _as_array("v0", v0, (dynamics.nv,))
    iterator: Sequence[int] | object = range(steps)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="MPC", unit="step")
    for t in iterator:
        us[t] = mpc(qs[t], vs[t])
        if plant is None:
            q_next, v_next, _ = dynamics.step(qs[t][None], vs[t][None], us[t][None])
            qs[t + 1], vs[t + 1] = q_next[0], v_next[0]
        else:
            qs[t + 1], vs[t + 1] = plant(qs[t], vs[t], us[t])
    return qs, vs, us
