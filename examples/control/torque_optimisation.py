"""What arm_throw.py and golf.py share (paper 003, Fig. 6): open-loop torques held over intervals,
optimised by Adam on the analytic gradient and by CMA-ES, with a directional gradient check.

A task has `intervals` (torque intervals), `loss(u)` and `loss_and_grad(u)` for u of shape
(intervals, njoints); the histories are lists of (loss, best loss so far, wall s, rollouts).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np


def directional_check(task, u, direction, h=1e-7):
    """(adjoint, central difference) of the loss along a direction. The loss is piecewise smooth
    (contact events kink it), so the difference step must be small: at h = 1e-4 it already straddles
    kinks."""
    adjoint = float(np.sum(task.loss_and_grad(u)[1] * direction))
    return adjoint, (task.loss(u + h * direction) - task.loss(u - h * direction)) / (2 * h)


def train_gradient(task, njoints, iterations, lr, gamma):
    """Adam (torch.optim) from zero torques, the learning rate decayed by gamma per iteration."""
    import torch

    u = torch.zeros((task.intervals, njoints), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([u], lr=lr)
    schedule = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma)
    history, best = [], (np.inf, None)
    started = time.perf_counter()
    for i in range(iterations):
        miss, grad = task.loss_and_grad(u.detach().numpy())
        if miss < best[0]:
            best = (miss, u.detach().numpy().copy())
        history.append((miss, best[0], time.perf_counter() - started, i + 1))
        optimizer.zero_grad()
        u.grad = torch.tensor(grad)
        optimizer.step()
        schedule.step()
    return history, best[1]


def train_cma(task, njoints, generations, seed, sigma0=1.0):
    """CMA-ES (the cma package) from zero torques."""
    import cma

    n = task.intervals * njoints
    # full covariance up to 500 unknowns, diagonal beyond (the per-step runs), as the cma package advises
    es = cma.CMAEvolutionStrategy(np.zeros(n), sigma0, {"seed": seed + 1, "verbose": -9, "CMA_diagonal": n > 500})
    history, best, used = [], (np.inf, None), 0
    started = time.perf_counter()
    for _ in range(generations):
        candidates = es.ask()
        values = [task.loss(c) for c in candidates]
        used += len(candidates)
        i = int(np.argmin(values))
        if values[i] < best[0]:
            best = (values[i], np.reshape(candidates[i], (task.intervals, njoints)).copy())
        es.tell(candidates, values)
        history.append((values[i], best[0], time.perf_counter() - started, used))
    return history, best[1]


def first_below(history, threshold):
    """(iterations, rollouts, wall s) when the best miss so far first drops below threshold, or None."""
    for i, h in enumerate(history):
        if h[1] < threshold:
            return i + 1, h[3], h[2]
    return None


def parse_args(description, name, lr, control_steps):
    """The two scripts' command line (their defaults differ in the learning rate alone)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help="smoke run: 5 iterations, 3 generations, one seed (both interval lengths)")
    ap.add_argument("--iterations", type=int, default=200, help="Adam iterations")
    ap.add_argument("--generations", type=int, default=300, help="CMA-ES generations per seed")
    ap.add_argument("--cma-seeds", type=int, default=3)
    ap.add_argument("--lr", type=float, default=lr)
    ap.add_argument("--gamma", type=float, default=0.97, help="learning-rate decay per iteration")
    ap.add_argument("--interval-steps", default="10,1",
                    help="time steps per torque interval, one experiment per comma-separated value (10: 20 ms "
                         "intervals; 1: a torque vector per time step, the paper's)")
    ap.add_argument("--seed", type=int, default=0, help="first CMA-ES seed (the gradient run is deterministic)")
    ap.add_argument("--out", default=None, help=f"folder for {name}.md/.png (default: beside this file)")
    args = ap.parse_args()
    args.interval_steps = [int(k) for k in args.interval_steps.split(",")]
    if any(k < 1 or control_steps % k for k in args.interval_steps):
        ap.error(f"--interval-steps: each value must divide {control_steps}")
    if args.quick:
        args.iterations, args.generations, args.cma_seeds = 5, 3, 1
    return args


