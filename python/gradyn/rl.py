"""Reinforcement learning that uses the simulator's gradients (paper 003 §5, and short-horizon
actor-critic), on PyTorch and Stable-Baselines3::

    import gymnasium as gym, gradyn.envs, gradyn.rl
    env = gym.make("gradyn/Reaching-v0", links=6)
    agent = gradyn.rl.PolicyEnhancedSAC("MlpPolicy", env, seed=0)     # SAC + policy enhancement
    agent.learn(20_000)
    agent = gradyn.rl.SampleEnhancedSAC("MlpPolicy", env, neighbours=9, perturbation=0.1)
    agent = gradyn.rl.SHAC(env, horizon=4, num_envs=16); agent.learn(100_000)

What each method uses (all through ``env.unwrapped.differentiable_step(q, v, action)``, the gradyn
environments' one-step transition as a torch operation with gradients from gradyn's adjoints):

* **Sample enhancement** (paper 003 Eq. 10-11, :class:`GradientReplayBuffer`,
  :class:`SampleEnhancedSAC`): each sampled transition (s, a, r, s') also gives ``neighbours``
  first-order neighbours ``(s, a + da, s' + J da, r + dr/da . da)``, J = ds'/da the exact Jacobian of
  the step (:func:`action_jacobian`), da ~ N(0, perturbation^2) per action component, clipped so that
  a + da stays in the action space. A batch keeps SAC's size B: ceil(B / (1 + K)) real transitions and
  their neighbours (the paper's ratio of real to generated samples). J is computed once per transition,
  when it enters the buffer.
* **Policy enhancement** (Eq. 12-14, :class:`PolicyEnhancedSAC`): SAC's actor loss
  ``alpha log pi(a|s) - Q(s, a)`` with the gradient of Q with respect to the action replaced by that
  of its one-step expansion through the simulator (Eq. 13),
  ``Q^(s, a) = r(s, a) + gamma (1 - d) [min_i Q_i(s', a') - alpha log pi(a'|s')]``,
  s' = step(s, a), a' ~ pi(s'), differentiated through r and s' (Eq. 14: the loss is
  ``-dQ^/da . a + alpha log pi(a|s)``, dQ^/da held fixed, which has the same gradient).
* **Short-horizon actor-critic** (:class:`SHAC`, after Xu et al. 2022): batched H-step rollouts through
  differentiable_step; the actor's loss is minus the discounted return plus a learned value at the
  horizon (and at episode ends), backpropagated through the simulator; the critic is fitted to TD(lambda)
  targets of the same rollouts. Choose the horizon by the gradient's growth: on gradyn's Ant (PGS
  contact) the actor gradient's norm is about 3 at horizon 4 and over 1e3 at 8 (examples/rl/ant.md).

The replay buffer needs the simulator state (q, v) of each transition, which an observation does not
always hold: :class:`StateInfo` (applied for you by the SAC classes) puts it into each step's info.
Actions are in SB3's convention inside the agents: scaled to [-1, 1] (``DifferentiableTransition``
maps them to the environment's action space).
"""

from __future__ import annotations

import copy
import sys
import time
from typing import NamedTuple

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from stable_baselines3 import SAC
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.running_mean_std import RunningMeanStd
from stable_baselines3.common.utils import polyak_update
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

__all__ = ["DifferentiableTransition", "GradientReplayBuffer", "GradientReplaySamples", "PolicyEnhancedSAC", "SHAC",
           "SampleEnhancedSAC", "StateInfo", "action_jacobian", "check_differentiable", "first_order_neighbours",
           "neighbours"]

STATE_KEY = "gradyn_state"


def _describe(env) -> str:
    spec = getattr(env, "spec", None)
    name = getattr(spec, "id", None) if spec is not None else None
    cls = type(env)
    return f"{name + ' ' if name else ''}({cls.__module__}.{cls.__qualname__})"


def check_differentiable(env, who: str = "gradyn.rl"):
    """The environment under ``env`` that has ``differentiable_step`` (``env.unwrapped``), for an
    environment id, a Gymnasium environment (wrapped or not) or an SB3 DummyVecEnv of them.
    TypeError saying what is needed otherwise (e.g. for MuJoCo's Gymnasium environments)."""
    if isinstance(env, str):
        env = gym.make(env)
    if isinstance(env, DummyVecEnv):
        inner = env.envs[0]
    elif isinstance(env, VecEnv):
        raise TypeError(f"{who}: env: expected a Gymnasium environment or an SB3 DummyVecEnv (the gradients need "
                        f"the environment in this process), got {type(env).__name__}")
    elif isinstance(env, gym.Env):
        inner = env
    else:
        raise TypeError(f"{who}: env: expected a Gymnasium environment (e.g. gymnasium.make('gradyn/Reaching-v0')), "
                        f"got {env!r:.80}")
    base = inner.unwrapped
    if not callable(getattr(base, "differentiable_step", None)) or not hasattr(base, "model"):
        raise TypeError(f"{who} needs an environment with a differentiable step: env.unwrapped.differentiable_step("
                        f"q, v, action) and a gradyn model, as the gradyn.envs environments have (e.g. "
                        f"gymnasium.make('gradyn/Reaching-v0')); got {_describe(base)}, which has none. Train a plain "
                        f"environment with stable_baselines3.SAC instead")
    return base


