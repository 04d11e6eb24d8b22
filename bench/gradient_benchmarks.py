"""Gradient benchmarks of gradyn's hand-written adjoints, modelled on Qiao et al. 2021,
"Efficient Differentiable Simulation of Articulated Bodies", Tables 1-3: one laikago robot
(floating base, no contact), horizons of 50 ... 5,000 semi-implicit Euler steps.

    .venv/bin/python bench/gradient_benchmarks.py

measures, on this machine, in one run:

 (a) gradyn's backward time (rollout_vjp) over its forward time (rollout), per horizon;
 (b) the memory of gradyn's backward pass per step: the bytes of checkpoint storage rollout_vjp
     keeps (computed from its algorithm), and the peak-RSS growth of a fresh process measured
     around the rollout_vjp call (5,000 vs 50 steps), for the default (every state kept) and for
     max_snapshots (binomial checkpointing);
 (c) gradyn vs a PyTorch tape (the same algorithm written in torch, bench/tape_baseline): time
     and peak memory of loss + gradient, each torch case in its own fresh process;
 (d) gradyn's full gradient vs central finite differences for 10, 100 and 1,000 inputs.

Results: bench/results/gradients.md and bench/results/gradients.json. Before anything is
reported, the run checks that both sides compute the same thing: the tape's states must match
gradyn.rollout to 1e-9 and its gradients gradyn's to 1e-7 relative at every horizon, and the finite
differences must agree with gradyn's gradient; a mismatch aborts with GRADIENT BENCHMARK ABORTED.
All numbers are measurements of this one run (no numbers are carried over from elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tape_baseline"))
from scenario import DT, controls, initial_state, load_laikago  # noqa: E402

RUNNING_WEIGHT = 1e-2  # loss = |x_T|^2 + RUNNING_WEIGHT * sum_{t=1..T} |x_t|^2, x = (q, v)


class Abort(RuntimeError):
    pass


def require(condition, message):
    if not condition:
        raise Abort(message)


# --- the loss and its adjoint ------------------------------------------------------------------


def loss_of(qs, vs):
    return float(np.sum(qs[-1] ** 2) + np.sum(vs[-1] ** 2)
                 + RUNNING_WEIGHT * (np.sum(qs[1:] ** 2) + np.sum(vs[1:] ** 2)))


def loss_adjoint(qs, vs):
    qs_bar, vs_bar = 2 * RUNNING_WEIGHT * qs, 2 * RUNNING_WEIGHT * vs
    qs_bar[0] = 0
    vs_bar[0] = 0
    qs_bar[-1] += 2 * qs[-1]
    vs_bar[-1] += 2 * vs[-1]
    return qs_bar, vs_bar


# --- memory ------------------------------------------------------------------------------------


def reset_peak_rss():
    """Resets the kernel's peak-RSS mark of this process (VmHWM; Linux >= 4.0), so that
    peak_rss_kib() afterwards is the peak since now."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def current_rss_kib():
    return _status_kib("VmRSS")


def peak_rss_kib():
    """VmHWM, the peak RSS of this process image. Not getrusage's ru_maxrss: that one also keeps
    the peak of the process before exec, i.e. of the forked copy of the parent (a parent that
    imported torch would make every child look 600 MB big), and clear_refs does not reset it."""
    return _status_kib("VmHWM")


# --- child processes: one measurement each, in a fresh interpreter -----------------------------


