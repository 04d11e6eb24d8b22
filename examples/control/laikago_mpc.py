#!/usr/bin/env python3
"""Paper 001, Sec. IV-D: a QP-based MPC trotting controller for laikago and a neural network that
imitates it, compared on speed tracking and on wall time per control step.

    nice .venv/bin/python examples/control/laikago_mpc.py            # the experiment (minutes)
    .venv/bin/python examples/control/laikago_mpc.py --quick         # a smoke run (seconds)

Simulation: gradyn's laikago (examples/laikago_contact/laikago_scene.py: the shipped URDF, free
base, 25.6 kg, four toe spheres of radius 3 cm on a plane of friction 1), PGS contact, semi-implicit
Euler, dt = 1 ms; the controllers' torques go straight onto the 12 leg joints (tau argument of
gradyn.step; no servos). The control step is the physics step: every millisecond the controller
reads (q, v), the gait phase and the command and returns 12 torques (the MPC solves its QP at every
control step, as motion_imitation's torque stance controller does).

MPC controller (examples/control/laikago_mpc_controller.py, whose docstring has the details): a
convex MPC after Di Carlo et al. 2018 on the single-rigid-body model (horizon 10 x 30 ms, trot of
period 0.3 s, friction pyramid mu = 0.6, 0 <= f_z <= 400 N on stance feet, zero force on swing
feet), solved by OSQP (sparse, pattern set up once, values updated, warm-started); stance legs
tau = -J^T f, swing feet by Cartesian PD to a Raibert foothold; torques clipped to +-40 N m.

Network (paper 001): 41 inputs (the observation of laikago_mpc_controller.observation: base
height, roll, pitch, base linear and angular velocity, the 12 joint angles and velocities, the
scheduled contact state of the 4 feet, the progress in the half cycle, the command v_x, v_y, yaw
rate), two hidden layers of 192 ELU units, 12 linear outputs (the joint torques; the paper says "all
using ELU", we keep the output linear so that it can reach any torque), inputs and outputs
standardised with the training set's mean and deviation, trained by Adam on the mean squared torque
error (behaviour cloning), then clipped to +-40 N m like the MPC's.

Data: --transitions (observation, MPC torques) pairs from the MPC trotting under random commands
(v_x in [0, 0.6] m/s, v_y in [-0.1, 0.1] m/s, yaw rate in [-0.3, 0.3] rad/s, a new one every 2 s,
the first ramped up from rest over 1 s), recorded every --stride control steps (4: 10k transitions
are 40 s of trotting). DAgger (Ross et al. 2011; --dagger R rounds, default 5): half the budget
(--dagger-share) comes from the MPC driving, the other half in R rounds where the network trained so
far drives, the MPC labels the states it visits, and the network is retrained from scratch on the
aggregate; the total stays --transitions (10k, paper 001's number). Why: plain behaviour cloning on
10k MPC transitions (--dagger 0, seed 0; numbers from that run, not rewritten by this script) fit
the torques to 0.27 N m RMS on held-out transitions but fell in closed loop at both speeds (after
2.9 s at 0.3 m/s and 2.3 s at 0.5 m/s): its small errors drive the robot to states the MPC never
visited.

Evaluation: each controller trots --seconds from the stance at rest for each commanded speed
(--speeds), the command ramped from 0 over the first second; tracking error = mean |v_x - v_cmd|
after --settle seconds (v_x: the base's velocity along its heading), base height (mean, min) and a
fall flag (base below 0.3 m or roll/pitch beyond 0.6 rad, which ends the run). Time per control
step: wall clock of each controller call (observation/kinematics + QP or network + torques),
median over the evaluation runs, one process, torch on 1 thread, OMP_NUM_THREADS=1.

Writes laikago_mpc.md (command, seed, every number) and laikago_mpc.png beside this file, or in --out.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import laikago_mpc_controller as C  # noqa: E402

import gradyn  # noqa: E402

DT = 1e-3
RAMP = 1.0  # s, the command's ramp from rest
FALL_Z, FALL_TILT = 0.3, 0.6
LIFTED = 0.01  # m, a toe this far above the ground counts as lifted (in swing)
CMD_LOW = np.array([0.0, -0.1, -0.3])
CMD_HIGH = np.array([0.6, 0.1, 0.3])
CMD_HOLD = 2.0  # s per random command


def progress(iterable, **kwargs):
    try:
        from tqdm import tqdm

        return tqdm(iterable, mininterval=2.0, **kwargs)
    except ImportError:  # pragma: no cover
        return iterable


def heading_velocity(q, v):
    """Base velocity (world) rotated into the base's heading (yaw) frame: (v_forward, v_lateral)."""
    R = C.quat_matrix(q[3:7])
    vw = R @ v[:3]
    yaw = C.rpy(R)[2]
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * vw[0] + s * vw[1], -s * vw[0] + c * vw[1]])