class StateInfo(gym.Wrapper):
    """Puts the simulator state (q, v) each step starts from into its info, as ``info["gradyn_state"]``
    (one float64 array q then v), so that a replay buffer can store it next to the observation."""

    def __init__(self, env):
        check_differentiable(env, "StateInfo")
        super().__init__(env)

    def step(self, action):
        q, v = self.env.unwrapped.state
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = dict(info)
        info[STATE_KEY] = np.concatenate([q, v])
        return obs, reward, terminated, truncated, info


def _finite_tensor(name: str, x) -> torch.Tensor:
    """x as a float64 tensor of finite numbers; ValueError naming x otherwise."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected an array of numbers, got {x!r:.80}") from None
    if x.is_complex() or not torch.isfinite(x).all():
        raise ValueError(f"{name}: expected finite real numbers, got NaN, inf or complex numbers")
    return x.to(torch.float64)


def _batch_tensor(name: str, x, width: int) -> torch.Tensor:
    """x as a float64 (B, width) tensor (gradients kept); ValueError naming x otherwise."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(np.asarray(x, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected an array of numbers, got {x!r:.80}") from None
    if x.is_complex():
        raise ValueError(f"{name}: expected real numbers, got a complex tensor")
    if x.dim() != 2 or x.shape[1] != width:
        raise ValueError(f"{name}: expected shape (B, {width}), got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name}: expected finite numbers, got NaN or inf")
    return x.to(torch.float64)


class DifferentiableTransition:
    """The environment's step as a batched torch function of (state, action) in the agents'
    coordinates: ``transition(states (B, nq + nv), actions (B, m))`` -> ``(next_obs (B, o), reward (B,),
    terminated (B,) bool, next_states (B, nq + nv))``, float64, differentiable with respect to the states
    and the actions (gradyn's adjoints). ``actions`` are scaled to [-1, 1] (SB3's convention) unless
    ``scaled=False`` was given, in which case they are in the environment's action space."""

    def __init__(self, env, scaled: bool = True):
        self.env = check_differentiable(env, "DifferentiableTransition")
        self.nq, self.nv = self.env.model.nq, self.env.model.nv
        self.low = torch.as_tensor(self.env.action_space.low, dtype=torch.float64)
        self.high = torch.as_tensor(self.env.action_space.high, dtype=torch.float64)
        self.scaled = scaled

    def to_env_action(self, actions):
        a = actions.to(torch.float64)
        return self.low + 0.5 * (a + 1.0) * (self.high - self.low) if self.scaled else a

    def __call__(self, states, actions):
        states, actions = _batch_tensor("states", states, self.nq + self.nv), \
            _batch_tensor("actions", actions, self.low.shape[0])
        if states.shape[0] != actions.shape[0]:
            raise ValueError(f"states and actions: expected the same batch size, got {states.shape[0]} states and "
                             f"{actions.shape[0]} actions")
        q, v = states[..., :self.nq], states[..., self.nq:]
        q1, v1, obs, reward, terminated = self.env.differentiable_step(q, v, self.to_env_action(actions))
        return obs, reward, terminated, torch.cat([q1, v1], dim=-1)


def action_jacobian(transition: DifferentiableTransition, states, actions):
    """The exact Jacobians of the next observation and the reward with respect to the action, for a
    batch: returns (next_obs (B, o), reward (B,), J (B, o, m), reward_gradient (B, m)), float64.

    One batched forward and one batched backward gradyn call: every sample is repeated o + 1 times
    and each copy's backward pass is seeded with one row of the identity."""
    if not isinstance(transition, DifferentiableTransition):
        raise TypeError(f"transition: expected a gradyn.rl.DifferentiableTransition, got {transition!r:.80}")
    states = _batch_tensor("states", states, transition.nq + transition.nv)
    actions = _batch_tensor("actions", actions, transition.low.shape[0])
    batch, m = actions.shape
    with torch.no_grad():
        obs0, r0, _, _ = transition(states[:1], actions[:1])
    p = obs0.shape[-1] + 1
    a = actions.repeat_interleave(p, dim=0).detach().requires_grad_(True)
    obs, reward, _, _ = transition(states.repeat_interleave(p, dim=0), a)
    out = torch.cat([obs, reward[:, None]], dim=-1)  # (B p, p)
    seed = torch.eye(p, dtype=out.dtype).repeat(batch, 1)
    (grad,) = torch.autograd.grad(out, a, grad_outputs=seed)
    jac = grad.reshape(batch, p, m)
    out = out.detach().reshape(batch, p, p)[:, 0]
    return out[:, :-1], out[:, -1], jac[:, :-1], jac[:, -1]


def neighbours(transition: DifferentiableTransition, states, actions, next_obs, rewards, k: int,
               perturbation: float, generator: torch.Generator | None = None):
    """Paper 003 Eq. 10-11: K first-order neighbours of each transition (s, a, r, s').

    states (B, nq + nv), actions (B, m) in [-1, 1], next_obs (B, o), rewards (B,) (those of the
    transitions: what the simulator gave). Returns (actions_k (B, K, m), next_obs_k (B, K, o),
    rewards_k (B, K)) with a_k = clip(a + da, -1, 1), da ~ N(0, perturbation^2),
    s'_k = s' + J (a_k - a), r_k = r + dr/da . (a_k - a)."""
    _check_neighbour_options(k, perturbation)
    actions = torch.as_tensor(actions, dtype=torch.float64)
    _, _, jac, rgrad = action_jacobian(transition, states, actions)
    return first_order_neighbours(actions, next_obs, rewards, jac, rgrad, k, perturbation, generator)


