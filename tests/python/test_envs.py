"""gradyn.envs: the Gymnasium environments pass Gymnasium's checker, reset deterministically, their
vector environment equals single environments world by world, their differentiable step equals step
and its gradients equal central differences, bad input is refused in the user's words, a diverged
world is truncated instead of crashing, and the Stable-Baselines3 example runs."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

import gradyn  # noqa: E402
import gradyn.envs as genvs  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Warnings check_env gives for choices Gymnasium's own environments make too: infinite observation
# bounds (every MuJoCo environment) and Pendulum-v1's [-2, 2] N m torque range.
EXPECTED_WARNINGS = ("observation space minimum value is -infinity", "observation space maximum value is infinity",
                     "recommend using a symmetric and normalized space")


def checked(env, **kwargs):
    """check_env(env), failing on any warning but EXPECTED_WARNINGS."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, **kwargs)
    unexpected = [str(w.message) for w in caught if not any(e in str(w.message) for e in EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


@pytest.mark.parametrize("env_id", genvs.ENV_IDS)
def test_check_env(env_id):
    # skip_render_check: rendering needs gradyn.viewer's optional dependencies; test_render_rgb_array
    # runs check_env with its render check where they are installed.
    env = gym.make(env_id)
    checked(env.unwrapped, skip_render_check=True)
    if env_id != "gradyn/Pendulum-v0":  # only the pendulum keeps Pendulum-v1's un-normalised torque range
        assert np.all(env.action_space.low == -1) and np.all(env.action_space.high == 1)


def test_registered_and_reachable_without_importing():
    for env_id in genvs.ENV_IDS:
        assert env_id in gym.registry
    # Gymnasium's "module:id" form imports gradyn.envs itself.
    code = ("import gymnasium as gym; env = gym.make('gradyn.envs:gradyn/Ant-v0'); "
            "print(env.reset(seed=0)[0].shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(27,)"


@pytest.mark.parametrize("env_id", genvs.ENV_IDS)
def test_seeded_reset_and_steps_repeat_to_the_bit(env_id):
    def run(seed):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = [obs]
        for _ in range(10):
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            trace.append(np.append(obs, reward))
            if terminated or truncated:
                trace.append(env.reset()[0])
        return np.concatenate(trace)

    a, b, c = run(3), run(3), run(4)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


@pytest.mark.parametrize("env_id, steps", [("gradyn/CartPole-v0", 80), ("gradyn/Ant-v0", 30),
                                           ("gradyn/Laikago-v0", 30)])
def test_vector_env_equals_single_envs(env_id, steps):
    n, seed, horizon = 4, 11, 25  # horizon: a short time limit, so truncation and autoreset happen too
    envs = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=horizon)
    assert isinstance(envs.unwrapped, genvs.GradynVectorEnv)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    singles = [gym.make(env_id, max_episode_steps=horizon) for _ in range(n)]
    obs, _ = envs.reset(seed=seed)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])
    rng = np.random.default_rng(0)
    done = np.zeros(n, dtype=bool)
    ended = 0
    for _ in range(steps):
        actions = rng.uniform(-1, 1, size=envs.action_space.shape)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for i, env in enumerate(singles):
            if done[i]:  # next-step autoreset: the vector env resets this world now
                expected = (env.reset()[0], 0.0, False, False)
            else:
                expected = env.step(actions[i])[:4]
            np.testing.assert_array_equal(obs[i], expected[0])
            assert rewards[i] == expected[1]
            assert (terminated[i], truncated[i]) == (expected[2], expected[3])
        done = terminated | truncated
        ended += done.sum()
    assert ended > 0  # the comparison went through at least one autoreset


def test_vector_env_runs_one_batched_call(monkeypatch):
    calls = []
    rollout = gradyn.rollout
    monkeypatch.setattr(gradyn, "rollout", lambda *a, **k: calls.append(np.shape(a[1])) or rollout(*a, **k))
    envs = genvs.GradynVectorEnv(genvs.AntEnv, num_envs=6, threads=2)
    envs.reset(seed=0)
    envs.step(np.zeros((6, 8)))
    assert calls == [(6, 15)]