def child_gradyn(spec):
    """Peak-RSS growth of gradyn's gradient (rollout + loss adjoint + rollout_vjp), and of the
    rollout_vjp call alone, at horizon T."""
    import gradyn

    model = load_laikago()
    q0, v0 = initial_state(model)
    taus = controls(model, spec["steps"])
    # Warm up once on a short horizon so that lazily allocated workspaces do not count.
    qs, vs = gradyn.rollout(model, q0, v0, taus[:2], DT)
    gradyn.rollout_vjp(model, q0, v0, taus[:2], DT, *loss_adjoint(qs, vs), max_snapshots=spec["max_snapshots"])
    del qs, vs
    out = {"baseline_rss_kib": current_rss_kib()}
    hwm_start = peak_rss_kib()  # the process's peak so far (imports, warm-up)

    reset_peak_rss()
    rss0 = peak_rss_kib()  # right after the reset: the RSS at the reset
    qs, vs = gradyn.rollout(model, q0, v0, taus, DT)
    qs_bar, vs_bar = loss_adjoint(qs, vs)
    forward_peak = peak_rss_kib()
    reset_peak_rss()
    rss1 = peak_rss_kib()
    grads = gradyn.rollout_vjp(model, q0, v0, taus, DT, qs_bar, vs_bar, max_snapshots=spec["max_snapshots"])
    vjp_peak = peak_rss_kib()
    out["forward_and_adjoint_arrays_kib"] = rss1 - rss0
    out["vjp_peak_delta_kib"] = vjp_peak - rss1
    out["total_peak_delta_kib"] = max(forward_peak, vjp_peak) - rss0
    out["taus_bar_bytes"] = int(grads[2].nbytes)
    out["process_peak_rss_kib"] = max(hwm_start, forward_peak, vjp_peak)  # whole process, imports included
    return out


def child_torch(spec):
    """Time and peak-RSS growth of loss + gradient through the PyTorch tape at horizon T; saves
    the states and gradients for the cross-check."""
    import torch

    from torch_sim import TorchModel

    torch.set_num_threads(1)  # a serial workload; more threads only add contention (see README)
    model = load_laikago()
    q0, v0 = initial_state(model)
    taus = controls(model, spec["steps"])
    tm = TorchModel(model, requires_grad=True)
    tq0, tv0, ttaus = (torch.tensor(x, requires_grad=True) for x in (q0, v0, taus))
    # Warm-up: two steps and their backward pass, so that torch's lazy initialisation does not count.
    wq, wv = tm.rollout(tq0, tv0, ttaus[:2], DT)
    (wq[-1].sum() + wv[-1].sum()).backward()
    for x in [tq0, tv0, ttaus] + tm.parameters():
        x.grad = None
    del wq, wv

    hwm_start = peak_rss_kib()
    reset_peak_rss()
    rss0 = peak_rss_kib()
    c0, t0 = time.process_time(), time.perf_counter()
    tq, tv = tm.rollout(tq0, tv0, ttaus, DT)
    Q, V = torch.stack(tq), torch.stack(tv)
    loss = (Q[-1] ** 2).sum() + (V[-1] ** 2).sum() + RUNNING_WEIGHT * ((Q[1:] ** 2).sum() + (V[1:] ** 2).sum())
    c1, t1 = time.process_time(), time.perf_counter()
    loss.backward()
    c2, t2 = time.process_time(), time.perf_counter()
    peak = peak_rss_kib()
    np.savez(spec["out"], qs=Q.detach().numpy(), vs=V.detach().numpy(), q0_bar=tq0.grad.numpy(),
             v0_bar=tv0.grad.numpy(), taus_bar=ttaus.grad.numpy(),
             mass_bar=np.array([x.grad.item() for x in tm.mass]),
             com_bar=np.stack([x.grad.numpy() for x in tm.com]),
             damping_bar=tm.damping.grad.numpy(), armature_bar=tm.armature.grad.numpy(),
             gravity_bar=tm.gravity.grad.numpy())
    return {"forward_s": c1 - c0, "backward_s": c2 - c1, "wall_s": {"forward": t1 - t0, "backward": t2 - t1},
            "peak_delta_kib": peak - rss0,
            "process_peak_rss_kib": max(hwm_start, peak), "loss": float(loss)}


def run_child(kind, spec):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Abort(f"child {kind} {spec} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- timing ------------------------------------------------------------------------------------


def commit_name():
    """The commit measured, as `git describe --always --dirty`, marked when src/, include/ or python/
    hold uncommitted changes (results files name the clean commit they measured)."""
    root = os.path.dirname(HERE)
    git = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                         text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", root, "status", "--short", "--", "src", "include", "python"],
                           capture_output=True, text=True).stdout.strip()
    return (git or "?") + (" (uncommitted changes in src/, include/ or python/)" if dirty else "")


