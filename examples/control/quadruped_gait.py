#!/usr/bin/env python3
"""Paper 002, section 3.3: a quadruped learns to run with a clock-driven policy network trained
through the physics (gradyn.Policy: the closed loop and its adjoint in C++), against a hand-tuned
open-loop trot through the same servos.

    nice .venv/bin/python examples/control/quadruped_gait.py             # the experiment (~15 min, 2 cores)
    .venv/bin/python examples/control/quadruped_gait.py --quick          # a smoke run (seconds)

Robot: laikago (models/laikago/laikago_toes_zup.urdf through examples/laikago_contact/
laikago_scene.py's MJCF: free base, 25.6 kg, 12 hinges, four toe spheres of radius 3 cm on a
plane, friction 1; the chassis and leg collision meshes are not shipped, so the toes are the only
collision geometry). Each hinge has a torque-limited position servo, an MJCF <general> actuator
whose target is the stance angle plus the control: torque = clip(kp (stance + ctrl - q) - kv v,
+-TORQUE_LIMIT), kp 150 N m/rad and kv 5 N m s/rad (laikago_scene's standing gains), so ctrl = 0
holds the stance (hips 0, thighs -0.1 rad, knees -0.45 rad, base 0.51 m up). Torque limit 25 N m:
on this model the four-legged stance holds from 10 N m (at 9.5 N m the legs fold; a scan in 0.5 N m
steps); a trot carries the 25.6 kg on two legs, about twice the load: at 15 N m 292 of the trot
grid's 300 gaits below fell and none moved forward, at 20 N m the fastest made 0.15 m/s. 25 N m is
2.5 times the stance's need, leaving a margin for the swing. (Paper 002: 4 N m on a 28.7 kg robot;
this robot cannot stand on 4 N m.)

Contact: gradyn's 'ipm' (paper 000's interior-point LCP) with the complementarity relaxation
ipm_kappa = 3e-3 (m/s)(N s) (Dojo's smoothing): the "relaxed" contact, on which the network is
trained and compared with the trot. Why: on this robot the weight gradient of 'pgs' leaves central
differences after ~0.5 s (its solves stop at the iteration limit on some steps and the implicit
gradient assumes a converged active set), 'penalty' at dt = 2 ms explodes (adjoint 1e14 after 1 s),
and exact 'ipm' (kappa 0) matches central differences for 2 s but gives no gradient for lifting a
foot (a contact's force switching off is a kink the gradient does not see): from standing, no
setting of Adam tried on it (or on 'pgs') passed 0.04 m/s without the robot falling. kappa 3e-3
makes every contact slightly soft and smooth, so the gradient sees lift-off; its price is a slow
creep of a standing robot (about -3 cm/s here), and a model that is not the exact LCP. (kappa 1e-3
stalled at 0.16 m/s; 1e-2 learned as fast but creeps at -6 cm/s and slowed the trot to 0.26 m/s.)
Both gaits are also replayed on the exact contact (kappa 0), where the trot grid is tuned again;
the .md reports both. Tried and dropped (numbers from that run, not rewritten by this script): a
second stage on the exact contact, from stage 1's fastest gait that stays up there: 705 faster
stage-1 gaits fell on the exact contact, the one handed over made 0.10 m/s there, and 1600 Adam
updates on the exact contact (clipped, lr 2.5e-5) took it to 0.115 m/s against the exact-contact
trot's 0.510.
Gradient: Policy.rollout_vjp over the whole 10 s with clip_norm = 1 (the adjoint carried back one
step is scaled down to norm 1 when longer; not the exact gradient, by design): without it the
weight gradient reached 1e3-1e10 on the gaits found and turned non-finite on some (an unclipped
run of 2500 updates took no step after update ~551: every gradient from there was non-finite;
clipped, training reached 0.42 m/s in 200 updates where unclipped it had 0.32). Truncating with
decay 0.995, tried at kappa 1e-3 and 1e-2 without clipping, learned nothing.
Semi-implicit Euler, dt = 2 ms, 10 s (5000 steps), started at rest in the stance.

Hand-tuned trot (the baseline; "hand tuning" here means a small grid, printed in the .md): diagonal
legs in phase (FR with RL, FL with RR), half a cycle between the pairs; phase th = 2 pi f t (+ pi):
thigh ctrl = -A_thigh sin(th) (the toe swings forward and back), knee ctrl = -A_knee max(0, cos(th))
(the knee bends, lifting the toe, while it swings forward), hip ctrl = +h (legs splayed outward).
Grid: f in 1, 1.5, 2, 2.5, 3 Hz; A_thigh 0.1-0.4 rad; A_knee 0.1-0.6 rad; h 0, 0.1, 0.2 rad; the
trot is the fastest whose body never tilts past 60 degrees nor drops below 0.3 m.

Network (paper 002, section 3.3): inputs sin and cos of 2 pi 1.5 Hz t, 2 hidden layers of 128 relu,
12 linear outputs (the servo controls; the paper has 8, the hip abductions being fixed; here they
are actuated), the output layer zero (weights and biases: the robot starts standing), 18,444
weights. The paper also feeds the inputs straight to the output layer; gradyn.Policy has no skip
connection. One robot per update; Adam (torch.optim), learning rate 1e-4. Loss (GaitLoss):
-(x_T - x_0) / 10 s (the base's average forward velocity, paper 002's objective)
+ 10 mean(max(0, 0.9 - u_z)^2) + 10 mean(max(0, 0.4 m - z)^2) (u_z the base's up-axis z
component: tilts past 26 degrees; a sinking base); its adjoint w.r.t. the configurations is
built in NumPy (GaitLoss.adjoint). A term 2 mean(1 - u_z) keeping the trunk level was tried and
learned less (unclipped: 0.31 m/s after 600 updates against 0.38 after 500 without it).
Safeguard: an update whose 10-s rollout falls (u_z < 0.5 or base below 0.3 m anywhere), or whose
gradient is not finite, is rejected: the weights and Adam's state go back to the last accepted ones
and the step is retaken at half the rate, then a quarter, an eighth; after 4 rejections in a row,
training restarts from the best weights so far with a fresh Adam at half the learning rate. (The
retries alone stall: the gradient leads to gaits where a weight change of 1e-15 decides whether the
robot falls within the 10 s. Scoring a fallen rollout up to its fall instead (early termination),
as tried, left the network falling at nearly every update after its first falls: 1942 of 2150.)
The reported gait is the fastest 10-s rollout that did not fall. "Flipped": u_z < 0, i.e. upside
down.

Writes quadruped_gait.md (numbers, seed, command), quadruped_gait.png (speed vs update, the trot's
line), quadruped_gait.html (the best gait's 10 s: a self-contained gradyn.viewer recording, open
it in a browser) and quadruped_gait_best.npz (its weights, every tenth configuration) beside this
file, or in --out.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import pathlib
import platform
import re
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402

import gradyn  # noqa: E402

DT, SECONDS = 2e-3, 10.0
TORQUE_LIMIT = 25.0  # N m, every servo
KP, KV = scene.KP, scene.KD  # 150 N m/rad, 5 N m s/rad
IPM_KAPPA = 3e-3
CLIP_NORM = 1.0  # Policy.rollout_vjp's clip_norm: the adjoint carried back a step is scaled to at most this norm
CLOCK_HZ = 1.5
FALL_UP, FALL_Z = 0.5, 0.3  # a rollout "falls" where u_z < FALL_UP or the base is below FALL_Z m
TROT_GRID = {"f": [1.0, 1.5, 2.0, 2.5, 3.0], "thigh": [0.1, 0.2, 0.3, 0.4], "knee": [0.1, 0.2, 0.3, 0.4, 0.6],
             "hip": [0.0, 0.1, 0.2]}
QUICK_TROT_GRID = {"f": [2.5], "thigh": [0.1, 0.2], "knee": [0.3], "hip": [0.1]}


def laikago(kappa: float = IPM_KAPPA, torque_limit: float = TORQUE_LIMIT):
    """laikago on the plane with a torque-limited position servo per hinge around the stance
    (ctrl 0 = stance) and 'ipm' contact relaxed by kappa."""
    xml = scene.mujoco_xml(timestep=DT)  # one <motor> per hinge; replaced by the servos below
    head, actuators = xml.split("<actuator>")
    servos = []
    for name in re.findall(r'<motor name="([^"]+)"', actuators):
        rest = scene.stance_angle(name)
        # MuJoCo's affine <general>: force = gain ctrl + bias0 + bias1 q + bias2 v, clamped to forcerange
        servos.append(f'    <general name="{name}" joint="{name}" biastype="affine" gainprm="{KP!r}" '
                      f'biasprm="{KP * rest!r} {-KP!r} {-KV!r}" forcerange="{-torque_limit!r} {torque_limit!r}"/>')
    xml = head + "<actuator>\n" + "\n".join(servos) + "\n  </actuator>\n</mujoco>\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "laikago_servos.xml")
        with open(path, "w") as f:
            f.write(xml)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MJCF elements gradyn does not simulate (none act here)
            model = gradyn.load(path, contact="ipm")
    return model.with_contact(model="ipm", ipm_kappa=kappa)


def start_state(model):
    """At rest in the stance, toes touching the ground."""
    return scene.stance(model, clearance=0.0), np.zeros(model.nv)


def up_z(qs):
    """z component of the base's up axis; gradyn's free-joint quaternion is q[3:7] = (x, y, z, w)."""
    qs = np.asarray(qs)
    return 1.0 - 2.0 * (qs[..., 3] ** 2 + qs[..., 4] ** 2)


def forward_speed(qs, seconds):
    """The base's average forward (+x) velocity over the rollout: displacement / time."""
    return (qs[..., -1, 0] - qs[..., 0, 0]) / seconds