def _finite_difference(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp.flat[k] += eps
        xm.flat[k] -= eps
        g.flat[k] = (f(xp) - f(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("env_id", genvs.ENV_IDS)
def test_differentiable_step_equals_step_and_central_differences(env_id):
    torch = pytest.importorskip("torch")
    env = gym.make(env_id).unwrapped
    env.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(3):  # away from the initial state (the ant lands on its feet)
        env.step(0.5 * rng.uniform(-1, 1, size=env.action_space.shape))
    q, v = env.state
    action = 0.5 * rng.uniform(-1, 1, size=env.action_space.shape)

    qt, vt, at = (torch.tensor(x, requires_grad=True) for x in (q, v, action))
    q1, v1, obs, reward, terminated = env.differentiable_step(qt, vt, at)
    obs_step, reward_step, terminated_step, _, _ = env.step(action)
    np.testing.assert_allclose(obs.detach().numpy(), obs_step, rtol=1e-12, atol=1e-12)
    assert abs(reward.item() - reward_step) < 1e-10 and bool(terminated) == terminated_step

    # Gradient of a scalar of the outcome: the reward plus a fixed random mix of the observation.
    w = torch.tensor(rng.normal(size=obs.shape))
    (reward + (w * obs).sum()).backward()

    def scalar(q_, v_, a_):
        with torch.no_grad():
            _, _, o, r, _ = env.differentiable_step(q_, v_, a_)
        return float(r + (w * o).sum())

    # Contact (ant, laikago) makes finite differences in q unreliable (a foot's contact set can switch);
    # their action and velocity gradients go through PGS's converged impulses.
    checks = [("action", at, lambda x: scalar(q, v, x), action)]
    checks.append(("v", vt, lambda x: scalar(q, x, action), v))
    if env_id not in ("gradyn/Ant-v0", "gradyn/Laikago-v0"):
        checks.append(("q", qt, lambda x: scalar(x, v, action), q))
    for name, tensor, f, x0 in checks:
        fd = _finite_difference(f, x0)
        np.testing.assert_allclose(tensor.grad.numpy(), fd, rtol=1e-4, atol=1e-5 * max(1, np.abs(fd).max()),
                                   err_msg=f"{env_id}: d/d{name}")


def test_differentiable_step_params_gradient_batched():
    torch = pytest.importorskip("torch")
    env = gym.make("gradyn/Swimmer-v0").unwrapped
    env.reset(seed=0)
    q, v = env.state
    q = torch.tensor(np.tile(q, (3, 1)))
    v = torch.tensor(np.tile(v, (3, 1)))
    action = torch.tensor(np.random.default_rng(0).uniform(-1, 1, size=(3, 2)))
    p = torch.tensor(env.model.params, requires_grad=True)
    _, _, obs, reward, terminated = env.differentiable_step(q, v, action, params=p)
    assert obs.shape == (3, 8) and reward.shape == (3,) and terminated.shape == (3,)
    reward.sum().backward()
    # The drag networks' weights are model parameters: the reward depends on them.
    drag = [i for i, n in enumerate(env.model.param_names) if n.startswith("drag_") and ".weight" in n]
    assert np.abs(p.grad.numpy()[drag]).max() > 0


def test_bad_input_is_refused_in_the_users_words():
    env = gym.make("gradyn/Ant-v0")
    with pytest.raises(gym.error.ResetNeeded):
        env.unwrapped.step(np.zeros(8))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action: expected shape \(8,\), got \(3,\)"):
        env.unwrapped.step(np.zeros(3))
    with pytest.raises(ValueError, match="action: expected finite numbers"):
        env.unwrapped.step(np.full(8, np.nan))
    envs = genvs.GradynVectorEnv(genvs.AntEnv, num_envs=2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: expected shape \(2, 8\), got \(8,\)"):
        envs.step(np.zeros(8))
    with pytest.raises(ValueError, match="seed: expected None, an int or 2 seeds"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match=r"render_mode: expected one of \['rgb_array'\] or None, got 'human'"):
        genvs.PendulumEnv(render_mode="human")
    with pytest.raises(ValueError, match=r"q: expected shape \(15,\), got \(14,\)"):
        env.unwrapped.set_state(np.zeros(14), np.zeros(14))
    pytest.importorskip("torch")
    q, v = env.unwrapped.state
    with pytest.raises(ValueError, match=r"action: expected shape \(8,\) or \(B, 8\), got \(2,\)"):
        env.unwrapped.differentiable_step(q, v, np.zeros(2))


def test_differentiable_step_without_torch_says_what_to_install(monkeypatch):
    env = genvs.PendulumEnv()
    env.reset(seed=0)
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed
    monkeypatch.setitem(sys.modules, "gradyn.torch", None)
    with pytest.raises(ImportError, match="differentiable_step needs PyTorch: pip install torch"):
        env.differentiable_step(*env.state, np.zeros(1))


def test_diverged_world_is_truncated_not_raised():
    env = gym.make("gradyn/CartPole-v0")
    obs0, _ = env.reset(seed=0)
    q, v = env.unwrapped.state
    v[1] = 1e200  # the pole's rate: its centripetal terms overflow to inf within the step
    env.unwrapped.set_state(q, v)
    obs, reward, terminated, truncated, info = env.step(np.zeros(1))
    assert info["diverged"] and info["status"] & int(gradyn.Status.NON_FINITE)
    assert truncated and not terminated and reward == 0.0
    np.testing.assert_array_equal(obs, np.concatenate([q, v]))  # the last finite state
    with pytest.raises(gym.error.ResetNeeded, match="diverged"):
        env.step(np.zeros(1))
    assert np.all(np.isfinite(env.reset(seed=1)[0]))

    # In the vector env one world diverges, the others go on untouched, and it is reset at the next step.
    envs = genvs.GradynVectorEnv(genvs.CartPoleEnv, num_envs=3)
    clean = genvs.GradynVectorEnv(genvs.CartPoleEnv, num_envs=3)
    envs.reset(seed=0)
    clean.reset(seed=0)
    envs._v[1, 1] = 1e200
    obs, rewards, terminated, truncated, infos = envs.step(np.zeros((3, 1)))
    obs_clean = clean.step(np.zeros((3, 1)))[0]
    assert infos["diverged"].tolist() == [False, True, False] and truncated.tolist() == [False, True, False]
    np.testing.assert_array_equal(obs[[0, 2]], obs_clean[[0, 2]])
    obs, rewards, terminated, truncated, infos = envs.step(np.zeros((3, 1)))
    assert np.all(np.isfinite(obs)) and rewards[1] == 0.0 and not infos["_status"][1]


def test_laikago_stands_under_zero_action_and_ant_lands():
    env = gym.make("gradyn/Laikago-v0")
    env.reset(seed=0)
    heights = []
    for _ in range(100):  # 2 s
        obs, reward, terminated, truncated, info = env.step(np.zeros(12))
        assert not (terminated or truncated) and not info["diverged"]
        heights.append(obs[0])
    assert 0.45 < min(heights) and max(heights) < 0.55, (min(heights), max(heights))

    env = gym.make("gradyn/Ant-v0")
    env.reset(seed=0)
    for _ in range(40):  # 2 s without torques: it drops onto its feet and stays healthy
        obs, reward, terminated, truncated, info = env.step(np.zeros(8))
        assert not (terminated or truncated)
    assert 0.2 < obs[0] < 1.0


def test_swimmer_drag_makes_it_swim():
    def com_x_travel(lag, **kwargs):
        env = genvs.SwimmerEnv(reset_noise_scale=0.0, **kwargs)
        env.reset(seed=0)
        x0 = gradyn.center_of_mass(env.model, env.state[0])[0]
        for t in range(250):  # 10 s of a travelling wave along the body, its direction set by the lag
            phase = 2 * np.pi * 0.5 * t * env.dt
            env.step([np.sin(phase), np.sin(phase + lag)])
        return gradyn.center_of_mass(env.model, env.state[0])[0] - x0

    # The wave's direction sets the way it swims (-1.9 m and +2.2 m when last run) ...
    assert com_x_travel(np.pi / 2) < -0.5 and com_x_travel(-np.pi / 2) > 0.5
    # ... and without the drag nothing pushes on the swimmer: its centre of mass stays (RK4 keeps its
    # momentum; 2 mm when last run).
    assert abs(com_x_travel(np.pi / 2, drag_normal=0.0, drag_tangent=0.0)) < 0.01


def test_laikago_asset_is_the_generators_output():
    sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
    try:
        import laikago_scene
    finally:
        sys.path.pop(0)
    shipped = (pathlib.Path(genvs.__file__).parent / "assets" / "laikago_servos.xml").read_text()
    body = shipped[shipped.index("-->\n") + 4:]
    assert body == laikago_scene.mujoco_xml(timestep=0.002, position_servos=(laikago_scene.KP, laikago_scene.KD))


def test_render_rgb_array():
    viewer = pytest.importorskip("gradyn.viewer", reason="gradyn.viewer (rendering) is not installed")
    if not hasattr(viewer, "render_rgb"):
        pytest.skip("gradyn.viewer has no render_rgb")
    for env_id in genvs.ENV_IDS:
        env = gym.make(env_id, render_mode="rgb_array", width=64, height=48)
        checked(env.unwrapped)
        env.reset(seed=0)
        frame = env.render()
        assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8
        assert frame.std() > 0  # not a blank image


def test_sb3_example_quick():
    pytest.importorskip("stable_baselines3")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "gym" / "train_sb3.py"), "--quick"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "gradyn/CartPole-v0: 256 steps" in out.stdout, out.stdout


def test_differentiable_pendulum_example_quick():
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "gym" / "differentiable_pendulum.py"), "--quick"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "gradyn/Pendulum-v0, 3 updates: training return" in out.stdout, out.stdout
