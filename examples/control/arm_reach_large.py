#!/usr/bin/env python3
"""Paper 002, section 3.2.2 at the paper's size: the 4-DoF servo arm of arm_reach.py reaches random
targets with a 3-input, 3 x 1024 relu network (2,107,396 weights), trained on batches of 128 arms
simulated for 8 s at dt 0.01, on a GPU when there is one.

The paper's controller is open loop: its only input is the target, which does not change during a
rollout, so its four servo targets are constant over the 800 steps. This script evaluates the
network once per arm (in PyTorch, on the GPU or the CPU), holds its output as the controls of the
whole rollout, and differentiates exactly through that: the gradient reaching the network is the
sum over the 800 steps of the rollout's control adjoint (gradyn.rollout_vjp's ctrls_bar). That is
the same gradient as re-evaluating the network at every step (what gradyn.Policy does,
arm_reach_random.py); tests/python/test_arm_reach_large.py checks the two against each other.

    # on the CPU, in one go (gradyn's batched rollout and its adjoint on all cores)
    .venv/bin/python examples/control/arm_reach_large.py train --backend cpu --minutes 20
    .venv/bin/python examples/control/arm_reach_large.py report OUT   # the .md and .png from OUT

    # on a GPU machine, which has PyTorch but no gradyn build (gradyn's CUDA library is carried):
    .venv/bin/python examples/control/arm_reach_large.py prepare      # here: examples/control/gpu_inputs/
    python3 examples/control/arm_reach_large.py train --backend cuda --out OUT --minutes 7   # there
    .venv/bin/python examples/control/arm_reach_large.py report OUT   # here

prepare writes examples/control/gpu_inputs/ (ignored by git): the arm as gradyn's flat model arrays
(what gradyn.cuda runs), a CPU reference (gradyn.rollout of four arms under random controls and
gradyn.rollout_vjp of a random adjoint), tip positions from gradyn.frame_pose at random joint
angles, and a stripped copy of the installed libgradyn_cuda.so. train --backend cuda first checks
the GPU's rollout, its control adjoint and the script's PyTorch forward kinematics against those
references, then trains; every record is one JSON line in OUT/arm_reach_large.jsonl, written as it
comes. report writes arm_reach_large.md and arm_reach_large.png beside this file; the logs it read
for the committed .md are in examples/control/runs/.

Loss (the paper's): the distance between end effector and target, averaged over the rollout's 801
states and the batch. Targets: the tip at joint angles drawn uniformly in [-1, 1] rad (base yaw),
[-1.2, 1.2] (pitches, roll), as in arm_reach_random.py; a fixed validation set of 128 targets.
Optimiser: Adam (torch.optim), learning rate --lr scaled by the previous update's mean error over
the first update's (the paper: "we scale the learning rate with the average error achieved in the
previous step"). Network: PyTorch's default initialisation, the output layer zero (the arm starts at
rest), float32 on the GPU; the physics in float64 on both backends.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import platform
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INPUTS = HERE / "gpu_inputs"
STEM = "arm_reach_large"
LIMITS = np.array([1.0, 1.2, 1.2, 1.2])  # joint-angle ranges the targets are drawn from (rad)
UPPER, FORE = 0.5, 0.5  # link lengths of arm_reach.arm() (m)
VALIDATION = 128  # targets in the fixed validation set (whatever the batch)


# --- the arm's kinematics, in PyTorch ------------------------------------------------------------


def tip_positions(q):
    """The end effector of arm_reach.arm() at joint angles q (..., 4): base yaw about z, base pitch
    about y, elbow pitch about y at the upper arm's end, elbow roll about the forearm's own axis
    (which does not move the tip). Works on torch tensors (differentiable) and NumPy arrays."""
    lib = np if isinstance(q, np.ndarray) else __import__("torch")
    yaw, pitch, elbow = q[..., 0], q[..., 1], q[..., 2]
    # the tip in the upper arm's frame: up the upper arm, then the forearm bent by the elbow pitch
    x1, z1 = FORE * lib.sin(elbow), UPPER + FORE * lib.cos(elbow)
    x2, z2 = x1 * lib.cos(pitch) + z1 * lib.sin(pitch), -x1 * lib.sin(pitch) + z1 * lib.cos(pitch)
    return lib.stack([x2 * lib.cos(yaw), x2 * lib.sin(yaw), z2], -1)


def random_targets(n, rng):
    return tip_positions(rng.uniform(-LIMITS, LIMITS, size=(n, 4)))


# --- the physics: gradyn's batched rollout and its adjoint, CPU or GPU ------------------------------


class Arms:
    """B arms from rest under constant servo targets: rollout(ctrl (B, nu) NumPy) -> qs (B, T+1, nq),
    and control_adjoint(qs_bar) -> the gradient w.r.t. ctrl (B, nu): the rollout's ctrls_bar summed
    over the steps (the controls are held)."""

    def __init__(self, backend, steps, dt, arrays=None):
        self.backend, self.steps, self.dt = backend, steps, dt
        if backend == "cpu":
            sys.path.insert(0, str(HERE))
            import arm_reach

            import gradyn

            self.gradyn, self.model = gradyn, arm_reach.arm()
            self.nq, self.nv, self.nu = self.model.nq, self.model.nv, self.model.nu
        else:
            self.cuda = load_cuda_module()
            self.model = self.cuda.DeviceModel(arrays=arrays, dtype="float64")
            self.nq, self.nv, self.nu = self.model.nq, self.model.nv, self.model.nu
        self.timing = {"forward_s": 0.0, "reverse_s": 0.0}

    def _held(self, ctrl):
        return np.ascontiguousarray(np.broadcast_to(ctrl[:, None, :], (len(ctrl), self.steps, self.nu)))

    def rollout(self, ctrl):
        B = len(ctrl)
        self._last = (np.zeros((B, self.nq)), np.zeros((B, self.nv)), self._held(ctrl))
        started = time.perf_counter()
        if self.backend == "cpu":
            qs, vs = self.gradyn.rollout(self.model, *self._last[:2], None, self.dt, ctrls=self._last[2])
            self._states = (qs, vs)
        else:
            qs, vs = self.cuda.rollout(self.model, *self._last[:2], None, self.dt, self._last[2])
        self.timing["forward_s"] += time.perf_counter() - started
        return qs

    def control_adjoint(self, qs_bar):
        """The last rollout's ctrls_bar (B, T, nu), and its sum over the steps (B, nu)."""
        q0, v0, ctrls = self._last
        vs_bar = np.zeros((len(q0), self.steps + 1, self.nv))
        started = time.perf_counter()
        if self.backend == "cpu":
            qs, vs = self._states
            out = self.gradyn.rollout_vjp(self.model, q0, v0, None, self.dt, qs_bar, vs_bar, qs=qs, vs=vs,
                                          ctrls=ctrls)
        else:
            out = self.cuda.rollout_vjp(self.model, q0, v0, None, self.dt, qs_bar, vs_bar, ctrls)
        self.timing["reverse_s"] += time.perf_counter() - started
        return out[4], out[4].sum(axis=1)


