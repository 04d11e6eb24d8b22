"""gradyn's Ant (gradyn/Ant-v0, Gymnasium's Ant-v5 reward without its contact cost): the comparisons of
issue 25, scaffolding: SAC vs SAC + sample enhancement (9 first-order neighbours per sample, paper 003
Eq. 10-11) and PPO vs the short-horizon actor-critic (gradyn.rl.SHAC, 32-step windows through gradyn's
gradients), each run's learning curve (training episode returns against environment steps and wall
time) saved to examples/rl/results/ant_<method>_s<seed>.json.

Methods: ``sac`` (SB3 SAC), ``sac-se`` (gradyn.rl.SampleEnhancedSAC, neighbours 9, perturbation 0.1),
``ppo`` (SB3 PPO, 8 environments, SB3's defaults), ``shac`` (gradyn.rl.SHAC, 64 worlds, horizon 32).

Run:
    python examples/rl/ant.py --methods sac sac-se --seeds 0 1 --steps 200000
    python examples/rl/ant.py --methods ppo shac --seeds 0 1 --steps 1000000
    python examples/rl/ant.py --report        # only rebuild ant.md and ant.png from results/
    python examples/rl/ant.py --quick         # a smoke run of every method (a few hundred steps; writes nothing)
Writes examples/rl/ant.md (the table, the commands and the seeds) and examples/rl/ant.png from the runs in
results/. The budgets above are what the comparison needs; they are not sized to a 2-core machine
(see ant.md for the measured time per step of the runs made).
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
METHODS = {"sac": "SAC", "sac-se": "SAC + sample enhancement", "ppo": "PPO", "shac": "SHAC (gradyn.rl)"}


def sb3_run(method, seed, steps, args):
    import gymnasium as gym
    from stable_baselines3 import PPO, SAC
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from tqdm import tqdm

    import gradyn.envs  # noqa: F401
    import gradyn.rl

    kwargs = dict(seed=seed, device="cpu", verbose=0)
    if method == "ppo":
        env = make_vec_env(lambda: gym.make("gradyn/Ant-v0"), n_envs=args.ppo_envs, seed=seed)
        agent = PPO("MlpPolicy", env, n_steps=args.ppo_steps, batch_size=args.batch_size, **kwargs)
    else:
        env = gym.make("gradyn/Ant-v0")
        sac_kwargs = dict(batch_size=args.batch_size, learning_starts=args.learning_starts, **kwargs)
        agent = SAC("MlpPolicy", env, **sac_kwargs) if method == "sac" else \
            gradyn.rl.SampleEnhancedSAC("MlpPolicy", env, neighbours=args.neighbours, perturbation=0.1,
                                        **sac_kwargs)
    curve = []

    class Recorder(BaseCallback):
        def _on_training_start(self):
            self.bar = tqdm(total=steps, unit="step", desc=f"{method} seed {seed}", file=sys.stdout, mininterval=5)
            self.start = time.perf_counter()
            self.returns = np.zeros(self.training_env.num_envs)

        def _on_step(self):
            self.bar.update(self.training_env.num_envs)
            self.returns += self.locals["rewards"]
            for i, done in enumerate(self.locals["dones"]):
                if done:
                    curve.append((self.num_timesteps, time.perf_counter() - self.start, float(self.returns[i])))
                    self.returns[i] = 0
            return True

        def _on_training_end(self):
            self.bar.close()

    agent.learn(steps, callback=Recorder())
    return curve


def shac_run(seed, steps, args):
    import gymnasium as gym
    import gradyn.envs  # noqa: F401
    import gradyn.rl

    agent = gradyn.rl.SHAC(gym.make("gradyn/Ant-v0"), horizon=args.horizon, num_envs=args.shac_envs, seed=seed)
    agent.learn(steps)
    return [h for h in agent.history if np.isfinite(h[2])]


def report(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colors = {"sac": "tab:blue", "sac-se": "tab:red", "ppo": "tab:green", "shac": "tab:purple"}
    lines = ["# gradyn/Ant-v0: SAC vs SAC + sample enhancement, PPO vs SHAC (`examples/rl/ant.py`)", "",
             "Written by `examples/rl/ant.py` from the runs in `results/` (do not edit by hand). Training episode "
             "returns (the mean of the last 10 episodes at the end of each run).", "", "![curves](ant.png)", "",
             "| method | seed | env steps | final return (last 10 episodes) | wall min | ms / step | command |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        c = np.array(r["curve"])
        if c.size:
            label = f"{METHODS[r['method']]} s{r['seed']}"
            axes[0].plot(c[:, 0], c[:, 2], color=colors[r["method"]], alpha=0.7, label=label)
            axes[1].plot(c[:, 1] / 60, c[:, 2], color=colors[r["method"]], alpha=0.7, label=label)
        final = float(np.mean(c[-10:, 2])) if c.size else float("nan")
        lines.append(f"| {METHODS[r['method']]} | {r['seed']} | {r['steps']} | {final:.1f} | {r['wall_s'] / 60:.1f} | "
                     f"{1000 * r['wall_s'] / r['steps']:.1f} | `{r['command']}` ({r['date']}, {r['cpu']} CPUs) |")
    axes[0].set_xlabel("environment steps")
    axes[1].set_xlabel("wall time (min)")
    axes[0].set_ylabel("training episode return")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(HERE / "ant.png", dpi=90)
    (HERE / "ant.md").write_text("\n".join(lines) + "\n")
    print("wrote", HERE / "ant.md", "and", HERE / "ant.png")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--learning-starts", type=int, default=10_000)
    p.add_argument("--neighbours", type=int, default=9)
    p.add_argument("--ppo-envs", type=int, default=8)
    p.add_argument("--ppo-steps", type=int, default=256)
    p.add_argument("--shac-envs", type=int, default=64)
    p.add_argument("--horizon", type=int, default=32)
    p.add_argument("--report", action="store_true")
    p.add_argument("--quick", action="store_true", help="a smoke run of every method; writes nothing")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.quick:
        args.seeds, args.steps, args.batch_size, args.learning_starts = [0], 128, 8, 100
        args.ppo_envs, args.ppo_steps, args.shac_envs, args.horizon, args.neighbours = 2, 64, 4, 8, 2
    if not args.report:
        for seed in args.seeds:
            for method in args.methods:
                start = time.perf_counter()
                curve = shac_run(seed, args.steps, args) if method == "shac" else sb3_run(method, seed, args.steps,
                                                                                          args)
                wall = time.perf_counter() - start
                last = float(np.mean([c[2] for c in curve[-10:]])) if curve else float("nan")
                print(f"ant {method} seed {seed}: {len(curve)} episodes, last-10 mean return {last:.1f}, "
                      f"{args.steps} steps in {wall:.0f} s", flush=True)
                if not args.quick:
                    RESULTS.mkdir(exist_ok=True)
                    r = dict(method=method, seed=seed, steps=args.steps, curve=curve, wall_s=wall,
                             command="python " + " ".join([os.path.relpath(sys.argv[0], HERE.parents[1])]
                                                          + sys.argv[1:]),
                             cpu=os.cpu_count(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
                    (RESULTS / f"ant_{method}_s{seed}.json").write_text(json.dumps(r))
    if not args.quick:
        results = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("ant_*.json"))]
        if results:
            report(results)


if __name__ == "__main__":
    main()