def fallen(q):
    r = C.rpy(C.quat_matrix(q[3:7]))
    return q[2] < FALL_Z or abs(r[0]) > FALL_TILT or abs(r[1]) > FALL_TILT or not np.all(np.isfinite(q))


class MPCPolicy:
    name = "MPC (OSQP)"

    def __init__(self, robot):
        self.robot = robot
        self.ctrl = C.MPCController(robot)
        self.failures = 0

    def __call__(self, q, v, phase, command):
        tau, status = self.ctrl.torques(q, v, phase, command)
        if status != "solved":
            self.failures += 1
        return tau


class NetworkPolicy:
    name = "network"

    def __init__(self, robot, net, stats):
        import torch

        self.robot, self.net, self.torch = robot, net, torch
        self.x_mean, self.x_std, self.y_mean, self.y_std = stats
        self.forward_times = []  # wall time of the network's forward pass alone [s]

    def __call__(self, q, v, phase, command):
        obs = C.observation(self.robot, q, v, phase, command)
        x = self.torch.from_numpy(((obs - self.x_mean) / self.x_std).astype(np.float32))
        t0 = time.perf_counter()
        with self.torch.inference_mode():
            y = self.net(x).numpy()
        self.forward_times.append(time.perf_counter() - t0)
        return np.clip(y * self.y_std + self.y_mean, -C.TORQUE_LIMIT, C.TORQUE_LIMIT)


def simulate(robot, policy, seconds, command_at, label=None, record_every=0, desc=None, timer=None):
    """Run `policy` from the stance at rest. command_at(t) -> (3,). label: a second controller whose
    torques are recorded (DAgger); record_every: record (obs, torques) every that many steps.
    Returns a dict of the time series, the recorded pairs, and whether it fell."""
    m = robot.model
    q, v = robot.q_stance.copy(), np.zeros(m.nv)
    steps = int(round(seconds / DT))
    ts, vx, z, cmds, toes = [], [], [], [], []
    obs_rec, tau_rec = [], []
    fell = False
    tau = np.zeros(m.nv)
    it = range(steps) if desc is None else progress(range(steps), desc=desc, leave=False)
    for k in it:
        t = k * DT
        phase = (t / C.PERIOD) % 1.0
        cmd = command_at(t)
        if record_every and k % record_every == 0:
            obs_rec.append(C.observation(robot, q, v, phase, cmd))
        t0 = time.perf_counter()
        tau12 = policy(q, v, phase, cmd)
        if timer is not None:
            timer.append(time.perf_counter() - t0)
        if record_every and k % record_every == 0:
            tau_rec.append(tau12 if label is None else label(q, v, phase, cmd))
        tau[robot.legs_v] = tau12
        q, v = gradyn.step(m, q, v, tau, DT)
        ts.append(t + DT)
        vx.append(heading_velocity(q, v)[0])
        z.append(q[2])
        cmds.append(cmd[0])
        toes.append([gradyn.frame_pose(m, q, f)[2, 3] for f in robot.toe_frames])
        if fallen(q):
            fell = True
            break
    return {"t": np.array(ts), "vx": np.array(vx), "z": np.array(z), "cmd": np.array(cmds), "fell": fell,
            "toes": np.array(toes).reshape(-1, 4),
            "obs": np.array(obs_rec).reshape(-1, C.OBS_DIM), "tau": np.array(tau_rec).reshape(-1, 12)}


def ramp_command(v_cmd):
    return lambda t: np.array([v_cmd * min(1.0, t / RAMP), 0.0, 0.0])