def copy_cuda_library(folder) -> None:
    """The installed gradyn's libgradyn_cuda.so into folder (what a GPU machine without a gradyn build
    loads gradyn.cuda with), stripped of its symbol tables when `strip` is there (a smaller file to
    send); exits saying how to get one when this gradyn has no CUDA backend."""
    import pathlib
    import shutil

    import gradyn.cuda

    lib = gradyn.cuda.library_path()
    if lib is None:
        sys.exit("this gradyn has no CUDA backend: install it with nvcc present (bash scripts/setup.sh)")
    target = pathlib.Path(folder) / "libgradyn_cuda.so"
    shutil.copy(lib, target)
    if shutil.which("strip"):
        subprocess.run(["strip", "--strip-unneeded", str(target)], check=True)


def load_mjcf_text(xml: str, contact: str | None = None):
    """A gradyn model of MJCF text (the comparison scripts hand MuJoCo and gradyn the same text);
    loader warnings (elements gradyn does not simulate, inert in these scenes) are silenced."""
    import warnings

    import gradyn

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scene.xml")
        with open(path, "w") as f:
            f.write(xml)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gradyn.load(path, contact=contact)


def median_times(fns, repeats):
    """Median CPU time (time.process_time) and median wall time of each function, the calls
    interleaved (f1, f2, ..., f1, f2, ...) so that load changes hit all of them alike. CPU time is
    what the tables report: on a shared, oversubscribed machine wall times of millisecond calls
    mostly measure the scheduler (the backward/forward ratio swung between 4x and 11x in wall
    time, stayed within 4.4x-4.9x in CPU time)."""
    cpu = [[] for _ in fns]
    wall = [[] for _ in fns]
    for _ in range(repeats):
        for fn, c, w in zip(fns, cpu, wall):
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            w.append(time.perf_counter() - w0)
            c.append(time.process_time() - c0)
    return [float(np.median(x)) for x in cpu], [float(np.median(x)) for x in wall]


def median_time(fn, repeats):
    return median_times([fn], repeats)[0][0]


