"""n-link pendulum reaching (paper 003 §6.2): SAC against SAC + policy enhancement (gradyn.rl).

The task is gradyn/Reaching-v0 (gradyn.envs.ReachingEnv): an n-link pendulum, horizontal at rest at
the start, torques on every joint, 50 steps of 0.05 s; the reward is the progress of the end effector
towards the highest reachable point (paper 003 Eq. 15), so an episode's return divided by its maximum
(the squared start distance, 0.5 n^2) is the *relative reward* of the paper's Figure 4(b): 1 means the
episode ends at the target.

Both agents are Stable-Baselines3's SAC with the same settings (MLP 128x128, batch 256, learning rate
3e-4, gamma 0.99, 1000 random steps first, one gradient step per environment step, automatic entropy);
``pe`` is gradyn.rl.PolicyEnhancedSAC (the actor's dQ/da through gradyn's one-step gradient, paper 003
Eq. 13-14), ``sac`` is SB3's SAC. Every ``--eval-every`` steps the deterministic policy runs
``--eval-episodes`` episodes; its mean relative reward is the learning curve (against environment steps
and wall time).

Run (each run is saved to examples/rl/results/ as JSON, so runs can be split over invocations):
    python examples/rl/pendulum_reaching.py                       # n = 2..7, seeds 0 1 2, both methods
    python examples/rl/pendulum_reaching.py --links 6 7 --seeds 0 1 --steps 20000
    python examples/rl/pendulum_reaching.py --report              # only rebuild the figure and README
    python examples/rl/pendulum_reaching.py --quick               # a smoke run: prints, writes nothing
Default budget: 2000 n environment steps per run (4k for n = 2 ... 14k for n = 7): 6 x 2 x 3 = 36 runs,
54k steps per method and seed. At the times per step measured for README.md on a 2-core machine
loaded by other work (load average about 9: SAC 26 ms, SAC + policy enhancement 156 ms, which adds a
batched gradyn step and its adjoint to every gradient step) that is 54k x 3 x 182 ms = 8 h in one
process; run the links in two processes (--links 2 5 6 / --links 3 4 7) on a quiet 2-core machine.
Writes examples/rl/README.md (the tables, the commands and seeds) and examples/rl/pendulum_reaching.png.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE / "results"
METHODS = {"sac": "SAC", "pe": "SAC + policy enhancement"}


def make_agent(method: str, links: int, seed: int, args):
    import gymnasium as gym
    import torch
    from stable_baselines3 import SAC

    import gradyn.envs  # noqa: F401
    import gradyn.rl

    torch.set_num_threads(1)
    env = gym.make("gradyn/Reaching-v0", links=links)
    kwargs = dict(learning_rate=3e-4, buffer_size=200_000, learning_starts=args.learning_starts,
                  batch_size=args.batch_size, gamma=0.99, train_freq=1, gradient_steps=1, seed=seed, device="cpu",
                  verbose=0, policy_kwargs=dict(net_arch=list(args.net)))
    if method == "sac":
        return SAC("MlpPolicy", env, **kwargs)
    return gradyn.rl.PolicyEnhancedSAC("MlpPolicy", env, enhancement_weight=args.weight, **kwargs)


def evaluate(agent, links: int, episodes: int, seed: int) -> float:
    """Mean relative reward (return / max_return) of the deterministic policy."""
    import gymnasium as gym

    import gradyn.envs  # noqa: F401

    env = gym.make("gradyn/Reaching-v0", links=links)
    out = []
    for e in range(episodes):
        obs, _ = env.reset(seed=10_000 + seed * 100 + e)
        total, done = 0.0, False
        while not done:
            action, _ = agent.predict(obs, deterministic=True)
            obs, r, terminated, truncated, _ = env.step(action)
            total += r
            done = terminated or truncated
        out.append(total / env.unwrapped.max_return)
    return float(np.mean(out))


def run(method: str, links: int, seed: int, steps: int, args) -> dict:
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    agent = make_agent(method, links, seed, args)
    curve = []  # (env steps, wall seconds of training so far, eval relative reward)
    train_episodes = []  # (env steps, relative return of a training episode)
    max_return = agent.env.envs[0].unwrapped.max_return

    class Recorder(BaseCallback):
        def _on_training_start(self):
            self.bar = tqdm(total=steps, unit="step", desc=f"n={links} {method} seed {seed}", file=sys.stdout,
                            mininterval=5)
            self.start, self.eval_time, self.ret = time.perf_counter(), 0.0, 0.0

        def _on_step(self):
            self.bar.update(1)
            self.ret += float(self.locals["rewards"][0])
            if self.locals["dones"][0]:
                train_episodes.append((self.num_timesteps, self.ret / max_return))
                self.ret = 0.0
            if self.num_timesteps % args.eval_every == 0:
                t0 = time.perf_counter()
                score = evaluate(agent, links, args.eval_episodes, seed)
                self.eval_time += time.perf_counter() - t0
                curve.append((self.num_timesteps, time.perf_counter() - self.start - self.eval_time, score))
                self.bar.set_postfix(rel=f"{score:.3f}")
            return True

        def _on_training_end(self):
            self.bar.close()

    rec = Recorder()
    agent.learn(steps, callback=rec)
    wall = curve[-1][1] if curve else float("nan")
    return dict(method=method, links=links, seed=seed, steps=steps, curve=curve, train_episodes=train_episodes,
                wall_s=wall, final=curve[-1][2] if curve else float("nan"),
                best=max(c[2] for c in curve) if curve else float("nan"),
                settings=dict(batch_size=args.batch_size, net=list(args.net), learning_starts=args.learning_starts,
                              eval_every=args.eval_every, eval_episodes=args.eval_episodes, weight=args.weight),
                command="python " + " ".join([os.path.relpath(sys.argv[0], HERE.parents[1])] + sys.argv[1:]),
                cpu=os.cpu_count(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def load_results():
    return [json.loads(p.read_text()) for p in sorted(RESULTS.glob("reaching_n*_*.json"))]


def references(links: int) -> dict:
    """Relative rewards of policies that learn nothing: constant actions (all joints -1, 0, +1) and
    uniformly random actions (mean over 10 episodes), from the evaluation's start states."""
    import gymnasium as gym

    import gradyn.envs  # noqa: F401

    env = gym.make("gradyn/Reaching-v0", links=links)
    out = {}
    rng = np.random.default_rng(0)
    for name, policy in (("constant -1", lambda: -np.ones(links)), ("constant 0", lambda: np.zeros(links)),
                         ("constant +1", lambda: np.ones(links)), ("random", lambda: rng.uniform(-1, 1, links))):
        scores = []
        for e in range(10 if name == "random" else 1):
            env.reset(seed=10_000 + e)
            total, done = 0.0, False
            while not done:
                _, r, terminated, truncated, _ = env.step(policy())
                total += r
                done = terminated or truncated
            scores.append(total / env.unwrapped.max_return)
        out[name] = float(np.mean(scores))
    return out


