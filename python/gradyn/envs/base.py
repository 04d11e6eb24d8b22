"""What every gradyn environment shares: one gradyn model stepped ``frame_skip`` times per environment
step in one ``gradyn.rollout`` call, diverged worlds truncated, the action checked, rendering, and a
differentiable step through ``gradyn.torch``.

An environment is defined by five functions of a *batch* of worlds (leading dimension B, or none for
one world in ``differentiable_step``) written once for NumPy and torch alike (``xp`` is the ``numpy`` or
the ``torch`` module): the controls an action gives, the observation of a state, and the reward and
termination of a transition. The single environment, the vector environment
(:mod:`gradyn.envs.vector`) and ``differentiable_step`` all call the same functions.
"""

from __future__ import annotations

import pathlib

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import gradyn

ASSETS = pathlib.Path(__file__).resolve().parent / "assets"

#: Status bits after which a world's state is no longer usable: the environment truncates the episode
#: (``truncated=True``, ``info["diverged"]=True``), keeps the last finite state and gives reward 0.
#: The other bits (e.g. SOLVER_NOT_CONVERGED, DEEP_PENETRATION) are only reported in ``info["status"]``.
DIVERGED = int(gradyn.Status.NON_FINITE | gradyn.Status.SINGULAR_INERTIA)


def asset(name: str) -> str:
    """Path of a model file shipped with the environments (``gradyn/envs/assets``)."""
    return str(ASSETS / name)