def repeats_for(steps):
    return int(min(100, max(7, 50000 // steps)))


# --- the benchmark -----------------------------------------------------------------------------


def check_api(gradyn):
    missing = [name for name in ("rollout_vjp",) if not hasattr(gradyn, name)]
    missing += [f"Model.{name}" for name in ("params", "param_names", "with_params", "joint_placements")
                if not hasattr(gradyn.Model, name)]
    if missing:
        raise Abort("gradyn lacks " + ", ".join(missing) + ": build the adjoint bindings "
                    "(bash scripts/setup.sh) before running the gradient benchmarks")


def flat_index(names, wanted):
    index = {n: k for k, n in enumerate(names)}
    return index.get(wanted)


def compare_gradients(model, horizon, gradyn_grads, torch_file):
    """Largest relative differences between gradyn's and the tape's gradients; aborts if any
    exceeds 1e-7 (they are the same computation in two implementations)."""
    q0_bar, v0_bar, taus_bar, p_bar = gradyn_grads
    ref = np.load(torch_file)
    names = list(model.param_names)
    errors = {}

    def rel(a, b):
        return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))

    errors["taus"] = rel(taus_bar, ref["taus_bar"])
    errors["q0"] = rel(q0_bar, ref["q0_bar"])
    errors["v0"] = rel(v0_bar, ref["v0_bar"])
    # Parameters whose flat entry is one Model field exactly: masses, centres of mass, damping,
    # armature, gravity (placements are rpy there, matrices in the tape; not compared).
    ours, theirs = [], []
    for b, body in enumerate(model.body_names):
        k = flat_index(names, f"{body}.mass")
        require(k is not None, f"no parameter named '{body}.mass' in model.param_names")
        ours.append(p_bar[k])
        theirs.append(ref["mass_bar"][b])
        for c, axis in enumerate("xyz"):
            ours.append(p_bar[flat_index(names, f"{body}.com.{axis}")])
            theirs.append(ref["com_bar"][b][c])
    for v, joint_dofs in enumerate(dof_names(model)):
        for field, key in (("damping", "damping_bar"), ("armature", "armature_bar")):
            k = flat_index(names, f"{joint_dofs}".replace("{field}", field))
            require(k is not None, f"no parameter named {joint_dofs.replace('{field}', field)!r}")
            ours.append(p_bar[k])
            theirs.append(ref[key][v])
    for c, axis in enumerate("xyz"):
        ours.append(p_bar[flat_index(names, f"gravity.{axis}")])
        theirs.append(ref["gravity_bar"][c])
    errors["params (mass, com, damping, armature, gravity)"] = rel(np.array(ours), np.array(theirs))
    worst = max(errors.values())
    require(worst <= 1e-7, f"T={horizon}: gradyn and the PyTorch tape disagree on the gradient: {errors}")
    return errors


def dof_names(model):
    """Per DoF, the name template of its per-DoF parameters ('{field}' stands for damping ...)."""
    out = []
    for joint in model.joint_names:
        n = model.joint_nv(joint)
        for k in range(n):
            out.append(f"{joint}.{{field}}" + (f"[{k}]" if n > 1 else ""))
    return out


def bench_horizons(gradyn, model, horizons, snapshot_options, with_torch, log):
    q0, v0 = initial_state(model)
    rows = []
    for T in horizons:
        taus = controls(model, T)
        qs, vs = gradyn.rollout(model, q0, v0, taus, DT)
        qs_bar, vs_bar = loss_adjoint(qs, vs)
        reps = repeats_for(T)
        row = {"steps": T, "repeats": reps, "backward": {}}
        grads = None
        forward_times = []
        for k in snapshot_options(T):
            def forward():
                return gradyn.rollout(model, q0, v0, taus, DT)

            def backward():
                return gradyn.rollout_vjp(model, q0, v0, taus, DT, qs_bar, vs_bar, max_snapshots=k)

            def gradient():  # the states the loss needs, the loss adjoint, then the backward pass
                return gradyn.rollout_vjp(model, q0, v0, taus, DT, *loss_adjoint(*forward()), max_snapshots=k)

            def backward_from_states():  # the caller's forward trajectory as checkpoints: no re-run
                return gradyn.rollout_vjp(model, q0, v0, taus, DT, qs_bar, vs_bar, qs=qs, vs=vs)

            timed = [forward, backward, gradient] + ([backward_from_states] if k == 0 else [])
            times, wall = median_times(timed, reps)
            forward_s, backward_s, gradient_s = times[:3]
            forward_times.append(forward_s)
            mem = run_child("gradyn", {"steps": T, "max_snapshots": k})
            kept = T if k == 0 else min(k, T)  # states rollout_vjp keeps (see rollout_vjp.cpp)
            g = gradyn.rollout_vjp(model, q0, v0, taus, DT, qs_bar, vs_bar, max_snapshots=k)
            if grads is None:
                grads = g
            else:  # binomial checkpointing recomputes bit-identical steps: identical gradients
                for a, b in zip(grads, g):
                    require(np.array_equal(a, b), f"T={T}: max_snapshots={k} changes the gradient")
            row["backward"][str(k)] = {
                "forward_s": forward_s, "backward_s": backward_s, "gradient_s": gradient_s,
                "backward_over_forward": backward_s / forward_s,
                **({"backward_from_states_s": times[3], "backward_from_states_over_forward": times[3] / forward_s}
                   if k == 0 else {}),
                "wall_s": {"forward": wall[0], "backward": wall[1], "gradient": wall[2]},
                "checkpoint_bytes": kept * (model.nq + model.nv) * 8, "memory": mem}
            log(f"T={T:5d} max_snapshots={k:3d}: forward {forward_s * 1e3:8.3f} ms, backward "
                f"{backward_s * 1e3:8.3f} ms ({backward_s / forward_s:5.2f}x), vjp peak RSS +{mem['vjp_peak_delta_kib']} KiB")
        row["gradyn_forward_s"] = float(np.median(forward_times))
        if with_torch:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "torch.npz")
                res = run_child("torch", {"steps": T, "out": out})
                ref = np.load(out)
                state_err = max(float(np.abs(ref["qs"] - qs).max()), float(np.abs(ref["vs"] - vs).max()))
                require(state_err <= 1e-9,
                        f"T={T}: the PyTorch tape's states differ from gradyn.rollout by {state_err:.3e} > 1e-9")
                require(abs(res["loss"] - loss_of(qs, vs)) <= 1e-9 * max(1.0, abs(res["loss"])),
                        f"T={T}: losses differ: tape {res['loss']!r}, gradyn {loss_of(qs, vs)!r}")
                grad_err = compare_gradients(model, T, grads, out)
            default = row["backward"]["0"]
            res["state_max_abs_diff"] = state_err
            res["gradient_max_rel_diff"] = grad_err
            res["time_ratio_torch_over_gradyn"] = (res["forward_s"] + res["backward_s"]) / default["gradient_s"]
            res["memory_ratio_torch_over_gradyn"] = (
                res["peak_delta_kib"] / default["memory"]["total_peak_delta_kib"]
                if default["memory"]["total_peak_delta_kib"] > 0 else None)
            row["torch"] = res
            log(f"T={T:5d} torch tape: forward {res['forward_s']:.3f} s, backward {res['backward_s']:.3f} s, "
                f"peak RSS +{res['peak_delta_kib']} KiB; states agree to {state_err:.1e}, gradients to "
                f"{max(grad_err.values()):.1e}")
        rows.append(row)
    return rows


