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
      spheres on a plane, a position servo per hinge, kp 150, kv 5) dropped 1 cm onto its toes,
      T = 50 steps at dt = 0.005; cost: base pose and all velocities to the stance, servo targets
      near the stance angles. gradyn contact: 'pgs' (impulses; its Jacobian through the solver's
      conditions); MuJoCo: its default soft contacts. The contact models differ, so the plans
      differ; the iteration rate is what is compared.
Backends: gradyn.control.GradynDynamics (step_jacobian over the T steps as one batch, on 1 thread
and on all cores) and MujocoDynamics below (mjd_transitionFD per step, one-sided differences,
eps 1e-6, the line-search candidates stepped with mj_step in a loop). The iLQR code, cost and
line search are shared; only the simulator calls differ. Each timing: a fixed number of
iterations (tolerances 0, so none stops early), wall clock, median of repeats; also the share of
an iteration spent in the Jacobians. Goal (issue 18): >= 5x the FD-Jacobian baseline's rate.
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
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402
from gradient_benchmarks import commit_name  # noqa: E402

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
        q_from, q_to = np.broadcast_arrays(np.asarray(q_from, float), np.asarray(q_to, float))
        if self._euclidean:
            return q_to - q_from
        flat_from, flat_to = q_from.reshape(-1, self.nq), q_to.reshape(-1, self.nq)
        out = np.empty((flat_from.shape[0], self.nv))
        for i in range(flat_from.shape[0]):
            self.mujoco.mj_differentiatePos(self.m, out[i], 1.0, flat_from[i], flat_to[i])
        return out.reshape(q_from.shape[:-1] + (self.nv,))


def load_both(xml, dt, contact=None, contact_settings=None):
    import mujoco

    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = dt
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gradyn.load(f.name)
    os.unlink(f.name)
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


def laikago_problem():
    dt, T = 0.005, 50
    xml = scene.mujoco_xml(timestep=dt, position_servos=(scene.KP, scene.KD))
    m, model = load_both(xml, dt, contact="pgs")
    stance = scene.stance(model, clearance=0.0)
    start = scene.stance(model, clearance=0.01)
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
        return dyn, cost, q0, np.zeros(nv), np.tile(targets, (T, 1))

    return {"name": "laikago-standing", "T": T, "dt": dt, "nv": nv, "nu": model.nu, "setup": setup,
            "check": "contact models differ (gradyn pgs, MuJoCo soft); same robot, same cost"}


def time_backend(problem, backend, threads, iterations, repeats):
    walls, jac_shares, costs = [], [], []
    for _ in range(repeats):
        dyn, cost, q0, v0, u0 = problem["setup"](backend, threads)
        jac_time = [0.0]
        inner = dyn.jacobians

        def timed(*args, inner=inner):
            started = time.perf_counter()
            out = inner(*args)
            jac_time[0] += time.perf_counter() - started
            return out

        dyn.jacobians = timed
        started = time.perf_counter()
        result = control.ilqr(dyn, cost, q0, v0, u0, max_iterations=iterations, tolerance=0.0,
                              gradient_tolerance=0.0)
        wall = time.perf_counter() - started
        walls.append(wall)
        jac_shares.append(jac_time[0] / wall)
        costs.append((float(cost.evaluate(result.q[None], result.v[None], result.u[None])[0]),
                      len(result.iterations)))
    i = int(np.argsort(walls)[len(walls) // 2])
    return {"wall_s": walls[i], "iterations": costs[i][1], "iterations_per_s": costs[i][1] / walls[i],
            "jacobian_share": jac_shares[i], "final_cost": costs[i][0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 3 iterations, one repeat")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="results path without suffix (default "
                    "bench/results/ilqr_speed; --quick: a temporary folder)")
    args = ap.parse_args()
    import mujoco

    iterations, repeats = (3, 1) if args.quick else (args.iterations, args.repeats)
    cores = os.cpu_count() or 1
    rows = []
    problems = [cartpole_problem(), laikago_problem()]
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
        f"The same iLQR (gradyn.control.ilqr: box-QP backward pass, 10 line-search candidates) runs "
        f"{iterations} iterations (tolerances 0: no early stop); wall-clock median of {repeats}. "
        "MuJoCo: mjd_transitionFD per step (one-sided, eps 1e-6); gradyn: step_jacobian of all T "
        "steps as one batch. 'Jacobian share' is the fraction of an iteration spent computing "
        "the Jacobians; the rest (backward pass, line search, cost) is shared Python.\n",
        "| problem | T | nv | nu | MuJoCo FD it/s (Jac. share) | gradyn 1 thread it/s (Jac. share) "
        "| gradyn all cores it/s | gradyn / MuJoCo FD (1 thread, all cores) | final cost MuJoCo, "
        "gradyn |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mj, g1, gn = r["mujoco_fd"], r["gradyn_1_thread"], r["gradyn_all_threads"]
        lines.append(
            f"| {r['problem']} | {r['T']} | {r['nv']} | {r['nu']} | {mj['iterations_per_s']:.3g} "
            f"({mj['jacobian_share']:.0%}) | {g1['iterations_per_s']:.3g} ({g1['jacobian_share']:.0%}) "
            f"| {gn['iterations_per_s']:.3g} | {g1['vs_mujoco_fd']:.2f}x, {gn['vs_mujoco_fd']:.2f}x | "
            f"{mj['final_cost']:.4g}, {g1['final_cost']:.4g} |")
    lines.append("")
    for r in rows:
        lines.append(f"* {r['problem']}: {r['check']}.")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
