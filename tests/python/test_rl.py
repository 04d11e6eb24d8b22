"""gradyn.rl (issue 25): sample enhancement's neighbours equal true simulator steps to first order
(the error shrinks as da^2), the policy-enhanced actor gradient equals central differences through
the environment's step, the short-horizon actor-critic's loss gradient equals central differences,
environments without gradients are refused in the user's words, and the example's --quick run works."""

from __future__ import annotations

import copy
import pathlib
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gym = pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

import gradyn.envs  # noqa: E402,F401
import gradyn.rl as grl  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
torch.set_num_threads(1)


def visited_states(links, count, seed=0):
    """(states (count, 2 n), actions (count, n)): states along a random-action episode."""
    env = gym.make("gradyn/Reaching-v0", links=links).unwrapped
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(count):
        for _ in range(3):
            env.step(rng.uniform(-0.6, 0.6, size=links))
        q, v = env.state
        states.append(np.concatenate([q, v]))
    return env, np.array(states), rng.uniform(-0.5, 0.5, size=(count, links))


def test_neighbours_are_first_order_steps():
    env, states, actions = visited_states(3, 4)
    tr = grl.DifferentiableTransition(env)
    s, a = torch.as_tensor(states), torch.as_tensor(actions)
    with torch.no_grad():
        obs, reward, _, _ = tr(s, a)
    errors, moves = [], []
    for scale in (0.04, 0.02, 0.01):
        gen = torch.Generator().manual_seed(3)  # the same directions at every scale
        a_k, obs_k, r_k = grl.neighbours(tr, s, a, obs, reward, 5, scale, generator=gen)
        with torch.no_grad():
            true_obs, true_r, _, _ = tr(s.repeat_interleave(5, 0), a_k.reshape(-1, 3))
        err = torch.cat([(obs_k.reshape(-1, obs.shape[1]) - true_obs).abs().max(-1).values,
                         (r_k.reshape(-1) - true_r).abs()]).max().item()
        errors.append(err)
        moves.append((true_obs - obs.repeat_interleave(5, 0)).abs().max().item())
        assert (a_k.abs() <= 1).all()
    slopes = np.diff(np.log(errors)) / np.diff(np.log([0.04, 0.02, 0.01]))
    print("neighbour errors", errors, "moves", moves, "slopes", slopes)
    assert np.all((slopes > 1.8) & (slopes < 2.2)), (errors, slopes)
    assert errors[-1] < 1e-2 * moves[-1]  # first order: the error is far below the move itself
    # the unperturbed step is the transition itself
    obs0, r0, _, _ = grl.action_jacobian(tr, s, a)
    np.testing.assert_allclose(obs0.numpy(), obs.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r0.numpy(), reward.numpy(), rtol=0, atol=1e-12)


def test_action_jacobian_equals_central_differences():
    env, states, actions = visited_states(2, 2, seed=1)
    tr = grl.DifferentiableTransition(env)
    s, a = torch.as_tensor(states), torch.as_tensor(actions)
    _, _, jac, rg = grl.action_jacobian(tr, s, a)
    h = 1e-6
    for j in range(2):
        e = torch.zeros_like(a)
        e[:, j] = h
        with torch.no_grad():
            op, rp, _, _ = tr(s, a + e)
            om, rm, _, _ = tr(s, a - e)
        np.testing.assert_allclose(jac[:, :, j].numpy(), ((op - om) / (2 * h)).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rg[:, j].numpy(), ((rp - rm) / (2 * h)).numpy(), rtol=1e-5, atol=1e-6)


def small_agent(cls, links=2, **kwargs):
    env = gym.make("gradyn/Reaching-v0", links=links)
    return cls("MlpPolicy", env, policy_kwargs=dict(net_arch=[16, 16]), learning_starts=50, batch_size=16, seed=0,
               device="cpu", **kwargs)