def fell(qs):
    return bool(up_z(qs).min() < FALL_UP or qs[:, 2].min() < FALL_Z)


def trot_controls(model, steps, f, thigh, knee, hip):
    """The open-loop trot's (steps, nu) controls at t = k dt (the policy's clock)."""
    t = np.arange(steps) * DT
    ctrls = np.zeros((steps, model.nu))
    for i, name in enumerate(model.actuator_names):
        phase = 2 * np.pi * f * t + (0.0 if name[:2] in ("FR", "RL") else np.pi)
        if name.endswith("_upper_leg_2_hip_motor_joint"):
            ctrls[:, i] = -thigh * np.sin(phase)
        elif name.endswith("_lower_leg_2_upper_leg_joint"):
            ctrls[:, i] = -knee * np.maximum(0.0, np.cos(phase))
        else:
            ctrls[:, i] = hip
    return ctrls


def tune_trot(model, q0, v0, steps, grid):
    """Every trot of the grid in one batched rollout; rows (params, speed, min u_z, min z, fell)
    and the index of the fastest that did not fall."""
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    ctrls = np.array([trot_controls(model, steps, **c) for c in combos])
    B = len(combos)
    qs, _ = gradyn.rollout(model, np.tile(q0, (B, 1)), np.tile(v0, (B, 1)), None, DT, ctrls=ctrls)
    seconds = steps * DT
    rows = [(c, float(forward_speed(q, seconds)), float(up_z(q).min()), float(q[:, 2].min()), fell(q))
            for c, q in zip(combos, qs)]
    standing = [i for i, r in enumerate(rows) if not r[4]]
    best = max(standing, key=lambda i: rows[i][1]) if standing else None
    return rows, best


