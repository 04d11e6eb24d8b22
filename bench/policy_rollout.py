#!/usr/bin/env python3
"""Closed-loop policy rollouts (gradyn.Policy) and their gradient: time against network size and
batch size, paper 002 Table 1's shape, on laikago under servos with PGS contact.

    .venv/bin/python bench/policy_rollout.py            # bench/results/policy_rollout.md and .json
    .venv/bin/python bench/policy_rollout.py --quick    # a smoke run

Scene: examples/laikago_contact/laikago_scene.py's MJCF (free base, four toe spheres on a plane, a
position servo per hinge, kp 150, kv 5), contact 'pgs', semi-implicit Euler at dt = 2 ms, started
standing. Policy: a clock-driven network (inputs clock.sin(2 Hz), clock.cos(2 Hz); relu hidden
layers; 12 outputs: the servo targets, the last layer's biases set to the stance angles), its last
layer's weights random (not zero) so the robot moves. Networks of about 1.5k, 18k, 270k and 2.1M weights; batches of 1, 16 and 128
worlds on all cores. Horizon --seconds (default 1 s: 500 steps; paper 002 used 10 s, too long for
every combination on two cores; the ratios do not depend on it). A combination whose forward work
(weights x worlds x steps) exceeds --max-work is skipped and listed.

Timed (wall clock, median of --repeats): forward = Policy.rollout; gradient = Policy.rollout_vjp of
a loss on every state given the forward trajectory (one reverse sweep: step_vjp, the network
recomputed and its VJP). Reported: both times, steps per second, and (forward + gradient) /
forward, the cost of a gradient in forward rollouts (issue 17's goal: <= 4 at every size; paper
002 reports about 7-10). Steps whose PGS solve hit its iteration limit (Status flags) are counted.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402
from gradient_benchmarks import commit_name, load_mjcf_text  # noqa: E402

import gradyn  # noqa: E402

DT = 2e-3
NETWORKS = {"1.5k": [32, 32], "18k": [128, 128], "270k": [512, 512], "2.1M": [1024, 1024, 1024]}


def laikago():
    model = load_mjcf_text(scene.mujoco_xml(timestep=DT, position_servos=(scene.KP, scene.KD)), contact="pgs")
    return model, scene.stance(model, clearance=0.0)


def median_wall(f, repeats):
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        f()
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: two small networks, batches 1 and 4, 20 steps")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16, 128])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-work", type=float, default=3e10, help="skip weights x worlds x steps above this")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    networks = dict(NETWORKS)
    steps = int(round(args.seconds / DT))
    if args.quick:
        networks = {k: NETWORKS[k] for k in ("1.5k", "18k")}
        args.batches, steps, args.repeats = [1, 4], 20, 1
    model, stance = laikago()
    rows, skipped = [], []
    rng = np.random.default_rng(0)
    for label, hidden in networks.items():
        policy = gradyn.Policy(model, ["clock.sin(2.0)", "clock.cos(2.0)"], hidden=hidden, activation="relu",
                               seed=0, zero_last_layer=False)
        # Servo targets: the stance angles (the last layer's biases, the flat vector's last nu
        # entries) plus a small clock-driven gait from the random layers.
        weights = policy.weights * 0.1
        weights[-model.nu:] = [scene.stance_angle(a["joint"]) for a in model.actuators]
        policy.weights = weights
        for B in args.batches:
            work = policy.param_count * B * steps
            if work > args.max_work:
                skipped.append(f"{label} x {B} worlds ({work:.1e} > {args.max_work:.0e})")
                continue
            q0 = np.tile(stance, (B, 1))
            v0 = 0.01 * rng.normal(size=(B, model.nv))
            qs, vs, _, status = policy.rollout(q0, v0, steps, DT)
            qs_bar, vs_bar = np.ones_like(qs) / qs.size, np.ones_like(vs) / vs.size
            t_forward = median_wall(lambda: policy.rollout(q0, v0, steps, DT), args.repeats)
            t_gradient = median_wall(lambda: policy.rollout_vjp(qs, vs, qs_bar, vs_bar, DT), args.repeats)
            row = {"network": label, "hidden": hidden, "weights": policy.param_count, "batch": B, "steps": steps,
                   "forward_s": t_forward, "gradient_s": t_gradient,
                   "forward_steps_per_s": B * steps / t_forward,
                   "ratio": (t_forward + t_gradient) / t_forward,
                   "flagged_worlds": int((status != 0).any(axis=1).sum()),
                   "flagged_steps": int((status != 0).sum())}
            rows.append(row)
            print(f"{label:>5s} ({policy.param_count:8d} weights) B={B:4d}: forward {t_forward:8.3f} s, gradient "
                  f"{t_gradient:8.3f} s, (forward + gradient) / forward {row['ratio']:.2f}", flush=True)
    info = {"commit": commit_name(), "cores": os.cpu_count(), "cpu": platform.processor() or "?",
            "load_average_at_start": os.getloadavg(), "seconds": steps * DT, "steps": steps, "quick": args.quick}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    out = pathlib.Path(args.out) if args.out else (pathlib.Path(tempfile.gettempdir()) / "policy_rollout_quick"
                                                   if args.quick else HERE / "results" / "policy_rollout")
    out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows, "skipped": skipped}, indent=2))
    lines = [
        "# Closed-loop policy rollouts and their gradient (paper 002 Table 1's shape)\n",
        f"Generated by `.venv/bin/python bench/policy_rollout.py{' --quick' if args.quick else ''}` (one run). "
        f"Machine: {info['cpu']}, {info['cores']} cores, load average at start "
        f"{', '.join(f'{x:.1f}' for x in info['load_average_at_start'])}; gradyn at {info['commit']}.\n",
        f"laikago, 12 servos, PGS contact, {steps} steps of {DT * 1e3:g} ms ({steps * DT:g} s); clock-driven relu "
        "policy; all cores; wall-clock medians. 'ratio' = (forward + gradient) / forward, the cost of one "
        "gradient in forward rollouts (goal <= 4; paper 002: about 7-10).\n",
        "| network | weights | worlds | forward s | gradient s | forward steps/s | ratio | steps flagged (worlds) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['network']} | {r['weights']:,} | {r['batch']} | {r['forward_s']:.4g} | "
                     f"{r['gradient_s']:.4g} | {r['forward_steps_per_s']:.3g} | {r['ratio']:.2f} | "
                     f"{r['flagged_steps']} ({r['flagged_worlds']}) |")
    if skipped:
        lines += ["", "Skipped (forward work above --max-work): " + "; ".join(skipped) + "."]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
