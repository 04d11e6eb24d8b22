#!/usr/bin/env python3
"""Long horizons (issue 21, item 4): a 10^5-step laikago contact rollout and its gradient with
binomial checkpointing, their time and peak memory; and the energy drift of the passive humanoid
over 10^5 steps per integrator.

    .venv/bin/python bench/long_horizons.py              # 10^5 steps (a few minutes on 2 cores)
    .venv/bin/python bench/long_horizons.py --steps 2000 # a smoke run

Each case runs in a child process so that its peak resident memory (VmHWM) is its own. Cases:
- laikago on its toes under the stance servos' torques with a small push (pgs, ipm and penalty
  contact, dt = 1 ms): gradyn.rollout, then gradyn.rollout_vjp of the final velocity with
  max_snapshots = 64 (binomial checkpointing: memory O(64 states), each step recomputed a few times)
  and clip_norm = 1e3 (gradient clipping through time, as a long-horizon user would)
  and with every state kept (max_snapshots = 0: rollout_vjp runs its own forward pass keeping every
  state), return_norms=True:
  the adjoint's norm at the start, its largest, and whether anything became NaN;
- the MJCF humanoid without contact, damping or actuation (springs and gravity only: energy is
  conserved by the dynamics), 10^5 steps of 1 ms from a twisted pose, per integrator: the largest
  relative drift of kinetic + potential energy (gradyn.kinetic_energy, gradyn.potential_energy).
Results: bench/results/long_horizons.md and .json, naming the commit.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
CLIP = 1e3  # rollout_vjp's clip_norm: the adjoint of a state is scaled down to this norm when above it
ROOT = HERE.parent


def peak_rss_mib() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def laikago_case(contact: str, steps: int, snapshots: int) -> dict:
    sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
    import laikago_scene as scene

    import gradyn

    model = scene.load_gradyn(contact)
    q = scene.stance(model, clearance=0.002)
    rng = np.random.default_rng(0)
    v0 = 0.05 * rng.normal(size=model.nv)
    # the stance servos' torques about the stance, as an open loop (the same every step) plus a push
    legs = [model.joint_idx_v(n) for n in model.joint_names[1:]]
    taus = np.zeros((steps, model.nv))
    taus[:, legs] = 2.0 * np.sin(np.linspace(0, 0.02 * steps, steps))[:, None]
    t = time.perf_counter()
    qs, vs, status = gradyn.rollout(model, q, v0, taus, 1e-3, return_status=True)
    forward_s = time.perf_counter() - t
    vs_bar = np.zeros_like(vs)
    vs_bar[-1] = 1.0
    base_rss = peak_rss_mib()
    t = time.perf_counter()
    # clipped through time: unclipped, the adjoint of 10^5 pgs or ipm contact steps overflowed (inf, then
    # NaN) in this scene; the norms are reported before clipping
    out = gradyn.rollout_vjp(model, q, v0, taus, 1e-3, None, vs_bar, max_snapshots=snapshots, return_norms=True,
                             clip_norm=CLIP)
    vjp_s = time.perf_counter() - t
    norms = out[-1]
    return {"case": f"laikago-{contact}", "steps": steps, "max_snapshots": snapshots, "forward_s": forward_s,
            "vjp_s": vjp_s, "state_finite": bool(np.isfinite(qs).all()),
            "flagged_steps": int(np.count_nonzero(status)),
            "gradient_finite": bool(all(np.isfinite(g).all() for g in out[:3])),
            "norm_start": float(norms[0]), "norm_max": float(np.nanmax(norms)),
            "norms_finite": bool(np.isfinite(norms).all()),
            "peak_rss_mib_after_forward": base_rss, "peak_rss_mib": peak_rss_mib()}


def humanoid_case(integrator: str, steps: int) -> dict:
    import warnings

    import gradyn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gradyn.load(str(ROOT / "models" / "mujoco" / "humanoid.xml"))
    model = model.with_damping(np.zeros(model.nv))
    q = model.q0.copy()
    rng = np.random.default_rng(1)
    q[7:] += 0.3 * rng.normal(size=model.nq - 7)  # twisted joints: their springs start loaded
    v = np.zeros(model.nv)
    e0 = gradyn.kinetic_energy(model, q, v) + gradyn.potential_energy(model, q)
    worst, chunk = 0.0, 1000
    t = time.perf_counter()
    for start in range(0, steps, chunk):
        qs, vs = gradyn.rollout(model, q, v, np.zeros((min(chunk, steps - start), model.nv)), 1e-3, integrator)
        for k in range(1, len(qs), 10):
            e = gradyn.kinetic_energy(model, qs[k], vs[k]) + gradyn.potential_energy(model, qs[k])
            worst = max(worst, abs(e - e0) / abs(e0))
        q, v = qs[-1], vs[-1]
    return {"case": f"humanoid-energy-{integrator}", "steps": steps, "seconds": time.perf_counter() - t,
            "energy_start_J": e0, "worst_relative_drift": worst, "finite": bool(np.isfinite(q).all()),
            "peak_rss_mib": peak_rss_mib()}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--case", help=argparse.SUPPRESS)  # a child process: one case, JSON on stdout
    a = p.parse_args()
    if a.case:
        kind, arg, *rest = a.case.split(":")
        result = laikago_case(arg, a.steps, int(rest[0])) if kind == "laikago" else humanoid_case(arg, a.steps)
        print(json.dumps(result))
        return
    sys.path.insert(0, str(HERE))
    from gradient_benchmarks import commit_name

    commit = commit_name()  # before the results files are rewritten (git would call the tree dirty)
    cases = [f"laikago:{c}:{k}" for c in ("penalty", "pgs", "ipm") for k in (64, 0)]
    cases += [f"humanoid:{i}" for i in ("euler", "rk4")]
    results = []
    for c in cases:
        out = subprocess.run([sys.executable, __file__, "--steps", str(a.steps), "--case", c], capture_output=True,
                             text=True)
        if out.returncode != 0:
            sys.exit(f"{c} failed:\n{out.stderr[-3000:]}")
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), flush=True)
    lines = ["# Long horizons", "",
             f"Generated by `.venv/bin/python bench/long_horizons.py --steps {a.steps}` at {commit} on this "
             "machine (2 cores); each case in its own process (peak resident memory: VmHWM).", "",
             "Laikago on its toes, dt = 1 ms, the gradient of its final velocity, clipped through time at norm "
             f"{CLIP:g} (unclipped, pgs's and ipm's adjoint overflowed to inf and NaN over 10^5 steps); "
             "max_snapshots 64: binomial checkpointing (every state recomputed from at most 64 kept), 0: every "
             "state kept. Norms are before clipping. Flagged steps: steps with any gradyn.Status flag (for pgs "
             "mostly SOLVER_NOT_CONVERGED at its 100 sweeps).", "",
             "| case | steps | max_snapshots | rollout s | rollout_vjp s | peak memory MiB (after the rollout) | "
             "state finite | gradient finite | adjoint norm at t=0 / largest | flagged steps |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if r["case"].startswith("laikago"):
            lines.append(f"| {r['case']} | {r['steps']} | {r['max_snapshots']} | {r['forward_s']:.1f} | "
                         f"{r['vjp_s']:.1f} | {r['peak_rss_mib']:.0f} ({r['peak_rss_mib_after_forward']:.0f}) | "
                         f"{r['state_finite']} | {r['gradient_finite']} | {r['norm_start']:.3g} / "
                         f"{r['norm_max']:.3g} | {r['flagged_steps']} |")
    lines += ["", "Passive humanoid (no contact, no damping, no actuation: springs and gravity), dt = 1 ms, from "
              "twisted joints: the largest relative drift of kinetic + potential energy, sampled every 10 steps.",
              "", "| integrator | steps | seconds | energy at start J | worst relative drift | finite |",
              "|---|---|---|---|---|---|"]
    for r in results:
        if r["case"].startswith("humanoid"):
            lines.append(f"| {r['case'].split('-')[-1]} | {r['steps']} | {r['seconds']:.1f} | "
                         f"{r['energy_start_J']:.1f} | {r['worst_relative_drift']:.2e} | {r['finite']} |")
    (HERE / "results" / "long_horizons.md").write_text("\n".join(lines) + "\n")
    (HERE / "results" / "long_horizons.json").write_text(json.dumps({"commit": commit, "results": results},
                                                                    indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
