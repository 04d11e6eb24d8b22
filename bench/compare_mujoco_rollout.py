#!/usr/bin/env python3
"""Many worlds at once: gradyn's batched rollout and rollout_vjp against MuJoCo's mujoco.rollout,
same scenes, same number of threads, one run.

    .venv/bin/python bench/compare_mujoco_rollout.py            # B = 1, 16, 256, 1024 worlds x 1000 steps
    .venv/bin/python bench/compare_mujoco_rollout.py --quick    # a smoke run (B = 1, 4; 50 steps)

Scenes (both simulators load the same MJCF text):
  laikago-pgs, laikago-penalty: laikago (examples/laikago_contact/laikago_scene.py's MJCF of the
      shipped URDF: free base, four toe spheres on a plane) under a position servo on each of its
      12 hinges (MJCF <position kp="150" kv="5">, inside the step in both), controls holding the
      stance; every world starts from the stance a little above the ground with its own small
      random velocities and falls onto its toes. gradyn contact: 'pgs' or 'penalty'; MuJoCo: its
      default soft contacts.
  humanoid: ../shared/models/mujoco/humanoid.xml (free base, 21 geared motors), random controls
      in its ctrlrange; it falls onto the floor. gradyn contact 'pgs'; MuJoCo its default.
Timed (wall clock, time.perf_counter, median of repeats): gradyn.rollout(model, q0 (B, nq), v0,
None, dt, ctrls=(B, T, nu), threads=n); gradyn.rollout_vjp of a terminal loss given the forward
arrays (qs=, vs=), threads=n; MuJoCo's persistent pool, mujoco.rollout.Rollout(nthread=n).rollout(m,
[MjData] * n, initial_state (B, nstate), control (B, T, nu), nstep=T), after a warm-up call. Reported: throughput in world-steps per second
and the ratios the issue asks for: gradyn forward / MuJoCo (goal >= 1.2), gradyn rollout_vjp /
gradyn forward throughput (goal >= 1/3), thread scaling from 1 to all cores (efficiency
t(1) / (n t(n)), goal >= 0.85), and paper 002 Table 1's shape (forward and gradient time against
batch size).

Before timing, each scene checks that the two simulators describe the same robot: with contacts
and constraints off, gradyn's trajectory under the same controls follows MuJoCo's to 1e-8 for 50
steps from the same state (a welded base: MuJoCo integrates a free body apart in position and
orientation, gradyn on SE(3)); it aborts otherwise. Results: bench/results/mujoco_rollout.md and
.json, naming the commit measured (a checkout with uncommitted changes in src/ or include/ is
named so).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import re
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402
from gradient_benchmarks import commit_name, load_mjcf_text, median_times  # noqa: E402

import gradyn  # noqa: E402

DT_LAIKAGO = 1e-3
HUMANOID = ROOT.parent / "shared" / "models" / "mujoco" / "humanoid.xml"


# --- scenes ---------------------------------------------------------------------------------------


def laikago_xml():
    """laikago_scene's MJCF with a position servo on each hinge (the stance PD: kp 150, kv 5)."""
    return scene.mujoco_xml(timestep=DT_LAIKAGO, position_servos=(scene.KP, scene.KD))