class GaitLoss:
    """-(average forward velocity) plus the trunk terms (module docstring) over a rollout of `steps`
    steps, and its adjoint w.r.t. the rollout's configurations qs, shape (steps + 1, nq) (nothing
    depends on the velocities). level: weight of mean(1 - u_z) (0 in the experiment)."""

    def __init__(self, steps, level=0.0, guard=10.0, up_min=0.9, z_min=0.4):
        self.seconds = steps * DT
        self.level, self.guard, self.up_min, self.z_min = level, guard, up_min, z_min

    def __call__(self, qs):
        u = up_z(qs)
        tilt = np.maximum(0.0, self.up_min - u)
        sink = np.maximum(0.0, self.z_min - qs[:, 2])
        return float(-forward_speed(qs, self.seconds) + self.level * np.mean(1.0 - u)
                     + self.guard * np.mean(tilt ** 2) + self.guard * np.mean(sink ** 2))

    def adjoint(self, qs):
        n = len(qs)
        u = up_z(qs)
        tilt = np.maximum(0.0, self.up_min - u)
        sink = np.maximum(0.0, self.z_min - qs[:, 2])
        bar = np.zeros_like(qs)
        bar[-1, 0] -= 1.0 / self.seconds
        bar[0, 0] += 1.0 / self.seconds
        u_bar = (-self.level - 2.0 * self.guard * tilt) / n  # d loss / d u_z at each row
        bar[:, 3] += u_bar * (-4.0 * qs[:, 3])
        bar[:, 4] += u_bar * (-4.0 * qs[:, 4])
        bar[:, 2] += -2.0 * self.guard * sink / n
        return bar