def bench_finite_differences(gradyn, model, steps, sizes, log):
    """gradyn's gradient (1 rollout + 1 rollout_vjp: all inputs at once) vs central differences
    (2 rollouts per input) over the first n inputs of [model parameters (spread out), controls]."""
    q0, v0 = initial_state(model)
    taus = controls(model, steps)
    p = np.asarray(model.params, dtype=float)
    names = list(model.param_names)

    def gradient():
        qs, vs = gradyn.rollout(model, q0, v0, taus, DT)
        return gradyn.rollout_vjp(model, q0, v0, taus, DT, *loss_adjoint(qs, vs))

    _, _, taus_bar, p_bar = gradient()
    g_all = np.concatenate([p_bar, taus_bar.ravel()])
    reps = 20
    t_gradyn = median_time(gradient, reps)

    results = []
    for n in sizes:
        n_params = min(n, p.size)
        param_idx = np.unique(np.linspace(0, p.size - 1, n_params).round().astype(int)) if n < p.size \
            else np.arange(p.size)
        require(param_idx.size == n_params, "parameter subset has repeated entries")
        ctrl_idx = np.arange(n - n_params)
        require(ctrl_idx.size <= taus.size, f"FD: {n} inputs exceed {p.size} parameters + {taus.size} controls")

        def fd():
            g = np.empty(n)
            for j, k in enumerate(param_idx):
                h = 1e-6 * max(1.0, abs(p[k]))
                plus, minus = p.copy(), p.copy()
                plus[k] += h
                minus[k] -= h
                lp = loss_of(*gradyn.rollout(model.with_params(plus), q0, v0, taus, DT))
                lm = loss_of(*gradyn.rollout(model.with_params(minus), q0, v0, taus, DT))
                g[j] = (lp - lm) / (2 * h)
            flat = taus.ravel()
            for j, k in enumerate(ctrl_idx):
                h = 1e-6 * max(1.0, abs(flat[k]))
                plus, minus = flat.copy(), flat.copy()
                plus[k] += h
                minus[k] -= h
                lp = loss_of(*gradyn.rollout(model, q0, v0, plus.reshape(taus.shape), DT))
                lm = loss_of(*gradyn.rollout(model, q0, v0, minus.reshape(taus.shape), DT))
                g[n_params + j] = (lp - lm) / (2 * h)
            return g

        c0, t0 = time.process_time(), time.perf_counter()
        g_fd = fd()
        t_fd, t_fd_wall = time.process_time() - c0, time.perf_counter() - t0
        ours = np.concatenate([g_all[param_idx], g_all[p.size + ctrl_idx]])
        err = float(np.abs(ours - g_fd).max() / max(1e-12, np.abs(g_fd).max()))
        worst = int(np.argmax(np.abs(ours - g_fd)))
        worst_name = names[param_idx[worst]] if worst < n_params else f"taus.flat[{ctrl_idx[worst - n_params]}]"
        require(err <= 1e-5, f"FD n={n}: gradyn's gradient differs from central differences by {err:.2e} "
                             f"(relative to the largest entry; worst: {worst_name})")
        results.append({"inputs": n, "model_parameters": int(n_params), "controls": int(ctrl_idx.size),
                        "fd_rollouts": 2 * n, "fd_s": t_fd, "fd_wall_s": t_fd_wall, "gradyn_gradient_s": t_gradyn,
                        "time_ratio_fd_over_gradyn": t_fd / t_gradyn, "max_rel_diff": err,
                        "worst_input": worst_name})
        log(f"FD n={n:4d} ({n_params} parameters, {ctrl_idx.size} controls): FD {t_fd:.3f} s, gradyn "
            f"{t_gradyn * 1e3:.3f} ms, ratio {t_fd / t_gradyn:.0f}x, agreement {err:.1e}")
    return {"steps": steps, "n_params_total": int(p.size), "n_controls_total": int(taus.size),
            "gradyn_repeats": reps, "cases": results}