def random_commands(rng, seconds):
    """A piecewise-constant random command, the first ramped from rest over RAMP."""
    n = int(np.ceil(seconds / CMD_HOLD)) + 1
    values = rng.uniform(CMD_LOW, CMD_HIGH, size=(n, 3))

    def command_at(t):
        i = int(t // CMD_HOLD)
        if i == 0:
            return values[0] * min(1.0, t / RAMP)
        return values[i]

    return command_at


def summarise(run, v_cmd, settle):
    after = run["t"] >= settle
    toes = run["toes"][after] - C.scene.TOE_RADIUS  # toe clearance above the ground [m]
    return {"lifted": float(np.mean(toes > LIFTED)) if after.any() else float("nan"),
            "toe_peak": float(np.mean(toes.max(0))) if after.any() else float("nan"),
            "err": float(np.mean(np.abs(run["vx"][after] - v_cmd))) if after.any() else float("nan"),
            "vx": float(np.mean(run["vx"][after])) if after.any() else float("nan"),
            "z_mean": float(np.mean(run["z"][after])) if after.any() else float("nan"),
            "z_min": float(np.min(run["z"])), "fell": run["fell"], "seconds": float(run["t"][-1])}


def make_net(torch):
    return torch.nn.Sequential(torch.nn.Linear(C.OBS_DIM, 192), torch.nn.ELU(), torch.nn.Linear(192, 192),
                               torch.nn.ELU(), torch.nn.Linear(192, 12))


def train(torch, X, Y, epochs, seed, lr=1e-3, batch=256, net=None, stats=None):
    """Behaviour cloning: Adam on the MSE of standardised torques; 10% held out. Returns the net,
    the standardisation and the train/validation RMS torque errors [N m]."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    idx = rng.permutation(len(X))
    n_val = max(1, len(X) // 10)
    val, tr = idx[:n_val], idx[n_val:]
    if stats is None:
        x_mean, x_std = X[tr].mean(0), X[tr].std(0) + 1e-6
        y_mean, y_std = Y[tr].mean(0), Y[tr].std(0) + 1e-6
        stats = (x_mean, x_std, y_mean, y_std)
    x_mean, x_std, y_mean, y_std = stats
    Xn = torch.from_numpy(((X - x_mean) / x_std).astype(np.float32))
    Yn = torch.from_numpy(((Y - y_mean) / y_std).astype(np.float32))
    net = make_net(torch) if net is None else net
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs))
    tr_t = torch.from_numpy(tr)
    for _ in progress(range(epochs), desc="training", leave=False):
        perm = tr_t[torch.randperm(len(tr))]
        for b in range(0, len(perm), batch):
            j = perm[b:b + batch]
            loss = torch.mean((net(Xn[j]) - Yn[j]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    with torch.no_grad():
        err = (net(Xn) - Yn).numpy() * y_std
    rms = lambda rows: float(np.sqrt(np.mean(err[rows] ** 2)))  # noqa: E731
    return net, stats, rms(tr), rms(val)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speeds", type=float, nargs="+", default=[0.3, 0.5])
    parser.add_argument("--seconds", type=float, default=8.0, help="each evaluation run")
    parser.add_argument("--settle", type=float, default=2.0, help="tracking error counted from here [s]")
    parser.add_argument("--transitions", type=int, default=10000)
    parser.add_argument("--stride", type=int, default=4, help="record every this many control steps")
    parser.add_argument("--dagger", type=int, default=5, help="DAgger rounds (0: plain behaviour cloning)")
    parser.add_argument("--dagger-share", type=float, default=0.5, help="share of --transitions from DAgger")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="a smoke run: short runs, tiny training")
    parser.add_argument("--out", type=pathlib.Path, default=HERE)
    args = parser.parse_args()
    if args.quick:
        args.speeds, args.seconds, args.settle = [0.4], 0.6, 0.1
        args.transitions, args.stride, args.epochs = 300, 2, 5
        args.dagger = min(args.dagger, 1)
    command_line = " ".join(["python examples/control/laikago_mpc.py", *sys.argv[1:]])
    args.out.mkdir(parents=True, exist_ok=True)

    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    robot = C.Robot()
    started = time.time()

    # --- the MPC's demonstrations -----------------------------------------------------------------
    n_dagger = int(round(args.transitions * args.dagger_share)) if args.dagger else 0
    n_expert = args.transitions - n_dagger
    mpc = MPCPolicy(robot)
    X, Y = [], []
    episodes, expert_seconds, expert_falls = 0, 0.0, 0
    while sum(len(x) for x in X) < n_expert:
        need = n_expert - sum(len(x) for x in X)
        seconds = min(10.0, need * args.stride * DT)
        run = simulate(robot, mpc, seconds, random_commands(rng, seconds), record_every=args.stride,
                       desc=f"MPC demonstrations, episode {episodes + 1}")
        X.append(run["obs"][:need])
        Y.append(run["tau"][:need])
        episodes += 1
        expert_seconds += run["t"][-1]
        expert_falls += run["fell"]
    X, Y = np.concatenate(X), np.concatenate(Y)
    print(f"{len(X)} MPC transitions from {episodes} episodes ({expert_seconds:.1f} s, {expert_falls} falls)")

    t0 = time.time()
    net, stats, rms_train, rms_val = train(torch, X, Y, args.epochs, args.seed)
    rounds = []
    for r in range(args.dagger):
        n_round = n_dagger // args.dagger + (1 if r < n_dagger % args.dagger else 0)
        policy = NetworkPolicy(robot, net, stats)
        got_obs, got_tau, fell_count, secs = [], [], 0, 0.0
        while sum(len(o) for o in got_obs) < n_round:
            need = n_round - sum(len(o) for o in got_obs)
            seconds = min(10.0, need * args.stride * DT)
            run = simulate(robot, policy, seconds, random_commands(rng, seconds), label=mpc,
                           record_every=args.stride, desc=f"DAgger round {r + 1}")
            got_obs.append(run["obs"][:need])
            got_tau.append(run["tau"][:need])
            fell_count += run["fell"]
            secs += run["t"][-1]
        X = np.concatenate([X] + got_obs)
        Y = np.concatenate([Y] + got_tau)
        net, stats, rms_train, rms_val = train(torch, X, Y, args.epochs, args.seed + r + 1)
        rounds.append({"round": r + 1, "added": n_round, "falls": fell_count, "seconds": secs,
                       "rms_train": rms_train, "rms_val": rms_val})
        print(f"DAgger round {r + 1}: +{n_round} transitions, {fell_count} falls in {secs:.1f} s of the "
              f"network's driving; RMS torque error train {rms_train:.3f} / val {rms_val:.3f} N m")
    train_seconds = time.time() - t0
    print(f"trained on {len(X)} transitions in {train_seconds:.0f} s: RMS torque error "
          f"train {rms_train:.3f} N m, validation {rms_val:.3f} N m")

    # --- evaluation ----------------------------------------------------------------------------------
    network = NetworkPolicy(robot, net, stats)
    eval_mpc = MPCPolicy(robot)
    results, runs = {}, {}
    timers = {"MPC": [], "network": []}
    for v_cmd in args.speeds:
        for name, policy in (("MPC", eval_mpc), ("network", network)):
            run = simulate(robot, policy, args.seconds, ramp_command(v_cmd), desc=f"{name} at {v_cmd} m/s",
                           timer=timers[name])
            runs[(name, v_cmd)] = run
            results[(name, v_cmd)] = summarise(run, v_cmd, args.settle)
            s = results[(name, v_cmd)]
            print(f"{name:8s} v_cmd {v_cmd:.2f} m/s: mean v_x {s['vx']:.3f}, mean |v_x - v_cmd| {s['err']:.3f} m/s, "
                  f"base height mean {s['z_mean']:.3f} min {s['z_min']:.3f} m, toes lifted {100 * s['lifted']:.0f}% "
                  f"of the time (peak clearance {100 * s['toe_peak']:.1f} cm), fell: {'yes' if s['fell'] else 'no'}")
    t_mpc = float(np.median(timers["MPC"]))
    t_net = float(np.median(timers["network"]))
    timers["QP"] = eval_mpc.ctrl.mpc.solve_times
    timers["forward"] = network.forward_times
    print(f"time per control step (median): MPC {1e3 * t_mpc:.3f} ms, network {1e3 * t_net:.3f} ms, "
          f"ratio {t_mpc / t_net:.1f}x (OSQP update + solve alone {1e3 * np.median(timers['QP']):.3f} ms, "
          f"network forward pass alone {1e3 * np.median(timers['forward']):.3f} ms)")
    total = time.time() - started

    write_figure(args.out / "laikago_mpc.png", runs, args.speeds, t_mpc, t_net)
    write_markdown(args.out / "laikago_mpc.md", args, command_line, results, t_mpc, t_net, timers, len(X),
                   n_expert, episodes, expert_seconds, expert_falls, rounds, rms_train, rms_val, train_seconds,
                   eval_mpc.failures + mpc.failures, total, torch)
    print(f"wrote {args.out / 'laikago_mpc.md'} and {args.out / 'laikago_mpc.png'} ({total:.0f} s)")


def write_figure(path, runs, speeds, t_mpc, t_net):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4), gridspec_kw={"width_ratios": [3, 3, 1.3]})
    colours = {"MPC": "tab:blue", "network": "tab:orange"}
    for v_cmd in speeds:
        for name in ("MPC", "network"):
            run = runs[(name, v_cmd)]
            label = f"{name}, command {v_cmd} m/s"
            axes[0].plot(run["t"], run["vx"], color=colours[name], lw=0.8, alpha=0.9, label=label)
            axes[1].plot(run["t"], run["z"], color=colours[name], lw=0.8, alpha=0.9, label=label)
        run = runs[("MPC", v_cmd)]
        axes[0].plot(run["t"], run["cmd"], "k--", lw=1)
    axes[0].set_xlabel("time [s]")
    axes[0].set_ylabel("forward velocity v_x [m/s]")
    axes[0].set_title("speed tracking (dashed: command)")
    axes[0].legend(fontsize=7)
    axes[1].set_xlabel("time [s]")
    axes[1].set_ylabel("base height [m]")
    axes[1].set_title("base height")
    axes[2].bar(["MPC\n(OSQP)", "network"], [1e3 * t_mpc, 1e3 * t_net], color=[colours["MPC"], colours["network"]])
    axes[2].set_ylabel("wall time per control step [ms] (median)")
    axes[2].set_title(f"{t_mpc / t_net:.1f}x faster")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_markdown(path, args, command_line, results, t_mpc, t_net, timers, n_total, n_expert, episodes,
                   expert_seconds, expert_falls, rounds, rms_train, rms_val, train_seconds, qp_failures, total,
                   torch):
    lines = [
        "# Laikago: QP-based MPC trot and its network imitation (paper 001, Sec. IV-D)",
        "",
        "Written by `examples/control/laikago_mpc.py` (its docstring and "
        "`laikago_mpc_controller.py`'s describe the controllers). Numbers below are from this run only.",
        "",
        f"Command: `{command_line}`  ",
        f"Seed: {args.seed}{' (--quick: a smoke run, not the experiment)' if args.quick else ''}  ",
        f"Machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores visible, Python "
        f"{platform.python_version()}, torch {torch.__version__} on {torch.get_num_threads()} thread, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; total run time {total:.0f} s",
        "",
        "Setup: gradyn laikago, PGS contact, dt = 1 ms, torques on the 12 leg joints; control step = physics step "
        f"(1 kHz); trot period {C.PERIOD} s; MPC horizon {C.HORIZON} x {1e3 * C.MPC_DT:.0f} ms, mu = {C.MU}, "
        f"CoM height reference {C.HEIGHT} m; torques clipped to +-{C.TORQUE_LIMIT:.0f} N m. "
        f"Each evaluation run: {args.seconds} s from rest, command ramped over {RAMP} s, tracking error "
        f"mean |v_x - v_cmd| from t = {args.settle} s; a fall (base below {FALL_Z} m or roll/pitch beyond "
        f"{FALL_TILT} rad) ends the run.",
        "",
        "| controller | v_cmd [m/s] | mean v_x [m/s] | mean abs(v_x - v_cmd) [m/s] | base height mean [m] | "
        f"base height min [m] | toes lifted (> {100 * LIFTED:.0f} cm) | peak toe clearance [cm] | fell | seconds run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, v_cmd), s in results.items():
        lines.append(f"| {name} | {v_cmd:.2f} | {s['vx']:.4f} | {s['err']:.4f} | {s['z_mean']:.4f} | "
                     f"{s['z_min']:.4f} | {100 * s['lifted']:.0f}% | {100 * s['toe_peak']:.1f} | "
                     f"{'yes' if s['fell'] else 'no'} | {s['seconds']:.2f} |")
    q = lambda xs, p: 1e3 * float(np.percentile(xs, p))  # noqa: E731
    lines.append("")
    for v_cmd in args.speeds:
        a, b = results[("MPC", v_cmd)], results[("network", v_cmd)]
        lines.append(f"* {v_cmd:.2f} m/s: the network's tracking error {b['err']:.4f} m/s against the MPC's "
                     f"{a['err']:.4f} m/s (difference {b['err'] - a['err']:+.4f} m/s); mean base height "
                     f"{b['z_mean']:.4f} against {a['z_mean']:.4f} m; fell: network "
                     f"{'yes' if b['fell'] else 'no'}, MPC {'yes' if a['fell'] else 'no'}.")
    lines += [
        "",
        "Wall time per control step (one controller call: observation or kinematics, then QP or network, then "
        "torques), over all evaluation steps of this run:",
        "",
        "| controller | calls | median [ms] | 10th pct [ms] | 90th pct [ms] |",
        "|---|---|---|---|---|",
        f"| MPC (OSQP) | {len(timers['MPC'])} | {1e3 * t_mpc:.4f} | {q(timers['MPC'], 10):.4f} | "
        f"{q(timers['MPC'], 90):.4f} |",
        f"| network | {len(timers['network'])} | {1e3 * t_net:.4f} | {q(timers['network'], 10):.4f} | "
        f"{q(timers['network'], 90):.4f} |",
        f"| of which the OSQP update + solve | {len(timers['QP'])} | {1e3 * np.median(timers['QP']):.4f} | "
        f"{q(timers['QP'], 10):.4f} | {q(timers['QP'], 90):.4f} |",
        f"| of which the network's forward pass (torch) | {len(timers['forward'])} | "
        f"{1e3 * np.median(timers['forward']):.4f} | {q(timers['forward'], 10):.4f} | {q(timers['forward'], 90):.4f} |",
        "",
        f"Speed-up of the network per control step (median MPC / median network): **{t_mpc / t_net:.1f}x** "
        f"(QP solve alone against the forward pass alone: "
        f"{np.median(timers['QP']) / np.median(timers['forward']):.1f}x). "
        f"QP solves not reported 'solved' by OSQP (demonstrations and evaluation): {qp_failures}.",
        "",
        "Training: ",
        "",
        f"* {n_expert} transitions (observation, MPC torques) from the MPC trotting under random commands "
        f"(v_x in [{CMD_LOW[0]}, {CMD_HIGH[0]}] m/s, v_y in [{CMD_LOW[1]}, {CMD_HIGH[1]}] m/s, yaw rate in "
        f"[{CMD_LOW[2]}, {CMD_HIGH[2]}] rad/s, a new one every {CMD_HOLD} s), one every {args.stride} control "
        f"steps: {episodes} episodes, {expert_seconds:.1f} s simulated, {expert_falls} falls.",
    ]
    if rounds:
        lines.append(f"* DAgger: {len(rounds)} rounds in which the network drives and the MPC labels the visited "
                     "states; the data set is aggregated and the network retrained from scratch after each round:")
        for r in rounds:
            lines.append(f"  * round {r['round']}: +{r['added']} transitions over {r['seconds']:.1f} s of the "
                         f"network's driving ({r['falls']} falls); RMS torque error after retraining: train "
                         f"{r['rms_train']:.3f}, validation {r['rms_val']:.3f} N m")
    else:
        lines.append("* plain behaviour cloning (no DAgger).")
    lines += [
        f"* network 41 -> 192 ELU -> 192 ELU -> 12 (linear), standardised inputs and outputs; Adam, learning rate "
        f"1e-3 with cosine decay, batch 256, {args.epochs} epochs, 10% of the {n_total} transitions held out; "
        f"training took {train_seconds:.0f} s.",
        f"* final RMS torque error: train {rms_train:.3f} N m, validation {rms_val:.3f} N m.",
        "",
        "![speed tracking, height and time per step](laikago_mpc.png)",
        "",
    ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