class Scene:
    def __init__(self, name, xml, contact, contact_settings, dt):
        import mujoco

        self.name, self.dt = name, dt
        self.xml = xml
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.m.opt.timestep = dt
        base = load_mjcf_text(xml)  # (the humanoid's tendons are inert here: warned, silenced)
        self.free_model = base  # (its MJCF has the ground plane)
        self.model = base.with_contact(model=contact, **contact_settings)
        assert self.model.nu == self.m.nu, (self.model.nu, self.m.nu)
        # joint maps (gradyn order from MuJoCo's, by name)
        self.joints = [mujoco.mj_id2name(self.m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(self.m.njnt)]

    def to_gradyn(self, qpos, qvel):
        """MuJoCo (qpos, qvel) -> gradyn (q, v); free joint: quaternion order and linear velocity frame."""
        import mujoco

        q, v = np.zeros(self.model.nq), np.zeros(self.model.nv)
        for j, name in enumerate(self.joints):
            mq, mv = self.m.jnt_qposadr[j], self.m.jnt_dofadr[j]
            gq, gv = self.model.joint_idx_q(name), self.model.joint_idx_v(name)
            if self.m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                R = scene.quat_wxyz_to_matrix(qpos[mq + 3:mq + 7])
                q[gq:gq + 3] = qpos[mq:mq + 3]
                q[gq + 3:gq + 6], q[gq + 6] = qpos[mq + 4:mq + 7], qpos[mq + 3]
                v[gv:gv + 3], v[gv + 3:gv + 6] = R.T @ qvel[mv:mv + 3], qvel[mv + 3:mv + 6]
            else:
                q[gq], v[gv] = qpos[mq], qvel[mv]
        return q, v


def laikago_scene(contact):
    settings = scene.PENALTY_SETTINGS if contact == "penalty" else {}
    return Scene(f"laikago-{contact}", laikago_xml(), contact, settings, DT_LAIKAGO)


def humanoid_scene():
    if not HUMANOID.exists():
        return None
    text = HUMANOID.read_text()
    text = re.sub(r"<keyframe>.*?</keyframe>", "", text, flags=re.S)
    import mujoco

    dt = mujoco.MjModel.from_xml_string(text).opt.timestep
    return Scene("humanoid", text, "pgs", {}, dt)


def initial_states(sc, B, rng):
    """B MuJoCo states (qpos, qvel) and the matching gradyn (q0, v0): the scene's start, perturbed."""
    import mujoco

    d = mujoco.MjData(sc.m)
    qpos, qvel = np.empty((B, sc.m.nq)), np.empty((B, sc.m.nv))
    for b in range(B):
        mujoco.mj_resetData(sc.m, d)
        if sc.name.startswith("laikago"):
            q = scene.stance(sc.free_model, clearance=0.01)
            # gradyn -> MuJoCo for the stance (hinges by name; free joint at the top)
            for j, name in enumerate(sc.joints):
                mq = sc.m.jnt_qposadr[j]
                gq = sc.model.joint_idx_q(name)
                if sc.m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                    d.qpos[mq:mq + 3] = q[gq:gq + 3]
                    d.qpos[mq + 3], d.qpos[mq + 4:mq + 7] = q[gq + 6], q[gq + 3:gq + 6]
                else:
                    d.qpos[mq] = q[gq]
        d.qvel[:] = 0.05 * rng.normal(size=sc.m.nv)
        qpos[b], qvel[b] = d.qpos, d.qvel
    q0, v0 = zip(*(sc.to_gradyn(qpos[b], qvel[b]) for b in range(B)))
    return qpos, qvel, np.array(q0), np.array(v0)


def controls(sc, B, T, rng):
    if sc.name.startswith("laikago"):  # the servos hold the stance
        target = np.array([scene.stance_angle(sc.model.actuators[k]["joint"]) for k in range(sc.m.nu)])
        return np.broadcast_to(target, (B, T, sc.m.nu)).copy()
    lo, hi = sc.m.actuator_ctrlrange.T
    return rng.uniform(0.2 * lo, 0.2 * hi, size=(B, T, sc.m.nu))


def check_same_robot(sc):
    """Contacts and constraints off, base welded: gradyn follows MuJoCo to 1e-8 over 50 steps."""
    import mujoco

    text = re.sub(r"<freejoint[^>]*/>|<joint[^>]*type=\"free\"[^>]*/>", "", sc.xml)
    m = mujoco.MjModel.from_xml_string(text)
    m.opt.timestep = sc.dt
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    gm = load_mjcf_text(text)
    rng = np.random.default_rng(1)
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0 + 0.2 * rng.normal(size=m.nq)
    d.qvel[:] = 0.2 * rng.normal(size=m.nv)
    ctrls = rng.normal(size=(50, m.nu))
    idx = [gm.joint_idx_q(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)) for j in range(m.njnt)]
    q0, v0 = np.empty(gm.nq), np.empty(gm.nv)
    q0[idx], v0[idx] = d.qpos, d.qvel
    qs, _ = gradyn.rollout(gm, q0, v0, None, sc.dt, ctrls=ctrls)
    worst = 0.0
    for t in range(50):
        d.ctrl[:] = ctrls[t]
        mujoco.mj_step(m, d)
        worst = max(worst, np.max(np.abs(qs[t + 1, idx] - d.qpos)) / max(1.0, np.max(np.abs(d.qpos))))
    if not worst <= 1e-8:
        sys.exit(f"MUJOCO ROLLOUT COMPARISON ABORTED: {sc.name}: gradyn does not follow MuJoCo without contact "
                 f"(worst relative deviation {worst:.2e} > 1e-8)")
    return worst


