"""Ten Laikagos at once (paper 003, Sec. 6.1, "ten robots", Fig. 3c-d): ten laikago robots stand
on their toes under PD position servos that run inside gradyn's step, in one batched call; the
gradient of a loss of their final states with respect to every servo target of every step comes
from one batched rollout_vjp. The table is paper 003's Fig. 3(c, d): forward and backward time per
step and the memory of the backward pass, against the number of steps.

Scene: laikago (examples/laikago_contact/laikago_scene.py: the shipped URDF, free base, four toe
spheres) on a plane, PGS contact, dt = 1 ms, a position servo on each of the 12 hinges (MJCF
<position kp="150" kv="5">, the stance PD law) whose controls are the stance angles plus a small
per-robot sway; each robot starts from the stance a centimetre above the ground with its own small
random velocities (seed --seed). Loss: the sum over robots of the squared final base height
and velocities. Times: wall clock, median of --repeats, all cores (gradyn's batched calls release
the GIL and run the robots on a thread pool). Memory: what the backward pass keeps per step, the
forward states it is given (qs and vs: 10 (nq + nv) doubles per step); beyond them it uses one
fixed-size workspace per thread, whatever the number of steps.

Run:  python examples/ten_laikagos/ten_laikagos.py  [--steps 1000 2000 5000] [--repeats 3] [--seed 0]
Writes examples/ten_laikagos/README.md (the table, with the command and seed) and
examples/ten_laikagos/ten_laikagos.png.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "laikago_contact"))
sys.path.insert(0, str(HERE.parents[1] / "bench"))
import laikago_scene as scene  # noqa: E402
from compare_mujoco_rollout import median_wall  # noqa: E402

import gradyn  # noqa: E402

ROBOTS = 10
DT = 1e-3


def load_robots():
    """gradyn's laikago with its servos, from the same MJCF MuJoCo would load."""
    xml = scene.mujoco_xml(timestep=DT, position_servos=(scene.KP, scene.KD))
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = gradyn.load(f.name)
    finally:
        os.unlink(f.name)
    return model.with_contact(model="pgs")


def inputs(model, T, rng):
    """Initial states (ROBOTS, nq), (ROBOTS, nv) and servo targets (ROBOTS, T, nu)."""
    q0 = np.tile(scene.stance(model, clearance=0.01), (ROBOTS, 1))
    v0 = 0.05 * rng.normal(size=(ROBOTS, model.nv))
    stance = np.array([scene.stance_angle(a["joint"]) for a in model.actuators])
    t = np.arange(T) * DT
    sway = 0.05 * np.sin(2 * np.pi * (1.0 + rng.random((ROBOTS, 1, 1))) * t[None, :, None])
    return q0, v0, stance[None, None, :] + sway


def measure(model, T, repeats, rng):
    q0, v0, ctrls = inputs(model, T, rng)
    qs, vs, status = gradyn.rollout(model, q0, v0, None, DT, ctrls=ctrls, return_status=True)
    base_height = qs[:, -1, 2]
    qs_bar, vs_bar = np.zeros_like(qs), np.zeros_like(vs)
    qs_bar[:, -1, 2] = 2 * base_height  # d/dq of the loss sum_r z_r^2 + |v_r|^2
    vs_bar[:, -1] = 2 * vs[:, -1]
    t_fwd = median_wall(lambda: gradyn.rollout(model, q0, v0, None, DT, ctrls=ctrls), repeats)
    backward = lambda: gradyn.rollout_vjp(model, q0, v0, None, DT, qs_bar, vs_bar, ctrls=ctrls, qs=qs, vs=vs)  # noqa: E731
    t_bwd = median_wall(backward, repeats)
    ctrls_bar = backward()[4]
    return {
        "steps": T,
        "forward_ms_per_step": 1e3 * t_fwd / T,
        "backward_ms_per_step": 1e3 * t_bwd / T,
        "read_bytes_per_step": (qs.nbytes + vs.nbytes) / (T + 1),  # the T + 1 states it reads
        "final_base_height": base_height.tolist(),
        "flagged_steps": int((status != 0).sum()),
        "unconverged_steps": int(((status & int(gradyn.Status.SOLVER_NOT_CONVERGED)) != 0).sum()),
        "ctrls_grad_norm": float(np.linalg.norm(ctrls_bar)),
    }