def load_cuda_module():
    """python/gradyn/cuda.py as a module of its own (the GPU machine has no gradyn._core); the
    library from gpu_inputs/ unless GRADYN_CUDA_LIBRARY names another."""
    os.environ.setdefault("GRADYN_CUDA_LIBRARY", str(INPUTS / "libgradyn_cuda.so"))
    spec = importlib.util.spec_from_file_location("gradyn_cuda", ROOT / "python" / "gradyn" / "cuda.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the network and one update ---------------------------------------------------------------------


def network(hidden, seed, device, dtype=None):
    import torch

    torch.manual_seed(seed)
    widths = [3, *hidden, 4]
    layers = []
    for a, b in zip(widths[:-1], widths[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    with torch.no_grad():  # the output layer starts at zero: every arm starts holding still
        net[-1].weight.zero_()
        net[-1].bias.zero_()
    return net.to(device=device, dtype=dtype or torch.float32)


def loss_and_qs_bar(qs, targets):
    """Mean over arms and states of the tip's distance to the target; its gradient w.r.t. qs (NumPy),
    every arm's mean distance and its distance at the end."""
    import torch

    q = torch.tensor(qs, requires_grad=True)
    d = (tip_positions(q) - torch.as_tensor(targets)[:, None, :]).norm(dim=-1)
    loss = d.mean()
    loss.backward()
    return loss.item(), q.grad.numpy(), d.mean(dim=1).detach().numpy(), d[:, -1].detach().numpy()


def evaluate(net, arms, targets, device):
    """Loss, its gradient w.r.t. the network's weights (left in .grad), per-arm mean and final distance."""
    import torch

    ctrl = net(torch.as_tensor(targets, dtype=net[0].weight.dtype, device=device))
    qs = arms.rollout(ctrl.detach().double().cpu().numpy())
    loss, qs_bar, mean_d, final_d = loss_and_qs_bar(qs, targets)
    _, ctrl_bar = arms.control_adjoint(qs_bar)
    ctrl.backward(torch.as_tensor(ctrl_bar, dtype=ctrl.dtype, device=device))
    return loss, mean_d, final_d


# --- train ---------------------------------------------------------------------------------------


def train(args):
    import torch

    torch.set_num_threads(max(1, os.cpu_count() or 1) if args.backend == "cuda" else 1)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / f"{STEM}.jsonl", "w")

    def emit(record):
        log.write(json.dumps(record) + "\n")
        log.flush()
        print(json.dumps(record), flush=True)

    steps = int(round(args.seconds / args.dt))
    if args.backend == "cuda":
        device = args.torch_device
        inputs = np.load(INPUTS / "arm.npz")
        meta = json.loads((INPUTS / "meta.json").read_text())
        arms = Arms("cuda", steps, args.dt, arrays=(inputs["ints"], inputs["reals"]))
        gpu = arms.cuda.devices()
        emit({"kind": "machine", "backend": "cuda", "gpu": gpu["name"], "network_on": device,
              "host": platform.node(), "cpus": os.cpu_count(), "commit": meta["commit"]})
        emit({"kind": "check", **check_against_cpu(arms, inputs)})
    else:
        device = "cpu"
        sys.path.insert(0, str(ROOT / "bench"))
        from gradient_benchmarks import commit_name

        arms = Arms("cpu", steps, args.dt)
        emit({"kind": "machine", "backend": "cpu", "host": platform.node(), "cpus": os.cpu_count(),
              "processor": platform.processor() or platform.machine(), "commit": commit_name()})
    net = network(args.hidden, args.seed, device)
    weights = sum(p.numel() for p in net.parameters())
    emit({"kind": "config", "hidden": args.hidden, "weights": weights, "batch": args.batch, "steps": steps,
          "dt": args.dt, "lr": args.lr, "seed": args.seed, "minutes": args.minutes, "updates": args.updates,
          "command": " ".join(["python", *sys.argv])})
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    validation = random_targets(VALIDATION, np.random.default_rng(args.seed + 1))
    started = time.perf_counter()
    update, first_loss, last_loss = 0, None, None
    train_s = 0.0

    def validate():
        with torch.no_grad():
            ctrl = net(torch.as_tensor(validation, dtype=torch.float32, device=device))
        forward_s = arms.timing["forward_s"]  # (the training's physics time, without validation)
        qs = arms.rollout(ctrl.double().cpu().numpy())
        arms.timing["forward_s"] = forward_s
        _, _, mean_d, final_d = loss_and_qs_bar(qs, validation)
        emit({"kind": "validation", "update": update, "seconds": time.perf_counter() - started,
              "train_seconds": train_s, "mean_distance": float(mean_d.mean()), "final_distance": float(final_d.mean())})

    validate()
    while update < args.updates and time.perf_counter() - started < 60 * args.minutes:
        t = time.perf_counter()
        targets = random_targets(args.batch, rng)
        optimizer.zero_grad()
        loss, _, _ = evaluate(net, arms, targets, device)
        if not np.isfinite(loss):
            emit({"kind": "stopped", "update": update, "why": f"the loss is {loss}"})
            break
        first_loss = first_loss or loss
        if last_loss is not None:  # the paper's learning rate, scaled by the previous step's error
            for group in optimizer.param_groups:
                group["lr"] = args.lr * last_loss / first_loss
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        last_loss = loss
        update += 1
        train_s += time.perf_counter() - t
        if update % args.validate_every == 0:
            validate()
    if update % args.validate_every:
        validate()
    emit({"kind": "timing", "updates": update, "train_seconds": train_s, "seconds_per_update": train_s / max(update, 1),
          "physics_forward_s": arms.timing["forward_s"], "physics_reverse_s": arms.timing["reverse_s"],
          "load_average_15min": os.getloadavg()[2]})  # (other work on the machine slows a CPU run)
    log.close()
    return out / f"{STEM}.jsonl"


def check_against_cpu(arms, inputs):
    """The backend's rollout and control adjoint against gradyn's CPU engine (prepare's reference),
    and this script's forward kinematics against gradyn.frame_pose."""
    ref_ctrl, ref_qs, ref_qs_bar, ref_ctrls_bar = (inputs[k] for k in ("ctrl", "qs", "qs_bar", "ctrls_bar"))
    steps = arms.steps
    arms.steps = ref_qs.shape[1] - 1
    qs = arms.rollout(ref_ctrl)
    ctrls_bar, _ = arms.control_adjoint(ref_qs_bar)
    arms.steps = steps
    scale = lambda b: 1.0 + np.max(np.abs(b))  # noqa: E731
    return {"rollout_relative_deviation": float(np.max(np.abs(qs - ref_qs)) / scale(ref_qs)),
            "ctrls_bar_relative_deviation": float(np.max(np.abs(ctrls_bar - ref_ctrls_bar)) / scale(ref_ctrls_bar)),
            "tip_deviation_m": float(np.max(np.abs(tip_positions(inputs["fk_q"]) - inputs["fk_tip"])))}


# --- prepare (here, with gradyn) ----------------------------------------------------------------------


def prepare(args):
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT / "bench"))
    import arm_reach
    from gradient_benchmarks import commit_name, copy_cuda_library

    import gradyn

    INPUTS.mkdir(exist_ok=True)
    copy_cuda_library(INPUTS)
    model = arm_reach.arm()
    rng = np.random.default_rng(args.seed)
    ctrl = rng.uniform(-LIMITS, LIMITS, size=(4, model.nu))
    steps = 200
    q0, v0 = np.zeros((4, model.nq)), np.zeros((4, model.nv))
    ctrls = np.ascontiguousarray(np.broadcast_to(ctrl[:, None], (4, steps, model.nu)))
    qs, vs = gradyn.rollout(model, q0, v0, None, args.dt, ctrls=ctrls)
    qs_bar = rng.normal(size=qs.shape)
    out = gradyn.rollout_vjp(model, q0, v0, None, args.dt, qs_bar, np.zeros_like(vs), qs=qs, vs=vs, ctrls=ctrls)
    fk_q = rng.uniform(-np.pi, np.pi, size=(64, 4))
    fk_tip = np.array([gradyn.frame_pose(model, q, "tip")[:3, 3] for q in fk_q])
    ints, reals = gradyn._core._flat_model(model)
    np.savez(INPUTS / "arm.npz", ints=ints, reals=reals, ctrl=ctrl, qs=qs, qs_bar=qs_bar, ctrls_bar=out[4],
             fk_q=fk_q, fk_tip=fk_tip)
    (INPUTS / "meta.json").write_text(json.dumps({"commit": commit_name(), "seed": args.seed}))
    size = sum(p.stat().st_size for p in INPUTS.iterdir()) / 2**20
    print(f"wrote {INPUTS} ({size:.1f} MiB)")


