#!/usr/bin/env python3
"""iLQR iterations per second: gradyn's analytic step Jacobians against MuJoCo's finite-difference
Jacobians (mjd_transitionFD), the same iLQR (gradyn.control.ilqr) on the same robot, one run.

    .venv/bin/python bench/ilqr_speed.py            # writes bench/results/ilqr_speed.md and .json
    .venv/bin/python bench/ilqr_speed.py --quick    # a smoke run (fewer iterations, one repeat)

Problems (each simulator loads the same MJCF text):
  cartpole-swingup: a cart on a slider with a 1 m pole (motor on the cart, ctrlrange +-30 N), from
      hanging to upright, T = 100 steps at dt = 0.02; cost 1/2 (0.01 |u|^2) per step, terminal
      1/2 e' diag(100, 100, 10, 10) e. No contact, so both simulate the same dynamics (checked).
  laikago-standing: laikago (examples/laikago_contact/laikago_scene.py's MJCF: free base, four toe
      spheres on a plane, a position servo per hinge, kp 150, kv 5) released 1 cm above its
      toes with its legs 0.03 rad off the stance and its base moving, T = 100 steps at
      dt = 0.002 (at 0.005 these servos make explicit Euler unstable in both simulators); cost:
      base pose and all velocities to the stance, servo targets near the stance angles. MuJoCo:
      its default soft contacts. gradyn, two problems: 'pgs' (hard contact: impulses, its Jacobian
      through the solver's conditions; nonsmooth, so many line searches find no step) and
      'penalty' (soft contact, laikago_scene's setting: the counterpart of MuJoCo's). The contact
      models differ, so the plans differ; the MuJoCo row is the same problem for both.
Backends: gradyn.control.GradynDynamics (step_jacobian over the T steps as one batch, on 1 thread
and on all cores; the line-search candidates' closed loops in C++) and MujocoDynamics below
(mjd_transitionFD per step, one-sided differences, eps 1e-6; the candidates stepped with mj_step in
a Python loop, as MuJoCo has no closed-loop rollout). The iLQR code, costs and stopping rules are
shared. Each backend solves each problem with the default stopping rules (median of repeats by
wall time); reported: iterations (accepted), solve time, iterations per second and the time of one
linearisation (the Jacobians of the whole horizon). Goal (issue 18): >= 5x the FD baseline's
iterations per second.
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
from gradyn import control  # noqa: E402

CARTPOLE_XML = """
<mujoco model="cartpole">
  <option timestep="0.02" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="cart">
      <joint name="slider" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.2 0.1 0.05" mass="1.0"/>
      <body name="pole">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 1" size="0.02" mass="0.1"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="slider" gear="1" ctrlrange="-30 30" ctrllimited="true"/></actuator>
