"""Environment steps per second of the gradyn environments: one environment, Gymnasium's SyncVectorEnv of
N copies (one gradyn call per copy), and gradyn's vector environment (one batched gradyn call for all N
worlds, on --threads threads). Random actions; wall clock over --steps vector steps after a warm-up.
Prints a table; writes nothing.

Run:  python examples/gym/vector_speed.py [--envs gradyn/Ant-v0 gradyn/Laikago-v0] [--num-envs 8 64] [--steps 200]
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np

import gradyn.envs  # noqa: F401  (registers the environments)


def steps_per_second(envs, steps: int, num_envs: int, seed: int = 0) -> float:
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(steps + 10,) + envs.action_space.shape)
    for a in actions[:10]:  # warm-up
        envs.step(a)
    start = time.perf_counter()
    for a in actions[10:]:
        envs.step(a)
    return steps * num_envs / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--envs", nargs="+", default=["gradyn/Ant-v0", "gradyn/Laikago-v0"])
    ap.add_argument("--num-envs", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None, help="threads of the batched call (default: all cores)")
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; environment steps per second (random actions, {args.steps} vector steps)\n")
    print("| environment | worlds | one env | SyncVectorEnv | gradyn vector env (one batched call) |")
    print("|---|---|---|---|---|")
    for env_id in args.envs:
        single = gym.make(env_id, disable_env_checker=True)
        single_rate = steps_per_second(gym.vector.SyncVectorEnv([lambda: single]), args.steps, 1)
        for n in args.num_envs:
            sync = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, disable_env_checker=True)] * n)
            vec = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", threads=args.threads)
            print(f"| {env_id} | {n} | {single_rate:,.0f} | {steps_per_second(sync, args.steps, n):,.0f} | "
                  f"{steps_per_second(vec, args.steps, n):,.0f} |")


if __name__ == "__main__":
    main()