def make_policy(model, seed):
    return gradyn.Policy(model, [f"clock.sin({CLOCK_HZ})", f"clock.cos({CLOCK_HZ})"], hidden=[128, 128],
                         activation="relu", seed=seed, zero_last_layer=True)


def train(model, policy, q0, v0, steps, updates, lr, clip_norm=CLIP_NORM, log_every=25, retries=4):
    """Adam on Policy.rollout_vjp's weight gradient (clipped through time at clip_norm), from
    policy.weights, with the fall safeguard (module docstring). Returns the history (one dict per
    rollout) and the best weights: (speed, weights, update) of the fastest rollout that did not fall."""
    import torch

    loss = GaitLoss(steps)
    weights = torch.tensor(policy.weights.copy(), requires_grad=True)
    optimizer = torch.optim.Adam([weights], lr=lr)
    history, best = [], (-np.inf, policy.weights.copy(), -1)
    accepted = None  # (weights, gradient, Adam state before its step) of the last accepted rollout
    streak, restarts = 0, 0
    started = time.perf_counter()

    def set_lr(value):
        for group in optimizer.param_groups:
            group["lr"] = value

    for k in range(updates):
        w = weights.detach().numpy().copy()
        qs, vs, _, status = policy.rollout(q0, v0, steps, DT, weights=w)
        u = up_z(qs)
        row = {"update": k, "speed": float(forward_speed(qs, steps * DT)), "up_min": float(u.min()),
               "z_min": float(qs[:, 2].min()), "flipped": bool(u.min() < 0), "fell": fell(qs),
               "flagged_steps": int((status != 0).sum()), "lr": lr, "restart": False, "nonfinite": False}
        if not row["fell"] and row["speed"] > best[0]:
            best = (row["speed"], w, k)
        g = None
        if not row["fell"]:
            g = policy.rollout_vjp(qs, vs, loss.adjoint(qs), np.zeros_like(vs), DT, weights=w,
                                   clip_norm=clip_norm)["weights"]
            row.update(loss=loss(qs), grad_norm=float(np.linalg.norm(g)), nonfinite=not np.isfinite(g).all())
        if (row["fell"] or row["nonfinite"]) and accepted is not None:
            streak += 1
            if streak < retries:  # back to the last accepted weights and Adam state; half the step
                with torch.no_grad():
                    weights.copy_(torch.tensor(accepted[0]))
                optimizer.load_state_dict(copy.deepcopy(accepted[2]))  # (a copy: Adam updates its state in place)
                set_lr(lr * 0.5 ** streak)
                optimizer.zero_grad()
                weights.grad = torch.tensor(accepted[1])
                optimizer.step()
            else:  # stalled: from the best weights with a fresh Adam at half the learning rate
                streak, restarts, lr = 0, restarts + 1, 0.5 * lr
                optimizer = torch.optim.Adam([weights], lr=lr)
                with torch.no_grad():
                    weights.copy_(torch.tensor(best[1]))
                accepted = None
                row["restart"] = True
            row.update(accepted=False, seconds=time.perf_counter() - started)
            history.append(row)
            continue
        row.update(accepted=g is not None and not row["nonfinite"], seconds=time.perf_counter() - started)
        history.append(row)
        if not row["accepted"]:  # the very first rollout fell or had no finite gradient: nothing to step on
            break
        streak = 0
        accepted = (w, g, copy.deepcopy(optimizer.state_dict()))
        set_lr(lr)
        optimizer.zero_grad()
        weights.grad = torch.tensor(g)
        optimizer.step()
        if log_every and (k % log_every == 0 or k == updates - 1):
            print(f"update {k:5d}: speed {row['speed']:+.3f} m/s, min u_z {row['up_min']:.2f}, loss "
                  f"{row['loss']:+.4f}, |grad| {row['grad_norm']:.3g}, lr {lr:.2g}, best {best[0]:+.3f} m/s, "
                  f"{sum(not h['accepted'] for h in history)} rejected, {restarts} restarts, "
                  f"{row['seconds']:.0f} s", flush=True)
    return history, best


def replay(model, q0, v0, steps, policy=None, weights=None, ctrls=None):
    if policy is not None:
        return policy.rollout(q0, v0, steps, DT, weights=weights)[0]
    return gradyn.rollout(model, q0, v0, None, DT, ctrls=ctrls)[0]