def write_readme(rows, args, model, elapsed):
    command = "python examples/ten_laikagos/ten_laikagos.py " + " ".join(
        ["--steps", *map(str, args.steps), "--repeats", str(args.repeats), "--seed", str(args.seed)])
    L = ["# Ten Laikagos at once (paper 003, Fig. 3c-d)\n",
         "Ten laikago robots (nq = %d, nv = %d each) stand on their toes under 12 PD position servos each, "
         "inside gradyn's step (PGS contact, dt = 1 ms), all ten in one batched `gradyn.rollout`; the gradient "
         "of a loss of their final states with respect to every servo target of every step is one batched "
         "`gradyn.rollout_vjp` (given the forward states). Wall-clock medians of %d repeats on %d cores "
         "(%s); the whole run took %.0f s.\n" % (model.nq, model.nv, args.repeats, os.cpu_count(),
                                                 "all of them", elapsed),
         f"Generated by `{command}` (seed {args.seed}); the script writes this file and "
         "`ten_laikagos.png` beside it.\n",
         "| steps | forward ms/step (10 robots) | backward ms/step | backward / forward | backward memory: states kept, B/step | robots standing (base height > 0.4 m) | robot-steps where PGS stopped at its 100 sweeps |",
         "|---|---|---|---|---|---|---|"]
    for r in rows:
        standing = sum(h > 0.4 for h in r["final_base_height"])
        L.append(f"| {r['steps']} | {r['forward_ms_per_step']:.3f} | {r['backward_ms_per_step']:.3f} | "
                 f"{r['backward_ms_per_step'] / r['forward_ms_per_step']:.2f} | {r['read_bytes_per_step']:.0f} | "
                 f"{standing}/10 | {r['unconverged_steps']} of {10 * r['steps']} |")
    L.append("\nPaper 003 reports about 5 KB stored per step for its ten robots and a backward pass slower "
             "than the forward one because it re-runs the forward simulation; gradyn's backward pass here "
             "reads the forward states it is given (`qs=`, `vs=`): (nq + nv) doubles per robot and step, "
             "and re-runs each step's forward stages inside its adjoint. PGS stops at 100 sweeps when its "
             "1e-10 tolerance is not met (`gradyn.Status.SOLVER_NOT_CONVERGED`); those steps keep the last "
             "sweep's impulses.\n\n![time and memory per step](ten_laikagos.png)")
    (HERE / "README.md").write_text("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, nargs="+", default=[1000, 2000, 5000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--no-readme", action="store_true", help="print only (the tests' smoke run)")
    args = ap.parse_args()
    model = load_robots()
    assert model.nu == 12, model.actuator_names
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    rows = []
    for T in args.steps:
        r = measure(model, T, args.repeats, rng)
        rows.append(r)
        print(f"T = {T}: forward {r['forward_ms_per_step']:.3f} ms/step, backward {r['backward_ms_per_step']:.3f} "
              f"ms/step, states read {r['read_bytes_per_step']:.0f} B/step; final base heights "
              f"{min(r['final_base_height']):.3f}..{max(r['final_base_height']):.3f} m; |d loss / d ctrls| "
              f"{r['ctrls_grad_norm']:.3g}; steps with status flags {r['flagged_steps']} "
              f"(PGS at its sweep limit: {r['unconverged_steps']})", flush=True)
    elapsed = time.perf_counter() - start
    if not args.no_readme:
        write_readme(rows, args, model, elapsed)
        print(f"wrote {HERE / 'README.md'}")
    if args.no_plot:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["steps"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    axes[0].plot(steps, [r["read_bytes_per_step"] / 1024 for r in rows], "o-", label="states kept")
    axes[0].set(xlabel="steps", ylabel="KB per step", title="backward-pass memory (10 robots)")
    axes[1].plot(steps, [r["forward_ms_per_step"] for r in rows], "o-", label="forward")
    axes[1].plot(steps, [r["backward_ms_per_step"] for r in rows], "s-", label="backward")
    axes[1].set(xlabel="steps", ylabel="ms per step", title="time per step (10 robots, all cores)")
    for ax in axes:
        ax.legend()
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    out = HERE / "ten_laikagos.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"figure: {out}")


if __name__ == "__main__":
    main()
