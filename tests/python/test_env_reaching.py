"""gradyn/Reaching-v0 (paper 003 §6.2's n-link pendulum reaching): the end effector is the model's last
link tip, the torque limits are the horizontal chain's gravity load times torque_factor, the return
telescopes to the maximal return minus the final squared distance, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import gradyn  # noqa: E402
import gradyn.envs as genvs  # noqa: E402


@pytest.mark.parametrize("links", [1, 3, 7])
def test_end_effector_is_the_last_links_bob(links):
    env = genvs.ReachingEnv(links=links)
    rng = np.random.default_rng(links)
    q = rng.uniform(-2, 2, size=links)
    # the last link's frame sits at its joint; its bob (the mass, the end effector) 0.5 m along its y axis
    pose = gradyn.frame_pose(env.model, q, f"link{links - 1}")
    tip = pose[:3, :3] @ np.array([0.0, 0.5, 0.0]) + pose[:3, 3]
    np.testing.assert_allclose(env.end_effector(q), tip[1:], atol=1e-12)
    assert abs(tip[0]) < 1e-12
    # straight up is the target
    up = np.zeros(links)
    up[0] = np.pi / 2
    np.testing.assert_allclose(env.end_effector(up), env.target, atol=1e-12)
    assert env.max_return == pytest.approx(0.5 * links ** 2)


def test_torque_limits_hold_the_horizontal_chain():
    # torque_factor = 1: the largest action holds the horizontal chain against gravity exactly.
    env = genvs.ReachingEnv(links=4, torque_factor=1.0, reset_noise_scale=0.0)
    env.reset(seed=0)
    tau = gradyn.generalized_gravity(env.model, np.zeros(4))
    np.testing.assert_allclose(np.abs(tau), env.torque_limits, rtol=1e-12)
    action = np.sign(tau)
    q1, v1, *_ = env.differentiable_step(np.zeros(4), np.zeros(4), action)
    assert np.abs(v1.numpy()).max() < 1e-9  # held: it does not move
    _, _, *_ = env.differentiable_step(np.zeros(4), np.zeros(4), np.zeros(4))
    q_fall, v_fall, *_ = env.differentiable_step(np.zeros(4), np.zeros(4), np.zeros(4))
    assert np.abs(v_fall.numpy()).max() > 0.1  # unheld: it falls


def test_return_telescopes_to_the_final_distance():
    env = gym.make("gradyn/Reaching-v0", links=3)
    obs, _ = env.reset(seed=2)
    env.action_space.seed(2)
    base = env.unwrapped
    d0 = np.sum((base.end_effector(base.state[0]) - base.target) ** 2)
    total, done, steps = 0.0, False, 0
    while not done:
        obs, r, terminated, truncated, info = env.step(env.action_space.sample())
        total += r
        steps += 1
        done = terminated or truncated
    assert steps == 50 and truncated and not terminated
    dT = np.sum((base.end_effector(base.state[0]) - base.target) ** 2)
    assert total == pytest.approx(d0 - dT, abs=1e-9)
    assert info["distance"] == pytest.approx(np.sqrt(dT))
    np.testing.assert_allclose(obs[-2:], obs[-4:-2] - base.target)


@pytest.mark.parametrize("kwargs, word", [(dict(links=0), "links"), (dict(links=2.5), "links"),
                                          (dict(torque_factor=0.0), "torque_factor"),
                                          (dict(damping=float("nan")), "damping"),
                                          (dict(reset_noise_scale=-1.0), "reset_noise_scale")])
def test_bad_arguments(kwargs, word):
    with pytest.raises(ValueError, match=word):
        genvs.ReachingEnv(**kwargs)