def check_batch(name: str, array, shape: tuple, batch: int | None) -> np.ndarray:
    """array as float64 of shape `shape` (or (batch,) + shape); ValueError naming both shapes otherwise."""
    try:
        a = np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an array of numbers, got {array!r:.80}") from None
    expected = tuple(shape) if batch is None else (batch,) + tuple(shape)
    if a.shape != expected:
        raise ValueError(f"{name}: expected shape {expected}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[:5].tolist()
        raise ValueError(f"{name}: expected finite numbers, got NaN or inf at {bad}")
    return a


class GradynEnv(gym.Env):
    """Base class of the gradyn environments (see :mod:`gradyn.envs` for the list and their rules).

    Subclasses set ``sim_dt`` (the gradyn time step), ``frame_skip`` (gradyn steps per environment step),
    ``integrator`` ("euler", semi-implicit, or "rk4"),
    ``action_space`` and ``observation_space`` and define:

    * ``_make_model()`` -> the gradyn Model;
    * ``_initial_state(rng)`` -> (q, v) of one world, drawn from the NumPy Generator ``rng`` only;
    * ``_controls(action, xp)`` -> ``{"ctrl": (..., nu)}`` or ``{"tau": (..., nv)}``, held over the frame skip;
    * ``_observe(q, v, xp)`` -> observation (..., obs_dim);
    * ``_reward(q0, v0, q1, v1, action, xp)`` -> (reward (...), terminated (...), {name: term (...)}).

    Common arguments: ``render_mode`` (None or "rgb_array"), ``threads`` (threads of each gradyn call;
    1 for a single environment), ``width``/``height``/``camera`` of rendered frames.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    sim_dt: float = 0.01
    frame_skip: int = 1
    integrator: str = "euler"

    def __init__(self, render_mode: str | None = None, threads: int = 1, width: int = 480, height: int = 480,
                 camera=None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected one of {self.metadata['render_modes']} or None, "
                             f"got {render_mode!r} ('human' windows are not offered: use gradyn.viewer.show)")
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads: expected a positive number of threads, got {threads!r}")
        if not all(isinstance(n, (int, np.integer)) and n >= 16 for n in (width, height)):
            raise ValueError(f"width, height: expected whole numbers of pixels >= 16, got {width!r}, {height!r}")
        self.render_mode = render_mode
        self.threads = threads
        self.width, self.height, self.camera = width, height, camera
        self.model = self._make_model()
        #: Seconds of simulated time per environment step.
        self.dt = self.frame_skip * self.sim_dt
        self._q = self._v = None
        self._diverged = False

    # --- the definition of an environment, batched, for xp = numpy or torch (subclasses) ------------------

    def _make_model(self):
        raise NotImplementedError

    def _initial_state(self, rng: np.random.Generator):
        raise NotImplementedError

    def _controls(self, action, xp):
        raise NotImplementedError

    def _observe(self, q, v, xp):
        raise NotImplementedError

    def _reward(self, q0, v0, q1, v1, action, xp):
        raise NotImplementedError

    # --- the transition of B worlds in NumPy, shared with the vector environment --------------------------

    def _simulate(self, q, v, action, threads):
        """frame_skip gradyn steps of B worlds under the action held constant, in one batched call.
        Returns (q (B, nq), v (B, nv), status (B,): the OR of every substep's gradyn.Status bits)."""
        controls = self._controls(action, np)
        held = {k: np.repeat(x[:, None, :], self.frame_skip, axis=1) for k, x in controls.items()}
        qs, vs, status = gradyn.rollout(self.model, q, v, held.get("tau"), self.sim_dt, integrator=self.integrator,
                                        ctrls=held.get("ctrl"), return_status=True, threads=threads)
        return qs[:, -1], vs[:, -1], np.bitwise_or.reduce(status, axis=1)

    def _transition(self, q, v, action, threads):
        """One environment step of B worlds: (q1, v1, obs, reward, terminated, diverged, status, terms).
        A diverged world keeps its previous state (so its observation stays finite), gets reward 0 and is
        not 'terminated': the caller truncates it."""
        q1, v1, status = self._simulate(q, v, action, threads)
        diverged = (status & DIVERGED) != 0
        q1 = np.where(diverged[:, None], q, q1)
        v1 = np.where(diverged[:, None], v, v1)
        reward, terminated, terms = self._reward(q, v, q1, v1, action, np)
        reward = np.where(diverged, 0.0, reward)
        terminated = np.asarray(terminated, dtype=bool) & ~diverged
        obs = self._observe(q1, v1, np)
        return q1, v1, obs, reward, terminated, diverged, status, terms

    def _check_action(self, action, batch: int | None = None) -> np.ndarray:
        """The action as float64, clipped to the action space (as MuJoCo clamps a control to its
        ctrlrange); ValueError for a wrong shape or a non-finite entry."""
        name = "action" if batch is None else "actions"
        a = check_batch(name, action, self.action_space.shape, batch)
        return np.clip(a, self.action_space.low, self.action_space.high)

    # --- gymnasium.Env ------------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw an initial state from the environment's generator (``seed`` reseeds it); returns (obs, info)."""
        super().reset(seed=seed)
        q, v = self._initial_state(self.np_random)
        self._q, self._v = q[None, :], v[None, :]
        self._diverged = False
        return self._observe(self._q, self._v, np)[0], {}

    def step(self, action):
        """Returns (obs, reward, terminated, truncated, info); info holds ``status`` (the gradyn.Status bits
        of the frame_skip steps, OR-ed), ``diverged`` and the reward's terms."""
        if self._q is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._diverged:
            raise gym.error.ResetNeeded("the simulation diverged at the previous step (info['diverged']); "
                                        "call reset() before step()")
        a = self._check_action(action)[None, :]
        q1, v1, obs, reward, terminated, diverged, status, terms = self._transition(self._q, self._v, a,
                                                                                    self.threads)
        self._q, self._v = q1, v1
        self._diverged = bool(diverged[0])
        info = {"status": int(status[0]), "diverged": self._diverged}
        info.update({k: float(np.asarray(t).reshape(-1)[0]) for k, t in terms.items()})
        return obs[0], float(reward[0]), bool(terminated[0]), self._diverged, info

    def render(self):
        """An (height, width, 3) uint8 frame of the current state (render_mode="rgb_array"), drawn by
        gradyn.viewer.render_rgb; None without a render mode."""
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode; make the environment with "
                            "render_mode='rgb_array' to get frames")
            return None
        if self._q is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        from gradyn.viewer import render_rgb  # lazily: the viewer's dependencies are needed only to render

        return render_rgb(self.model, self._q[0], width=self.width, height=self.height, camera=self.camera)

    # --- state access and the differentiable step ---------------------------------------------------------

    @property
    def state(self):
        """(q, v) of the current state, copies."""
        if self._q is None:
            raise gym.error.ResetNeeded("call reset() before reading the state")
        return self._q[0].copy(), self._v[0].copy()

    def set_state(self, q, v):
        """Put the environment in state (q, v) (shapes (model.nq,), (model.nv,))."""
        self._q = check_batch("q", q, (self.model.nq,), None)[None, :]
        self._v = check_batch("v", v, (self.model.nv,), None)[None, :]
        self._diverged = False

    def differentiable_step(self, q, v, action, params=None):
        """One environment step as a torch operation, for gradient-based agents and model fitting.

        q (nq,), v (nv,), action (action_dim,) tensors (or with a leading batch dimension B on each, or
        arrays; float64 is used for arrays), params: None or the model's flat parameter vector
        (``model.param_names``). Returns ``(q_next, v_next, obs, reward, terminated)``: the first four
        differentiable with respect to q, v, the action and params (gradients from gradyn's adjoints
        through ``gradyn.torch.rollout`` over the frame_skip steps), ``terminated`` a bool tensor.
        The action is clipped to the action space like :meth:`step` (zero gradient outside it). The
        environment's own state is not touched. A world that diverges has a non-finite q_next (its
        ``gradyn.Status`` is not checked here: test ``torch.isfinite``).
        """
        try:
            import torch

            import gradyn.torch as gradyn_torch
        except ImportError as e:
            raise ImportError("differentiable_step needs PyTorch: pip install torch (or pip install "
                              f"gradyn[torch]); importing it failed with: {e}") from e
        tensors = []
        for name, x, size in (("q", q, self.model.nq), ("v", v, self.model.nv),
                              ("action", action, self.action_space.shape[0])):
            t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
            if t.dim() not in (1, 2) or t.shape[-1] != size:
                raise ValueError(f"{name}: expected shape ({size},) or (B, {size}), got {tuple(t.shape)}")
            tensors.append(t)
        q, v, action = tensors
        if len({t.shape[:-1] for t in tensors}) != 1:
            raise ValueError(f"q, v and action must share the batch dimension: got shapes {tuple(q.shape)}, "
                             f"{tuple(v.shape)}, {tuple(action.shape)}")
        low = torch.as_tensor(self.action_space.low, dtype=action.dtype)
        high = torch.as_tensor(self.action_space.high, dtype=action.dtype)
        action = torch.clamp(action, low, high)
        controls = self._controls(action, torch)
        held = {k: x.unsqueeze(-2).expand(*x.shape[:-1], self.frame_skip, x.shape[-1]) for k, x in controls.items()}
        qs, vs = gradyn_torch.rollout(self.model, q, v, held.get("tau"), self.sim_dt, params=params,
                                      integrator=self.integrator, ctrls=held.get("ctrl"))
        q1, v1 = qs[..., -1, :], vs[..., -1, :]
        reward, terminated, _ = self._reward(q, v, q1, v1, action, torch)
        return q1, v1, self._observe(q1, v1, torch), reward, terminated


def box(low, high) -> spaces.Box:
    """A float64 Box (MuJoCo's environments observe in float64 too)."""
    return spaces.Box(np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64), dtype=np.float64)