def test_policy_enhanced_gradient_equals_differences_through_the_step(monkeypatch):
    # float64 networks: SB3 casts observations to float32 before its networks; keep them float64 here.
    import stable_baselines3.common.policies as sb3_policies

    monkeypatch.setattr(sb3_policies, "preprocess_obs", lambda obs, space, normalize_images=True: obs)
    agent = small_agent(grl.PolicyEnhancedSAC)
    agent.policy.double()
    env, states, actions = visited_states(2, 3, seed=2)
    s, a = torch.as_tensor(states), torch.as_tensor(actions)
    alpha = torch.tensor(0.2, dtype=torch.float64)

    torch.manual_seed(7)
    grad = agent.enhanced_action_gradient(s, a, alpha).numpy()

    def q_hat_by_step(a_np):
        """r + gamma (min Q(s', a') - alpha log pi(a'|s')) with s', r from env.step (NumPy), a' by the same noise."""
        next_obs, rewards = [], []
        for i in range(len(a_np)):
            env.set_state(states[i, :2], states[i, 2:])
            o, r, *_ = env.step(a_np[i])
            next_obs.append(o)
            rewards.append(r)
        torch.manual_seed(7)
        with torch.no_grad():
            o = torch.as_tensor(np.array(next_obs))
            a2, logp = agent.actor.action_log_prob(o)
            q = torch.min(torch.cat(agent.critic(o, a2), dim=1), dim=1).values
            return (torch.as_tensor(np.array(rewards)) + agent.gamma * (q - alpha * logp)).numpy()

    h = 1e-6
    fd = np.zeros_like(grad)
    for j in range(2):
        e = np.zeros_like(actions)
        e[:, j] = h
        fd[:, j] = (q_hat_by_step(actions + e) - q_hat_by_step(actions - e)) / (2 * h)
    print("dQ^/da", grad.ravel(), "central differences", fd.ravel())
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    assert np.abs(grad).max() > 1e-3  # not trivially zero

    # The actor's parameter gradient of the Eq. 14 surrogate equals central differences of
    # alpha log pi(a|s) - Q^(s, a_theta(s)), with a' drawn by a frozen copy of the actor.
    frozen = copy.deepcopy(agent.actor)
    obs = torch.as_tensor(np.array([env.unwrapped._observe(x[None, :2], x[None, 2:], np)[0] for x in states]))
    data = grl.GradientReplaySamples(obs, a, obs, torch.zeros(3, 1), torch.zeros(3, 1), None, s)

    def objective():
        torch.manual_seed(11)
        a_pi, logp = agent.actor.action_log_prob(obs)
        torch.manual_seed(12)
        return (alpha * logp - agent.one_step_q(s, a_pi, alpha, next_actor=frozen)).mean()

    torch.manual_seed(11)
    a_pi, logp = agent.actor.action_log_prob(obs)
    torch.manual_seed(12)
    loss = agent.actor_loss(data, a_pi, logp, alpha, next_actor=frozen)
    agent.actor.zero_grad()
    loss.backward()
    param = agent.actor.mu.weight
    analytic = param.grad.clone()
    for idx in [(0, 0), (1, 3), (0, 7)]:
        with torch.no_grad():
            old = param[idx].item()
            param[idx] = old + h
            up = objective().item()
            param[idx] = old - h
            down = objective().item()
            param[idx] = old
        assert analytic[idx].item() == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-8), idx