# --- timing ---------------------------------------------------------------------------------------


def median_wall(f, repeats):
    """Median wall time (the worlds run on several threads: CPU time would add them up)."""
    return median_times([f], repeats)[1][0]


def measure(sc, B, T, threads, repeats, rng):
    import mujoco
    from mujoco import rollout as mj_rollout

    qpos, qvel, q0, v0 = initial_states(sc, B, rng)
    ctrls = controls(sc, B, T, rng)
    nstate = mujoco.mj_stateSize(sc.m, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    state0 = np.empty((B, nstate))
    d = mujoco.MjData(sc.m)
    for b in range(B):
        d.qpos[:], d.qvel[:] = qpos[b], qvel[b]
        mujoco.mj_getState(sc.m, d, state0[b], mujoco.mjtState.mjSTATE_FULLPHYSICS)
    datas = [mujoco.MjData(sc.m) for _ in range(threads)]
    out = {}
    qs, vs, status = gradyn.rollout(sc.model, q0, v0, None, sc.dt, ctrls=ctrls, threads=threads, return_status=True)
    out["finite_worlds"] = int(np.isfinite(qs).all(axis=(1, 2)).sum())
    out["flagged_worlds"] = int((status != 0).any(axis=1).sum())
    vs_bar = np.zeros_like(vs)
    vs_bar[:, -1] = 1.0
    t_fwd = median_wall(lambda: gradyn.rollout(sc.model, q0, v0, None, sc.dt, ctrls=ctrls, threads=threads), repeats)
    t_vjp = median_wall(lambda: gradyn.rollout_vjp(sc.model, q0, v0, None, sc.dt, None, vs_bar, ctrls=ctrls, qs=qs,
                                                   vs=vs, threads=threads), repeats)
    with mj_rollout.Rollout(nthread=threads) as pool:  # MuJoCo's persistent thread pool
        pool.rollout(sc.m, datas, state0, ctrls, nstep=T)  # warm-up: the pool's threads start here
        t_mj = median_wall(lambda: pool.rollout(sc.m, datas, state0, ctrls, nstep=T), repeats)
    steps = B * T
    out.update(B=B, T=T, threads=threads, gradyn_forward_s=t_fwd, gradyn_vjp_s=t_vjp, mujoco_s=t_mj,
               gradyn_forward_steps_per_s=steps / t_fwd, gradyn_vjp_steps_per_s=steps / t_vjp,
               mujoco_steps_per_s=steps / t_mj, forward_vs_mujoco=t_mj / t_fwd, vjp_vs_forward=t_fwd / t_vjp)
    return out


def write_results(path_md, path_json, info, rows, checks):
    path_json.write_text(json.dumps({"machine": info, "checks": checks, "rows": rows}, indent=2))
    L = ["# Many worlds at once: gradyn's batched rollout vs mujoco.rollout\n",
         f"Generated by `.venv/bin/python bench/compare_mujoco_rollout.py{' --quick' if info['quick'] else ''}` "
         f"(one run; wall-clock medians). Machine: {info['cpu']}, {info['cores']} cores, load average at start "
         f"{', '.join(f'{x:.1f}' for x in info['load_average_at_start'])}; MuJoCo {info['mujoco']}; gradyn at "
         f"{info['commit']}.\n",
         "Same robot check (contacts off, base welded, 50 steps under random controls): worst relative deviation "
         + ", ".join(f"{k} {v:.1e}" for k, v in checks.items()) + ".\n",
         "Throughput: world-steps per second (B x T / wall time). Ratios: gradyn forward / MuJoCo (goal >= 1.2); "
         "gradyn rollout_vjp (given qs, vs) / gradyn forward (goal >= 0.33).\n",
         "| scene | B | threads | gradyn fwd steps/s | gradyn vjp steps/s | MuJoCo steps/s | fwd / MuJoCo | vjp / fwd | worlds finite (flagged) |",
         "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['scene']} | {r['B']} | {r['threads']} | {r['gradyn_forward_steps_per_s']:.3g} | "
                 f"{r['gradyn_vjp_steps_per_s']:.3g} | {r['mujoco_steps_per_s']:.3g} | {r['forward_vs_mujoco']:.2f} | "
                 f"{r['vjp_vs_forward']:.2f} | {r['finite_worlds']}/{r['B']} ({r['flagged_worlds']}) |")
    L.append("\n## Thread scaling (1 thread to all cores; efficiency t(1) / (n t(n)), goal >= 0.85)\n")
    L.append("| scene | B | n | gradyn forward | gradyn vjp | MuJoCo |")
    L.append("|---|---|---|---|---|---|")
    by = {(r["scene"], r["B"], r["threads"]): r for r in rows}
    for (name, B, n), r in by.items():
        if n == 1 or (name, B, 1) not in by:
            continue
        one = by[(name, B, 1)]
        eff = lambda key: one[key] / (n * r[key])  # noqa: E731
        L.append(f"| {name} | {B} | {n} | {eff('gradyn_forward_s'):.2f} | {eff('gradyn_vjp_s'):.2f} | "
                 f"{eff('mujoco_s'):.2f} |")
    L.append("\n## Paper 002 Table 1's shape: time of one batch of T steps against batch size (all threads)\n")
    L.append("| scene | B | forward s | gradient s (rollout_vjp) | MuJoCo forward s |")
    L.append("|---|---|---|---|---|")
    for r in rows:
        if r["threads"] == info["all_threads"]:
            L.append(f"| {r['scene']} | {r['B']} | {r['gradyn_forward_s']:.4g} | {r['gradyn_vjp_s']:.4g} | "
                     f"{r['mujoco_s']:.4g} |")
    path_md.write_text("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: B = 1, 4 and 50 steps, one repeat")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 16, 256, 1024])
    ap.add_argument("--out", default=None, help="results path without suffix (default: bench/results/mujoco_rollout; "
                                                "--quick: a temporary folder)")
    args = ap.parse_args()
    import mujoco

    T, batches = (50, [1, 4]) if args.quick else (args.steps, args.batches)
    all_threads = os.cpu_count() or 1
    thread_counts = sorted({1, all_threads})
    scenes = [laikago_scene("pgs"), laikago_scene("penalty")]
    if (h := humanoid_scene()) is not None:
        scenes.append(h)
    checks = {sc.name: check_same_robot(sc) for sc in scenes}
    info = {"cpu": platform.processor() or "?", "cores": all_threads, "mujoco": mujoco.__version__,
            "commit": commit_name(), "load_average_at_start": os.getloadavg(), "quick": args.quick,
            "all_threads": all_threads}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    rows = []
    rng = np.random.default_rng(0)
    for sc in scenes:
        for B in batches:
            for n in thread_counts:
                repeats = 1 if args.quick else (5 if B * T <= 16_000 else 3 if B * T <= 256_000 else 1)
                r = measure(sc, B, T, n, repeats, rng)
                r["scene"] = sc.name
                rows.append(r)
                print(f"{sc.name:16s} B={B:5d} threads={n}: gradyn fwd {r['gradyn_forward_steps_per_s']:.3g} "
                      f"steps/s, vjp {r['gradyn_vjp_steps_per_s']:.3g}, MuJoCo {r['mujoco_steps_per_s']:.3g} "
                      f"(fwd/MuJoCo {r['forward_vs_mujoco']:.2f}, vjp/fwd {r['vjp_vs_forward']:.2f})", flush=True)
    if args.out is not None:
        out = pathlib.Path(args.out)
    elif args.quick:
        out = pathlib.Path(tempfile.gettempdir()) / "mujoco_rollout_quick"
    else:
        out = HERE / "results" / "mujoco_rollout"
    write_results(out.with_suffix(".md"), out.with_suffix(".json"), info, rows, checks)
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