def perturbed_starts(model, q0, v0, steps, count=8, sigma=0.05, seed=0, policy=None, weights=None, ctrls=None):
    """The gait from `count` starts whose velocities (every entry) get N(0, sigma) noise: (speeds,
    fell, flipped) per world, in one batched rollout."""
    rng = np.random.default_rng(seed)
    q0s, v0s = np.tile(q0, (count, 1)), v0 + sigma * rng.normal(size=(count, model.nv))
    if policy is not None:
        qs = policy.rollout(q0s, v0s, steps, DT, weights=weights)[0]
    else:
        qs = gradyn.rollout(model, q0s, v0s, None, DT, ctrls=np.tile(ctrls, (count, 1, 1)))[0]
    return forward_speed(qs, steps * DT), np.array([fell(q) for q in qs]), up_z(qs).min(axis=1) < 0


def evaluate(model, q0, v0, steps, policy=None, weights=None, ctrls=None):
    """A gait's 10-s numbers on `model`: its trajectory, speed, min u_z, min base height, flipped,
    and the perturbed starts."""
    qs = replay(model, q0, v0, steps, policy=policy, weights=weights, ctrls=ctrls)
    u = up_z(qs)
    return {"qs": qs, "speed": float(forward_speed(qs, steps * DT)), "up_min": float(u.min()),
            "z_min": float(qs[:, 2].min()), "flipped": bool(u.min() < 0),
            "noisy": perturbed_starts(model, q0, v0, steps, policy=policy, weights=weights, ctrls=ctrls)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 0.5 s rollouts, 2 trots, 5 updates")
    ap.add_argument("--updates", type=int, default=800)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--clip", type=float, default=CLIP_NORM, help="clip_norm of Policy.rollout_vjp (0: exact gradient)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="folder for the .md/.png/.html/.npz (default: beside this file)")
    args = ap.parse_args()
    args.load = os.getloadavg()[0]
    steps, grid = int(round(SECONDS / DT)), TROT_GRID
    if args.quick:
        steps, grid, args.updates = 250, QUICK_TROT_GRID, 5
    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    models = {"relaxed": laikago(), "exact": laikago(kappa=0.0)}
    q0, v0 = start_state(models["relaxed"])
    print(f"laikago: {sum(models['relaxed'].body_masses):.1f} kg, {models['relaxed'].nu} servos limited to "
          f"{TORQUE_LIMIT:g} N m, {steps} steps of {DT * 1e3:g} ms; load average {args.load:.1f}", flush=True)

    trots = {}
    for name, model in models.items():
        started = time.perf_counter()
        rows, best_row = tune_trot(model, q0, v0, steps, grid)
        if best_row is None:
            raise SystemExit(f"no trot of the grid stays up on the {name} contact")
        params = rows[best_row][0]
        trots[name] = {"rows": rows, "params": params, "seconds": time.perf_counter() - started,
                       **evaluate(model, q0, v0, steps, ctrls=trot_controls(model, steps, **params))}
        print(f"hand-tuned trot, {name} contact, {params}: {trots[name]['speed']:.3f} m/s over {steps * DT:g} s "
              f"({len(rows)} trots in {trots[name]['seconds']:.0f} s, {sum(r[4] for r in rows)} fell)", flush=True)
    # the relaxed contact's trot, replayed on the exact contact
    trots["relaxed on exact"] = evaluate(models["exact"], q0, v0, steps,
                                         ctrls=trot_controls(models["exact"], steps, **trots["relaxed"]["params"]))

    policies = {name: make_policy(model, args.seed) for name, model in models.items()}
    history, best = train(models["relaxed"], policies["relaxed"], q0, v0, steps, args.updates, args.lr,
                          clip_norm=args.clip, log_every=1 if args.quick else 25)
    nets = {name: evaluate(models[name], q0, v0, steps, policy=policies[name], weights=best[1]) for name in models}
    for name, r in nets.items():
        print(f"network, best (update {best[2]}), on the {name} contact: {r['speed']:.3f} m/s, flipped "
              f"{r['flipped']} (trot tuned there: {trots[name]['speed']:.3f} m/s)", flush=True)
    print(f"training: {len(history)} updates, {sum(not h['accepted'] for h in history)} rejected, "
          f"{sum(h['flipped'] for h in history)} flipped, {history[-1]['seconds']:.0f} s", flush=True)

    import gradyn.viewer

    html = out_dir / "quadruped_gait.html"
    gradyn.viewer.record(models["relaxed"], nets["relaxed"]["qs"], str(html), dt=DT, progress=False,
                         title=f"gradyn: laikago, the network's gait ({nets['relaxed']['speed']:.2f} m/s)")
    np.savez_compressed(out_dir / "quadruped_gait_best.npz", weights=best[1], qs=nets["relaxed"]["qs"][::10],
                        dt=10 * DT)
    write_results(args, out_dir, models["relaxed"], policies["relaxed"], steps, grid, trots, nets, history, best)
    print(f"wrote {out_dir / 'quadruped_gait.md'}, {html.name} ({html.stat().st_size / 1e6:.1f} MB)")