def test_shac_loss_gradient_equals_central_differences():
    agent = grl.SHAC(gym.make("gradyn/Reaching-v0", links=2), horizon=4, num_envs=3, hidden=(8,),
                     dtype=torch.float64, seed=0)
    agent._reset_all()
    # observation statistics far from (0, 1), so that the check covers the standardisation as well
    agent.obs_rms.update(np.random.default_rng(0).normal(0.3, 2.0, size=(50, agent._obs.shape[1])))
    noise = torch.randn(4, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    loss, _ = agent.window_loss(agent._states, agent._obs, agent._steps, noise)
    agent.actor.zero_grad()
    loss.backward()
    weight = agent.actor[0].weight
    h = 1e-6
    checks = [(weight, (0, 0)), (weight, (5, 3)), (agent.log_std, (1,))]
    for p, idx in checks:
        with torch.no_grad():
            old = p[idx].item()
            p[idx] = old + h
            up = agent.window_loss(agent._states, agent._obs, agent._steps, noise)[0].item()
            p[idx] = old - h
            down = agent.window_loss(agent._states, agent._obs, agent._steps, noise)[0].item()
            p[idx] = old
        assert p.grad[idx].item() == pytest.approx((up - down) / (2 * h), rel=1e-5, abs=1e-9), idx
    assert weight.grad.abs().max() > 1e-4


def test_sample_enhanced_batches_and_short_runs():
    agent = small_agent(grl.SampleEnhancedSAC, neighbours=3, perturbation=0.05)
    agent.learn(70)
    batch = agent.replay_buffer.sample(30)  # 8 real transitions, then their 3 neighbours each, cut to 30 rows
    assert batch.observations.shape[0] == 30 and batch.actions.shape == (30, 2)
    # rows 8, 9, 10 are the neighbours of row 0: its observation, other actions
    np.testing.assert_array_equal(batch.observations[8:11].numpy(), np.repeat(batch.observations[:1].numpy(), 3, 0))
    assert not torch.equal(batch.actions[8], batch.actions[0]) and batch.states.shape == (30, 4)
    # The Jacobians kept with each transition (computed when it was added) are those of its state and action,
    # and the neighbours drawn from them are first-order steps: within (perturbation)^2 of the true step.
    buf = agent.replay_buffer
    n = buf.pos
    states, actions = torch.as_tensor(buf.states[:n, 0]), torch.as_tensor(buf.actions[:n, 0], dtype=torch.float64)
    _, _, jac, rgrad = grl.action_jacobian(agent.transition, states, actions)
    np.testing.assert_allclose(buf.jacobians[:n, 0], jac.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(buf.reward_gradients[:n, 0], rgrad.numpy(), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        true_next, _, _, _ = agent.transition(batch.states[8:], batch.actions[8:].to(torch.float64))
    first_order = (batch.next_observations[8:] - true_next).abs().max().item()
    unmoved = (batch.next_observations[:8].repeat_interleave(3, 0)[:22] - true_next).abs().max().item()
    print("neighbour error", first_order, "without the Jacobian", unmoved)
    assert first_order < 0.05 * unmoved
    pe = small_agent(grl.PolicyEnhancedSAC)
    pe.learn(60)
    shac = grl.SHAC("gradyn/Reaching-v0", horizon=8, num_envs=4, hidden=(16,), seed=0)
    shac.learn(8 * 4 * 2, progress_bar=False)
    assert len(shac.history) == 2 and shac.num_timesteps == 64
    # the observation statistics are those of the 64 observations the actor acted on
    assert shac.obs_rms.count == pytest.approx(64, abs=1e-3) and np.all(shac.obs_rms.var > 0)
    action, _ = shac.predict(np.zeros(10))
    assert action.shape == (2,) and np.all(np.abs(action) <= 1)


@pytest.mark.parametrize("make", [
    lambda env: grl.PolicyEnhancedSAC("MlpPolicy", env),
    lambda env: grl.SampleEnhancedSAC("MlpPolicy", env),
    lambda env: grl.SHAC(env),
    lambda env: grl.DifferentiableTransition(env),
    lambda env: grl.StateInfo(env)])
def test_environment_without_gradients_is_refused(make):
    env = gym.make("Pendulum-v1")  # Gymnasium's own: no differentiable_step
    with pytest.raises(TypeError, match="differentiable_step") as err:
        make(env)
    assert "Pendulum-v1" in str(err.value) and "gradyn/Reaching-v0" in str(err.value)
    with pytest.raises(TypeError, match="Gymnasium environment"):
        make(42)


def test_bad_options():
    with pytest.raises(ValueError, match="enhancement_weight"):
        small_agent(grl.PolicyEnhancedSAC, enhancement_weight=2.0)
    with pytest.raises(ValueError, match="neighbours"):
        small_agent(grl.SampleEnhancedSAC, neighbours=-1)
    with pytest.raises(ValueError, match="perturbation"):
        small_agent(grl.SampleEnhancedSAC, perturbation=0.0)
    with pytest.raises(ValueError, match="horizon"):
        grl.SHAC("gradyn/Reaching-v0", horizon=0)
    with pytest.raises(ValueError, match="lr_schedule: expected 'linear' or 'constant', got 'cosine'"):
        grl.SHAC("gradyn/Reaching-v0", lr_schedule="cosine")


def test_shac_learning_rate_falls_linearly_to_zero():
    shac = grl.SHAC("gradyn/Reaching-v0", horizon=4, num_envs=2, hidden=(8,), seed=0, actor_lr=1e-3)
    seen = []
    train = shac.train_window

    def spy():
        seen.append(shac.actor_opt.param_groups[0]["lr"])
        return train()

    shac.train_window = spy
    shac.learn(4 * 2 * 4, progress_bar=False)  # four windows: 1, 3/4, 1/2, 1/4 of the rate
    np.testing.assert_allclose(seen, [1e-3, 7.5e-4, 5e-4, 2.5e-4])


def test_reaching_example_quick():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "rl" / "pendulum_reaching.py"), "--quick"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "n=2 sac seed 0: final relative reward" in out.stdout
    assert "n=2 pe seed 0: final relative reward" in out.stdout


def test_ant_example_quick():
    # The gradyn.rl parts of examples/rl/ant.py on gradyn's Ant (PGS contact): sample-enhanced SAC and SHAC.
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "rl" / "ant.py"), "--quick", "--methods", "sac-se",
                          "shac"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ant sac-se seed 0:" in out.stdout and "ant shac seed 0:" in out.stdout


def test_ant_comparison_reads_the_crossing():
    # examples/rl/ant.py's report: the baseline's final return is the seeds' mean over the last twentieth of
    # its budget, and the other method "reaches" it at the first twentieth whose seeds' mean is at least that.
    import importlib.util

    spec = importlib.util.spec_from_file_location("ant_example", ROOT / "examples" / "rl" / "ant.py")
    ant = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ant)
    steps = np.arange(1, 1001) * 1000.0

    def run(method, seed, slope):
        return dict(method=method, seed=seed, steps=1_000_000,
                    curve=[(s, s / 1000, slope * s / 1000) for s in steps])

    by_method = {"ppo": [run("ppo", 0, 4.0), run("ppo", 1, 6.0)], "shac": [run("shac", 1, 40.0), run("shac", 2, 40.0)]}
    ends, curve = ant.method_curve(by_method["ppo"])
    # last twentieth: episodes at 951k..1000k, slopes 4 and 6 -> mean of 5 x 975.5
    assert curve[-1] == pytest.approx(5 * 975.5)
    # SHAC's return 40 s/1000 reaches 4877.5 in the twentieth ending at 150k (its mean there is 40 x 125.5)
    assert ant.steps_to_reach(*ant.method_curve(by_method["shac"]), curve[-1]) == 150_000
    text = "\n".join(ant.comparison_lines(by_method))
    assert "at **150,000** steps: **6.7x** fewer" in text
    assert ant.steps_to_reach(ends, curve, 1e9) != ant.steps_to_reach(ends, curve, 1e9)  # never: NaN
    # unequal numbers of seeds: only the seeds both methods ran are compared
    uneven = {"sac": [run("sac", 0, 4.0), run("sac", 1, 1.0)], "sac-se": [run("sac-se", 0, 8.0)]}
    text = "\n".join(ant.comparison_lines(uneven))
    assert "Seeds: [0] and [0] (the methods ran different numbers of seeds" in text
    assert "final return (the seeds' mean over the last twentieth of its 1,000,000 steps): **3902**" in text


