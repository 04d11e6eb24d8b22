#!/usr/bin/env python3
"""What a gradient through a hybrid model costs (paper 001, Fig. 5 shape), one run.

    .venv/bin/python bench/hybrid_gradient_cost.py            # hidden widths 8 .. 128x128
    .venv/bin/python bench/hybrid_gradient_cost.py --quick    # a smoke run

The training loss of paper 001's swimmer experiment (examples/hybrid/swimmer.py):
models/mujoco/swimmer.xml (gradyn does not simulate its fluid, so this is the analytical
part) plus a body_wrench drag network on each of its three links, fed the link's velocity in its
own frame and driving its planar wrench; 10 trajectories of 200 steps (dt 0.01) under random
controls, one batched call; the loss is the squared distance of every state to a reference. As the
network grows, timed (CPU time, time.process_time, median of repeats; one thread):
  forward        gradyn.rollout of the 10 trajectories (the loss's forward pass);
  adjoint        gradyn.rollout, then gradyn.rollout_vjp given its states: the loss and its gradient
                 w.r.t. every parameter (network weights included), what a training step needs;
  PyTorch tape   the same loss and its gradient w.r.t. the networks' weights by torch.autograd
                 through bench/tape_baseline/hybrid.py, gradyn's step re-written in PyTorch operation
                 for operation (world-frame ABA, the motors, the networks' wrenches as J^T F), the 10
                 worlds batched in every tensor operation; torch.set_num_threads(1). Before it is
                 timed its loss must equal gradyn's to 1e-9 and its gradient the adjoint's to 1e-7
                 (relative), so it cannot time another computation; left out above --tape-max weights;
  finite diff.   central differences over the network's weights: 2 rollouts per weight, each run
                 (not extrapolated); left out above --fd-max weights.
Forward and adjoint are interleaved (--repeats); the tape, seconds per call, is timed after them
(--tape-repeats).
Goal (issue 16): adjoint / forward <= 4. Forward-mode AD (gradyn's dual scalar) is timed by the C++
program bench/hybrid_gradient_modes.cpp (bench/README.md).
Results: bench/results/hybrid_gradient_cost.md and .json, naming the commit measured.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import warnings

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "tape_baseline"))
from gradient_benchmarks import commit_name, machine_info, median_times  # noqa: E402
from hybrid import TorchHybrid  # noqa: E402

import gradyn  # noqa: E402

torch.set_num_threads(1)

SWIMMER = ROOT / "models" / "mujoco" / "swimmer.xml"
DT = 0.01
LINKS = ("torso", "mid", "back")


def hybrid_swimmer(hidden):
    """examples/hybrid/swimmer.py's hybrid model: a drag network on each link (body_wrench, the
    link's own frame, its velocity in, its planar wrench out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its fluid, which gradyn does not simulate
        model = gradyn.load(str(SWIMMER))
    for k, link in enumerate(LINKS):
        model = model.with_network(f"drag_{link}", site="body_wrench", body=link, hidden=hidden, seed=k,
                                   inputs=["vel.ang.z", "vel.lin.x", "vel.lin.y"],
                                   outputs=["torque.z", "force.x", "force.y"], zero_last_layer=False)
    return model


def tape_check_and_time(model, weights, q0, v0, ctrls, target_q, target_v, loss_value, grad, repeats):
    """The PyTorch tape's loss and gradient w.r.t. the networks' weights: checked against gradyn's
    (loss_value, grad), then timed. Returns (seconds, max rel. difference of the gradients)."""
    th = TorchHybrid(model)
    tq0, tv0, tctrls, tq_ref, tv_ref = (torch.tensor(x) for x in (q0, v0, ctrls, target_q, target_v))
    params = np.asarray(model.params)

    def tape():
        p = torch.tensor(params, requires_grad=True)
        qs, vs = th.rollout(tq0, tv0, tctrls, DT, p)
        loss = ((qs - tq_ref) ** 2).sum() + ((vs - tv_ref) ** 2).sum()
        loss.backward()
        return loss.item(), p.grad

    value, g = tape()
    if not abs(value - loss_value) <= 1e-9 * abs(loss_value):
        sys.exit(f"the tape's loss {value!r} is not gradyn's {loss_value!r}: the tape computes something else")
    rel = float(np.abs(g.numpy()[weights] - grad).max() / np.abs(grad).max())
    if not rel <= 1e-7:
        sys.exit(f"the tape's gradient differs from the adjoint's by {rel:.1e} (relative)")
    cpu, _ = median_times([tape], repeats)
    return cpu[0], rel


