#!/usr/bin/env python3
"""Paper 002, section 3.2.2: the 4-DoF servo arm of arm_reach.py learns to reach random targets, the
target given to the policy as its input (task[0..2]), trained on batches of arms simulated at once.

    .venv/bin/python examples/control/arm_reach_random.py                       # 2 x 128 relu network
    .venv/bin/python examples/control/arm_reach_random.py --hidden 1024 1024 1024 --minutes 10
    .venv/bin/python examples/control/arm_reach_random.py --quick               # a smoke run

Each update draws a batch of random targets (the tip's position at joint angles drawn uniformly in
[-1, 1] rad for the base, [-1.2, 1.2] for the pitches and roll: reachable by construction), rolls
all the arms out in one batched call (gradyn.Policy.rollout on all cores), and takes one Adam step
on the mean over arms of their time-averaged end-effector distance (the paper's objective), its
gradient from Policy.rollout_vjp (the adjoint of every arm's loss through its end-effector
Jacobian). Progress is measured on a fixed validation set of targets. Stops after --updates or
--minutes, whichever comes first.

Writes arm_reach_random.md (or arm_reach_random_<width>.md for other widths; numbers, seed,
command) and the matching .png beside this file.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import arm_reach  # noqa: E402

import gradyn  # noqa: E402

LIMITS = np.array([1.0, 1.2, 1.2, 1.2])  # joint-angle ranges the targets are drawn from (rad)


def random_targets(model, n, rng):
    qs = rng.uniform(-LIMITS, LIMITS, size=(n, 4))
    return np.array([gradyn.frame_pose(model, q, "tip")[:3, 3] for q in qs])


def batch_loss_and_adjoint(model, qs, targets):
    """Mean over arms of the time-averaged tip distance, every arm's distance at the end, qs_bar."""
    B, T1, _ = qs.shape
    qs_bar = np.zeros_like(qs)
    mean_distances, final = np.empty(B), np.empty(B)
    for b in range(B):
        p = np.array([gradyn.frame_pose(model, q, "tip")[:3, 3] for q in qs[b]])
        err = p - targets[b]
        d = np.linalg.norm(err, axis=1)
        mean_distances[b], final[b] = d.mean(), d[-1]
        for t in range(T1):
            J = gradyn.frame_jacobian(model, qs[b, t], "tip")[3:]
            qs_bar[b, t] = J.T @ (err[t] / max(d[t], 1e-12)) / (T1 * B)
    return float(mean_distances.mean()), final, qs_bar


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 updates of 4 arms, 1 s")
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--activation", default="relu")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=arm_reach.SECONDS, help="simulated time per rollout")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--updates", type=int, default=100000)
    ap.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget")
    ap.add_argument("--validate-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.batch, args.updates, args.seconds, args.validate_every = 4, 3, 1.0, 1
    import torch

    model = arm_reach.arm()
    policy = gradyn.Policy(model, ["task[0]", "task[1]", "task[2]"], hidden=args.hidden,
                           activation=args.activation, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    validation = random_targets(model, args.batch, np.random.default_rng(args.seed + 1))
    steps = int(round(args.seconds / arm_reach.DT))
    q0, v0 = np.zeros((args.batch, model.nq)), np.zeros((args.batch, model.nv))
    weights = torch.tensor(policy.weights, requires_grad=True)
    optimizer = torch.optim.Adam([weights], lr=args.lr)
    history = []  # (update, seconds, validation mean distance, validation mean final distance)
    started = time.perf_counter()
    update = 0

    def validate():
        qs = policy.rollout(q0, v0, steps, arm_reach.DT, weights=weights.detach().numpy(), task=validation)[0]
        mean, final, _ = batch_loss_and_adjoint(model, qs, validation)
        history.append((update, time.perf_counter() - started, mean, float(final.mean())))
        print(f"update {update:5d} ({history[-1][1]:7.1f} s): validation mean distance {mean:.4f} m, "
              f"at the end {final.mean():.4f} m", flush=True)

    validate()
    while update < args.updates and time.perf_counter() - started < 60 * args.minutes:
        targets = random_targets(model, args.batch, rng)
        w = weights.detach().numpy()
        qs, vs, _, _ = policy.rollout(q0, v0, steps, arm_reach.DT, weights=w, task=targets)
        _, _, qs_bar = batch_loss_and_adjoint(model, qs, targets)
        grads = policy.rollout_vjp(qs, vs, qs_bar, np.zeros_like(vs), arm_reach.DT, weights=w, task=targets)
        optimizer.zero_grad()
        weights.grad = torch.tensor(grads["weights"])
        optimizer.step()
        update += 1
        if update % args.validate_every == 0:
            validate()
    if history[-1][0] != update:
        validate()
    write_results(args, policy, history)


def write_results(args, policy, history):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    default = args.hidden == [128, 128]
    stem = "arm_reach_random" if default else f"arm_reach_random_{'x'.join(map(str, args.hidden))}"
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy([h[0] for h in history], [h[2] for h in history], "o-", ms=3, label="mean distance over the rollout")
    ax.semilogy([h[0] for h in history], [h[3] for h in history], "s-", ms=3, label="distance at the end")
    for level in (0.10, 0.05):
        ax.axhline(level, color="gray", ls="--", lw=0.8)
    ax.set_xlabel(f"updates (batches of {args.batch} arms)")
    ax.set_ylabel("validation: end effector to target [m]")
    ax.set_title(f"random targets, policy {policy.widths} ({policy.param_count:,} weights)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / f"{stem}.png", dpi=120)
    first = lambda level: next((h[0] for h in history if h[2] < level), None)  # noqa: E731
    per_update = history[-1][1] / max(history[-1][0], 1)
    flags = ("--quick " if args.quick else "") + ("" if default else f"--hidden {' '.join(map(str, args.hidden))} ") + \
        (f"--minutes {args.minutes:g} " if args.minutes != 20.0 else "") + (f"--seed {args.seed} " if args.seed else "")
    lines = [
        "# Arm reaching random targets (paper 002, section 3.2.2)\n",
        f"Written by `{' '.join(['.venv/bin/python examples/control/arm_reach_random.py', flags.strip()]).strip()}` "
        f"(seed {args.seed}). "
        f"Policy {policy.widths}, {args.activation} ({policy.param_count:,} weights), inputs the target (task[0..2]); "
        f"batches of {args.batch} arms, {args.seconds:g} s at dt {arm_reach.DT}; Adam lr {args.lr}; "
        f"{history[-1][0]} updates in {history[-1][1]:.0f} s ({per_update:.2f} s per update, this machine's "
        "cores). Validation: a fixed set of targets, the same count.\n",
        "| updates | seconds | validation mean distance (m) | at the end (m) |",
        "|---|---|---|---|",
    ]
    shown = history[:: max(1, len(history) // 15)]
    if shown[-1] is not history[-1]:
        shown.append(history[-1])
    for h in shown:
        lines.append(f"| {h[0]} | {h[1]:.0f} | {h[2]:.4f} | {h[3]:.4f} |")
    reached = lambda level: "not within this run" if first(level) is None else f"{first(level)}"  # noqa: E731
    lines += ["", f"Updates to a validation mean distance below 10 cm: {reached(0.10)}; below 5 cm: "
              f"{reached(0.05)}.", "", f"![random targets]({stem}.png)"]
    (out_dir / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / (stem + '.md')}")


if __name__ == "__main__":
    sys.exit(main())