def _check_neighbour_options(k, perturbation):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"neighbours: expected a whole number >= 0, got {k!r}")
    if not isinstance(perturbation, (int, float, np.floating)) or not np.isfinite(perturbation) or perturbation <= 0:
        raise ValueError(f"perturbation: expected a finite number > 0 (the standard deviation of the action "
                         f"perturbations, in the [-1, 1] action scale), got {perturbation!r}")


def first_order_neighbours(actions, next_obs, rewards, jac, reward_gradient, k: int, perturbation: float,
                           generator: torch.Generator | None = None):
    """:func:`neighbours` from Jacobians already at hand: actions (B, m), next_obs (B, o), rewards (B,),
    jac (B, o, m) and reward_gradient (B, m), the last two as :func:`action_jacobian` returns them for the
    transitions' states and actions."""
    _check_neighbour_options(k, perturbation)
    actions, next_obs, rewards, jac, rgrad = (_finite_tensor(name, x) for name, x in (
        ("actions", actions), ("next_obs", next_obs), ("rewards", rewards), ("jac", jac),
        ("reward_gradient", reward_gradient)))
    if actions.dim() != 2 or next_obs.dim() != 2:
        raise ValueError(f"actions, next_obs: expected shapes (B, m) and (B, o), got {tuple(actions.shape)} and "
                         f"{tuple(next_obs.shape)}")
    (batch, m), o = actions.shape, next_obs.shape[1]
    rewards = rewards.reshape(-1) if rewards.dim() == 2 and rewards.shape[1] == 1 else rewards
    for name, x, shape in (("next_obs", next_obs, (batch, o)), ("rewards", rewards, (batch,)),
                           ("jac", jac, (batch, o, m)), ("reward_gradient", rgrad, (batch, m))):
        if tuple(x.shape) != shape:
            raise ValueError(f"{name}: expected shape {shape} (from {batch} actions of {m} numbers and observations "
                             f"of {o}), got {tuple(x.shape)}")
    noise = torch.randn(actions.shape[0], k, actions.shape[1], generator=generator, dtype=torch.float64)
    a_k = torch.clamp(actions[:, None, :] + perturbation * noise, -1.0, 1.0)
    da = a_k - actions[:, None, :]
    obs_k = next_obs[:, None, :] + torch.einsum("bom,bkm->bko", jac, da)
    r_k = rewards[:, None] + torch.einsum("bm,bkm->bk", rgrad, da)
    return a_k, obs_k, r_k


class GradientReplaySamples(NamedTuple):
    """SB3's ReplayBufferSamples with the simulator states (B, nq + nv) of the observations."""
    observations: torch.Tensor
    actions: torch.Tensor
    next_observations: torch.Tensor
    dones: torch.Tensor
    rewards: torch.Tensor
    discounts: torch.Tensor | None = None
    states: torch.Tensor | None = None