</mujoco>
"""


class MujocoDynamics:
    """The planner's view of a MuJoCo model (its own coordinates: qpos, qvel, its tangent space),
    with Jacobians from mjd_transitionFD."""

    def __init__(self, m, eps=1e-6, centered=False):
        import mujoco

        self.mujoco = mujoco
        self.m = m
        self.d = mujoco.MjData(m)
        self.nq, self.nv, self.nu = m.nq, m.nv, m.nu
        lo, hi = m.actuator_ctrlrange.T.copy()
        limited = m.actuator_ctrllimited.astype(bool)
        self.u_min = np.where(limited, lo, -np.inf)
        self.u_max = np.where(limited, hi, np.inf)
        self.eps, self.centered = eps, centered
        self._A = np.zeros((2 * m.nv + m.na, 2 * m.nv + m.na))
        self._B = np.zeros((2 * m.nv + m.na, m.nu))
        self._euclidean = m.nq == m.nv

    def _set(self, q, v, u):
        d = self.d
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        d.qacc_warmstart[:] = 0  # no solver warm start carried between calls (as in gradyn)

    def step(self, q, v, u):
        B = q.shape[0]
        q_next, v_next = np.empty_like(q), np.empty_like(v)
        status = np.zeros(B, dtype=np.uint32)
        for b in range(B):
            self._set(q[b], v[b], u[b])
            self.mujoco.mj_step(self.m, self.d)
            q_next[b], v_next[b] = self.d.qpos, self.d.qvel
            if not (np.isfinite(q_next[b]).all() and np.isfinite(v_next[b]).all()):
                status[b] = int(gradyn.Status.NON_FINITE)
        return q_next, v_next, status

    def rollout(self, q0, v0, us):
        T = us.shape[0]
        qs, vs = np.empty((T + 1, self.nq)), np.empty((T + 1, self.nv))
        qs[0], vs[0] = q0, v0
        status = np.zeros(T, dtype=np.uint32)
        for t in range(T):
            q, v, s = self.step(qs[t][None], vs[t][None], us[t][None])
            qs[t + 1], vs[t + 1], status[t] = q[0], v[0], s[0]
        return qs, vs, status

    def jacobians(self, qs, vs, us):
        T = us.shape[0]
        A = np.empty((T,) + self._A.shape)
        B = np.empty((T,) + self._B.shape)
        for t in range(T):
            self._set(qs[t], vs[t], us[t])
            self.mujoco.mjd_transitionFD(self.m, self.d, self.eps, self.centered, self._A, self._B,
                                         None, None)
            A[t], B[t] = self._A, self._B
        return A, B

    def difference(self, q_from, q_to):
        """mj_differentiatePos for every row, in NumPy for more than two rows at once (a loop of
        mj_differentiatePos calls would make the baseline's cost evaluation pay Python overhead
        that gradyn's batched difference does not): slide and hinge joints subtract; free joints
        subtract their positions (world frame); free and ball quaternions give the rotation
        vector of q_from^-1 q_to (local frame), as mju_subQuat."""
        q_from, q_to = np.broadcast_arrays(np.asarray(q_from, float), np.asarray(q_to, float))
        if self._euclidean:
            return q_to - q_from
        flat_from, flat_to = q_from.reshape(-1, self.nq), q_to.reshape(-1, self.nq)
        if flat_from.shape[0] <= 2:  # a call per row is faster than NumPy's overhead on one row
            out = np.empty((flat_from.shape[0], self.nv))
            for i in range(flat_from.shape[0]):
                self.mujoco.mj_differentiatePos(self.m, out[i], 1.0, flat_from[i], flat_to[i])
            return out.reshape(q_from.shape[:-1] + (self.nv,))
        out = np.empty((flat_from.shape[0], self.nv))
        q_lin, v_lin, quats = self._tangent_layout
        out[:, v_lin] = flat_to[:, q_lin] - flat_from[:, q_lin]
        for qa, da in quats:
            out[:, da:da + 3] = quaternion_difference(flat_from[:, qa:qa + 4], flat_to[:, qa:qa + 4])
        return out.reshape(q_from.shape[:-1] + (self.nv,))

    @property
    def _tangent_layout(self):
        """(qpos indices, dof indices) that subtract (slides, hinges, free positions), and the
        (qpos, dof) addresses of the quaternions (free and ball joints)."""
        if not hasattr(self, "_layout"):
            free, ball = int(self.mujoco.mjtJoint.mjJNT_FREE), int(self.mujoco.mjtJoint.mjJNT_BALL)
            q_lin, v_lin, quats = [], [], []
            for j in range(self.m.njnt):
                kind, qa, da = int(self.m.jnt_type[j]), self.m.jnt_qposadr[j], self.m.jnt_dofadr[j]
                if kind == free:
                    q_lin += [qa, qa + 1, qa + 2]
                    v_lin += [da, da + 1, da + 2]
                    qa, da = qa + 3, da + 3
                if kind in (free, ball):
                    quats.append((qa, da))
                else:
                    q_lin.append(qa)
                    v_lin.append(da)
            self._layout = (np.array(q_lin, dtype=int), np.array(v_lin, dtype=int), quats)
        return self._layout


def quaternion_difference(a, b):
    """Rotation vectors of a^-1 b for rows of unit quaternions (w, x, y, z), the shorter way round."""
    aw, av = a[:, :1], -a[:, 1:]  # a^-1 = conjugate
    bw, bv = b[:, :1], b[:, 1:]
    w = aw * bw - np.sum(av * bv, axis=1, keepdims=True)
    v = aw * bv + bw * av + np.cross(av, bv)
    sign = np.where(w < 0, -1.0, 1.0)
    w, v = w * sign, v * sign
    s = np.linalg.norm(v, axis=1, keepdims=True)
    angle = 2 * np.arctan2(s, w)
    scale = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0)
    return v * scale


def load_both(xml, dt, contact=None, contact_settings=None):
    import mujoco

    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = dt
    model = load_mjcf_text(xml)
    if contact is not None:
        model = model.with_contact(model=contact, **(contact_settings or {}))
    return m, model


def joint_maps(m, model):
    import mujoco

    return [(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j), m.jnt_type[j], m.jnt_qposadr[j],
             m.jnt_dofadr[j], model.joint_idx_q(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)),
             model.joint_idx_v(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)))
            for j in range(m.njnt)]


def gradyn_to_mujoco(m, model, q):
    """A gradyn configuration in MuJoCo's qpos (free joint: w-first quaternion)."""
    import mujoco

    qpos = np.array(m.qpos0)
    for _, kind, mq, _, gq, _ in joint_maps(m, model):
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            qpos[mq:mq + 3] = q[gq:gq + 3]
            qpos[mq + 3], qpos[mq + 4:mq + 7] = q[gq + 6], q[gq + 3:gq + 6]
        else:
            qpos[mq] = q[gq]
    return qpos


def check_cartpole_is_the_same(m, model, dt):
    """Without contact the two simulators step the same cart-pole: 100 steps to 1e-9."""
    import mujoco

    rng = np.random.default_rng(0)
    us = rng.uniform(-10, 10, size=(100, 1))
    d = mujoco.MjData(m)
    d.qpos[:] = [0.1, 0.3]
    d.qvel[:] = [-0.2, 0.5]
    qs, vs = gradyn.rollout(model, d.qpos.copy(), d.qvel.copy(), None, dt, ctrls=us)
    worst = 0.0
    for t in range(100):
        d.ctrl[:] = us[t]
        mujoco.mj_step(m, d)
        worst = max(worst, np.abs(qs[t + 1] - d.qpos).max(), np.abs(vs[t + 1] - d.qvel).max())
    if not worst < 1e-9:
        sys.exit(f"ILQR BENCHMARK ABORTED: the cart-poles differ by {worst:.2e} over 100 steps")
    # Both backends linearise the same step: MuJoCo's finite differences against gradyn's
    # analytic Jacobians along that trajectory (the cart-pole's tangent space is its coordinates).
    mj = MujocoDynamics(m)
    A_mj, B_mj = mj.jacobians(qs[:-1], vs[:-1], us)
    A_g, _, B_g = gradyn.step_jacobian(model, qs[:-1], vs[:-1], None, dt, ctrl=us)
    jacobian_gap = max(np.abs(A_mj - A_g).max(), np.abs(B_mj - B_g).max())
    if not jacobian_gap < 1e-4:
        sys.exit(f"ILQR BENCHMARK ABORTED: MuJoCo's finite-difference Jacobians differ from gradyn's "
                 f"analytic ones by {jacobian_gap:.2e}")
    return worst, jacobian_gap


def cartpole_problem():
    dt, T = 0.02, 100
    m, model = load_both(CARTPOLE_XML, dt)
    worst, jacobian_gap = check_cartpole_is_the_same(m, model, dt)
    weights = dict(Q=np.zeros(4), R=[0.01], Q_final=[100.0, 100.0, 10.0, 10.0])
    q_goal = np.array([0.0, np.pi])

    def setup(backend, threads=None):
        if backend == "mujoco":
            dyn = MujocoDynamics(m)
        else:
            dyn = control.GradynDynamics(model, dt, threads=threads)
        cost = control.QuadraticCost(dyn, q_goal=q_goal, **weights)
        return dyn, cost, np.zeros(2), np.zeros(2), np.zeros((T, 1))

    return {"name": "cartpole-swingup", "T": T, "dt": dt, "nv": 2, "nu": 1, "setup": setup,
            "check": f"same dynamics to {worst:.1e} over 100 steps; MuJoCo's FD Jacobians within "
                     f"{jacobian_gap:.1e} of gradyn's analytic ones along them",
            "state_gap": worst, "jacobian_gap": jacobian_gap}


def laikago_problem(contact="pgs", dt=0.002, T=100):
    xml = scene.mujoco_xml(timestep=dt, position_servos=(scene.KP, scene.KD))
    m, model = load_both(xml, dt, contact=contact,
                         contact_settings=scene.PENALTY_SETTINGS if contact == "penalty" else None)
    stance = scene.stance(model, clearance=0.0)
    start = scene.stance(model, clearance=0.01)
    # Legs a little off the stance and the base moving: the plan has work to do.
    start[7:] += 0.03 * np.sin(np.arange(model.nq - 7))
    v_start = np.r_[0.1, -0.05, 0.0, 0.2, -0.2, 0.1, np.zeros(model.nv - 6)]
    targets = np.array([scene.stance_angle(a["joint"]) for a in model.actuators])
    nv = model.nv
    Q = np.r_[np.full(6, 100.0), np.full(nv - 6, 1.0), np.full(nv, 0.1)]

    def setup(backend, threads=None):
        if backend == "mujoco":
            dyn = MujocoDynamics(m)
            q_goal, q0 = gradyn_to_mujoco(m, model, stance), gradyn_to_mujoco(m, model, start)
            # MuJoCo's tangent: the free joint's linear part in the world frame (the same near the
            # level stance), then the hinges in MuJoCo's joint order (the same order here).
        else:
            dyn = control.GradynDynamics(model, dt, threads=threads)
            q_goal, q0 = stance, start
        cost = control.QuadraticCost(dyn, q_goal=q_goal, Q=Q, R=np.full(model.nu, 1.0),
                                     u_ref=targets)
        v0 = v_start
        if backend == "mujoco":  # MuJoCo's free joint: linear velocity in the world frame
            R = scene.quat_wxyz_to_matrix(q0[3:7])
            v0 = np.r_[R @ v_start[:3], v_start[3:]]
        return dyn, cost, q0, v0, np.tile(targets, (T, 1))

    kind = "hard" if contact == "pgs" else "soft"
    return {"name": f"laikago-standing ({contact})", "T": T, "dt": dt, "nv": nv, "nu": model.nu, "setup": setup,
            "check": f"contact models differ (gradyn {contact}, {kind}; MuJoCo soft); same robot, same cost"}


def time_backend(problem, backend, threads, iterations, repeats):
    """Solve the problem `repeats` times with the default stopping rules (at most `iterations`
    iterations); the median solve's numbers, and the time of each linearisation (the Jacobians of
    the T steps)."""
    runs = []
    for _ in range(repeats):
        dyn, cost, q0, v0, u0 = problem["setup"](backend, threads)
        jacobian_times = []
        inner = dyn.jacobians

        def timed(*args, inner=inner):
            started = time.perf_counter()
            out = inner(*args)
            jacobian_times.append(time.perf_counter() - started)
            return out

        dyn.jacobians = timed
        started = time.perf_counter()
        result = control.ilqr(dyn, cost, q0, v0, u0, max_iterations=iterations)
        wall = time.perf_counter() - started
        runs.append({"wall_s": wall, "iterations": len(result.iterations),
                     "accepted": int(sum(r.step > 0 for r in result.iterations)),
                     "iterations_per_s": len(result.iterations) / wall,
                     "jacobian_share": sum(jacobian_times) / wall,
                     "jacobian_ms": 1e3 * float(np.median(jacobian_times)),
                     "final_cost": float(result.cost), "converged": bool(result.converged),
                     "reason": result.reason.split(";")[0].split(" (")[0]})
    return sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: at most 5 iterations, one repeat")
    ap.add_argument("--iterations", type=int, default=100, help="at most this many per solve")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None, help="results path without suffix (default "
                    "bench/results/ilqr_speed; --quick: a temporary folder)")
    args = ap.parse_args()
    import mujoco

    iterations, repeats = (5, 1) if args.quick else (args.iterations, args.repeats)
    cores = os.cpu_count() or 1
    rows = []
    problems = [cartpole_problem(), laikago_problem("pgs"), laikago_problem("penalty")]
    for problem in problems:
        row = {key: problem[key] for key in problem if key != "setup"}
        row["problem"] = row.pop("name")
        row["mujoco_fd"] = time_backend(problem, "mujoco", None, iterations, repeats)
        row["gradyn_1_thread"] = time_backend(problem, "gradyn", 1, iterations, repeats)
        row["gradyn_all_threads"] = time_backend(problem, "gradyn", None, iterations, repeats)
        for key in ("gradyn_1_thread", "gradyn_all_threads"):
            row[key]["vs_mujoco_fd"] = (row[key]["iterations_per_s"]
                                        / row["mujoco_fd"]["iterations_per_s"])
        rows.append(row)
        print(f"{problem['name']:18s} MuJoCo FD {row['mujoco_fd']['iterations_per_s']:8.2f} it/s | "
              f"gradyn 1 thread {row['gradyn_1_thread']['iterations_per_s']:8.2f} it/s "
              f"({row['gradyn_1_thread']['vs_mujoco_fd']:.2f}x) | gradyn {cores} threads "
              f"{row['gradyn_all_threads']['iterations_per_s']:8.2f} it/s "
              f"({row['gradyn_all_threads']['vs_mujoco_fd']:.2f}x)", flush=True)
    info = {"commit": commit_name(), "mujoco": mujoco.__version__, "cores": cores,
            "cpu": platform.processor() or "?", "load_average_at_start": os.getloadavg(),
            "iterations": iterations, "repeats": repeats, "quick": args.quick}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                               if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    if args.out is not None:
        out = pathlib.Path(args.out)
    elif args.quick:
        out = pathlib.Path(tempfile.gettempdir()) / "ilqr_speed_quick"
    else:
        out = HERE / "results" / "ilqr_speed"
    out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=2))
    lines = [
        "# iLQR iterations per second: analytic Jacobians (gradyn) vs finite differences (MuJoCo)\n",
        f"Generated by `.venv/bin/python bench/ilqr_speed.py{' --quick' if args.quick else ''}` "
        f"(one run). Machine: {info['cpu']}, {cores} cores, load average at start "
        f"{', '.join(f'{x:.1f}' for x in info['load_average_at_start'])}; MuJoCo {info['mujoco']}; "
        f"gradyn at {info['commit']}.\n",
        "The same iLQR (gradyn.control.ilqr, default stopping rules, at most "
        f"{iterations} iterations; step sizes tried in rounds of {cores}) solves each problem from "
        "the same start with each backend; the median of "
        f"{repeats} solves by wall time. MuJoCo: mjd_transitionFD per step (one-sided, eps 1e-6), "
        "its line-search candidates stepped one by one; gradyn: step_jacobian of the T steps as one "
        "batch, the candidates' closed loops in C++ (GradynDynamics.feedback_rollout). An "
        "iteration that finds no step (the cost rises for every step size; regularisation goes "
        "up) reuses the last Jacobians, so iterations cost unequal amounts; the linearisation "
        "column times the Jacobians of one whole horizon alone. laikago-standing is solved on gradyn with two "
        "contact models against the same MuJoCo baseline (MuJoCo's soft contacts): 'pgs' (hard contact, "
        "nonsmooth where toes stick and slip: most of its iterations find no step, and such an iteration "
        "costs both backends the same backward pass and line search, no Jacobians) and 'penalty' (soft "
        "contact, MuJoCo's kind).\n",
        "| problem | T | nv | nu | backend | iterations (accepted) | solve s | iterations/s | vs MuJoCo FD | "
        "linearisation ms | vs MuJoCo FD | final cost | stop |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    names = {"mujoco_fd": "MuJoCo FD", "gradyn_1_thread": "gradyn, 1 thread",
             "gradyn_all_threads": f"gradyn, {cores} threads"}
    for r in rows:
        mj = r["mujoco_fd"]
        for key, label in names.items():
            b = r[key]
            lines.append(
                f"| {r['problem']} | {r['T']} | {r['nv']} | {r['nu']} | {label} | {b['iterations']} "
                f"({b['accepted']}) | {b['wall_s']:.3g} | {b['iterations_per_s']:.3g} | "
                f"{b['iterations_per_s'] / mj['iterations_per_s']:.2f}x | {b['jacobian_ms']:.3g} | "
                f"{mj['jacobian_ms'] / b['jacobian_ms']:.1f}x | {b['final_cost']:.5g} | {b['reason']} |")
    lines.append("")
    for r in rows:
        lines.append(f"* {r['problem']}: {r['check']}.")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