def report(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    links = sorted({r["links"] for r in results})
    fig, axes = plt.subplots(2, len(links), figsize=(3.6 * len(links), 6), squeeze=False)
    colors = {"sac": "tab:blue", "pe": "tab:red"}
    for col, n in enumerate(links):
        for method in METHODS:
            runs = [r for r in results if r["links"] == n and r["method"] == method]
            for k, r in enumerate(runs):
                c = np.array(r["curve"])
                if c.size == 0:
                    continue
                label = f"{METHODS[method]}" if k == 0 else None
                axes[0, col].plot(c[:, 0], c[:, 2], color=colors[method], alpha=0.8, label=label)
                axes[1, col].plot(c[:, 1] / 60, c[:, 2], color=colors[method], alpha=0.8, label=label)
        axes[0, col].set_title(f"{n} links")
        axes[0, col].set_xlabel("environment steps")
        axes[1, col].set_xlabel("training wall time (min)")
        for row in range(2):
            axes[row, col].axhline(0.9, color="gray", lw=0.8, ls="--")
            axes[row, col].set_ylim(-0.5, 1.05)
    axes[0, 0].set_ylabel("relative reward (eval)")
    axes[1, 0].set_ylabel("relative reward (eval)")
    axes[0, 0].legend(fontsize=8, loc="lower right")
    fig.suptitle("n-link pendulum reaching: SAC vs SAC + policy enhancement (one line per seed)")
    fig.tight_layout()
    fig.savefig(HERE / "pendulum_reaching.png", dpi=90)

    lines = ["# Reinforcement learning with gradyn's gradients (`gradyn.rl`)", "",
             "Written by `examples/rl/pendulum_reaching.py` from the runs in `results/` (do not edit by hand).", "",
             "## n-link pendulum reaching: SAC vs SAC + policy enhancement (paper 003 §6.2)", "",
             "Task `gradyn/Reaching-v0` (`gradyn.envs.ReachingEnv`): reward = progress of the end effector "
             "towards the highest reachable point; relative reward = return / maximal return (1: the episode "
             "ends at the target). Learning curves: the deterministic policy's mean relative reward every "
             "`eval_every` steps, against environment steps and training wall time (evaluation excluded).", "",
             "![learning curves](pendulum_reaching.png)", "",
             "| links | method | seeds | env steps | final relative reward (per seed) | mean | best during training "
             "(mean) | seeds >= 0.9 at the end | wall min / run (mean) | ms / step |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for n in links:
        for method in METHODS:
            runs = [r for r in results if r["links"] == n and r["method"] == method]
            if not runs:
                continue
            finals = [r["final"] for r in runs]
            lines.append(
                f"| {n} | {METHODS[method]} | {', '.join(str(r['seed']) for r in runs)} | "
                f"{', '.join(sorted({str(r['steps']) for r in runs}))} | "
                f"{', '.join(f'{f:.3f}' for f in finals)} | {np.mean(finals):.3f} | "
                f"{np.mean([r['best'] for r in runs]):.3f} | {sum(f >= 0.9 for f in finals)}/{len(runs)} | "
                f"{np.mean([r['wall_s'] for r in runs]) / 60:.1f} | "
                f"{1000 * np.mean([r['wall_s'] / r['steps'] for r in runs]):.1f} |")
    lines += ["", "Policies that learn nothing, for scale (relative reward; random: mean of 10 episodes). The "
              "pendulum is chaotic and only the final distance counts, so a lucky constant torque can end "
              "near the target:", "", "| links | constant -1 | constant 0 | constant +1 | random |",
              "|---|---|---|---|---|"]
    for n in links:
        ref = references(n)
        lines.append(f"| {n} | " + " | ".join(f"{ref[k]:.3f}" for k in ("constant -1", "constant 0", "constant +1",
                                                                          "random")) + " |")
    lines += ["", "Settings and commands of the runs (seed, date, CPUs of the machine):", ""]
    for r in results:
        lines.append(f"- n={r['links']} {r['method']} seed {r['seed']}: `{r['command']}` ({r['date']}, "
                     f"{r['cpu']} CPUs; {r['settings']})")
    lines += ["", "## Ant (`ant.py`)", "",
              "`examples/rl/ant.py` runs SAC vs SAC + sample enhancement and PPO vs SHAC on gradyn/Ant-v0; "
              + ("its results are in [ant.md](ant.md)." if (HERE / "ant.md").exists() else
                 "it has not been run here beyond its smoke test (no results).")]
    (HERE / "README.md").write_text("\n".join(lines) + "\n")
    print("wrote", HERE / "README.md", "and", HERE / "pendulum_reaching.png")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--links", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--steps", type=int, default=None, help="environment steps per run (default 2000 n)")
    p.add_argument("--eval-every", type=int, default=1000)
    p.add_argument("--eval-episodes", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--learning-starts", type=int, default=1000)
    p.add_argument("--net", type=int, nargs="+", default=[128, 128])
    p.add_argument("--weight", type=float, default=1.0, help="PolicyEnhancedSAC's enhancement_weight")
    p.add_argument("--report", action="store_true", help="only rebuild README.md and the figure from results/")
    p.add_argument("--quick", action="store_true", help="a smoke run of a few hundred steps; writes nothing")
    args = p.parse_args(argv)
    if args.quick:
        args.links, args.seeds, args.steps = [2], [0], 200
        args.eval_every, args.eval_episodes, args.batch_size, args.learning_starts, args.net = 100, 1, 32, 100, [16]
    if not args.report:
        for n in args.links:
            for seed in args.seeds:
                for method in args.methods:
                    steps = args.steps or 2000 * n
                    r = run(method, n, seed, steps, args)
                    print(f"n={n} {method} seed {seed}: final relative reward {r['final']:.3f} "
                          f"(best {r['best']:.3f}) after {steps} steps, {r['wall_s']:.0f} s training", flush=True)
                    if not args.quick:
                        RESULTS.mkdir(exist_ok=True)
                        (RESULTS / f"reaching_n{n}_{method}_s{seed}.json").write_text(json.dumps(r))
    if not args.quick:
        results = load_results()
        if results:
            report(results)


if __name__ == "__main__":
    main()