# --- report (here) -------------------------------------------------------------------------------------


def report(args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [pathlib.Path(p) for p in args.runs]
    records = [[json.loads(line) for line in (p / f"{STEM}.jsonl").read_text().splitlines() if line.strip()]
               if p.is_dir() else [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
               for p in runs]
    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    lines = ["# Arm reaching random targets with the paper's 2,107,396-weight network (paper 002, section 3.2.2)\n",
             "Written by `.venv/bin/python examples/control/arm_reach_large.py report "
             + " ".join(str(p) for p in args.runs) + "` from the training logs named below; each run's command "
             "and seed are in its row. The network (3 inputs, 3 x 1024 relu, 4 servo targets) is evaluated once "
             "per arm and held over the rollout (it is open loop, as in the paper); its gradient is the exact sum "
             "of the rollout's control adjoint. Batches of 128 arms (the paper's) unless a row says more, 8 s "
             "at dt 0.01 (800 steps); validation on a fixed set of 128 targets. Paper 002 (GPU, Theano): 576 updates to < 10 cm, 2,563 to < 5 cm, "
             "58 s per update.\n",
             "| run | machine | weights | arms per update | updates | seconds per update "
             "| physics forward / reverse per update (s) "
             "| machine's load (15 min) | validated every | updates to < 10 cm | updates to < 5 cm "
             "| final validation mean distance (m) | at the end (m) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for path, recs in zip(runs, records):
        kind = {r["kind"]: r for r in recs}
        machine, config, timing = kind["machine"], kind["config"], kind.get("timing")
        val = [r for r in recs if r["kind"] == "validation"]
        where = (f"{machine['gpu']} ({machine['cpus']} CPU cores)" if machine["backend"] == "cuda"
                 else f"CPU, {machine['cpus']} cores")
        first = lambda level: next((r["update"] for r in val if r["mean_distance"] < level), None)  # noqa: E731
        shown = lambda x: "not within this run" if x is None else str(x)  # noqa: E731
        n = max(timing["updates"], 1)
        load = f"{timing['load_average_15min']:.1f}" if "load_average_15min" in timing else "not recorded"
        every = val[1]["update"] - val[0]["update"] if len(val) > 1 else "-"
        lines.append(
            f"| `{config['command']}` (seed {config['seed']}, commit {machine['commit']}) | {where} | "
            f"{config['weights']:,} | {config['batch']} | {timing['updates']} | {timing['seconds_per_update']:.3f} | "
            f"{timing['physics_forward_s'] / n:.3f} / {timing['physics_reverse_s'] / n:.3f} | {load} | {every} | "
            f"{shown(first(0.10))} | {shown(first(0.05))} | {val[-1]['mean_distance']:.4f} | "
            f"{val[-1]['final_distance']:.4f} |")
        label = f"{where}: {config['weights']:,} weights, {config['batch']} arms per update"
        ax.semilogy([r["update"] for r in val], [r["mean_distance"] for r in val], "-", label=label)
        if "check" in kind:
            c = kind["check"]
            notes.append(f"GPU against gradyn's CPU engine ({path.name}): rollout relative deviation "
                         f"{c['rollout_relative_deviation']:.1e}, control adjoint {c['ctrls_bar_relative_deviation']:.1e}; "
                         f"the script's forward kinematics against gradyn.frame_pose: {c['tip_deviation_m']:.1e} m.")
    lines += [""] + notes + ["", "The mean distance is over the whole 8 s, the arm's travel to the target included "
                             "(its servos turn at most 45 deg/s); 'at the end' is the distance after the 8 s. "
                             "Seconds per update include the network, the loss and Adam; the physics columns are "
                             "the batched rollout and its adjoint alone. A CPU run shares its machine with whatever "
                             "else runs there (the load column)."]
    for level in (0.10, 0.05):
        ax.axhline(level, color="gray", ls="--", lw=0.8)
    ax.set_xlabel("updates (batches of 128 arms)")
    ax.set_ylabel("validation: mean end effector distance [m]")
    ax.set_title("random targets, the open-loop network of each run", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / f"{STEM}.png", dpi=120)
    lines += ["", f"![validation distance]({STEM}.png)"]
    (out_dir / f"{STEM}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out_dir / (STEM + '.md')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="stage", required=True)
    p = sub.add_parser("prepare", help="here: the GPU machine's inputs (examples/control/gpu_inputs/)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dt", type=float, default=0.01)
    t = sub.add_parser("train", help="train and log (--backend cpu here, cuda on a GPU machine)")
    t.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    t.add_argument("--hidden", type=int, nargs="+", default=[1024, 1024, 1024])
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--seconds", type=float, default=8.0, help="simulated time per rollout")
    t.add_argument("--dt", type=float, default=0.01)
    t.add_argument("--lr", type=float, default=1e-4)
    t.add_argument("--updates", type=int, default=1_000_000)
    t.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget")
    t.add_argument("--validate-every", type=int, default=20)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", default="out/arm_reach_large")
    t.add_argument("--torch-device", default="cuda", help="where the network runs with --backend cuda")
    t.add_argument("--quick", action="store_true", help="smoke run: 3 updates of 4 arms, 0.5 s, a small network")
    r = sub.add_parser("report", help="here: the .md and .png from training logs (folders or .jsonl files)")
    r.add_argument("runs", nargs="+")
    r.add_argument("--out", default=None, help="folder for the .md and .png (default: beside this script)")
    args = ap.parse_args()
    if args.stage == "prepare":
        prepare(args)
    elif args.stage == "train":
        if args.quick:
            args.hidden, args.batch, args.seconds, args.updates, args.validate_every = [16, 16], 4, 0.5, 3, 1
        train(args)
    else:
        report(args)


if __name__ == "__main__":
    sys.exit(main())