def machine_info():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "load_average_at_start": os.getloadavg(), "commit": commit_name()}


def write_markdown(path, info, model, rows, fd, torch_version):
    L = []
    kib = 1024
    L.append("# Gradient benchmarks (laikago, no contact)\n")
    L.append(f"Generated by `.venv/bin/python bench/gradient_benchmarks.py` (see bench/README.md). "
             f"One run, measured numbers only. gradyn at {info['commit']}. Machine: {info['cpu']}, {info['cores']} cores, load "
             f"average at start {', '.join(f'{x:.1f}' for x in info['load_average_at_start'])} "
             f"(a shared machine: compare ratios, not absolute times). Robot: laikago "
             f"(nq={model.nq}, nv={model.nv}, floating base, leg damping), semi-implicit Euler, dt={DT}, "
             f"loss = |q_T|^2 + |v_T|^2 + {RUNNING_WEIGHT} sum_t (|q_t|^2 + |v_t|^2). All times are CPU "
             f"times (time.process_time; wall times are in the .json); gradyn's are medians over the stated "
             f"repeats, torch {torch_version} (1 thread) and finite differences one run each.\n")
    L.append("## (a) gradyn backward / forward time\n")
    L.append("Forward: `gradyn.rollout`. Backward: `gradyn.rollout_vjp` (it re-runs the forward sweep "
             "itself to store its checkpoints, so its time includes one forward pass; with "
             "max_snapshots = k it recomputes more).\n")
    L.append("Each backward variant is timed interleaved with its own forward runs; 'forward ms' is the "
             "median over all of them.\n")
    L.append("'From states': `gradyn.rollout_vjp(..., qs=qs, vs=vs)` with the trajectory the forward pass "
             "returned as its checkpoints (no forward re-run, no extra memory): the backward pass proper, "
             "as paper 003 measures it.\n")
    L.append("| steps | repeats | forward ms | backward ms (from states) | backward / forward | backward ms (default, re-runs forward) | ratio | backward ms (max_snapshots) | ratio |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        d = r["backward"]["0"]
        extra = [(k, v) for k, v in r["backward"].items() if k != "0"]
        snap = "; ".join(f"{v['backward_s'] * 1e3:.2f} (k={k})" for k, v in extra) or "-"
        snap_ratio = "; ".join(f"{v['backward_over_forward']:.2f}" for k, v in extra) or "-"
        L.append(f"| {r['steps']} | {r['repeats']} | {r['gradyn_forward_s'] * 1e3:.3f} | "
                 f"{d['backward_from_states_s'] * 1e3:.3f} | {d['backward_from_states_over_forward']:.2f} | "
                 f"{d['backward_s'] * 1e3:.3f} | {d['backward_over_forward']:.2f} | {snap} | {snap_ratio} |")
    L.append("\n## (b) memory of gradyn's backward pass\n")
    L.append(f"Computed: rollout_vjp keeps (q, v) of every step, (nq + nv) x 8 = {(model.nq + model.nv) * 8} bytes "
             "per step, by default; with max_snapshots = k at most k states in all, whatever the horizon. "
             "Measured: in a fresh process per case, the kernel's peak-RSS mark is reset "
             "(`/proc/self/clear_refs` = 5) just before the `rollout_vjp` call and read back "
             "(VmHWM in `/proc/self/status`) after it; the growth includes the checkpoints, the returned "
             "taus_bar (T x nv x 8 bytes) and any allocator slack, at page (4 KiB) granularity. "
             "'total' also counts the forward rollout's qs, vs and the loss adjoints qs_bar, vs_bar "
             "(what a user's gradient computation holds; this is what is compared with torch).\n")
    L.append("| steps | max_snapshots | checkpoint bytes (computed) | per step | rollout_vjp peak RSS growth KiB | total KiB | process peak RSS MiB |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        for k, v in r["backward"].items():
            m = v["memory"]
            L.append(f"| {r['steps']} | {k if k != '0' else 'default'} | {v['checkpoint_bytes']} | "
                     f"{v['checkpoint_bytes'] / r['steps']:.1f} | {m['vjp_peak_delta_kib']} | {m['total_peak_delta_kib']} | "
                     f"{m['process_peak_rss_kib'] / kib:.1f} |")
    by = {(r["steps"], k): v for r in rows for k, v in r["backward"].items()}
    long_T, short_T = max(r["steps"] for r in rows), min(r["steps"] for r in rows)
    if (long_T, "0") in by and (short_T, "0") in by and long_T > short_T:
        a, b = by[(long_T, "0")]["memory"], by[(short_T, "0")]["memory"]
        per_step = (a["vjp_peak_delta_kib"] - b["vjp_peak_delta_kib"]) * kib / (long_T - short_T)
        L.append(f"\nMeasured growth per step of the rollout_vjp call, ({long_T} - {short_T} steps): "
                 f"{per_step:.0f} bytes/step (checkpoints {(model.nq + model.nv) * 8} + taus_bar {model.nv * 8} "
                 f"= {(model.nq + model.nv + model.nv) * 8} bytes/step expected). Whole-process peak RSS "
                 f"(imports included): {a['process_peak_rss_kib'] / kib:.1f} MiB at {long_T} steps vs "
                 f"{b['process_peak_rss_kib'] / kib:.1f} MiB at {short_T}, "
                 f"+{(a['process_peak_rss_kib'] - b['process_peak_rss_kib']) / kib:.1f} MiB.")
        for k, v in by.items():
            if k[0] == long_T and k[1] != "0":
                m = v["memory"]
                L.append(f"With max_snapshots = {k[1]} at {long_T} steps the rollout_vjp growth, "
                         f"{m['vjp_peak_delta_kib']} KiB, is the returned taus_bar "
                         f"({m['taus_bar_bytes'] / kib:.0f} KiB) plus {m['vjp_peak_delta_kib'] - m['taus_bar_bytes'] / kib:.0f} "
                         f"KiB; the {v['checkpoint_bytes']} bytes of snapshots fit in memory the process already had.")
    L.append("\n## (c) gradyn vs PyTorch tape (loss + full gradient)\n")
    L.append("Both compute loss and gradient w.r.t. controls, initial state and model parameters from "
             "(q0, v0, taus). gradyn: `rollout` + `rollout_vjp` (default checkpointing), median time. "
             "Tape: the same algorithm in torch (bench/tape_baseline/torch_sim.py), forward with the "
             "tape + `backward()`, one run in its own process. Memory: peak-RSS growth from the inputs "
             "to the end of the gradient, each in a fresh process. Before any number is kept, the "
             "tape's states must match gradyn.rollout to 1e-9 and its gradients gradyn's to 1e-7.\n")
    L.append("| steps | gradyn ms | torch fwd s | torch bwd s | time torch / gradyn | gradyn KiB | torch KiB | memory torch / gradyn | state diff | gradient rel diff |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "torch" not in r:
            continue
        t, d = r["torch"], r["backward"]["0"]
        mem_ratio = t["memory_ratio_torch_over_gradyn"]
        ratio_text = (f"{mem_ratio:.0f}" if mem_ratio is not None
                      else f"> {t['peak_delta_kib'] / 4:.0f} (gradyn: no page grown)")
        L.append(f"| {r['steps']} | {d['gradient_s'] * 1e3:.3f} | {t['forward_s']:.3f} | {t['backward_s']:.3f} | "
                 f"{t['time_ratio_torch_over_gradyn']:.0f} | {d['memory']['total_peak_delta_kib']} | "
                 f"{t['peak_delta_kib']} | {ratio_text} | {t['state_max_abs_diff']:.1e} | "
                 f"{max(t['gradient_max_rel_diff'].values()):.1e} |")
    if fd is not None:
        L.append("\n## (d) gradyn gradient vs central finite differences\n")
        L.append(f"Horizon {fd['steps']} steps. Inputs: the first n of [model parameters (evenly spread over "
                 f"the {fd['n_params_total']} of model.param_names), controls ({fd['n_controls_total']})]. "
                 "Central differences: 2 rollouts per input (h = 1e-6 max(1, |x|); parameters through "
                 "`model.with_params`), one run. gradyn: 1 rollout + 1 rollout_vjp, which gives every "
                 f"input's derivative at once (median of {fd['gradyn_repeats']}). 'agreement': the largest "
                 "difference relative to the largest gradient entry.\n")
        L.append("| inputs | parameters | controls | FD rollouts | FD s | gradyn ms | FD / gradyn | agreement |")
        L.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for c in fd["cases"]:
            L.append(f"| {c['inputs']} | {c['model_parameters']} | {c['controls']} | {c['fd_rollouts']} | "
                     f"{c['fd_s']:.3f} | {c['gradyn_gradient_s'] * 1e3:.3f} | {c['time_ratio_fd_over_gradyn']:.0f} | "
                     f"{c['max_rel_diff']:.1e} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--horizons", default="50,100,500,1000,5000", help="comma-separated step counts")
    parser.add_argument("--snapshots", default="50,10",
                        help="max_snapshots values run besides the default, at the longest horizon")
    parser.add_argument("--fd-steps", type=int, default=100, help="horizon of the finite-difference comparison")
    parser.add_argument("--fd-sizes", default="10,100,1000")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch tape")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "gradients"),
                        help="output path without extension (.md and .json are written)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        kind, spec = args.child[0], json.loads(args.child[1])
        print(json.dumps(child_gradyn(spec) if kind == "gradyn" else child_torch(spec)))
        return 0

    import gradyn

    def log(msg):
        print(msg, flush=True)

    try:
        check_api(gradyn)
        torch_version = None
        if not args.no_torch:
            import torch

            torch_version = torch.__version__
        model = load_laikago()
        horizons = [int(x) for x in args.horizons.split(",")]
        extra = [int(x) for x in args.snapshots.split(",") if x]
        longest = max(horizons)
        info = machine_info()
        rows = bench_horizons(gradyn, model, horizons, lambda T: [0] + (extra if T == longest else []),
                              not args.no_torch, log)
        fd = bench_finite_differences(gradyn, model, args.fd_steps, [int(x) for x in args.fd_sizes.split(",")], log)
    except Abort as e:
        print(f"GRADIENT BENCHMARK ABORTED: {e}", file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"machine": info, "torch": torch_version, "dt": DT, "running_weight": RUNNING_WEIGHT,
                   "nq": model.nq, "nv": model.nv, "horizons": rows, "finite_differences": fd}, f, indent=1)
    write_markdown(args.out + ".md", info, model, rows, fd, torch_version)
    log(f"wrote {args.out}.md and {args.out}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
