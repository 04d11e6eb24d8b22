"""Policies inside the rollout: a dense network maps an observation to the actuators' controls at
every step, and the whole closed loop and its adjoint run in C++ (include/gradyn/control/policy.hpp). ::

    policy = gradyn.Policy(model, ["shoulder.q", "shoulder.v", "clock.sin(1.0)", "task[0]"],
                           hidden=[64, 64])
    qs, vs, ctrls, status = policy.rollout(q0, v0, steps=500, dt=0.01, task=[0.3])
    grads = policy.rollout_vjp(qs, vs, qs_bar, vs_bar, dt=0.01, task=[0.3])
    grads["weights"], grads["q0"], grads["v0"], grads["task"], grads["params"]

Observations (``gradyn.policy_observations(model)`` lists the joint and sensor ones):

* ``"<joint>.q"``: a 1-DoF joint's position; ``"<joint>.v"`` / ``"<joint>.v[k]"``: a DoF's velocity;
* ``"sensor.<name>"`` (a one-entry sensor) / ``"sensor.<name>[k]"``: a reading of the model's sensors
  (MJCF ``<sensor>``, as ``gradyn.sensors`` reads it): a site's or body's pose (framepos,
  framequat), its velocities (framelinvel, frameangvel), an IMU's angular rate (gyro), a joint
  (jointpos, jointvel), read at the current state and differentiated. Accelerometer and touch
  sensors read a step, so the policy sees the last step's reading (zero at the first step; as
  MuJoCo's sensordata after mj_step): the accelerometer is differentiated (through the two
  velocities its acceleration is made of), touch, a contact flag with its normal force, carries no
  gradient. Observing them makes rollout_vjp replay the closed loop forward once more;
* ``"clock.sin(<f>)"``, ``"clock.cos(<f>)"``: sin / cos of 2 pi f t, t = step index x dt (f in Hz);
* ``"task[<k>]"``: entry k of the world's task vector (a target; given per world or shared);
* ``"memory[<k>]"``: entry k of a recurrent policy's memory (``memory=`` outputs fed back).

A policy that reads task entries alone is open loop (paper 002's reaching controller): its controls
are the same at every step, so its network runs once per rollout and once in the adjoint (on the
controls' adjoint summed over the steps), with the same numbers as running it at every step.

The outputs are the model's controls, one per actuator (``model.actuator_names``); the actuators
clamp them to their ctrlrange. The weights start seeded (Glorot/He) with the last layer zero
(``zero_last_layer=True``: the policy starts by commanding 0, paper 002's initialisation).

Batches: q0 of shape (B, nq) runs B worlds on the batch threads; weights (P,) shared or (B, P) per
world; task (k,) shared or (B, k). ``rollout_vjp`` returns each world's adjoints, or their sum over
the worlds for the inputs that were shared (``reduce="sum"``, default) . ``decay`` < 1 multiplies the
adjoint carried back one step by it (paper 002, section 3.2: truncates long-horizon gradients);
1 is the exact gradient.
"""

from __future__ import annotations

import numpy as np

from . import _core

__all__ = ["Policy", "policy_observations"]


