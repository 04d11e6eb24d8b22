"""A four-bar linkage closed by MJCF's <equality><connect>, simulated by gradyn (pgs and ipm) and by
MuJoCo on the same file, and differentiated through its loop.

The linkage (four_bar.xml beside this script): ground pivots at the origin and at (0.6, 0, 0), a
0.2 m crank, a 0.6 m coupler and a 0.5 m rocker (a Grashof crank-rocker), hinges about y with
damping 0.05 N m s/rad, gravity along -z; the coupler's end is connected to the rocker's. A motor
on the crank pushes with --torque N m from rest: the linkage swings up and settles where the motor
balances gravity. Semi-implicit Euler at dt = 1 ms.

What a person can check in the output:
* gradyn keeps the loop closed: the gap between the two connected points stays below 1e-6 m
  (pgs and ipm alike), where MuJoCo's soft connect (its stiffest solref, 2 ms) opens by tens of
  micrometres;
* the joint angles follow MuJoCo's to the difference that softness makes;
* the gradient of the rocker's final angle with respect to the motor torque, by one rollout_vjp,
  equals central differences.
The figure four_bar.png: joint angles against time (gradyn pgs, MuJoCo) and the loop gap (log).

Run:  python examples/closed_loops/four_bar.py [--seconds 3] [--torque 0.5] [--no-plot] [--no-readme]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np

import gradyn

HERE = pathlib.Path(__file__).resolve().parent
MODEL = HERE / "four_bar.xml"
DT = 1e-3


def load(contact):
    with warnings.catch_warnings():  # MuJoCo's solref softness is not read: gradyn's loop is stiff
        warnings.simplefilter("ignore")
        return gradyn.load(MODEL, contact=contact)


def loop_gaps(model, qs):
    """|p1 - p2| per state: the connection's anchors in the world."""
    (c,) = model.body_connections
    gaps = []
    for q in qs:
        p1 = gradyn.frame_pose(model, q, c["body1"]) @ np.r_[c["anchor1"], 1.0]
        p2 = gradyn.frame_pose(model, q, c["body2"]) @ np.r_[c["anchor2"], 1.0]
        gaps.append(np.linalg.norm(p1[:3] - p2[:3]))
    return np.array(gaps)


def simulate_mujoco(ctrls):
    import mujoco

    m = mujoco.MjModel.from_xml_path(str(MODEL))
    d = mujoco.MjData(m)
    qs, gaps = [d.qpos.copy()], [0.0]
    coupler, rocker = m.body("coupler").id, m.body("rocker").id
    anchor1 = m.eq_data[0][:3]
    anchor2 = m.eq_data[0][3:6]
    for u in ctrls:
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        qs.append(d.qpos.copy())
        p1 = d.xpos[coupler] + d.xmat[coupler].reshape(3, 3) @ anchor1
        p2 = d.xpos[rocker] + d.xmat[rocker].reshape(3, 3) @ anchor2
        gaps.append(np.linalg.norm(p1 - p2))
    return np.array(qs), np.array(gaps)