def case(hidden, B, T, repeats, fd_max, tape_max, tape_repeats, rng):
    model = hybrid_swimmer(hidden)
    first = model.networks[0]["param_offset"]
    info = {"param_count": len(model.param_names) - first}  # the three networks' weights: the tail of params
    weights = slice(first, first + info["param_count"])
    q0 = 0.2 * rng.normal(size=(B, model.nq))
    v0 = 0.1 * rng.normal(size=(B, model.nv))
    ctrls = rng.uniform(-1, 1, size=(B, T, model.nu))
    target_q, target_v = gradyn.rollout(model, q0, v0, None, DT, ctrls=ctrls)
    target_q, target_v = target_q + 0.01, target_v - 0.01

    def loss(m=model):
        qs, vs = gradyn.rollout(m, q0, v0, None, DT, ctrls=ctrls, threads=1)
        return float(((qs - target_q) ** 2).sum() + ((vs - target_v) ** 2).sum()), qs, vs

    def forward():
        loss()

    def adjoint():
        _, qs, vs = loss()
        return gradyn.rollout_vjp(model, q0, v0, None, DT, 2 * (qs - target_q), 2 * (vs - target_v), ctrls=ctrls,
                                  qs=qs, vs=vs, threads=1)[3]

    cpu, wall = median_times([forward, adjoint], repeats)
    row = {"hidden": hidden, "weights": info["param_count"], "forward_s": cpu[0], "adjoint_s": cpu[1],
           "forward_wall_s": wall[0], "adjoint_wall_s": wall[1]}
    grad = adjoint().sum(axis=0)[weights]
    if info["param_count"] <= tape_max:
        row["tape_s"], row["tape_vs_adjoint_max_rel"] = tape_check_and_time(
            model, weights, q0, v0, ctrls, target_q, target_v, loss()[0], grad, tape_repeats)
    if info["param_count"] <= fd_max:
        p0, h = model.params, 1e-6
        fd = np.empty(info["param_count"])
        c0 = time.process_time()
        for k in range(info["param_count"]):
            p = p0.copy()
            p[weights.start + k] += h
            plus = loss(model.with_params(p))[0]
            p[weights.start + k] -= 2 * h
            fd[k] = (plus - loss(model.with_params(p))[0]) / (2 * h)
        row["fd_s"] = time.process_time() - c0
        row["fd_vs_adjoint_max_rel"] = float(np.abs(fd - grad).max() / np.abs(grad).max())
    return row


