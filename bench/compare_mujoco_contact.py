#!/usr/bin/env python3
"""gradyn's contact models against MuJoCo on one scene, in one run: laikago standing on a plane on
its four toe spheres (examples/laikago_contact/laikago_scene.py), semi-implicit Euler, dt = 1 ms.

    .venv/bin/python bench/compare_mujoco_contact.py

For each gradyn contact model (none, 'penalty', 'pgs', and 'ipm' when this gradyn has it; plus the
opt-in row 'ipm-warm': 'ipm' with with_contact(ipm_warm_start=True), each solve started from the
previous step's solution, which makes a step depend on the step before) it measures:

 (a) the forward step: gradyn.rollout over T steps (a C++ loop) against MuJoCo's mujoco.rollout
     (a C loop of mj_step) over the same T, CPU time per step and the ratio (goal <= 1);
     a Python loop of mj_step is reported too, for scale;
 (b) rollout_vjp (given the forward states, qs= and vs=) over rollout, CPU time (goal <= 4);
 (c) the memory of the backward pass per step (goal <= 0.5 KB): the checkpoints it reads (q, v
     and the controls u of each step: (nq + 2 nv) x 8 bytes) plus the growth of the peak RSS of a
     fresh process across the rollout_vjp call, per step, from a long and a short horizon;
 (d) the full step Jacobian d(q_next, v_next)/d(q, v, tau): gradyn.step_jacobian (analytical,
     tangent coordinates, every contact model) against
     mujoco.mjd_transitionFD (forward and centred differences) at the standing state (goal:
     gradyn >= 10x faster).

The MuJoCo model is generated from the same URDF (same bodies, joint placements, inertias, toe
spheres, a plane, one motor per leg joint). Before anything is timed the run checks that gradyn's
forward dynamics equal MuJoCo's qacc (contacts and constraints disabled) to 1e-9 on random states,
that each simulator stands on four toe contacts through the timed trajectory, and, without
contact, that gradyn's step Jacobian matches finite differences of gradyn.step and MuJoCo's
d v_next / d tau; otherwise it stops with MUJOCO CONTACT COMPARISON ABORTED and exit status 1.
Gradients through a contact model that gradyn does not differentiate yet (step_vjp raises
ValueError) are reported as n/a with gradyn's message.

The robot stands by itself: its leg joints carry a PD law toward the stance as passive springs
and dampers (stiffness 150 N m/rad, damping 5 N m s/rad; laikago_scene.with_stance_springs, the
same in MuJoCo's model), so the timed trajectories run with zero torques, open loop, and keep
standing. Each simulator starts from its own equilibrium: the stance run for --settle seconds. The contact models differ: MuJoCo solves soft
constraints (pyramidal cone, Newton) per step; gradyn's penalty model applies spring forces,
PGS a boxed LCP; compare ratios, on a quiet machine for absolute numbers.

Results: bench/results/mujoco_contact.md and .json. Times are CPU times (time.process_time),
medians of interleaved repeats (see bench/gradient_benchmarks.py for why).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

# One BLAS thread: after a numpy matrix product (the checks) OpenBLAS's idle threads spin for a
# while, and on a 2-core machine they take CPU from whichever side is being timed.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
sys.path.insert(0, str(HERE))
import laikago_scene as scene  # noqa: E402
from gradient_benchmarks import (  # noqa: E402
    current_rss_kib,
    loss_adjoint,
    machine_info,
    median_times,
    peak_rss_kib,
    reset_peak_rss,
)

DT = 1e-3
FREE_DYNAMICS_TOLERANCE = 1e-9


# Benchmark rows: name -> (gradyn contact model, extra with_contact settings). 'ipm-warm' is not a
# default of gradyn: it is the ipm model with its opt-in warm start (off by default because step()
# then depends on the previous step, not on (q, v, tau) alone).
ROWS = {
    "none": (None, {}),
    "penalty": ("penalty", {}),
    "pgs": ("pgs", {}),
    "ipm": ("ipm", {}),
    "ipm-warm": ("ipm", {"ipm_warm_start": True}),
}
ROW_TITLES = {"ipm-warm": "ipm-warm (opt-in: ipm_warm_start=True)"}


class Abort(RuntimeError):
    pass


def require(condition, message):
    if not condition:
        raise Abort(message)


# --- the standing states ------------------------------------------------------------------------


def settle_gradyn(gradyn, model, seconds):
    """The standing state: the stance (toes touching) run for `seconds` with zero torques (the
    stance springs hold it). Without contact, nothing to stand on: the stance itself, in flight."""
    q, v = scene.stance(model), np.zeros(model.nv)
    if model.contact_model is None:
        return q, v
    qs, vs = gradyn.rollout(model, q, v, np.zeros((int(round(seconds / DT)), model.nv)), DT)
    return qs[-1], vs[-1]


def settle_mujoco(mujoco, m, maps, seconds):
    """The same in MuJoCo. Returns the MjData at the standing state."""
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = maps.to_mujoco(scene.stance(maps.model), np.zeros(maps.model.nv))
    for _ in range(int(round(seconds / DT))):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return d


def gradyn_contacts(gradyn, model, q):
    return sum(1 for c in gradyn.collide(model, q) if c["depth"] >= 0)


# --- the step Jacobian ----------------------------------------------------------------------------


def step_jacobian_analytic(gradyn, model, q, v, tau):
    """gradyn.step_jacobian: [A B], shape (2 nv, 3 nv), tangent coordinates (like MuJoCo's)."""
    A, B = gradyn.step_jacobian(model, q, v, tau, DT)
    return np.hstack([A, B])


def check_jacobian_against_fd(gradyn, model, q, v, tau, J):
    """Largest error of J (step_jacobian's: q moves by gradyn.integrate, q_next is compared by
    gradyn.difference) times random directions against central differences of gradyn.step, relative
    to the largest entry of J times the direction."""
    rng = np.random.default_rng(11)
    worst = 0.0
    h = 1e-6
    q_ref, _ = gradyn.step(model, q, v, tau, DT)
    for _ in range(3):
        dq, dv, dt_ = rng.normal(size=model.nv), rng.normal(size=model.nv), rng.normal(size=model.nv)

        def state(sign):
            qn, vn = gradyn.step(model, gradyn.integrate(model, q, sign * h * dq), v + sign * h * dv,
                                 tau + sign * h * dt_, DT)
            return np.concatenate([gradyn.difference(model, q_ref, qn), vn])
        fd = (state(1.0) - state(-1.0)) / (2 * h)
        jv = J @ np.concatenate([dq, dv, dt_])
        worst = max(worst, np.max(np.abs(jv - fd)) / max(1.0, np.max(np.abs(jv))))
    return worst


def mujoco_transition(mujoco, m, d, centered):
    A = np.zeros((2 * m.nv + m.na, 2 * m.nv + m.na))
    B = np.zeros((2 * m.nv + m.na, m.nu))
    mujoco.mjd_transitionFD(m, d, 1e-6, centered, A, B, None, None)
    return A, B


def check_jacobian_against_mujoco(model, maps, J, B):
    """Without contact, d v_next / d tau on the leg joints is dt M^-1 restricted to the legs in both
    simulators (leg velocities and torques are the same coordinates in both; MuJoCo's B has one
    column per motor and its velocity rows after the nv position rows). Returns the largest
    difference relative to the largest entry."""
    m = maps.m
    dofs = maps.actuator_dofs  # gradyn's v index of each motor's joint, in motor order
    gradyn_block = J[np.ix_(model.nv + dofs, 2 * model.nv + dofs)]
    mujoco_dofs = np.array([m.jnt_dofadr[m.actuator_trnid[a, 0]] for a in range(m.nu)])
    mujoco_block = B[m.nv + mujoco_dofs, :]
    return np.max(np.abs(gradyn_block - mujoco_block)) / np.max(np.abs(mujoco_block))


# --- memory, in a fresh process ---------------------------------------------------------------------


def child_memory(spec):
    """Peak-RSS growth across one rollout_vjp call at horizon spec['steps'], given the forward
    states (mode 'states') or re-running the forward pass (mode 'rerun')."""
    import gradyn

    model = scene.with_stance_springs(scene.load_gradyn(contact=spec["contact"], **spec["settings"]))
    q, v = settle_gradyn(gradyn, model, spec["settle"])
    taus = np.zeros((spec["steps"], model.nv))
    # Warm up on a short horizon so that lazily allocated workspaces do not count.
    qs, vs = gradyn.rollout(model, q, v, taus[:2], DT)
    kwargs = {"qs": qs, "vs": vs} if spec["mode"] == "states" else {}
    gradyn.rollout_vjp(model, q, v, taus[:2], DT, *loss_adjoint(qs, vs), **kwargs)
    qs, vs = gradyn.rollout(model, q, v, taus, DT)
    qs_bar, vs_bar = loss_adjoint(qs, vs)
    kwargs = {"qs": qs, "vs": vs} if spec["mode"] == "states" else {}
    baseline = current_rss_kib()
    reset_peak_rss()
    rss0 = peak_rss_kib()
    grads = gradyn.rollout_vjp(model, q, v, taus, DT, qs_bar, vs_bar, **kwargs)
    peak = peak_rss_kib()
    return {"vjp_peak_delta_kib": peak - rss0, "taus_bar_bytes": int(grads[2].nbytes), "baseline_rss_kib": baseline}


def run_child(spec):
    import subprocess

    proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_memory(model, contact, settings, settle, horizons, log):
    """Bytes per step of the backward pass, for rollout_vjp given the states (qs=, vs=) and for the
    default (it re-runs the forward pass and keeps every state itself)."""
    short, long_ = horizons
    out = {}
    for mode in ("states", "rerun"):
        deltas = {}
        for steps in (short, long_):
            deltas[steps] = run_child({"contact": contact, "settings": settings, "settle": settle, "steps": steps,
                                       "mode": mode})
        growth = (deltas[long_]["vjp_peak_delta_kib"] - deltas[short]["vjp_peak_delta_kib"]) * 1024 / (long_ - short)
        out[mode] = {"raw": {str(k): x for k, x in deltas.items()}, "measured_bytes_per_step": growth,
                     "taus_bar_bytes_per_step": model.nv * 8}
        log(f"    memory ({mode}): peak-RSS growth across rollout_vjp {growth:.0f} B/step "
            f"(of which the returned taus_bar {model.nv * 8} B/step)")
    return out


# --- the benchmark ------------------------------------------------------------------------------------


def gradient_unavailable(gradyn, model, q, v, tau):
    """None when step_vjp works on this model, else gradyn's message."""
    try:
        gradyn.step_vjp(model, q, v, tau, DT, np.ones(model.nq), np.ones(model.nv))
    except ValueError as e:
        return str(e)
    return None


def in_blocks(fn, seconds=2e-3):
    """fn repeated back to back for about `seconds` per timed sample, returning (block, calls): a single
    call timed alone between the other side's calls starts from caches the other side filled, which
    charges a 10 us call far more than a 400 us one (48 steps that warm their own caches)."""
    t0 = time.perf_counter()
    fn()
    calls = max(1, int(seconds / max(time.perf_counter() - t0, 1e-7)))

    def block():
        for _ in range(calls):
            fn()
    return block, calls


def ipm_newton_iterations(gradyn, model, qs, vs, tau, samples=100):
    """Newton iterations of the (cold-started) interior-point solve per step, at `samples` states of
    the trajectory: the smallest ipm_iterations limit whose step is not flagged SOLVER_NOT_CONVERGED
    (a limit stops the solver there, so each state's count is where it first converges)."""
    picks = np.linspace(0, len(qs) - 2, samples).round().astype(int)
    need = {}
    for k in range(1, model.contact_settings["ipm_iterations"] + 1):
        limited = model.with_contact(ipm_iterations=k)
        for t in picks:
            if t not in need:
                _, _, status = gradyn.step(limited, qs[t], vs[t], tau, DT, return_status=True)
                if not status & gradyn.Status.SOLVER_NOT_CONVERGED:
                    need[t] = k
        if len(need) == len(set(picks.tolist())):
            break
    require(len(need) == len(set(picks.tolist())), "gradyn ipm: a step did not converge at the default limit")
    counts = np.array([need[t] for t in picks])
    return {"mean": float(counts.mean()), "min": int(counts.min()), "max": int(counts.max()), "states": len(picks)}


def bench_case(gradyn, mujoco, label, args, mj, log):
    """One benchmark row (ROWS[label]: a gradyn contact model and its settings) against its MuJoCo
    counterpart (mj: the MuJoCo side's dict)."""
    from mujoco import rollout as mj_rollout

    contact, settings = ROWS[label]
    model = scene.with_stance_springs(scene.load_gradyn(contact=contact, **settings))
    q, v = settle_gradyn(gradyn, model, args.settle)
    tau = np.zeros(model.nv)
    T = args.steps
    taus = np.zeros((T, model.nv))
    qs, vs = gradyn.rollout(model, q, v, taus, DT)
    require(np.all(np.isfinite(qs)) and np.all(np.isfinite(vs)), f"gradyn {label}: the rollout diverged")
    row = {"contact": label, "steps": T}
    if contact is not None:
        counts = [gradyn_contacts(gradyn, model, qs[k]) for k in range(0, T + 1, max(1, T // 20))]
        require(min(counts) == 4, f"gradyn {label}: the robot does not stand on 4 toes through the timed "
                                  f"trajectory (contacts {counts})")
        row["base_height"] = [float(qs[0, 2]), float(qs[-1, 2])]
        row["contacts"] = counts
        log(f"  gradyn {label}: stands at {qs[0, 2]:.4f} m -> {qs[-1, 2]:.4f} m after {T} steps, "
            f"contacts {min(counts)}-{max(counts)}")

    if label == "ipm":
        row["ipm_newton_iterations"] = ipm_newton_iterations(gradyn, model, qs, vs, tau)
        log(f"  gradyn ipm: Newton iterations per step, mean {row['ipm_newton_iterations']['mean']:.2f} "
            f"(range {row['ipm_newton_iterations']['min']}-{row['ipm_newton_iterations']['max']})")

    m, state0, ctrl = mj["model"], mj["state"], mj["ctrl"]
    if "solver" in mj:
        row["mujoco_solver"] = mj["solver"]
    d_roll, d_loop = mujoco.MjData(m), mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS

    def gradyn_forward():
        gradyn.rollout(model, q, v, taus, DT)

    def mujoco_forward():
        mj_rollout.rollout(m, d_roll, state0[None], ctrl[None], nstep=T)

    def mujoco_python_loop():
        mujoco.mj_setState(m, d_loop, state0, spec)
        d_loop.ctrl[:] = ctrl[0]
        for _ in range(T):
            mujoco.mj_step(m, d_loop)

    message = gradient_unavailable(gradyn, model, q, v, tau)
    fns = [gradyn_forward, mujoco_forward, mujoco_python_loop]
    if message is None:
        qs_bar, vs_bar = loss_adjoint(qs, vs)

        def gradyn_backward():
            gradyn.rollout_vjp(model, q, v, taus, DT, qs_bar, vs_bar, qs=qs, vs=vs)

        def gradyn_backward_rerun():
            gradyn.rollout_vjp(model, q, v, taus, DT, qs_bar, vs_bar)

        fns += [gradyn_backward, gradyn_backward_rerun]
    cpu, wall = median_times(fns, args.repeats)
    row["gradyn_step_us"] = cpu[0] / T * 1e6
    row["mujoco_rollout_step_us"] = cpu[1] / T * 1e6
    row["mujoco_python_loop_step_us"] = cpu[2] / T * 1e6
    row["mujoco_step_us"] = min(cpu[1], cpu[2]) / T * 1e6  # MuJoCo's faster way
    row["step_ratio"] = cpu[0] / min(cpu[1], cpu[2])
    row["wall_s"] = dict(zip(["gradyn_rollout", "mujoco_rollout", "mujoco_python_loop", "gradyn_rollout_vjp_states",
                              "gradyn_rollout_vjp_rerun"], wall))
    log(f"  forward step ({label}): gradyn {row['gradyn_step_us']:.2f} us, MuJoCo {row['mujoco_rollout_step_us']:.2f} us "
        f"(mujoco.rollout) / {row['mujoco_python_loop_step_us']:.2f} us (Python loop of mj_step): "
        f"gradyn / MuJoCo's faster = {row['step_ratio']:.2f}")

    # MuJoCo's finite-difference Jacobian at its standing state, with the held controls.
    d_fd = mujoco.MjData(m)
    mujoco.mj_setState(m, d_fd, state0, spec)
    d_fd.ctrl[:] = ctrl[0]
    mujoco.mj_forward(m, d_fd)
    jac_fns = [lambda: mujoco_transition(mujoco, m, d_fd, False), lambda: mujoco_transition(mujoco, m, d_fd, True)]
    if message is not None:
        blocks = [in_blocks(fn) for fn in jac_fns]
        cpu, _ = median_times([block for block, _ in blocks], args.repeats * 3)
        cpu = [c / calls for c, (_, calls) in zip(cpu, blocks)]
        row["jacobian_us"] = {"gradyn": None, "mujoco_fd_forward": cpu[0] * 1e6, "mujoco_fd_centered": cpu[1] * 1e6}
        row["gradients"] = f"n/a (gradients through {label} contact not available: {message})"
        log(f"  step Jacobian ({label}): MuJoCo mjd_transitionFD {cpu[0] * 1e6:.0f} us forward / "
            f"{cpu[1] * 1e6:.0f} us centred; gradyn {row['gradients']}")
        return row
    row["gradients"] = "ok"
    row["backward_over_forward"] = cpu[3] / cpu[0]
    row["backward_over_forward_rerun"] = cpu[4] / cpu[0]
    log(f"  rollout_vjp / rollout ({label}): {row['backward_over_forward']:.2f} given the states, "
        f"{row['backward_over_forward_rerun']:.2f} re-running the forward pass")

    mem = measure_memory(model, contact, settings, args.settle, args.memory_steps, log)
    states, controls = (model.nq + model.nv) * 8, model.nv * 8
    # Given qs and vs, the backward pass reads the caller's states and controls and adds the measured
    # growth; re-running the forward pass, its own copies of the states are part of the measured growth.
    for mode, read in (("states", states + controls), ("rerun", controls)):
        x = mem[mode]
        x["read_bytes_per_step"] = read
        x["extra_bytes_per_step"] = max(0.0, x["measured_bytes_per_step"] - x["taus_bar_bytes_per_step"])
        x["total_bytes_per_step"] = read + x["extra_bytes_per_step"]
    row["memory"] = mem

    jacobian = step_jacobian_analytic
    row["jacobian_method"] = "gradyn.step_jacobian (analytical, tangent coordinates, 36 x 54)"
    J = jacobian(gradyn, model, q, v, tau)
    fd_error = check_jacobian_against_fd(gradyn, model, q, v, tau, J)
    row["jacobian_fd_check"] = fd_error
    if contact is None:
        require(fd_error < 1e-6, f"gradyn's step Jacobian (no contact) differs from central differences of "
                                 f"gradyn.step by {fd_error:.2e}")
        _, B = mujoco_transition(mujoco, m, d_fd, True)
        err = check_jacobian_against_mujoco(model, mj["maps"], J, B)
        require(err < 1e-5, f"d v_next / d tau differs between gradyn and MuJoCo (no contact) by {err:.2e}")
        row["jacobian_mujoco_check"] = err
    # Timed as each library returns its Jacobian (gradyn: the pair A, B; MuJoCo: A, B into arrays
    # allocated per call); the hstack above is for the checks only.
    blocks = [in_blocks(fn) for fn in [lambda: gradyn.step_jacobian(model, q, v, tau, DT)] + jac_fns
              + [lambda: gradyn.step(model, q, v, tau, DT)]]
    cpu, _ = median_times([block for block, _ in blocks], args.repeats * 3)
    cpu = [c / calls for c, (_, calls) in zip(cpu, blocks)]
    row["jacobian_us"] = {"gradyn": cpu[0] * 1e6, "mujoco_fd_forward": cpu[1] * 1e6, "mujoco_fd_centered": cpu[2] * 1e6,
                          "gradyn_one_step_call": cpu[3] * 1e6}
    row["jacobian_speedup"] = {"forward": cpu[1] / cpu[0], "centered": cpu[2] / cpu[0]}
    log(f"  step Jacobian ({label}): gradyn {cpu[0] * 1e6:.0f} us by {row['jacobian_method']} (one gradyn.step "
        f"call from Python: {cpu[3] * 1e6:.1f} us; FD check {fd_error:.1e}), MuJoCo mjd_transitionFD "
        f"{cpu[1] * 1e6:.0f} us forward / {cpu[2] * 1e6:.0f} us centred: gradyn is {cpu[1] / cpu[0]:.2f}x / "
        f"{cpu[2] / cpu[0]:.2f}x faster")
    return row


def mujoco_side(mujoco, contact_on, args, log):
    """MuJoCo's standing state (or, without contact, the stance in flight), with the stance springs."""
    model = scene.load_gradyn()
    m = scene.load_mujoco(timestep=DT, stance_springs=True)
    if not contact_on:
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    maps = scene.StateMap(model, m)
    if contact_on:
        d = settle_mujoco(mujoco, m, maps, args.settle)
    else:
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = maps.to_mujoco(scene.stance(model), np.zeros(model.nv))
        mujoco.mj_forward(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.zeros(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state, spec)
    ctrl = np.zeros((args.steps, m.nu))
    if contact_on:
        # The timed trajectory must keep standing on four toes.
        from mujoco import rollout as mj_rollout

        states, _ = mj_rollout.rollout(m, mujoco.MjData(m), state[None], ctrl[None], nstep=args.steps)
        probe = mujoco.MjData(m)
        counts = []
        for k in range(0, args.steps, max(1, args.steps // 20)):
            mujoco.mj_setState(m, probe, states[0, k], spec)
            mujoco.mj_forward(m, probe)
            counts.append(int(probe.ncon))
        require(min(counts) == 4, f"MuJoCo: the robot does not stand on 4 toes through the timed trajectory ({counts})")
        # Its constraint solver's iterations per step along the same trajectory (warm-started, as timed).
        probe = mujoco.MjData(m)
        mujoco.mj_setState(m, probe, state, spec)
        iterations = []
        for _ in range(args.steps):
            mujoco.mj_step(m, probe)
            iterations.append(int(probe.solver_niter[0]))
        solver = {0: "PGS", 1: "CG", 2: "Newton"}.get(int(m.opt.solver), str(m.opt.solver))
        log(f"  MuJoCo: {solver} solver, {np.mean(iterations):.2f} iterations per step")
        log(f"  MuJoCo: stands at {d.qpos[2]:.4f} m, contacts {min(counts)}-{max(counts)} over {args.steps} steps")
    out = {"model": m, "data": d, "state": state, "ctrl": ctrl, "maps": maps}
    if contact_on:
        out["solver"] = {"name": solver, "iterations_per_step": float(np.mean(iterations))}
    return out


def gradyn_build(gradyn):
    """Which gradyn was measured: the checkout's commit and the imported package."""
    import subprocess

    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip() or "?"
    package = pathlib.Path(gradyn.__file__).resolve().parent
    if package.is_relative_to(ROOT):
        package = package.relative_to(ROOT)
    return f"gradyn imported from {package}, checkout at {commit}"


def write_markdown(path, info, rows, free_error, args, available, missing, mujoco_version):
    L = ["# gradyn contact models vs MuJoCo: laikago standing on four toes", "",
         "Generated by `.venv/bin/python bench/compare_mujoco_contact.py` (one run; CPU times, medians of "
         f"{args.repeats} interleaved repeats). Machine: {info['cpu']}, {info['cores']} cores, load average at "
         f"start {', '.join(f'{x:.1f}' for x in info['load_average_at_start'])}; MuJoCo {mujoco_version}; "
         f"{info['gradyn']}.", "",
         f"Scene: `models/laikago/laikago_toes_zup.urdf` (floating base, nq = 19, nv = 18, four toe spheres of "
         f"radius 3 cm) on a plane, dt = 1 ms, semi-implicit Euler in both; MuJoCo's model is generated from the "
         f"same URDF (`examples/laikago_contact/laikago_scene.py`). The leg joints carry a PD law toward the "
         f"stance as passive springs and dampers (150 N m/rad, 5 N m s/rad) in both, so the robot stands with "
         f"zero torques. Check before timing: gradyn's forward dynamics equal MuJoCo's qacc to "
         f"{free_error:.1e} (relative, 20 random states, contacts off). Each simulator starts from its own "
         f"equilibrium (the stance run for {args.settle:g} s); every timed trajectory keeps 4 toe contacts. Row 'none': no contact in "
         f"either (the stance in free fall); it also checks gradyn's step Jacobian against finite differences "
         f"and MuJoCo's d v_next / d tau.", ""]
    for name, msg in missing.items():
        L.append(f"Contact model '{name}' is not in this gradyn: {msg}")
    if missing:
        L.append("")
    L += [f"## Forward step (T = {args.steps} steps in one call each)", "",
          "| gradyn contact | gradyn us/step (gradyn.rollout) | MuJoCo us/step (mujoco.rollout) "
          "| MuJoCo us/step (Python loop of mj_step) | gradyn / MuJoCo's faster (goal <= 1) |",
          "|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {ROW_TITLES.get(r['contact'], r['contact'])} | {r['gradyn_step_us']:.2f} | {r['mujoco_rollout_step_us']:.2f} "
                 f"| {r['mujoco_python_loop_step_us']:.2f} | {r['step_ratio']:.2f} |")
    L += ["", "MuJoCo's counterpart of row 'none' runs with contacts disabled; of the other rows, with its "
          "default soft contacts."]
    if any(r["contact"] == "ipm-warm" for r in rows):
        L += ["", "Row 'ipm-warm' is opt-in, not gradyn's default: the 'ipm' model with "
              "`with_contact(ipm_warm_start=True)`, each interior-point solve started from the previous step's "
              "solution when the contacts are the same. A step then depends on the step before, not on (q, v, tau) "
              "alone (repeated evaluations differ by about ipm_tolerance in v, gradients by about 1e-9 relative). "
              "Its gradient columns are measured as for 'ipm', on that model (rollout_vjp, step_jacobian and the "
              "single gradyn.step call also start from the last solve, here the same state's)."]
    ipm = next((r for r in rows if "ipm_newton_iterations" in r and "mujoco_solver" in r), None)
    if ipm is not None:
        it, mj_solver = ipm["ipm_newton_iterations"], ipm["mujoco_solver"]
        L += ["", f"Solver iterations per step along the timed trajectories: MuJoCo's {mj_solver['name']} solver "
              f"{mj_solver['iterations_per_step']:.2f} (mean of `solver_niter`; it starts from the previous step's "
              f"accelerations); gradyn's 'ipm' {it['mean']:.2f} Newton iterations (range {it['min']}-{it['max']}, "
              f"{it['states']} states; each solves the Newton system of the 24-row LCP twice, and factors it "
              "except the first, which reuses the factorisation of the cold start), "
              "counted as the smallest `ipm_iterations` at which `gradyn.step(..., return_status=True)` does not "
              "report `Status.SOLVER_NOT_CONVERGED`."]
    L += ["",
          "## Gradients", "",
          "| gradyn contact | rollout_vjp / rollout, given qs, vs (goal <= 4) | same, re-running the forward pass "
          "| backward memory, B/step (goal <= 512) | step Jacobian: gradyn us | MuJoCo mjd_transitionFD us "
          "(forward / centred) | gradyn speed-up (goal >= 10) |",
          "|---|---|---|---|---|---|---|"]
    for r in rows:
        j = r["jacobian_us"]
        mujoco_fd = f"{j['mujoco_fd_forward']:.0f} / {j['mujoco_fd_centered']:.0f}"
        if r["gradients"] != "ok":
            L.append(f"| {ROW_TITLES.get(r['contact'], r['contact'])} | {r['gradients']} | | | | {mujoco_fd} | |")
            continue
        mem, rerun = r["memory"]["states"], r["memory"]["rerun"]
        L.append(f"| {ROW_TITLES.get(r['contact'], r['contact'])} | {r['backward_over_forward']:.2f} | {r['backward_over_forward_rerun']:.2f} "
                 f"| {mem['total_bytes_per_step']:.0f} ({mem['read_bytes_per_step']} read + "
                 f"{mem['extra_bytes_per_step']:.0f} measured); re-running the forward pass "
                 f"{rerun['total_bytes_per_step']:.0f} | {j['gradyn']:.0f} | {mujoco_fd} "
                 f"| {r['jacobian_speedup']['forward']:.2f} / {r['jacobian_speedup']['centered']:.2f} |")
    L += ["", "Memory: given qs and vs, the backward pass reads per step the state (q, v) that the forward pass "
          "returned and the control u, (nq + 2 nv) x 8 = 440 bytes ('read'); what it adds is measured: a fresh "
          "process records the growth of its peak RSS (VmHWM, reset through /proc/self/clear_refs just before "
          f"the call) across one `rollout_vjp(..., qs=qs, vs=vs)` call at {args.memory_steps[1]} and at "
          f"{args.memory_steps[0]} steps; the difference over the difference in steps, less the array it "
          "returns (taus_bar, nv x 8 bytes per step), is the 'measured' part. Page-granular: a few bytes per "
          "step either way are noise. The .json also has the default mode (no qs, vs: rollout_vjp re-runs the "
          "forward pass and keeps every state itself; its total is the controls plus the measured growth).", "",
          "Step Jacobian: Python calls timed in blocks of back-to-back calls of about 2 ms each, the "
          "blocks of the two sides interleaved; the time per call is reported. gradyn: "
          + "; ".join(f"{r['contact']}: {r['jacobian_method']}" for r in rows if "jacobian_method" in r)
          + " (step_jacobian: d(dq_next, v_next)/d(dq, v, tau) in the tangent space, one pass of analytical "
          "derivatives; PGS and ipm impulses through the solver's conditions at its solution). MuJoCo's "
          "`mjd_transitionFD` (eps 1e-6) gives A (36 x 36) and B (36 x 12) in its tangent coordinates from "
          "2 nv + nu = 48 perturbed steps (96 centred), at MuJoCo's own standing state. Without contact, gradyn's d v_next / d tau on the "
          "legs matched MuJoCo's B to "
          + ", ".join(f"{r['jacobian_mujoco_check']:.1e}" for r in rows if "jacobian_mujoco_check" in r)
          + " (relative). gradyn's Jacobian times 3 random directions against central differences of "
          "gradyn.step (relative; required below 1e-6 without contact, reported with it: PGS is solved to a "
          "tolerance and is piecewise smooth): "
          + ", ".join(f"{r['contact']} {r['jacobian_fd_check']:.1e}" for r in rows if "jacobian_fd_check" in r) + "."]
    pathlib.Path(path).write_text("\n".join(L) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000, help="T, the horizon of the timed rollouts")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds of PD standing before timing")
    parser.add_argument("--memory-steps", default="5000,50000", help="short,long horizons of the memory measurement")
    parser.add_argument("--models", default="none,penalty,pgs,ipm,ipm-warm",
                        help="rows, comma-separated, among " + ", ".join(ROWS))
    parser.add_argument("--out", default=str(HERE / "results" / "mujoco_contact"), help="path without extension")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child_memory(json.loads(args.child))))
        return 0
    args.memory_steps = [int(x) for x in args.memory_steps.split(",")]

    import gradyn
    import mujoco

    def log(msg):
        print(msg, flush=True)

    try:
        info = machine_info()
        info["gradyn"] = gradyn_build(gradyn)
        free_error = scene.check_free_dynamics(scene.with_stance_springs(scene.load_gradyn()), stance_springs=True)
        require(free_error <= FREE_DYNAMICS_TOLERANCE,
                f"gradyn's forward dynamics differ from MuJoCo's qacc by {free_error:.2e} (relative) on the "
                f"generated MJCF: the two models are not the same robot")
        log(f"free dynamics: gradyn vs MuJoCo, largest relative difference {free_error:.1e} (20 random states)")
        available, missing = scene.contact_models_available()
        sides = {}
        rows = []
        for name in [x for x in args.models.split(",") if x]:
            require(name in ROWS, f"unknown row {name!r} in --models (known: {', '.join(ROWS)})")
            contact, settings = ROWS[name]
            if contact is not None and contact not in available:
                log(f"{name}: skipped, this gradyn does not accept it ({missing.get(contact, 'unknown')})")
                missing.setdefault(name, missing.get(contact, "not a known contact model"))
                continue
            if settings:
                try:
                    scene.load_gradyn(contact=contact, **settings)
                except TypeError as e:  # an older gradyn without the setting
                    log(f"{name}: skipped, this gradyn does not accept {settings} ({e})")
                    missing[name] = str(e)
                    continue
            key = contact is not None
            if key not in sides:
                sides[key] = mujoco_side(mujoco, key, args, log)
            log(f"[{name}]")
            rows.append(bench_case(gradyn, mujoco, name, args, sides[key], log))
        missing = {k: v for k, v in missing.items() if k in args.models.split(",")}
    except Abort as e:
        print(f"MUJOCO CONTACT COMPARISON ABORTED: {e}", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"machine": info, "mujoco": mujoco.__version__, "dt": DT, "steps": args.steps,
                   "repeats": args.repeats, "settle_s": args.settle, "memory_steps": args.memory_steps,
                   "free_dynamics_error": free_error, "missing_contact_models": missing, "rows": rows}, f, indent=1)
    write_markdown(args.out + ".md", info, rows, free_error, args, available, missing, mujoco.__version__)
    log(f"wrote {args.out}.md and {args.out}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