def rocker_gradient(model, torque, steps):
    """d(final rocker angle)/d(torque): one rollout_vjp against central differences."""
    def final_rocker(t):
        qs, _ = gradyn.rollout(model, model.q0, np.zeros(3), np.tile([t, 0.0, 0.0], (steps, 1)), DT, "euler")
        return qs[-1, 2]

    taus = np.tile([torque, 0.0, 0.0], (steps, 1))
    qs, vs = gradyn.rollout(model, model.q0, np.zeros(3), taus, DT, "euler")
    qs_bar, vs_bar = np.zeros_like(qs), np.zeros_like(vs)
    qs_bar[-1, 2] = 1.0
    grads = gradyn.rollout_vjp(model, model.q0, np.zeros(3), taus, DT, qs_bar, vs_bar, qs=qs, vs=vs)
    adjoint = grads[2][:, 0].sum()  # every step's crank torque is the same torque
    h = 1e-6
    central = (final_rocker(torque + h) - final_rocker(torque - h)) / (2 * h)
    return adjoint, central


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--torque", type=float, default=0.5, help="motor torque on the crank [N m]")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args(argv)
    steps = int(round(args.seconds / DT))
    ctrls = np.full((steps, 1), args.torque)

    runs = {}
    for contact in ("pgs", "ipm"):
        model = load(contact)
        start = time.perf_counter()
        qs, vs, status = gradyn.rollout(model, model.q0, np.zeros(3), None, DT, "euler", ctrls=ctrls,
                                        return_status=True)
        wall = time.perf_counter() - start
        runs[contact] = dict(qs=qs, gaps=loop_gaps(model, qs), flagged=int(np.count_nonzero(status)),
                             us_per_step=1e6 * wall / steps, speed=np.abs(vs).max())
    q_mj, gap_mj = simulate_mujoco(ctrls)

    rows = []
    for contact, r in runs.items():
        diff = np.abs(r["qs"] - q_mj).max(axis=0)
        rows.append((contact, r["gaps"].max(), diff, r["flagged"], r["us_per_step"], r["speed"]))
        print(f"gradyn {contact}: largest loop gap {r['gaps'].max():.2e} m; largest |q - q_MuJoCo| "
              f"(crank, coupler, rocker) {diff[0]:.1e} {diff[1]:.1e} {diff[2]:.1e} rad; steps flagged "
              f"{r['flagged']}; {r['us_per_step']:.1f} us/step; top joint speed {r['speed']:.1f} rad/s")
    print(f"MuJoCo (solref 2 ms): largest loop gap {gap_mj.max():.2e} m")
    adjoint, central = rocker_gradient(load("pgs"), args.torque, min(steps, 300))
    print(f"d(rocker angle after {min(steps, 300)} steps)/d(torque): rollout_vjp {adjoint:.6f}, central "
          f"differences {central:.6f} rad/(N m)")

    if not args.no_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t = np.arange(steps + 1) * DT
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True)
        for k, name in enumerate(("crank", "coupler", "rocker")):
            ax1.plot(t, runs["pgs"]["qs"][:, k], color=f"C{k}", label=f"{name} (gradyn pgs)")
            ax1.plot(t, q_mj[:, k], color=f"C{k}", linestyle="--", label=f"{name} (MuJoCo)")
        ax1.set_ylabel("joint angle [rad]")
        ax1.legend(ncol=3, fontsize=8)
        ax1.set_title(f"four-bar linkage closed by <connect>, motor torque {args.torque} N m")
        for contact, style in (("pgs", "-"), ("ipm", ":")):
            ax2.semilogy(t[1:], np.maximum(runs[contact]["gaps"][1:], 1e-16), style, label=f"gradyn {contact}")
        ax2.semilogy(t[1:], np.maximum(gap_mj[1:], 1e-16), "--", label="MuJoCo (solref 2 ms)")
        ax2.set_ylabel("loop gap |p1 - p2| [m]")
        ax2.set_xlabel("time [s]")
        ax2.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(HERE / "four_bar.png", dpi=120)
        print(f"figure: {HERE / 'four_bar.png'}")

    if not args.no_readme:
        command = "python examples/closed_loops/four_bar.py" + "".join(
            f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
        lines = [
            "# A four-bar linkage closed by `<equality><connect>`",
            "",
            f"Generated by `{command}` (deterministic: no random numbers; the script writes this file and "
            "`four_bar.png` beside it).",
            "",
            f"{args.seconds:g} s from rest under a motor torque of {args.torque:g} N m on the crank, dt = 1 ms, "
            "semi-implicit Euler; the same file (`four_bar.xml`) in gradyn and in MuJoCo "
            f"{__import__('mujoco').__version__} (its connect at solref 2 ms, its stiffest at this step).",
            "",
            "| | largest loop gap [m] | largest \\|q - q_MuJoCo\\| crank, coupler, rocker [rad] | steps flagged "
            "| us per step (this machine, one thread) | top joint speed [rad/s] |",
            "|---|---|---|---|---|---|",
        ]
        for contact, gap, diff, flagged, us, speed in rows:
            lines.append(f"| gradyn {contact} | {gap:.1e} | {diff[0]:.1e}, {diff[1]:.1e}, {diff[2]:.1e} | {flagged} "
                         f"| {us:.1f} | {speed:.1f} |")
        lines.append(f"| MuJoCo | {gap_mj.max():.1e} | | | | |")
        lines += [
            "",
            f"Gradient of the rocker's angle after {min(steps, 300)} steps with respect to the torque: "
            f"rollout_vjp {adjoint:.6f}, central differences {central:.6f} rad/(N m).",
            "",
            "![joint angles and loop gap](four_bar.png)",
            "",
        ]
        (HERE / "README.md").write_text("\n".join(lines))
        print(f"numbers: {HERE / 'README.md'}")
    return rows, gap_mj, (adjoint, central)


if __name__ == "__main__":
    main()