class GradientReplayBuffer(ReplayBuffer):
    """An SB3 ReplayBuffer that also keeps each transition's simulator state (from
    ``info["gradyn_state"]``, see :class:`StateInfo`) and, with ``neighbours`` K > 0, adds K first-order
    neighbours to every sampled transition (paper 003's sample enhancement; :func:`neighbours`). A batch
    keeps its size B, as in the paper, where the neighbours join the buffer and batches are drawn from it:
    ceil(B / (1 + K)) real transitions first, then their neighbours (K each, in order), cut to B rows.
    The update then costs what SAC's does. The action Jacobians of a transition
    (of the next observation and of the reward) are computed once, when it is added, and kept beside it
    (float32, (o + 1) m numbers a transition); each sampling draws fresh perturbations.

    Extra arguments (SAC's ``replay_buffer_kwargs``): ``transition`` (a :class:`DifferentiableTransition`
    of the environment), ``neighbours`` (K, default 0: states only), ``perturbation`` (the standard
    deviation of da, default 0.1, in the [-1, 1] action scale)."""

    def __init__(self, buffer_size, observation_space, action_space, device="cpu", n_envs: int = 1,
                 optimize_memory_usage: bool = False, handle_timeout_termination: bool = True, *,
                 transition: DifferentiableTransition, neighbours: int = 0, perturbation: float = 0.1):
        if optimize_memory_usage:
            raise ValueError("optimize_memory_usage: GradientReplayBuffer keeps next observations apart; pass False")
        _check_neighbour_options(neighbours, perturbation)
        if not isinstance(transition, DifferentiableTransition):
            raise TypeError(f"transition: expected a gradyn.rl.DifferentiableTransition, got {transition!r:.80}")
        super().__init__(buffer_size, observation_space, action_space, device=device, n_envs=n_envs,
                         optimize_memory_usage=False, handle_timeout_termination=handle_timeout_termination)
        self.transition = transition
        self.k, self.perturbation = int(neighbours), float(perturbation)
        self.states = np.zeros((self.buffer_size, self.n_envs, transition.nq + transition.nv), dtype=np.float64)
        if self.k > 0:
            o, m = observation_space.shape[0], action_space.shape[0]
            self.jacobians = np.zeros((self.buffer_size, self.n_envs, o, m), dtype=np.float32)
            self.reward_gradients = np.zeros((self.buffer_size, self.n_envs, m), dtype=np.float32)

    def add(self, obs, next_obs, action, reward, done, infos):
        if any(STATE_KEY not in info for info in infos):
            raise ValueError("GradientReplayBuffer: the step's info has no 'gradyn_state': wrap the environment in "
                             "gradyn.rl.StateInfo (the gradyn.rl agents do it when given a Gymnasium environment)")
        self.states[self.pos] = np.stack([info[STATE_KEY] for info in infos])
        if self.k > 0:
            actions = np.asarray(action, dtype=np.float64).reshape(self.n_envs, -1)
            _, _, jac, rgrad = action_jacobian(self.transition, self.states[self.pos], actions)
            # A step that diverged has no Jacobian worth keeping: its neighbours repeat the transition (and a
            # NaN kept here would stop every later batch that draws it).
            self.jacobians[self.pos] = np.nan_to_num(jac.numpy(), nan=0.0, posinf=0.0, neginf=0.0)
            self.reward_gradients[self.pos] = np.nan_to_num(rgrad.numpy(), nan=0.0, posinf=0.0, neginf=0.0)
        super().add(obs, next_obs, action, reward, done, infos)

    def sample(self, batch_size: int, env=None):
        if self.k == 0:
            return super().sample(batch_size, env)
        samples = super().sample(-(-batch_size // (1 + self.k)), env)
        return GradientReplaySamples(*(None if x is None else x[:batch_size] for x in samples))

    def _get_samples(self, batch_inds, env=None):
        if env is not None:
            raise ValueError("GradientReplayBuffer: VecNormalize is not supported (the simulator's observations "
                             "are used as they are)")
        env_indices = np.random.randint(0, high=self.n_envs, size=(len(batch_inds),))
        t = lambda x: torch.as_tensor(np.asarray(x), device=self.device)  # noqa: E731
        obs = t(self.observations[batch_inds, env_indices, :])
        actions = t(self.actions[batch_inds, env_indices, :])
        next_obs = t(self.next_observations[batch_inds, env_indices, :])
        dones = t((self.dones[batch_inds, env_indices] * (1 - self.timeouts[batch_inds, env_indices])).reshape(-1, 1))
        rewards = t(self.rewards[batch_inds, env_indices].reshape(-1, 1))
        states = t(self.states[batch_inds, env_indices, :])
        if self.k > 0:
            a_k, obs_k, r_k = first_order_neighbours(actions, next_obs, rewards,
                                                     self.jacobians[batch_inds, env_indices],
                                                     self.reward_gradients[batch_inds, env_indices], self.k,
                                                     self.perturbation)
            k = self.k
            obs = torch.cat([obs, obs.repeat_interleave(k, 0)])
            next_obs = torch.cat([next_obs, obs_k.reshape(-1, obs_k.shape[-1]).to(next_obs.dtype)])
            actions = torch.cat([actions, a_k.reshape(-1, a_k.shape[-1]).to(actions.dtype)])
            rewards = torch.cat([rewards, r_k.reshape(-1, 1).to(rewards.dtype)])
            dones = torch.cat([dones, dones.repeat_interleave(k, 0)])
            states = torch.cat([states, states.repeat_interleave(k, 0)])
        return GradientReplaySamples(obs, actions, next_obs, dones, rewards, None, states)


def _prepare(env, who: str, n_envs: int = 1):
    """(the environment as SB3 gets it, a DifferentiableTransition of it)."""
    if isinstance(env, str):
        env_id = env
        check_differentiable(env_id, who)
        env = DummyVecEnv([lambda: StateInfo(gym.make(env_id)) for _ in range(n_envs)])
    elif isinstance(env, gym.Env):
        check_differentiable(env, who)
        env = env if isinstance(env, StateInfo) else StateInfo(env)
    elif isinstance(env, DummyVecEnv):
        check_differentiable(env, who)
        if not all(isinstance(e, StateInfo) for e in env.envs):
            raise TypeError(f"{who}: env: a DummyVecEnv's environments must be wrapped in gradyn.rl.StateInfo "
                            "(or pass a Gymnasium environment, which is wrapped for you)")
    else:
        check_differentiable(env, who)  # raises the TypeError naming what is needed
    return env, DifferentiableTransition(env)


def _use_gradient_buffer(who: str, sac_kwargs: dict, transition, neighbours: int, perturbation: float):
    """Sets SAC's replay buffer arguments (in place) to a GradientReplayBuffer of this transition."""
    if "replay_buffer_class" in sac_kwargs:
        raise ValueError(f"replay_buffer_class: {who} uses gradyn.rl.GradientReplayBuffer")
    sac_kwargs["replay_buffer_class"] = GradientReplayBuffer
    sac_kwargs["replay_buffer_kwargs"] = dict(sac_kwargs.get("replay_buffer_kwargs") or {}, transition=transition,
                                              neighbours=neighbours, perturbation=perturbation)


class SampleEnhancedSAC(SAC):
    """SB3's SAC with paper 003's sample enhancement: every sampled batch of B transitions is extended by
    ``neighbours`` first-order neighbours each (default 9, the paper's number), drawn with standard
    deviation ``perturbation`` (default 0.1, in the [-1, 1] action scale); see GradientReplayBuffer.
    ``env``: a gradyn environment (an id, a Gymnasium environment, or a DummyVecEnv of StateInfo-wrapped
    ones). Other arguments are SAC's."""

    def __init__(self, policy, env, neighbours: int = 9, perturbation: float = 0.1, **kwargs):
        env, transition = _prepare(env, "SampleEnhancedSAC")
        _use_gradient_buffer("SampleEnhancedSAC", kwargs, transition, neighbours, perturbation)
        super().__init__(policy, env, **kwargs)
        self.transition = transition


class PolicyEnhancedSAC(SAC):
    """SB3's SAC with paper 003's policy enhancement (Eq. 12-14): the actor's gradient of Q with respect
    to the action is that of the one-step expansion through the differentiable simulator,
    ``Q^(s, a) = r(s, a) + gamma (1 - d) [min_i Q_i(s', a') - alpha log pi(a'|s')]``, s' = step(s, a).

    * ``enhancement_weight`` w in [0, 1] (default 1, the paper's Eq. 14): the actor follows
      ``w dQ^/da + (1 - w) dQ/da``, a blend with SAC's own critic gradient.
    * ``next_critic``: "critic" (default; Eq. 13's Q) or "target" (the slowly moving target critic).
    * ``neighbours``/``perturbation``: sample enhancement for the critic as well (default 0: off).

    The critic's update is SAC's. ``env`` as for :class:`SampleEnhancedSAC`; other arguments are SAC's.
    """

    def __init__(self, policy, env, enhancement_weight: float = 1.0, next_critic: str = "critic",
                 neighbours: int = 0, perturbation: float = 0.1, **kwargs):
        if isinstance(enhancement_weight, bool) or not isinstance(enhancement_weight, (int, float, np.floating)) \
                or not 0.0 <= enhancement_weight <= 1.0:
            raise ValueError(f"enhancement_weight: expected a number in [0, 1], got {enhancement_weight!r}")
        if next_critic not in ("critic", "target"):
            raise ValueError(f"next_critic: expected 'critic' or 'target', got {next_critic!r}")
        env, transition = _prepare(env, "PolicyEnhancedSAC")
        _use_gradient_buffer("PolicyEnhancedSAC", kwargs, transition, neighbours, perturbation)
        super().__init__(policy, env, **kwargs)
        self.transition = transition
        self.enhancement_weight = float(enhancement_weight)
        self.next_critic = next_critic

    def one_step_q(self, states, actions, ent_coef, next_actor=None):
        """Q^(s, a) (B,) of Eq. 13 for states (B, nq + nv) and actions (B, m) in [-1, 1], differentiable
        with respect to the actions through the simulator's step and reward. next_actor: the actor that
        draws a' (default this agent's; its parameters get no gradient from here)."""
        actor = self.actor if next_actor is None else next_actor
        next_obs, reward, terminated, _ = self.transition(states, actions)
        critic = self.critic if self.next_critic == "critic" else self.critic_target
        dtype = next(critic.parameters()).dtype
        next_obs = next_obs.to(dtype)
        # a' ~ pi(s') by reparameterisation: the gradient flows through s' into Q and into a'(s') (Eq. 13's
        # total derivative of Q(s', mu(s'))); only the actions' gradient is taken, so no parameter gets one.
        a_next, log_prob = actor.action_log_prob(next_obs)
        q_next = torch.min(torch.cat(critic(next_obs, a_next), dim=1), dim=1).values
        value = q_next - ent_coef * log_prob
        not_done = (~terminated).to(value.dtype)
        return reward.to(value.dtype) + self.gamma * not_done * value

    def enhanced_action_gradient(self, states, actions, ent_coef, next_actor=None):
        """dQ^/da (B, m) at the given actions (Eq. 13), computed through the simulator."""
        a = actions.detach().clone().requires_grad_(True)
        q_hat = self.one_step_q(states, a, ent_coef, next_actor)
        (grad,) = torch.autograd.grad(q_hat.sum(), a)
        return grad

    def train(self, gradient_steps: int, batch_size: int = 64) -> None:
        # SB3 2.x's SAC.train with the actor loss of Eq. 14 (the rest is unchanged).
        self.policy.set_training_mode(True)
        optimizers = [self.actor.optimizer, self.critic.optimizer]
        if self.ent_coef_optimizer is not None:
            optimizers += [self.ent_coef_optimizer]
        self._update_learning_rate(optimizers)
        ent_coef_losses, ent_coefs, actor_losses, critic_losses = [], [], [], []
        for gradient_step in range(gradient_steps):
            replay_data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
            discounts = replay_data.discounts if replay_data.discounts is not None else self.gamma
            if self.use_sde:
                self.actor.reset_noise()
            actions_pi, log_prob = self.actor.action_log_prob(replay_data.observations)
            log_prob = log_prob.reshape(-1, 1)
            ent_coef_loss = None
            if self.ent_coef_optimizer is not None and self.log_ent_coef is not None:
                ent_coef = torch.exp(self.log_ent_coef.detach())
                ent_coef_loss = -(self.log_ent_coef * (log_prob + self.target_entropy).detach()).mean()
                ent_coef_losses.append(ent_coef_loss.item())
            else:
                ent_coef = self.ent_coef_tensor
            ent_coefs.append(ent_coef.item())
            if ent_coef_loss is not None and self.ent_coef_optimizer is not None:
                self.ent_coef_optimizer.zero_grad()
                ent_coef_loss.backward()
                self.ent_coef_optimizer.step()
            with torch.no_grad():
                next_actions, next_log_prob = self.actor.action_log_prob(replay_data.next_observations)
                next_q_values = torch.cat(self.critic_target(replay_data.next_observations, next_actions), dim=1)
                next_q_values, _ = torch.min(next_q_values, dim=1, keepdim=True)
                next_q_values = next_q_values - ent_coef * next_log_prob.reshape(-1, 1)
                target_q_values = replay_data.rewards + (1 - replay_data.dones) * discounts * next_q_values
            current_q_values = self.critic(replay_data.observations, replay_data.actions)
            critic_loss = 0.5 * sum(F.mse_loss(current_q, target_q_values) for current_q in current_q_values)
            critic_losses.append(critic_loss.item())
            self.critic.optimizer.zero_grad()
            critic_loss.backward()
            self.critic.optimizer.step()

            actor_loss = self.actor_loss(replay_data, actions_pi, log_prob, ent_coef)
            actor_losses.append(actor_loss.item())
            self.actor.optimizer.zero_grad()
            actor_loss.backward()
            self.actor.optimizer.step()
            if gradient_step % self.target_update_interval == 0:
                polyak_update(self.critic.parameters(), self.critic_target.parameters(), self.tau)
                polyak_update(self.batch_norm_stats, self.batch_norm_stats_target, 1.0)
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/ent_coef", np.mean(ent_coefs))
        self.logger.record("train/actor_loss", np.mean(actor_losses))
        self.logger.record("train/critic_loss", np.mean(critic_losses))
        if ent_coef_losses:
            self.logger.record("train/ent_coef_loss", np.mean(ent_coef_losses))

    def actor_loss(self, replay_data, actions_pi, log_prob, ent_coef, next_actor=None):
        """Eq. 14 with SAC's entropy term: mean(alpha log pi(a|s) - g . a), g = w dQ^/da + (1 - w) dQ/da
        held fixed, a = actions_pi (the reparameterised sample of the actor being trained)."""
        w = self.enhancement_weight
        grad = self.enhanced_action_gradient(replay_data.states, actions_pi, ent_coef, next_actor).to(actions_pi.dtype)
        if w < 1.0:
            a = actions_pi.detach().clone().requires_grad_(True)
            q = torch.min(torch.cat(self.critic(replay_data.observations, a), dim=1), dim=1).values
            (grad_q,) = torch.autograd.grad(q.sum(), a)
            grad = w * grad + (1.0 - w) * grad_q
        return (ent_coef * log_prob.reshape(-1) - (grad.detach() * actions_pi).sum(-1)).mean()


# --------------------------------------------------------------------------------------------------------
# short-horizon actor-critic


def _mlp(sizes, dtype):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1], dtype=dtype))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ELU())
    return torch.nn.Sequential(*layers)