def write_results(args, out_dir, model, policy, steps, grid, trots, nets, history, best):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seconds = steps * DT
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ok = [h for h in history if h["accepted"]]
    ax.plot([h["update"] for h in ok], [h["speed"] for h in ok], lw=0.8,
            label="network (Adam on the clipped analytic gradient), accepted updates")
    falls = [h for h in history if h["fell"]]
    if falls:
        ax.plot([h["update"] for h in falls], [h["speed"] for h in falls], "x", color="tab:red", ms=3,
                label="rejected: the rollout fell (its 10-s speed)")
    for i, u in enumerate(h["update"] for h in history if h["restart"]):
        ax.axvline(u, color="tab:gray", lw=0.5, ls=":", label="restart from the best weights" if i == 0 else None)
    ax.axhline(trots["relaxed"]["speed"], color="k", ls="--", lw=1,
               label=f"hand-tuned trot ({trots['relaxed']['speed']:.2f} m/s)")
    ax.plot([best[2]], [best[0]], "o", color="tab:green", label=f"best network ({best[0]:.2f} m/s)")
    ax.set_xlabel("update (one 10 s rollout; + one reverse pass if it did not fall)")
    ax.set_ylabel(f"average forward speed over {seconds:g} s [m/s]")
    ax.set_title(f"laikago, {TORQUE_LIMIT:g} N m servos, relaxed ipm contact: clock-driven 2 x 128 relu policy",
                 fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out_dir / "quadruped_gait.png", dpi=120)

    options = [("--quick", args.quick), (f"--updates {args.updates}", not args.quick and args.updates != 800),
               (f"--lr {args.lr:g}", args.lr != 1e-4), (f"--clip {args.clip:g}", args.clip != CLIP_NORM),
               (f"--seed {args.seed}", args.seed != 0)]
    command = "`nice .venv/bin/python examples/control/quadruped_gait.py" + "".join(
        " " + o for o, used in options if used) + "`"
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass

    def noisy(result):
        speeds, down, flipped_worlds = result
        up = speeds[~down]
        spread = f"{up.min():.3f} to {up.max():.3f}" if up.size else "-"
        return f"{int(down.sum())} of {len(down)}, {int(flipped_worlds.sum())}, {spread}"

    def row(label, r):
        return (f"| {label} | {r['speed']:.3f} | {r['up_min']:.2f} | {r['z_min']:.2f} | "
                f"{'yes' if r['flipped'] else 'no'} | {noisy(r['noisy'])} |")

    params = lambda p: ", ".join(f"{k} {v:g}" for k, v in p.items())  # noqa: E731
    per_update = history[-1]["seconds"] / len(history)
    first_past = next((h["update"] for h in history if not h["fell"] and h["speed"] > trots["relaxed"]["speed"]),
                      None)
    lines = [
        "# Quadruped gait (paper 002, section 3.3)\n",
        f"Written by {command} (seed {args.seed}; {cpu}, {os.cpu_count()} cores, load average {args.load:.1f} at "
        f"the start). laikago ({sum(model.body_masses):.1f} kg), 12 position servos (kp {KP:g}, kv {KV:g}) limited "
        f"to {TORQUE_LIMIT:g} N m, {steps} steps of {DT * 1e3:g} ms ({seconds:g} s), started at rest in the stance. "
        f"Contact: 'ipm' relaxed by ipm_kappa {IPM_KAPPA:g} (smooth; the network is trained and compared on it), "
        "and the exact LCP (kappa 0) for the replays. Speed: the base's displacement along +x over the rollout "
        f"divided by its {seconds:g} s. u_z: the base's up-axis z component (flipped: u_z < 0). Perturbed starts: "
        "the same gait from the stance with N(0, 0.05) noise on every velocity (m/s, rad/s), 8 draws (seed 0): "
        "how many fell, how many flipped, the slowest to the fastest speed of those that stayed up. The model and "
        "every choice are in the script's docstring.\n",
        "| contact | gait | forward speed (m/s) | min u_z | min base height (m) | flipped | "
        "8 perturbed starts: fell, flipped, speeds (m/s) |",
        "|---|---|---|---|---|---|---|",
        row(f"relaxed | hand-tuned trot ({params(trots['relaxed']['params'])})", trots["relaxed"]),
        row(f"relaxed | network, best of {len(history)} updates (update {best[2]})", nets["relaxed"]),
        row(f"exact | hand-tuned trot, tuned on the exact contact ({params(trots['exact']['params'])})",
            trots["exact"]),
        row("exact | the relaxed contact's trot, replayed", trots["relaxed on exact"]),
        row("exact | the network (trained on the relaxed contact), replayed", nets["exact"]),
        "",
        f"Training: {policy.param_count:,} weights (2 clock inputs at {CLOCK_HZ:g} Hz, 2 x 128 relu, 12 outputs, "
        f"output layer zero at the start); Adam lr {args.lr:g} (halved at each restart) on Policy.rollout_vjp's "
        f"weight gradient through the {seconds:g} s, clipped through time at norm {args.clip:g}; {len(history)} "
        f"updates in {history[-1]['seconds']:.0f} s ({per_update:.2f} s per update: a {seconds:g}-s rollout and, "
        f"unless it fell, its reverse pass; one core busy). Faster than the trot first at update "
        f"{first_past if first_past is not None else '(never)'}. Training rollouts that fell: "
        f"{sum(h['fell'] for h in history)}, of which flipped (u_z < 0): {sum(h['flipped'] for h in history)}; "
        f"non-finite gradients: {sum(h['nonfinite'] for h in history)}; rejected in all: "
        f"{sum(not h['accepted'] for h in history)}; restarts from the best weights: "
        f"{sum(h['restart'] for h in history)}. The best gait flipped: "
        f"{'yes' if nets['relaxed']['flipped'] else 'no'}.",
        "",
        f"Hand tuning: the same {len(trots['relaxed']['rows'])} trots on each contact "
        f"({', '.join(f'{k} {v}' for k, v in grid.items())}; f in Hz, amplitudes in rad), each set in one batched "
        "rollout; the five fastest that stayed up:",
        "",
        "| contact | f (Hz) | A_thigh | A_knee | hip | speed (m/s) | min u_z |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("relaxed", "exact"):
        rows = trots[name]["rows"]
        standing = sorted((r for r in rows if not r[4]), key=lambda r: -r[1])[:5]
        lines += [f"| {name} | {r[0]['f']:g} | {r[0]['thigh']:g} | {r[0]['knee']:g} | {r[0]['hip']:g} | {r[1]:.3f} | "
                  f"{r[2]:.2f} |" for r in standing]
        lines.append(f"| {name}: fell | {sum(r[4] for r in rows)} of {len(rows)} | | | | | |")
    lines += [
        "",
        "Deviations from paper 002: laikago (25.6 kg) with 25 N m servos, not the paper's 28.7 kg robot with "
        "4 N m (laikago needs 10 N m to stand; see the docstring); 12 outputs, not 8 (the hip abductions are "
        "actuated); no skip connection from the inputs to the output layer (gradyn.Policy has none); a relaxed "
        "contact (ipm kappa), whose gradient sees a foot lifting; the gradient is clipped through time; the "
        "loss adds trunk terms to the forward velocity, and updates whose rollout falls are rejected (the "
        "paper's gait somersaulted; here flipping is what the run must avoid). The robot's only collision "
        "geometry is its four toes (the URDF's meshes are not shipped), so a robot that falls sinks through "
        "the ground instead of landing on its body.",
        "",
        "View the gait: open `quadruped_gait.html`, a self-contained gradyn.viewer recording of the best "
        "network's 10 s on the relaxed contact (plays offline in a browser; drag to orbit, the Animations folder "
        "plays and scrubs). `quadruped_gait_best.npz` holds its weights and every tenth configuration "
        "(`weights`, `qs`, `dt`).",
        "",
        "![speed against update](quadruped_gait.png)",
    ]
    (out_dir / "quadruped_gait.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
