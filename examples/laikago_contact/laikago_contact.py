"""A quadruped standing and falling, under each of gradyn's contact models (and MuJoCo for
comparison): the laikago of Qiao et al. 2021's benchmark (models/laikago/laikago_toes_zup.urdf,
floating base, 25.6 kg, four toe spheres of radius 3 cm) on a ground plane, semi-implicit Euler at
dt = 1 ms.

The scene:
* t = 0: the robot is released in its stance (laikago_scene.THIGH/KNEE) with the toes --drop
  metres above the ground; a joint PD controller (kp 150 N m/rad, kd 5 N m s/rad) holds the stance;
  it falls, lands on its four toes and stands;
* t = --stand seconds: the controller is cut (zero torques): the legs fold and the body falls.
  Only the toes collide (the URDF's mesh collisions are not shipped), so the run ends --fall
  seconds later (0.25 s: the knees are then about 0.1 m above the floor, which they could not
  touch).

What a person can check in the output:
* every contact model holds the 25.6 kg robot up: it settles within 15 mm below the stance height
  (the toes penetrate a little and the legs give under the PD law), nearly at rest (max |v| of a
  few cm/s or rad/s, the base moving by well under 1 mm in the last 0.1 s) on four toes;
* the penetration is each model's own: penalty contact sinks until k d^1.5 carries the load
  (about 7 mm at the default stiffness 1e5; its friction's velocity_scale is 0.3 m/s here, see
  laikago_scene.PENALTY_SETTINGS for why), PGS keeps it near its slop (0.1 mm, Baumgarte
  erp 0.2), MuJoCo's soft constraints at about 3 mm; the interior-point model ('ipm') solves the
  same velocity-level LCP as PGS with the same Baumgarte terms, and its curves lie on PGS's;
* after the cut, the base falls by about 0.3 m in every model;
* the figure examples/out/laikago_contact.png: base height and toe penetration against time.

Run:  python examples/laikago_contact/laikago_contact.py  [--stand 1.5] [--fall 0.25] [--drop 0.02]
      [--models penalty,pgs,ipm] [--no-mujoco] [--no-plot]
A contact model this gradyn does not know (e.g. 'ipm' before it lands) is skipped with a note.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import laikago_scene as scene  # noqa: E402

import gradyn  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def simulate_gradyn(model, steps, stand_steps, drop, dt):
    """PD-held stance for stand_steps, then zero torques. Returns base heights, toe depths (per
    step, LEGS order), the largest speed max|v| (m/s or rad/s) and the wall time per step."""
    q_target = scene.stance(model)
    q, v = scene.stance(model, clearance=drop), np.zeros(model.nv)
    heights, depths, speeds = [q[2]], [scene.toe_depths(model, q)], [0.0]
    start = time.perf_counter()
    for k in range(steps):
        tau = scene.pd_torques(model, q, v, q_target) if k < stand_steps else np.zeros(model.nv)
        q, v = gradyn.step(model, q, v, tau, dt)
        heights.append(q[2])
        depths.append(scene.toe_depths(model, q))
        speeds.append(np.abs(v).max())
    elapsed = time.perf_counter() - start
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise RuntimeError("the simulation diverged")
    contacts = len(gradyn.collide(model, q))
    return np.array(heights), np.array(depths), np.array(speeds), elapsed / steps, contacts


def simulate_mujoco(steps, stand_steps, drop, dt):
    """The same scene in MuJoCo, from the same initial state, under the same PD law."""
    import mujoco

    m = scene.load_mujoco(timestep=dt)
    d = mujoco.MjData(m)
    model = scene.load_gradyn()
    maps = scene.StateMap(model, m)
    q_target = scene.stance(model)
    d.qpos[:], d.qvel[:] = maps.to_mujoco(scene.stance(model, clearance=drop), np.zeros(model.nv))
    mujoco.mj_forward(m, d)
    heights, depths, speeds = [d.qpos[2]], [scene.mujoco_toe_depths(m, d)], [0.0]
    start = time.perf_counter()
    for k in range(steps):
        q, v = maps.to_gradyn(d.qpos, d.qvel)
        tau = scene.pd_torques(model, q, v, q_target) if k < stand_steps else np.zeros(model.nv)
        d.ctrl[:] = maps.controls(tau)
        mujoco.mj_step(m, d)
        heights.append(d.qpos[2])
        depths.append(scene.mujoco_toe_depths(m, d))
        speeds.append(np.abs(d.qvel).max())
    elapsed = time.perf_counter() - start
    return np.array(heights), np.array(depths), np.array(speeds), elapsed / steps, int(d.ncon)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stand", type=float, default=1.5, help="seconds under PD control")
    parser.add_argument("--fall", type=float, default=0.25, help="seconds after the controller is cut")
    parser.add_argument("--drop", type=float, default=0.02, help="initial toe clearance [m]")
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--models", default="penalty,pgs,ipm", help="gradyn contact models, comma-separated")
    parser.add_argument("--no-mujoco", action="store_true", help="skip the MuJoCo run")
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    args = parser.parse_args()

    available, missing = scene.contact_models_available()
    wanted = [x for x in args.models.split(",") if x]
    stand_steps = int(round(args.stand / args.dt))
    steps = stand_steps + int(round(args.fall / args.dt))
    t = np.arange(steps + 1) * args.dt
    reference = scene.load_gradyn()
    stance_height = scene.stance(reference)[2]
    print(f"laikago_toes_zup.urdf: {gradyn.total_mass(reference):.3f} kg, nq = {reference.nq}, nv = {reference.nv}, "
          f"toes touch the ground at base height {stance_height:.4f} m in the stance")
    print(f"released {args.drop * 1e3:.0f} mm above the ground; PD control (kp {scene.KP:g}, kd {scene.KD:g}) "
          f"for {args.stand:g} s, then none for {args.fall:g} s; dt = {args.dt:g} s\n")

    runs = {}
    for name in wanted:
        if name not in available:
            print(f"  {name}: skipped, this gradyn does not accept it ({missing.get(name, 'unknown contact model')})")
            continue
        model = scene.load_gradyn(contact=name)
        runs[f"gradyn {name}"] = simulate_gradyn(model, steps, stand_steps, args.drop, args.dt)
    if not args.no_mujoco:
        try:
            import mujoco  # noqa: F401
        except ImportError:
            print("  MuJoCo: skipped (not installed)")
        else:
            runs["MuJoCo"] = simulate_mujoco(steps, stand_steps, args.drop, args.dt)

    settle = slice(stand_steps - int(round(0.1 / args.dt)), stand_steps + 1)  # the last 0.1 s of the stance
    for label, (heights, depths, speeds, per_step, contacts) in runs.items():
        standing = heights[stand_steps]
        print(f"  {label:15s} stands at {standing:.4f} m (toe penetration {depths[settle].mean() * 1e3:.2f} mm, "
              f"max {depths[: stand_steps + 1].max() * 1e3:.2f} mm); in its last 0.1 s max|v| {speeds[settle].max():.4f}, "
              f"base moved {np.ptp(heights[settle]) * 1e3:.3f} mm; "
              f"falls to {heights[-1]:.4f} m ({(standing - heights[-1]) * 1e3:.0f} mm) with {contacts} contacts; "
              f"{per_step * 1e6:.1f} us/step (Python loop)")

    if args.no_plot or not runs:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    for label, (heights, depths, _, _, _) in runs.items():
        style = {"ls": "--", "lw": 2.5} if label == "gradyn ipm" else {}  # it lies on PGS's curves
        axes[0].plot(t, heights, label=label, **style)
        axes[1].plot(t, depths.max(axis=1) * 1e3, label=label, **style)
    for ax in axes:
        ax.axvline(args.stand, color="0.5", ls=":", lw=1)
        ax.set_xlabel("time [s]")
        ax.legend(fontsize=8)
    axes[0].axhline(stance_height, color="0.7", ls="--", lw=1)
    axes[0].set_ylabel("base height [m]")
    axes[0].set_title("laikago: lands, stands under PD, falls when control is cut (dotted)")
    axes[1].set_ylabel("deepest toe penetration [mm]")
    axes[1].set_title("toe penetration into the ground")
    axes[1].set_ylim(-2, max(12.0, 1.2 * max(r[1][: stand_steps + 1].max() * 1e3 for r in runs.values())))
    fig.tight_layout()
    out = ROOT / "examples" / "out"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "laikago_contact.png", dpi=120)
    print(f"\nfigure: {out / 'laikago_contact.png'}")


if __name__ == "__main__":
    main()