class SHAC:
    """Short-horizon actor-critic (Xu et al., ICLR 2022) through gradyn's differentiable step.

    ``num_envs`` worlds are rolled out together for ``horizon`` steps (one batched gradyn call per step,
    its gradient by gradyn's adjoints). The actor (tanh-squashed Gaussian, learned log-std) minimises

        -1/(N H) sum_worlds [ sum_t gamma^t r_t + gamma^h V'(s_h) ],

    V' the target critic, s_h the state at the horizon or where an episode ends inside the window
    (0 when it terminated; the episode then restarts from a reset state, with no gradient through
    the reset). The critic V is fitted to the TD(lambda) returns of the window (``critic_iterations``
    passes over ``critic_minibatches`` minibatches); the target critic follows it by Polyak averaging
    (``target_tau``). Rollout windows continue the worlds' episodes.

    ``env``: a gradyn environment (id or Gymnasium environment; its ``spec.max_episode_steps`` or
    ``max_episode_steps`` ends episodes). ``learn(total_timesteps)`` counts environment steps
    (num_envs x horizon per window). ``predict(obs, deterministic=True)`` acts like an SB3 model.
    ``dtype`` float64 makes every network float64 (for gradient checks). ``normalize_observations``
    (default True, as the reference SHAC): actor and critic see observations standardised by the running
    mean and variance of every observation met so far (updated after each window, held fixed within it,
    so the gradient passes through the standardisation).

    ``lr_schedule``: "linear" (default, as the reference SHAC) takes both learning rates linearly from
    their initial values to 0 over each ``learn`` call; "constant" keeps them.

    The horizon sets how far the gradient travels through the physics: on a contact-rich task the norm of
    the actor's gradient grows with it (examples/rl/ant.py measures it on gradyn's Ant) and a horizon whose
    gradient has exploded trains nothing.
    """

    def __init__(self, env, horizon: int = 32, num_envs: int = 64, gamma: float = 0.99, lam: float = 0.95,
                 actor_lr: float = 2e-3, critic_lr: float = 2e-3, hidden=(64, 64), critic_iterations: int = 16,
                 critic_minibatches: int = 4, target_tau: float = 0.2, grad_norm: float = 1.0,
                 init_log_std: float = -1.0, max_episode_steps: int | None = None, seed: int = 0,
                 normalize_observations: bool = True, lr_schedule: str = "linear", dtype=torch.float32):
        for name, value in (("horizon", horizon), ("num_envs", num_envs), ("critic_iterations", critic_iterations),
                            ("critic_minibatches", critic_minibatches)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name}: expected a whole number >= 1, got {value!r}")
        if lr_schedule not in ("linear", "constant"):
            raise ValueError(f"lr_schedule: expected 'linear' or 'constant', got {lr_schedule!r}")
        self.lr_schedule, self.actor_lr, self.critic_lr = lr_schedule, float(actor_lr), float(critic_lr)
        for name, value in (("gamma", gamma), ("lam", lam), ("target_tau", target_tau)):
            if not isinstance(value, (int, float, np.floating)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}: expected a number in [0, 1], got {value!r}")
        self.env_id = env if isinstance(env, str) else None
        gym_env = gym.make(env) if isinstance(env, str) else env
        self.env = check_differentiable(gym_env, "SHAC")
        spec = getattr(gym_env, "spec", None)
        self.max_episode_steps = int(max_episode_steps or (spec.max_episode_steps if spec is not None and
                                                           spec.max_episode_steps else 1000))
        self.transition = DifferentiableTransition(self.env)
        self.horizon, self.num_envs, self.gamma, self.lam = int(horizon), int(num_envs), float(gamma), float(lam)
        self.critic_iterations, self.critic_minibatches = int(critic_iterations), int(critic_minibatches)
        self.target_tau, self.grad_norm, self.dtype = float(target_tau), float(grad_norm), dtype
        self.seed = seed
        torch.manual_seed(seed)
        self.generator = torch.Generator().manual_seed(seed)
        obs_dim, act_dim = self.env.observation_space.shape[0], self.env.action_space.shape[0]
        self.actor = _mlp([obs_dim, *hidden, act_dim], dtype)
        self.log_std = torch.nn.Parameter(torch.full((act_dim,), float(init_log_std), dtype=dtype))
        self.critic = _mlp([obs_dim, *hidden, 1], dtype)
        self.critic_target = copy.deepcopy(self.critic).requires_grad_(False)
        self.normalize_observations = bool(normalize_observations)
        #: Running mean and variance of the observations met so far (SB3's RunningMeanStd).
        self.obs_rms = RunningMeanStd(shape=(obs_dim,))
        self.actor_opt = torch.optim.Adam(list(self.actor.parameters()) + [self.log_std], lr=actor_lr)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=critic_lr)
        self.num_timesteps = 0
        self.env.reset(seed=seed)
        self._states = self._obs = None
        self._steps = np.zeros(self.num_envs, dtype=np.int64)
        #: One row per window: (environment steps, wall seconds, mean return of the episodes ended in it or NaN).
        self.history = []
        #: One row per episode that ended: (environment steps, wall seconds, its return).
        self.episodes = []
        self._episode_returns = np.zeros(self.num_envs)

    def _reset_world(self):
        obs, _ = self.env.reset()
        q, v = self.env.state
        return np.concatenate([q, v]), obs

    def _reset_all(self):
        pairs = [self._reset_world() for _ in range(self.num_envs)]
        self._states = torch.as_tensor(np.stack([p[0] for p in pairs]))
        self._obs = torch.as_tensor(np.stack([p[1] for p in pairs]))
        self._steps[:] = 0
        self._episode_returns[:] = 0

    def normalized(self, obs):
        """Observations (B, o) as the networks see them (standardised when normalize_observations)."""
        if self.normalize_observations:
            mean, var = torch.from_numpy(self.obs_rms.mean), torch.from_numpy(self.obs_rms.var)
            obs = (obs.to(torch.float64) - mean) / torch.sqrt(var + 1e-8)
        return obs.to(self.dtype)

    def act(self, obs, noise):
        """Actions in [-1, 1] for observations (B, o) and standard normal noise (B, m) (None: the mean)."""
        mean = self.actor(self.normalized(obs))
        return torch.tanh(mean if noise is None else mean + self.log_std.exp() * noise)

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = True):
        """SB3-style: (actions in the environment's action space, None)."""
        obs = torch.as_tensor(np.asarray(observation, dtype=np.float64))
        single = obs.dim() == 1
        obs = obs[None] if single else obs
        with torch.no_grad():
            noise = None if deterministic else torch.randn(obs.shape[0], self.log_std.shape[0], dtype=self.dtype)
            a = self.transition.to_env_action(self.act(obs, noise)).numpy()
        return (a[0] if single else a), None

    def window_loss(self, states, obs, steps, noise):
        """The actor loss of one window from states (N, nq + nv) / obs (N, o) with `steps` (N,) steps of the
        current episodes done, under the noise (H, N, m). Returns (loss, record), record holding what
        the critic's targets and the bookkeeping need (all detached), including the final states."""
        gamma, N = self.gamma, states.shape[0]
        acc = torch.zeros(N, dtype=torch.float64)
        disc = torch.ones(N, dtype=torch.float64)
        steps = np.array(steps, copy=True)
        rec = {"obs": [], "rewards": [], "done": [], "terminated": [], "next_obs": [], "ended": []}
        for t in range(self.horizon):
            action = self.act(obs, noise[t])
            next_obs, reward, terminated, next_states = self.transition(states, action)
            acc = acc + disc * reward
            disc = disc * gamma
            steps += 1
            terminated = terminated.detach().numpy().astype(bool) | ~torch.isfinite(next_obs).all(-1).numpy()
            done = terminated | (steps >= self.max_episode_steps)
            rec["obs"].append(obs.detach())
            rec["rewards"].append(reward.detach())
            rec["next_obs"].append(next_obs.detach())
            rec["done"].append(torch.as_tensor(done))
            rec["terminated"].append(torch.as_tensor(terminated))
            if done.any():
                d, term = torch.as_tensor(done), torch.as_tensor(terminated)
                safe_next = torch.where(torch.as_tensor(terminated)[:, None], torch.zeros_like(next_obs), next_obs)
                boot = self.critic_target(self.normalized(safe_next))[:, 0].to(torch.float64)
                acc = acc + torch.where(d & ~term, disc * boot, torch.zeros_like(acc))
                disc = torch.where(d, torch.ones_like(disc), disc)
                fresh = [self._reset_world() if done[i] else None for i in range(N)]
                idx = np.flatnonzero(done)
                new_states = torch.as_tensor(np.stack([fresh[i][0] for i in idx]))
                new_obs = torch.as_tensor(np.stack([fresh[i][1] for i in idx]))
                next_states = next_states.clone()
                next_obs = next_obs.clone()
                next_states[idx] = new_states
                next_obs[idx] = new_obs
                steps[idx] = 0
            rec["ended"].append(steps.copy())
            states, obs = next_states, next_obs
        acc = acc + disc * self.critic_target(self.normalized(obs))[:, 0].to(torch.float64)
        loss = -acc.sum() / (N * self.horizon)
        rec.update(states=states.detach(), final_obs=obs.detach(), steps=steps)
        return loss, rec

    def _critic_targets(self, rec):
        """TD(lambda) returns (H, N) of the window's states under the target critic."""
        H = self.horizon
        with torch.no_grad():
            v_next = torch.stack([self.critic_target(self.normalized(o))[:, 0].to(torch.float64)
                                  for o in rec["next_obs"]])  # value of s_{t+1} (before any reset)
            v_next = torch.where(torch.stack(rec["terminated"]), torch.zeros_like(v_next),
                                 torch.nan_to_num(v_next))
            rewards, done = torch.stack(rec["rewards"]), torch.stack(rec["done"])
            targets = torch.zeros_like(rewards)
            following = v_next[H - 1]
            for t in reversed(range(H)):
                if t == H - 1:
                    g = rewards[t] + self.gamma * v_next[t]
                else:
                    mix = (1 - self.lam) * v_next[t] + self.lam * following
                    g = rewards[t] + self.gamma * torch.where(done[t], v_next[t], mix)
                targets[t] = g
                following = g
        return targets

    def train_window(self):
        """One window: the actor's step through the simulator, then the critic's fit. Returns (loss,
        value loss)."""
        if self._states is None:
            self._reset_all()
        noise = torch.randn(self.horizon, self.num_envs, self.log_std.shape[0], generator=self.generator,
                            dtype=self.dtype)
        loss, rec = self.window_loss(self._states, self._obs, self._steps, noise)
        self.actor_opt.zero_grad()
        loss.backward()
        params = list(self.actor.parameters()) + [self.log_std]
        if not all(p.grad is None or torch.isfinite(p.grad).all() for p in params):
            self.actor_opt.zero_grad()  # a diverged world: skip this step rather than poison the actor
        else:
            torch.nn.utils.clip_grad_norm_(params, self.grad_norm)
            self.actor_opt.step()
        # the critic
        targets = self._critic_targets(rec).reshape(-1)
        obs = torch.stack(rec["obs"]).reshape(-1, rec["obs"][0].shape[-1])
        keep = torch.isfinite(targets) & torch.isfinite(obs).all(-1)
        obs, targets = self.normalized(obs[keep]), targets[keep].to(self.dtype)
        value_loss = torch.tensor(float("nan"))
        for _ in range(self.critic_iterations):
            perm = torch.randperm(obs.shape[0], generator=self.generator)
            for chunk in perm.chunk(self.critic_minibatches):
                value_loss = F.mse_loss(self.critic(obs[chunk])[:, 0], targets[chunk])
                self.critic_opt.zero_grad()
                value_loss.backward()
                self.critic_opt.step()
        with torch.no_grad():
            for p, pt in zip(self.critic.parameters(), self.critic_target.parameters()):
                pt.mul_(self.target_tau).add_((1 - self.target_tau) * p)
        if self.normalize_observations:  # after the critic's fit, which used the window's statistics
            seen = torch.stack(rec["obs"]).reshape(-1, rec["obs"][0].shape[-1])
            seen = seen[torch.isfinite(seen).all(-1)]  # a diverged world's observation says nothing of the task
            if seen.shape[0]:
                self.obs_rms.update(seen.to(torch.float64).numpy())
        # bookkeeping: episode returns
        ended = []
        for t in range(self.horizon):
            self._episode_returns += rec["rewards"][t].numpy()
            done = rec["done"][t].numpy()
            ended.extend(self._episode_returns[done].tolist())
            self._episode_returns[done] = 0
        self._states, self._obs, self._steps = rec["states"], rec["final_obs"], rec["steps"]
        self.num_timesteps += self.horizon * self.num_envs
        return loss.item(), value_loss.item(), ended

    def learn(self, total_timesteps: int, progress_bar: bool = True):
        """Train for total_timesteps environment steps; returns self. Appends (steps, wall s, mean return of
        the episodes that ended in the window, or NaN) to ``history`` after every window."""
        from tqdm import tqdm

        start = time.perf_counter()
        with tqdm(total=int(total_timesteps), unit="step", desc="SHAC", disable=not progress_bar,
                  file=sys.stdout) as bar:
            done = 0
            while done < total_timesteps:
                if self.lr_schedule == "linear":
                    left = 1.0 - done / total_timesteps
                    for opt, lr in ((self.actor_opt, self.actor_lr), (self.critic_opt, self.critic_lr)):
                        for group in opt.param_groups:
                            group["lr"] = lr * left
                _, _, ended = self.train_window()
                step = self.horizon * self.num_envs
                done += step
                bar.update(step)
                wall = time.perf_counter() - start
                self.history.append((self.num_timesteps, wall, float(np.mean(ended)) if ended else float("nan")))
                self.episodes.extend((self.num_timesteps, wall, float(r)) for r in ended)
        return self
