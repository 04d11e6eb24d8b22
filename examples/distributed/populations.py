"""Populations beyond one machine: gradyn's batched calls as Ray tasks.

Two population methods on the double-pendulum identification of examples/sysid_double_pendulum
(recover link lengths 3 and 4 from 10 s of joint positions):

* basin hopping (`basin-hopping`): the grid of start cells is cut into one part per task; each Ray
  task runs the lockstep basin hopping of its part (every L-BFGS line-search trial of its starts
  one batched gradyn rollout + rollout_vjp). Each start draws its own perturbations (seeded by the
  seed and its index), so the parts give exactly the numbers of one process doing all starts.
* CMA-ES (`cma-es`, the `cma` library): every generation's candidates are cut into one part per
  task; each task is one batched gradyn rollout of its part (no gradients). A candidate's loss is
  the same number whichever batch it is in, so the search takes exactly the path of one process.

The model travels to the workers pickled (gradyn models pickle), once per run (`ray.put`).
`--address auto` joins a running cluster (`ray start --head` on one machine, `ray start
--address=HEAD:6379` on the others); without it a local cluster of `--workers` processes is started.
With `--check` the same search also runs in this process alone, and the script fails unless the
results are bitwise equal. Writes examples/distributed/README.md (numbers, seed and command) and
examples/distributed/populations.png.

Run:  python examples/distributed/populations.py [basin-hopping|cma-es|both] [--workers 4] [--check]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "sysid_double_pendulum"))
import sysid  # noqa: E402  (the problem, L-BFGS and basin hopping of the single-machine example)

BOUNDS = np.array(sysid.BOUNDS)


def split(n: int, parts: int) -> list[np.ndarray]:
    """Indices 0..n-1 cut into at most `parts` contiguous, nearly equal, non-empty parts."""
    return [part for part in np.array_split(np.arange(n), min(parts, n)) if part.size]


# --- the work of one task (plain functions: run in this process or in a Ray worker) ----------------


def basin_hopping_part(problem: sysid.Problem, starts: np.ndarray, first_index: int, seed: int):
    """Basin hopping from starts[i] (global index first_index + i); returns (best, losses, evaluations)."""
    best, losses = sysid.basin_hopping_population(problem, starts, seed=seed, first_index=first_index)
    return best, losses, problem.evaluations


def losses_part(problem: sysid.Problem, candidates: np.ndarray) -> np.ndarray:
    """Losses of candidate lengths (P, 2): one batched rollout, no gradient."""
    P = len(candidates)
    qs, _ = sysid.gradyn.rollout(problem.model, np.tile(problem.q0, (P, 1)), np.tile(problem.v0, (P, 1)),
                                 np.zeros((P, problem.steps, 2)), sysid.DT, params=problem.params(candidates),
                                 threads=problem.threads)
    err = qs - problem.observed
    return np.sum(err**2, axis=(1, 2)) / err[0].size


# --- the searches, given a way to run parts ------------------------------------------------------


class LocalRunner:
    """Runs each part in this process, one after the other."""

    name = "one process"

    def __init__(self, problem):
        self.problem = problem

    def basin_hopping(self, parts):
        return [basin_hopping_part(self._fresh(), *part) for part in parts]

    def losses(self, parts):
        return [losses_part(self.problem, part) for part in parts]

    def _fresh(self):
        problem = sysid.Problem.__new__(sysid.Problem)
        problem.__dict__.update(self.problem.__dict__, evaluations=0, calls=0)
        return problem


class RayRunner:
    """Runs each part as a Ray task; the problem (with its gradyn model) is put in the object
    store once and unpickled by each worker."""

    def __init__(self, problem, ray):
        self.ray = ray
        self.problem_ref = ray.put(problem)
        self.basin_task = ray.remote(num_cpus=1)(basin_hopping_part)
        self.losses_task = ray.remote(num_cpus=1)(losses_part)
        self.name = f"Ray, {int(ray.cluster_resources().get('CPU', 0))} CPUs"

    def basin_hopping(self, parts):
        return self.ray.get([self.basin_task.remote(self.problem_ref, *part) for part in parts])

    def losses(self, parts):
        return self.ray.get([self.losses_task.remote(self.problem_ref, part) for part in parts])


def basin_hopping(runner, starts: np.ndarray, parts: int, seed: int):
    pieces = split(len(starts), parts)
    results = runner.basin_hopping([(starts[p], int(p[0]), seed) for p in pieces])
    best = np.concatenate([r[0] for r in results])
    losses = np.concatenate([r[1] for r in results])
    return best, losses, sum(r[2] for r in results)


def cma_es(runner, parts: int, seed: int, generations: int, popsize: int):
    """CMA-ES from the middle of the box; returns the best lengths, its loss and the best loss per
    generation."""
    import cma

    # cma seeds numpy's global generator with its "seed" option and reads 0 as "from the clock":
    # seed + 1 keeps --seed 0 reproducible.
    es = cma.CMAEvolutionStrategy([4.5, 4.5], 2.0, {
        "bounds": [list(BOUNDS[:, 0]), list(BOUNDS[:, 1])], "popsize": popsize, "seed": seed + 1,
        "verbose": -9, "maxiter": generations, "tolfun": 1e-16, "tolx": 1e-14})
    history = []
    while not es.stop():
        candidates = np.array(es.ask())
        losses = np.concatenate(runner.losses([candidates[p] for p in split(len(candidates), parts)]))
        es.tell(list(candidates), list(losses))
        history.append(float(np.min(losses)))
    return np.array(es.result.xbest), float(es.result.fbest), history


# --- the command ----------------------------------------------------------------------------------


def start_ray(address: str | None, workers: int):
    import ray

    # The workers get these functions and the sysid example's classes by value (cloudpickle), so a
    # machine of the cluster needs gradyn installed but not this checkout.
    for module in (sysid, sys.modules.get(__name__)):
        if module is not None and module.__name__ != "__main__":
            ray.cloudpickle.register_pickle_by_value(module)
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    return ray


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("method", nargs="?", default="both", choices=("basin-hopping", "cma-es", "both"))
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="local cluster: worker processes")
    parser.add_argument("--address", default=None, help="join this Ray cluster instead ('auto': the running one)")
    parser.add_argument("--parts", type=int, default=None, help="tasks per population (default: the cluster's CPUs)")
    parser.add_argument("--grid", type=int, default=10, help="basin hopping: start cells per axis")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the observed trajectory")
    parser.add_argument("--generations", type=int, default=60, help="CMA-ES generations at most")
    parser.add_argument("--popsize", type=int, default=32, help="CMA-ES candidates per generation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="also run in this process alone; fail unless equal")
    parser.add_argument("--no-write", action="store_true", help="print only (no README, no figure)")
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers: expected a positive number, got {args.workers}")

    problem = sysid.Problem(args.seconds, threads=1)  # one thread per task: the tasks are the parallelism
    ray = start_ray(args.address, args.workers)
    try:
        runner = RayRunner(problem, ray)
        parts = args.parts or max(1, int(ray.cluster_resources().get("CPU", 1)))
        rows, figures, ok = [], {}, True
        axis = np.linspace(1.0, 7.0, args.grid)
        starts = np.array([[a, b] for b in axis for a in axis])
        runners = [runner] + ([LocalRunner(problem)] if args.check else [])
        if args.method in ("basin-hopping", "both"):
            results = []
            for r in runners:
                t0 = time.perf_counter()
                results.append(basin_hopping(r, starts, parts if r is runner else 1, args.seed) + (time.perf_counter() - t0,))
            best, losses, evaluations, seconds = results[0]
            errors = np.max(np.abs(best - sysid.TRUE_LENGTHS), axis=1)
            same = all(np.array_equal(best, r[0]) and np.array_equal(losses, r[1]) for r in results[1:])
            ok &= same or not args.check
            rows.append(("basin hopping", f"{len(starts)} starts in {len(split(len(starts), parts))} tasks",
                         f"{np.mean(errors < 1e-3):.0%} of starts recover (3, 4) to 1e-3", evaluations,
                         [r[-1] for r in results], same if args.check else None))
            figures["basin hopping"] = errors
        if args.method in ("cma-es", "both"):
            results = []
            for r in runners:
                t0 = time.perf_counter()
                results.append(cma_es(r, parts if r is runner else 1, args.seed, args.generations, args.popsize)
                               + (time.perf_counter() - t0,))
            xbest, fbest, history, seconds = results[0]
            same = all(np.array_equal(xbest, r[0]) and r[1] == fbest and r[2] == history for r in results[1:])
            ok &= same or not args.check
            rows.append(("CMA-ES", f"{args.popsize} per generation in {len(split(args.popsize, parts))} tasks",
                         f"best l = ({xbest[0]:.6f}, {xbest[1]:.6f}), loss {fbest:.2e}", len(history) * args.popsize,
                         [r[-1] for r in results], same if args.check else None))
            figures["CMA-ES"] = history
        cluster = runner.name
    finally:
        ray.shutdown()

    for name, split_text, outcome, evaluations, seconds, same in rows:
        check = "" if same is None else f"; one process (one thread) alone: {seconds[1]:.1f} s, results {'bitwise equal' if same else 'DIFFERENT'}"
        print(f"{name}: {split_text} on {cluster}: {outcome}; {evaluations} evaluations in {seconds[0]:.1f} s{check}")
    if not args.no_write:
        write_outputs(args, rows, figures, cluster)
    return 0 if ok else 1


def write_outputs(args, rows, figures, cluster) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(figures), figsize=(5.5 * len(figures), 4.2), squeeze=False)
    for ax, (name, data) in zip(axes[0], figures.items()):
        if name == "basin hopping":
            n = args.grid
            im = ax.imshow(np.log10(np.reshape(data, (n, n)) + 1e-16), origin="lower", extent=(1, 7, 1, 7),
                           cmap="magma_r", vmin=-12, vmax=1)
            fig.colorbar(im, ax=ax)
            ax.set(xlabel="start l1 [m]", ylabel="start l2 [m]", title="basin hopping: log10 max |l - l_true|")
        else:
            ax.semilogy(data, "k.-")
            ax.set(xlabel="generation", ylabel="best loss of the generation", title="CMA-ES")
    fig.tight_layout()
    fig.savefig(HERE / "populations.png", dpi=110)
    plt.close(fig)
    command = "python examples/distributed/populations.py " + " ".join(sys.argv[1:])
    lines = ["# Populations as Ray tasks", "",
             f"Generated by `{command.strip()}` (seed {args.seed}; the script writes this file and "
             "`populations.png`). The double pendulum of examples/sysid_double_pendulum: recover link "
             f"lengths (3, 4) from {args.seconds:g} s of joint positions. Cluster: {cluster}"
             + (" (a local one started by the script)" if not args.address else "") + f"; {os.cpu_count()} cores here.",
             "", "| method | split | outcome | candidate evaluations | time on Ray | one process, one thread | equal |",
             "|---|---|---|---|---|---|---|"]
    for name, split_text, outcome, evaluations, seconds, same in rows:
        alone = f"{seconds[1]:.1f} s" if len(seconds) > 1 else "not run (--check)"
        equal = {None: "not checked", True: "bitwise", False: "**no**"}[same]
        lines.append(f"| {name} | {split_text} | {outcome} | {evaluations} | {seconds[0]:.1f} s | {alone} | {equal} |")
    lines += ["", "![basin hopping per start cell, CMA-ES convergence](populations.png)", ""]
    (HERE / "README.md").write_text("\n".join(lines))
    print(f"numbers: {HERE / 'README.md'}; figure: {HERE / 'populations.png'}")


if __name__ == "__main__":
    sys.exit(main())