def run(args, tasks, njoints, thresholds, check_std):
    """The gradient check (at random torques, normal with std check_std, on the first task), then Adam
    and CMA-ES on every task: (checks, [(task, Adam history, its best u, {seed: CMA-ES run})])."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    u_check = rng.normal(0.0, check_std, (tasks[0].intervals, njoints))
    checks = [directional_check(tasks[0], u_check, rng.normal(size=u_check.shape))
              for _ in range(1 if args.quick else 3)]
    for a, fd in checks:
        print(f"directional derivative: adjoint {a:.6f}, central difference (h 1e-7) {fd:.6f}", flush=True)
    results = []
    for task in tasks:
        print(f"{task.intervals} x {njoints} torques, {task.interval_steps} steps each:", flush=True)
        gradient, u_gradient = train_gradient(task, njoints, args.iterations, args.lr, args.gamma)
        print(f"  Adam: miss {gradient[0][0]:.4f} -> best {gradient[-1][1]:.5f} m in {len(gradient)} iterations "
              f"({gradient[-1][2]:.1f} s); reached {[first_below(gradient, t) for t in thresholds]}", flush=True)
        cma_runs = {}
        for seed in range(args.seed, args.seed + args.cma_seeds):
            cma_runs[seed] = train_cma(task, njoints, args.generations, seed)
            h = cma_runs[seed][0]
            print(f"  CMA-ES seed {seed}: best {h[-1][1]:.5f} m after {len(h)} generations, {h[-1][3]} rollouts "
                  f"({h[-1][2]:.1f} s); reached {[first_below(h, t) for t in thresholds]}", flush=True)
        results.append((task, gradient, u_gradient, cma_runs))
    return checks, results


def out_folder(args, here: pathlib.Path) -> pathlib.Path:
    out_dir = pathlib.Path(args.out) if args.out else here
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


def write_results(ex, args, out_dir, checks, results):
    """The figure and the results page of experiment module ex (its ex.NAME, ex.TITLE, ex.LR, ex.NBALL, ex.NJOINTS,
    ex.DT, ex.STEPS, ex.THRESHOLDS, header_lines, plot_paths and task_miss)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(len(results), 3, figsize=(14, 4 * len(results)), squeeze=False)
    for axes, (task, gradient, u_gradient, cma_runs) in zip(grid, results):
        what = f"{task.intervals} x {ex.NJOINTS} torques of {task.interval_steps * ex.DT * 1e3:g} ms"
        axes[0].semilogy([h[1] for h in gradient], label="Adam (best so far)", color="C0")
        axes[0].semilogy([h[0] for h in gradient], color="C0", alpha=0.3, lw=0.8)
        axes[1].semilogy([h[2] for h in gradient], [h[1] for h in gradient], label="Adam", color="C0")
        for k, (seed, (h, _)) in enumerate(cma_runs.items()):
            axes[0].semilogy([r[1] for r in h], color="C1", alpha=1.0 if k == 0 else 0.5,
                             label="CMA-ES (best so far)" if k == 0 else None)
            axes[1].semilogy([r[2] for r in h], [r[1] for r in h], color="C1", alpha=1.0 if k == 0 else 0.5,
                             label="CMA-ES" if k == 0 else None)
        for ax in axes[:2]:
            for t in ex.THRESHOLDS:
                ax.axhline(t, color="gray", ls="--", lw=0.6)
            ax.set_ylabel(f"ball at {ex.STEPS * ex.DT:g} s to target [m]")
            ax.legend(fontsize=8)
        axes[0].set_xlabel("iteration (Adam: rollout + reverse pass; CMA-ES: generation)")
        axes[1].set_xlabel("wall time [s]")
        axes[0].set_title(f"{ex.TITLE}: {what}", fontsize=10)
        first_seed = next(iter(cma_runs))
        ex.plot_paths(axes[2], task, ((u_gradient, "Adam", "C0"), (cma_runs[first_seed][1], "CMA-ES", "C1")))
    fig.tight_layout()
    fig.savefig(out_dir / f"{ex.NAME}.png", dpi=120)

    defaults = {"iterations": 200, "generations": 300, "cma_seeds": 3, "lr": ex.LR, "gamma": 0.97, "seed": 0}
    extra = "" if args.quick else "".join(f" --{k.replace('_', '-')} {getattr(args, k)}"
                                          for k, v in defaults.items() if getattr(args, k) != v)
    if args.interval_steps != [10, 1]:
        extra += " --interval-steps " + ",".join(map(str, args.interval_steps))
    command = f"`.venv/bin/python examples/control/{ex.NAME}.py" + (" --quick" if args.quick else "") + \
        (f" --seed {args.seed}" if args.quick and args.seed else "") + extra + "`"

    def cell(r):
        return "not reached" if r is None else f"{r[0]} it, {r[1]} rollouts, {r[2]:.1f} s"

    lines = ex.header_lines(command, results, checks, args)
    for task, gradient, u_gradient, cma_runs in results:
        n = task.intervals * ex.NJOINTS
        lines += [
            f"## {task.intervals} x {ex.NJOINTS} = {n} torques, each held {task.interval_steps} step"
            f"{'s' if task.interval_steps > 1 else ''} ({task.interval_steps * ex.DT * 1e3:g} ms)\n",
            f"CMA-ES covariance: {'diagonal' if n > 500 else 'full'}, population "
            f"{4 + int(3 * np.log(n))}.\n",
            "| method | iterations | rollouts | best miss (m) | last iterate's miss (m) | to < 5 cm | to < 1 cm | "
            "to < 2 mm | wall s |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| Adam, analytic gradient | {len(gradient)} | {len(gradient)} (+ {len(gradient)} reverse passes) | "
            f"{gradient[-1][1]:.5f} | {gradient[-1][0]:.5f} | "
            + " | ".join(cell(first_below(gradient, t)) for t in ex.THRESHOLDS) + f" | {gradient[-1][2]:.1f} |",
        ]
        for seed, (h, _) in cma_runs.items():
            lines.append(f"| CMA-ES, seed {seed} | {len(h)} generations | {h[-1][3]} | {h[-1][1]:.5f} | "
                         f"{h[-1][0]:.5f} | " + " | ".join(cell(first_below(h, t)) for t in ex.THRESHOLDS)
                         + f" | {h[-1][2]:.1f} |")
        qs, vs, status = task.rollout(u_gradient)
        speed = float(np.linalg.norm(vs[-1, task.bv:task.bv + ex.NBALL]))
        lines += [
            "",
            f"Adam's best: the ball ends {ex.task_miss(task, qs[-1]):.5f} m from the target, moving at {speed:.4f} m/s "
            f"at t = {ex.STEPS * ex.DT:g} s (settled, below 1 cm/s: {speed < 0.01}); status flags raised in its "
            f"rollout: {int(np.bitwise_or.reduce(status))} (0 = none).",
            "",
        ]
    lines += [
        "The \"to < ...\" columns count until the best miss so far drops below the threshold (Adam's "
        "iterates are not monotone: the figure's pale line is its current iterate; a CMA-ES iteration is "
        "a generation, its last iterate the best of its last generation).",
        "",
        f"![{ex.TITLE}]({ex.NAME}.png)",
    ]
    (out_dir / f"{ex.NAME}.md").write_text("\n".join(lines) + "\n")
