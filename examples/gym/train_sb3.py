"""Train a PPO agent (Stable-Baselines3) on a gradyn Gymnasium environment, end to end.

The environment is gradyn/CartPole-v0 (Gymnasium's InvertedPendulum-v5 rules on the classic cart-pole,
simulated by gradyn; see gradyn.envs.CartPoleEnv): reward 1 per step while the pole stays within
0.2 rad of upright and the cart within 2.4 m, at most 1000 steps. PPO with Stable-Baselines3's default
hyperparameters, an MLP policy (two layers of 64), --envs copies of the environment (SB3's DummyVecEnv);
after training, the deterministic policy is evaluated on --eval-episodes fresh episodes.

Run:  python examples/gym/train_sb3.py [--env gradyn/CartPole-v0] [--timesteps 100000] [--seed 0]
      python examples/gym/train_sb3.py --quick     (a few hundred steps; prints only, writes nothing)
Writes examples/gym/README.md (the numbers, the command and the seed) and examples/gym/learning_curve.png
(the return of every training episode against the environment steps so far, and the evaluation).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def make_agent(env_id: str, envs: int, seed: int, n_steps: int, threads: int):
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    import gradyn.envs  # noqa: F401  (registers the gradyn environments)

    torch.set_num_threads(threads)
    vec = make_vec_env(lambda: gym.make(env_id), n_envs=envs, seed=seed)
    return PPO("MlpPolicy", vec, n_steps=n_steps, seed=seed, verbose=0, device="cpu"), vec


def progress_callback(total: int):
    """A tqdm bar over environment steps, fed from SB3's callback (SB3's own bar needs `rich`)."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class Bar(BaseCallback):
        def _on_training_start(self):
            self.bar = tqdm(total=total, unit="step", desc="PPO", file=sys.stdout)

        def _on_step(self):
            self.bar.update(min(self.training_env.num_envs, total - self.bar.n))  # SB3 may overshoot total
            return True

        def _on_training_end(self):
            self.bar.close()

    return Bar()


def episode_curve(vec):
    """(environment steps at each episode's end, its return) in the order the episodes ended, from SB3's
    Monitor wrappers (one per environment copy)."""
    ends, returns = [], []
    for monitor in vec.envs:
        lengths = np.cumsum(monitor.get_episode_lengths())
        ends.append(lengths * len(vec.envs))  # steps of all copies, which advance together
        returns.append(monitor.get_episode_rewards())
    ends, returns = np.concatenate(ends), np.concatenate(returns)
    order = np.argsort(ends, kind="stable")
    return ends[order], returns[order]


def evaluate(model, env_id: str, episodes: int, seed: int):
    import gymnasium as gym

    env = gym.make(env_id)
    returns = []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + 1000 + k)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
        returns.append(total)
    return np.array(returns)


def write_results(args, steps, ends, returns, eval_returns, elapsed):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(ends, returns, ".", ms=3, alpha=0.4, label="training episode")
    if len(returns) >= 10:
        window = 20 if len(returns) >= 40 else 5
        smooth = np.convolve(returns, np.ones(window) / window, mode="valid")
        ax.plot(ends[window - 1:], smooth, "-", label=f"mean of {window} episodes")
    ax.axhline(eval_returns.mean(), color="k", ls="--", lw=1,
               label=f"evaluation, deterministic ({len(eval_returns)} episodes)")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode return")
    ax.set_title(f"PPO (Stable-Baselines3) on {args.env}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "learning_curve.png", dpi=120)

    command = (f"python examples/gym/train_sb3.py --env {args.env} --timesteps {args.timesteps} "
               f"--envs {args.envs} --seed {args.seed} --eval-episodes {args.eval_episodes}")
    first = returns[: max(1, len(returns) // 10)]
    last = returns[-max(1, len(returns) // 10):]
    text = f"""# A Stable-Baselines3 agent on a gradyn environment

`train_sb3.py` trains PPO (Stable-Baselines3, default hyperparameters, MLP policy 64 x 64) on
`{args.env}`, a Gymnasium environment simulated by gradyn (`gradyn.envs`), with {args.envs} copies of the
environment, then evaluates the deterministic policy on {args.eval_episodes} fresh episodes (seeds
{args.seed + 1000}..{args.seed + 999 + args.eval_episodes}).

Generated by `{command}` (seed {args.seed}) on {os.cpu_count()} cores in {elapsed:.0f} s; the script writes this
file and `learning_curve.png`.

| | value |
|---|---|
| environment steps | {steps} |
| training episodes | {len(returns)} |
| mean return, first 10% of training episodes | {first.mean():.1f} |
| mean return, last 10% of training episodes | {last.mean():.1f} |
| evaluation return, mean (min .. max) | {eval_returns.mean():.1f} ({eval_returns.min():.0f} .. {eval_returns.max():.0f}) |
| most an episode can return | 1000 (1 per step, 1000 steps) |

![learning curve](learning_curve.png)

Also in this folder: `differentiable_pendulum.py`, a policy trained by backpropagation through
`env.differentiable_step` (its numbers: `differentiable_pendulum.md`), and `vector_speed.py`, which prints
the environments' steps per second alone, in Gymnasium's SyncVectorEnv and in gradyn's batched vector env.
"""
    (HERE / "README.md").write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="gradyn/CartPole-v0")
    ap.add_argument("--timesteps", type=int, default=100_000)
    ap.add_argument("--envs", type=int, default=4, help="environment copies PPO collects from")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the networks are small)")
    ap.add_argument("--quick", action="store_true", help="a few hundred steps, print only (smoke test)")
    args = ap.parse_args()
    n_steps = 512
    if args.quick:
        args.timesteps, args.envs, args.eval_episodes, n_steps = 256, 2, 1, 64

    start = time.perf_counter()
    model, vec = make_agent(args.env, args.envs, args.seed, n_steps, args.threads)
    model.learn(total_timesteps=args.timesteps, callback=progress_callback(args.timesteps))
    ends, returns = episode_curve(vec)
    eval_returns = evaluate(model, args.env, args.eval_episodes, args.seed)
    elapsed = time.perf_counter() - start
    print(f"{args.env}: {model.num_timesteps} steps in {elapsed:.0f} s, {len(returns)} training "
          f"episodes, last return {returns[-1] if len(returns) else float('nan'):.1f}; evaluation return "
          f"{eval_returns.mean():.1f} (min {eval_returns.min():.0f}, max {eval_returns.max():.0f})")
    if not args.quick:
        write_results(args, model.num_timesteps, ends, returns, eval_returns, elapsed)
        print(f"wrote {HERE / 'README.md'} and {HERE / 'learning_curve.png'}")


if __name__ == "__main__":
    main()