def write(rows, args, info, commit, path):
    command = " ".join([".venv/bin/python bench/hybrid_gradient_cost.py"] + sys.argv[1:])
    L = ["# Gradient cost through a hybrid model (paper 001, Fig. 5 shape)", "",
         f"Generated by `{command}` (one run, CPU-time medians of {args.repeats} interleaved repeats of forward "
         f"and adjoint, of {args.tape_repeats} repeats of the tape; one thread). gradyn at {commit}. Machine: "
         f"{info['cpu']}, {info['cores']} cores, load average at start "
         f"{', '.join(f'{x:.1f}' for x in info['load_average_at_start'])}.", "",
         f"The swimmer (`models/mujoco/swimmer.xml`, fluid not simulated) plus a body_wrench drag network "
         f"on each of its three links (examples/hybrid/swimmer.py's model; hidden widths below, per network); "
         f"{args.batch} trajectories x {args.steps} steps "
         f"(dt {DT}) in one batched call; loss: squared distance of every state to a reference.", "",
         "| hidden | weights of the 3 networks | forward s | loss + gradient (adjoint) s | adjoint / forward | "
         "PyTorch tape s | tape / adjoint | tape vs adjoint (max rel.) | "
         "finite differences s | FD / adjoint | FD vs adjoint (max rel.) |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tape = (f"{r['tape_s']:.3g} | {r['tape_s'] / r['adjoint_s']:.0f}x | {r['tape_vs_adjoint_max_rel']:.1e}"
                if "tape_s" in r else "not run | | ")
        fd = (f"{r['fd_s']:.3g} | {r['fd_s'] / r['adjoint_s']:.0f}x | {r['fd_vs_adjoint_max_rel']:.1e}"
              if "fd_s" in r else "not run | | ")
        L.append(f"| {'x'.join(map(str, r['hidden']))} | {r['weights']} | {r['forward_s']:.4g} | "
                 f"{r['adjoint_s']:.4g} | {r['adjoint_s'] / r['forward_s']:.2f} | {tape} | {fd} |")
    worst = max(r["adjoint_s"] / r["forward_s"] for r in rows)
    L += ["", f"Worst adjoint / forward: {worst:.2f} (goal <= 4). Forward-mode AD: "
          "bench/results/hybrid_gradient_modes.md (C++). PyTorch tape: torch.autograd through "
          f"bench/tape_baseline/hybrid.py (gradyn's step in PyTorch, the {args.batch} worlds batched in every tensor "
          f"operation; torch {torch.__version__}, one thread), the same loss, its gradient w.r.t. the networks' "
          "weights only (the adjoint's covers every parameter); the bench stops unless the tape's loss is "
          "gradyn's to 1e-9 and its gradient the adjoint's to 1e-7 (relative)"
          + (f"; not run above {args.tape_max} weights." if any("tape_s" not in r for r in rows) else "."), ""]
    path.write_text("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=41)
    ap.add_argument("--fd-max", type=int, default=1200, help="most network weights run by finite differences")
    ap.add_argument("--tape-max", type=int, default=10**9, help="most network weights run by the PyTorch tape")
    ap.add_argument("--tape-repeats", type=int, default=15)
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    sizes = [[8], [16, 16], [32, 32], [64, 64], [128, 128]]
    if args.quick:
        sizes, args.steps, args.repeats, args.fd_max, args.tape_repeats = [[8], [16, 16]], 20, 3, 200, 3
    if not SWIMMER.exists():
        sys.exit(f"{SWIMMER} is missing")
    info, commit = machine_info(), commit_name()
    rng = np.random.default_rng(0)
    rows = []
    for hidden in sizes:
        row = case(hidden, args.batch, args.steps, args.repeats, args.fd_max, args.tape_max, args.tape_repeats, rng)
        rows.append(row)
        print(f"hidden {hidden}: {row['weights']} weights, forward {row['forward_s']:.4g} s, loss + gradient "
              f"{row['adjoint_s']:.4g} s, ratio {row['adjoint_s'] / row['forward_s']:.2f}" +
              (f", PyTorch tape {row['tape_s']:.3g} s ({row['tape_s'] / row['adjoint_s']:.0f}x the adjoint; gradient "
               f"max rel. difference {row['tape_vs_adjoint_max_rel']:.1e})" if "tape_s" in row else "") +
              (f", finite differences {row['fd_s']:.3g} s (max rel. difference {row['fd_vs_adjoint_max_rel']:.1e})"
               if "fd_s" in row else ""), flush=True)
    if not args.quick:
        args.out.mkdir(parents=True, exist_ok=True)
        write(rows, args, info, commit, args.out / "hybrid_gradient_cost.md")
        (args.out / "hybrid_gradient_cost.json").write_text(json.dumps(
            {"commit": commit, "machine": info, "batch": args.batch, "steps": args.steps, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