def test_a_transition_without_a_finite_jacobian_keeps_no_neighbour_moves(monkeypatch):
    # A diverged step's Jacobian (NaN) is kept as zeros: its neighbours repeat the transition, and batches that
    # draw it still sample (a NaN kept in the buffer would raise in every later batch).
    env = grl.StateInfo(gym.make("gradyn/Reaching-v0", links=2))
    tr = grl.DifferentiableTransition(env)
    buf = grl.GradientReplayBuffer(8, env.observation_space, env.action_space, transition=tr, neighbours=2)
    real = grl.action_jacobian

    def diverged(*args):
        obs, reward, jac, rgrad = real(*args)
        return obs, reward, jac * np.nan, rgrad * np.inf

    monkeypatch.setattr(grl, "action_jacobian", diverged)
    obs, _ = env.reset(seed=0)
    action = np.array([0.3, -0.2])
    next_obs, reward, terminated, _, info = env.step(action)
    buf.add(obs[None], next_obs[None], action[None], np.array([reward]), np.array([terminated]), [info])
    assert np.all(buf.jacobians[0] == 0) and np.all(buf.reward_gradients[0] == 0)
    batch = buf.sample(3)
    np.testing.assert_allclose(batch.next_observations[1:].numpy(), np.repeat(next_obs[None], 2, 0), rtol=1e-6)
    np.testing.assert_allclose(batch.rewards[1:, 0].numpy(), [reward, reward], rtol=1e-6)