def _real_array(name: str, value) -> np.ndarray:
    """value as a float64 array; ValueError naming `name` for strings, complex numbers or objects
    (np.asarray would parse strings and drop imaginary parts without a word)."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected an array of real numbers, got dtype {array.dtype}")
    return array.astype(np.float64, copy=False)


def policy_observations(model) -> list[str]:
    """The joint and sensor observations a policy on `model` may read (besides clock.sin/cos(f),
    task[k] and memory[k])."""
    if not isinstance(model, _core.Model):
        raise TypeError(f"model: expected a gradyn.Model, got {type(model).__name__}")
    return list(_core._policy_observations(model))


class Policy:
    """A closed-loop controller for `model`: observations -> hidden layers -> model.nu controls.

    activation: of the hidden layers ('tanh', 'relu', 'elu', 'softplus', 'sigmoid', 'identity');
    output_activation: of the outputs (default 'identity'). memory: a recurrent policy's state size
    (paper 002, Eq. 3): the network has that many outputs after the controls, read back at the
    next step as the observations "memory[k]" (zero at the first step). An unknown observation
    raises ValueError listing the valid ones.
    """

    def __init__(self, model, observations, hidden=(64, 64), activation: str = "tanh",
                 output_activation: str = "identity", seed: int = 0, zero_last_layer: bool = True,
                 memory: int = 0):
        self.model = model
        self.observations = [str(o) for o in observations]
        self.hidden = [int(h) for h in hidden]
        self.activation = activation
        self.output_activation = output_activation
        self.memory = int(memory)
        info = _core._policy_info(model, self.observations, self.hidden, activation, output_activation,
                                  self.memory, int(seed), bool(zero_last_layer))
        self.param_count = int(info["param_count"])
        self.task_size = int(info["task_size"])
        self.widths = list(info["widths"])
        self.param_names = list(info["param_names"])
        self.weights = np.asarray(info["weights"])

    def __repr__(self):
        memory = f" + {self.memory} memory" if self.memory else ""
        return (f"Policy({len(self.observations)} observations -> {self.hidden} ({self.activation}) -> "
                f"{self.model.nu} controls{memory}, {self.param_count} weights)")

    def _spec(self):
        return (self.model, self.observations, self.hidden, self.activation, self.output_activation, self.memory)

    def rollout(self, q0, v0, steps: int, dt: float, weights=None, task=None, integrator: str = "euler",
                threads: int | None = None):
        """The closed loop for `steps` steps: (qs, vs, ctrls, status) of shapes (T+1, nq), (T+1, nv),
        (T, nu), (T,), with a leading B when q0 is (B, nq). A step with numerical trouble never
        raises: status holds its gradyn.Status flags and the rollout goes on."""
        q0 = _real_array("q0", q0)
        single = q0.ndim == 1
        q0b, v0b = np.atleast_2d(q0), np.atleast_2d(_real_array("v0", v0))
        w = self.weights if weights is None else _real_array("weights", weights)
        if not np.isfinite(w).all():
            raise ValueError("weights: expected finite numbers (NaN or inf in the policy's weights)")
        t = None if task is None else _real_array("task", task)
        out = _core._policy_rollout(*self._spec(), w, q0b, v0b, t, int(steps), float(dt), integrator, threads)
        return tuple(x[0] for x in out) if single else out

    def rollout_vjp(self, qs, vs, qs_bar, vs_bar, dt: float, weights=None, task=None, ctrls_bar=None,
                    decay: float = 1.0, reduce: str = "sum", integrator: str = "euler",
                    threads: int | None = None, clip_norm: float = 0.0) -> dict:
        """Adjoints of a loss of the trajectory (qs_bar, vs_bar: d loss / d qs, vs; ctrls_bar: of the
        controls, optional) with respect to q0, v0, the weights, the task and the model's flat
        parameters (``model.param_names``). Given the trajectory `rollout` returned.
        reduce: 'sum' sums over the worlds the adjoints of inputs shared by them (weights or task
        given once, the model's parameters); 'none' returns every world's. A world whose trajectory
        is not finite (it diverged: rollout's status says NON_FINITE) gets zero adjoints, and
        grads["diverged"] (one bool per world) reports it. clip_norm > 0 scales the adjoint carried
        back one step (state and memory together, after the decay) down to that norm whenever it is
        longer: gradient-norm clipping through time, which keeps long horizons' gradients from
        exploding (no longer the exact gradient, by design; 0: none)."""
        if reduce not in ("sum", "none"):
            raise ValueError(f"reduce: expected 'sum' or 'none', got {reduce!r}")
        qs = _real_array("qs", qs)
        single = qs.ndim == 2
        arrays = {"qs": qs, "vs": vs, "qs_bar": qs_bar, "vs_bar": vs_bar, "ctrls_bar": ctrls_bar}
        arrays = {k: None if a is None else _real_array(k, a) for k, a in arrays.items()}
        expand = (lambda a: None if a is None else a[None]) if single else (lambda a: a)
        qs, vs, qs_bar, vs_bar, ctrls_bar = (expand(a) for a in arrays.values())
        w = self.weights if weights is None else _real_array("weights", weights)
        t = None if task is None else _real_array("task", task)
        q0_bar, v0_bar, w_bar, task_bar, p_bar = _core._policy_rollout_vjp(
            *self._spec(), w, t, qs, vs, qs_bar, vs_bar, ctrls_bar, float(dt), float(decay), integrator, threads,
            clip_norm=float(clip_norm))
        # A world whose trajectory diverged has no meaningful gradient: its adjoints are zero (so it
        # does not poison sums over the batch) and grads["diverged"] says which.
        diverged = ~(np.isfinite(qs).all(axis=(1, 2)) & np.isfinite(vs).all(axis=(1, 2)))
        for a in (q0_bar, v0_bar, w_bar, task_bar, p_bar):
            a[diverged] = 0.0
        grads = {"q0": q0_bar, "v0": v0_bar, "weights": w_bar, "task": task_bar, "params": p_bar}
        if single:
            grads = {k: v[0] for k, v in grads.items()}
            grads["diverged"] = bool(diverged[0])
            return grads
        grads["diverged"] = diverged
        if reduce == "sum":
            if w.ndim == 1:
                grads["weights"] = w_bar.sum(axis=0)
            if t is not None and t.ndim == 1:
                grads["task"] = task_bar.sum(axis=0)
            grads["params"] = p_bar.sum(axis=0)
        return grads
