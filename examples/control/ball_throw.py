#!/usr/bin/env python3
"""Paper 002, section 2.1.1 (issue 17): throw a ball so that it lies still on (10, 0) after 5 s, by
gradient descent through the physics against CMA-ES.

    .venv/bin/python examples/control/ball_throw.py            # the experiment (a few minutes)
    .venv/bin/python examples/control/ball_throw.py --quick    # a smoke run (seconds)
    # the first line spelled out (the defaults):
    .venv/bin/python examples/control/ball_throw.py --seed 0 --cma-seeds 5 --cma-budget 20000 --gd-starts 8 --gd-restart-seeds 8 --gd-budget 5000

The scene: a ball of 1 m diameter (radius r = 0.5 m; 1 kg, a solid sphere: inertia 0.1 kg m^2; the
paper gives no mass) resting on a floor, centre at (0, 0, 0.5). Friction 1.0 and restitution 0.5
(set on the ball; the floor has 0 and 0, and a pair takes the larger of its two geoms'). PGS contact
(gradyn's velocity-level impulses, the only model with restitution), restitution threshold 0.1 m/s
(gradyn's default), gravity 9.81, semi-implicit Euler, dt = 0.01 s, 500 steps = 5 s.

Joints: three world-axis slide joints (x, y, z) and a ball joint, not a free joint. A free joint's
linear velocity is in the body frame, and the semi-implicit Euler step rotates it explicitly, so a
spinning body's linear speed grows by sqrt(1 + (|w| dt)^2) per step: a ball rolling at 14 m/s
(28 rad/s) blew up to NaN within 5 s at dt = 0.01 and ran away at dt = 0.001. With slides the linear
velocity is in world axes and has no such term; the ball joint's angular velocity is in the ball's
frame, and a sphere's (isotropic inertia) is constant there between contacts, as it should be. At
t = 0 the ball's frame is the world's, so the initial angular velocity is the world one; the loss
and tolerance use norms, which are the same in either frame. (RK4 is not available with PGS
contact: gradyn raises ValueError.)

The task (the paper's): after 5 s the ball at (10, 0) with zero velocity v and zero angular
velocity w, errors < 0.01 m and 0.01 m/s; we test |p(5) - (10, 0, 0.5)| < 0.01 m (height included:
the ball must lie on the floor, not be caught at the top of a hop), |v(5)| < 0.01 m/s and
|w(5)| < 0.01 rad/s. Loss: |p(5) - target|^2 + |v(5)|^2 + |w(5)|^2 (SI units, all weights 1).
Optimised: the six numbers v0 (m/s) and w0, both as the paper. Parameterisation (ours): theta =
(v0, r w0), the angular velocity as the surface speed it gives (m/s), so that all six numbers have
the units and the scale of the tolerance; both methods optimise the same theta from the same
initial guess theta = 0 (the ball at rest: the paper gives no initial guess).

Gradient descent: torch.optim.LBFGS with torch's defaults (lr 1, history 100, no line search)
except max_iter = 1 (one loss-and-gradient evaluation per iteration) and the tolerance tests off.
Each iteration is one forward rollout and one gradyn.rollout_vjp (the exact adjoint through the
PGS contact impulses). A sweep (written to the .md) also runs LBFGS at other learning rates,
LBFGS on the raw (v0, w0), and Adam; and the headline method runs again from --gd-starts random
initial throws theta0 ~ N(0, 1 m/s) per number, to show how much its success depends on the start.
Its steps are not monotone (no line search), which is what lets it leave the rolling valley from
rest. As the counterpart of CMA-ES's restarts, L-BFGS also runs from random throws with restarts
(a new random throw whenever the lowest loss has not halved in 50 iterations), --gd-restart-seeds
seeds, iterations counted over all restarts.

CMA-ES: the `cma` package, x0 = 0, sigma0 from a sweep {3, 10, 30} m/s, each over --cma-seeds seeds;
on cma's own stop (it stops when stuck in the rolling valley) it restarts from x0 with the population
doubled (IPOP-CMA-ES), all counted, up to --cma-budget evaluations per seed. Iterations are loss
evaluations (forward rollouts). The headline uses the sigma0 with the smallest median.

Both count evaluations up to and including the first evaluated point within the tolerance; wall
time is measured around the whole loop (threads = 1, torch one thread).

The loss landscape has a rolling valley: any throw that ends rolling at speed u has x(5) ~ 5 u, and
the best such throw (u = 5/3 m/s, loss 16.67) is where most runs of either method stall for a while
or for good; leaving it needs backspin (the ball slides with v and w reaching zero together: v0 ~ 14
m/s, w0 ~ -70 rad/s, or throws with hops that dissipate the speed).

Deviations from the paper: the mass, the scene's joints, the loss and its weights, the initial guess,
the optimiser (the paper says gradient descent; we use L-BFGS steps), dt (the paper gives none), and
CMA-ES's sigma0 and restarts are ours (the paper gives none of them). Selection, stated: the
(v0, r w0) parameterisation was adopted after L-BFGS at lr 1 failed on the raw (v0, w0) (both rows
are in the .md's sweep); CMA-ES's headline sigma0 is the best of its sweep.

Writes ball_throw.md (numbers, seed, command) and ball_throw.png beside this file, or in --out.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

import gradyn  # noqa: E402

RADIUS, MASS, FRICTION, RESTITUTION = 0.5, 1.0, 1.0, 0.5
DT, SECONDS = 0.01, 5.0
TARGET = np.array([10.0, 0.0, 0.0])  # slide displacements: x, y and z (z = 0: resting on the floor)
TOL_POSITION, TOL_VELOCITY, TOL_ANGULAR = 0.01, 0.01, 0.01
SCALE = np.array([1.0, 1.0, 1.0, 1.0 / RADIUS, 1.0 / RADIUS, 1.0 / RADIUS])  # v0 = SCALE * theta
PAPER = {"gd_iterations": 88, "gd_seconds": 16.3, "cma_iterations": 2422, "cma_seconds": 59.9}

XML = f"""<mujoco model="ball_throw">
  <worldbody>
    <geom name="floor" type="plane" size="100 100 0.1" friction="0 0 0"/>
    <body name="ball" pos="0 0 {RADIUS}">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="y" type="slide" axis="0 1 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <joint name="spin" type="ball"/>
      <geom name="ball" type="sphere" size="{RADIUS}" mass="{MASS}" friction="{FRICTION} 0 0"/>
    </body>
  </worldbody>
</mujoco>"""


def ball_model():
    """The ball on the floor: q = (x, y, z, qx, qy, qz, qw), v = (vx, vy, vz world; wx, wy, wz ball frame)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "ball_throw.xml"
        path.write_text(XML)
        model = gradyn.load(str(path), contact="pgs")
    # MJCF has no restitution: the ball's is set in the flat parameters.
    p = model.params
    p[model.param_names.index("ball.restitution")] = RESTITUTION
    return model.with_params(p)


def within_tolerance(position_error, velocity, angular_velocity):
    """The paper's test: position error < 0.01 m, |v| < 0.01 m/s, |w| < 0.01 rad/s."""
    return bool(np.linalg.norm(position_error) < TOL_POSITION and np.linalg.norm(velocity) < TOL_VELOCITY
                and np.linalg.norm(angular_velocity) < TOL_ANGULAR)


class Throw:
    """The loss of a throw theta = (v0, r w0) and its gradient; counts evaluations."""

    def __init__(self, seconds=SECONDS, dt=DT, scaled=True):
        self.model = ball_model()
        self.dt, self.steps = dt, int(round(seconds / dt))
        self.scale = SCALE if scaled else np.ones(6)
        self.q0 = self.model.neutral()
        self.taus = np.zeros((self.steps, self.model.nv))
        self.evaluations = 0

    def v0(self, theta):
        return self.scale * np.asarray(theta, dtype=float)

    def rollout(self, theta):
        return gradyn.rollout(self.model, self.q0, self.v0(theta), self.taus, self.dt, threads=1)

    def loss(self, theta):
        """(loss, within tolerance, (position error, v(5), w(5)))."""
        qs, vs = self.rollout(theta)
        self.evaluations += 1
        return self._loss(qs, vs)

    def _loss(self, qs, vs):
        error, v, w = qs[-1, :3] - TARGET, vs[-1, :3], vs[-1, 3:]
        value = float(error @ error + v @ v + w @ w)
        return value, within_tolerance(error, v, w), (error, v, w)

    def loss_and_gradient(self, theta):
        """(loss, d loss / d theta, within tolerance, errors): one rollout and one rollout_vjp."""
        v0 = self.v0(theta)
        qs, vs = gradyn.rollout(self.model, self.q0, v0, self.taus, self.dt, threads=1)
        self.evaluations += 1
        value, ok, (error, v, w) = self._loss(qs, vs)
        qs_bar, vs_bar = np.zeros_like(qs), np.zeros_like(vs)
        qs_bar[-1, :3] = 2.0 * error
        vs_bar[-1] = 2.0 * vs[-1]
        v0_bar = gradyn.rollout_vjp(self.model, self.q0, v0, self.taus, self.dt, qs_bar, vs_bar, qs=qs, vs=vs,
                                    threads=1)[1]
        return value, v0_bar * self.scale, ok, (error, v, w)


def run_gradient(throw, method="lbfgs", lr=1.0, max_iterations=1000, theta0=None, stall=None):
    """Gradient descent from theta0 (default 0) until the first evaluated point within tolerance.
    stall=(window, factor): also stop when the lowest loss has not fallen below factor times its value
    `window` iterations earlier (or the rollout diverged).
    Returns a dict: history [(evaluations, loss, seconds)], solved_at (evaluations or None), theta."""
    import torch

    start_point = np.zeros(6) if theta0 is None else np.asarray(theta0, dtype=float)
    theta = torch.tensor(start_point, dtype=torch.float64, requires_grad=True)
    if method == "lbfgs":
        optimizer = torch.optim.LBFGS([theta], lr=lr, max_iter=1, history_size=100, tolerance_grad=0.0,
                                      tolerance_change=0.0)
    elif method == "adam":
        optimizer = torch.optim.Adam([theta], lr=lr)
    else:
        raise ValueError(f"method: expected 'lbfgs' or 'adam', got {method!r}")
    history, state = [], {"solved": None, "theta": None}
    start = throw.evaluations
    started = time.perf_counter()

    def closure():
        optimizer.zero_grad()
        point = theta.detach().numpy().copy()
        value, grad, ok, _ = throw.loss_and_gradient(point)
        history.append((throw.evaluations - start, value, time.perf_counter() - started))
        if ok and state["solved"] is None:
            state["solved"], state["theta"] = throw.evaluations - start, point
        theta.grad = torch.tensor(grad)
        return value

    lowest = []
    while state["solved"] is None and throw.evaluations - start < max_iterations:
        optimizer.step(closure)
        if not np.isfinite(history[-1][1]):
            break
        lowest.append(min(history[-1][1], lowest[-1]) if lowest else history[-1][1])
        if stall is not None and len(lowest) > stall[0] and lowest[-1] > stall[1] * lowest[-1 - stall[0]]:
            break
    return {"history": history, "solved_at": state["solved"],
            "theta": state["theta"] if state["theta"] is not None else theta.detach().numpy().copy(),
            "seconds": history[-1][2]}


def run_gradient_restarts(seed, budget, stall=(50, 0.5)):
    """L-BFGS (lr 1) from random throws theta0 ~ N(0, 1 m/s), restarted from a new one whenever it
    stalls (see run_gradient), until the tolerance or `budget` iterations in all."""
    import warnings

    rng = np.random.default_rng(seed)
    used, restarts, seconds, history = 0, 0, 0.0, []
    while used < budget:
        with warnings.catch_warnings():  # a diverged trial rollout (a huge step) is a stall: restart
            warnings.simplefilter("ignore", RuntimeWarning)
            run = run_gradient(Throw(), "lbfgs", 1.0, budget - used, theta0=rng.normal(0.0, 1.0, 6), stall=stall)
        history += [(used + e, value, seconds + t) for e, value, t in run["history"]]
        used, seconds = used + len(run["history"]), seconds + run["seconds"]
        if run["solved_at"] is not None:
            return {"solved_at": used, "restarts": restarts, "seconds": seconds, "history": history}
        restarts += 1
    return {"solved_at": None, "restarts": restarts, "seconds": seconds, "history": history}


def run_cma(throw, sigma0, seed, budget):
    """IPOP-CMA-ES from theta = 0 until the first evaluated point within tolerance or `budget`
    evaluations. Returns a dict: history [(evaluations, best loss so far, seconds)], solved_at,
    restarts, theta."""
    import cma

    history, best, solved, best_theta, restarts = [], np.inf, None, None, 0
    start = throw.evaluations
    started = time.perf_counter()
    popsize = 4 + int(3 * np.log(6))  # cma's default for 6 dimensions
    while solved is None and throw.evaluations - start < budget:
        es = cma.CMAEvolutionStrategy(np.zeros(6), sigma0, {"seed": seed * 1000 + restarts + 1, "popsize": popsize,
                                                            "verbose": -9})
        while solved is None and not es.stop() and throw.evaluations - start < budget:
            candidates = es.ask()
            values = []
            for x in candidates:
                value, ok, _ = throw.loss(x)
                values.append(value)
                if value < best:
                    best, best_theta = value, np.asarray(x).copy()
                history.append((throw.evaluations - start, best, time.perf_counter() - started))
                if ok:
                    solved, best_theta = throw.evaluations - start, np.asarray(x).copy()
                    break
                if throw.evaluations - start >= budget:
                    break
            if len(values) == len(candidates):
                es.tell(candidates, values)
        if solved is None and throw.evaluations - start < budget:
            restarts += 1
            popsize *= 2
    return {"history": history, "solved_at": solved, "restarts": restarts, "theta": best_theta,
            "seconds": history[-1][2]}


def describe(throw, theta):
    """The throw in world terms and where it ends."""
    v0 = throw.v0(theta)
    _, ok, (error, v, w) = throw.loss(theta)
    throw.evaluations -= 1  # a report, not an iteration
    return (f"v0 = ({v0[0]:.3f}, {v0[1]:.3f}, {v0[2]:.3f}) m/s, w0 = ({v0[3]:.3f}, {v0[4]:.3f}, {v0[5]:.3f}) rad/s; "
            f"at 5 s: position error {np.linalg.norm(error):.4f} m, |v| {np.linalg.norm(v):.4f} m/s, "
            f"|w| {np.linalg.norm(w):.4f} rad/s ({'within' if ok else 'NOT within'} tolerance)")


def shown(n):
    return "not reached" if n is None else str(n)


def span(runs):
    """'lo to hi' of the evaluations to tolerance over runs ('not reached' counted as the top)."""
    counts = [r["solved_at"] for r in runs]
    reached = [c for c in counts if c is not None]
    top = "not reached" if None in counts else str(max(reached)) if reached else "-"
    return f"{min(reached) if reached else 'not reached'} to {top}"


def median_solved(runs, budget):
    """Median evaluations over seeds, a run that never reached the tolerance counted as > budget."""
    counts = sorted(r["solved_at"] if r["solved_at"] is not None else np.inf for r in runs)
    m = counts[len(counts) // 2] if len(counts) % 2 else 0.5 * (counts[len(counts) // 2 - 1] + counts[len(counts) // 2])
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 CMA-ES seed, small budgets, no sweep")
    ap.add_argument("--seed", type=int, default=0, help="CMA-ES seeds are seed, seed + 1, ...")
    ap.add_argument("--cma-seeds", type=int, default=5)
    ap.add_argument("--cma-budget", type=int, default=20000, help="evaluations per CMA-ES seed at most")
    ap.add_argument("--gd-starts", type=int, default=8, help="extra gradient runs from random throws N(0, 1 m/s)")
    ap.add_argument("--gd-restart-seeds", type=int, default=8, help="seeds of L-BFGS with restarts from random throws")
    ap.add_argument("--gd-budget", type=int, default=5000, help="iterations per seed of L-BFGS with restarts at most")
    ap.add_argument("--out", default=None, help="folder for ball_throw.md/.png (default: beside this file)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    if args.quick:
        args.cma_seeds, args.cma_budget, args.gd_starts, args.gd_restart_seeds, args.gd_budget = 1, 300, 0, 1, 100
    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    throw = Throw()
    gd_cap = args.gd_cap = 60 if args.quick else 1000

    # The headline gradient run: L-BFGS at torch's default step, scaled parameters.
    gd = run_gradient(throw, "lbfgs", 1.0, gd_cap)
    print(f"gradient (L-BFGS lr 1): {shown(gd['solved_at'])} iterations, {gd['seconds']:.2f} s; "
          f"{describe(throw, gd['theta'])}", flush=True)

    # The gradient sweep (informative: which settings reach the tolerance at all).
    sweep = []
    if not args.quick:
        for method, lr, scaled, cap in (("lbfgs", 0.1, True, 1000), ("lbfgs", 0.2, True, 1000),
                                        ("lbfgs", 0.5, True, 1000), ("lbfgs", 1.0, False, 1000),
                                        ("lbfgs", 0.5, False, 1000), ("adam", 0.03, True, 3000),
                                        ("adam", 0.1, True, 3000), ("adam", 0.1, False, 3000),
                                        ("adam", 0.3, False, 3000)):
            run = run_gradient(Throw(scaled=scaled), method, lr, cap)
            final = min(h[1] for h in run["history"])
            sweep.append((method, lr, scaled, cap, run, final))
            print(f"  sweep {method} lr {lr} {'(v0, r w0)' if scaled else '(v0, w0)'}: "
                  f"{shown(run['solved_at'])} iterations, {run['seconds']:.2f} s, lowest loss {final:.3g}", flush=True)

    # The headline gradient method from random initial throws (robustness; not the paper's test).
    starts = []
    rng = np.random.default_rng(args.seed)
    for k in range(args.gd_starts):
        theta0 = rng.normal(0.0, 1.0, 6)
        run = run_gradient(Throw(), "lbfgs", 1.0, gd_cap, theta0=theta0)
        starts.append((theta0, run, min(h[1] for h in run["history"])))
        print(f"  random start {k}: {shown(run['solved_at'])} iterations, {run['seconds']:.2f} s, lowest loss "
              f"{starts[-1][2]:.3g}", flush=True)

    # The headline gradient method with restarts from random throws (as CMA-ES restarts), per seed.
    restarted = []
    for k in range(args.gd_restart_seeds):
        run = run_gradient_restarts(args.seed + k, args.gd_budget)
        restarted.append(run)
        print(f"  L-BFGS with restarts, seed {args.seed + k}: {shown(run['solved_at'])} iterations "
              f"({run['restarts']} restarts), {run['seconds']:.2f} s", flush=True)

    # CMA-ES over sigma0 and seeds.
    sigmas = (10.0,) if args.quick else (3.0, 10.0, 30.0)
    cma_runs = {}
    for sigma0 in sigmas:
        cma_runs[sigma0] = []
        for k in range(args.cma_seeds):
            run = run_cma(throw, sigma0, args.seed + k, args.cma_budget)
            cma_runs[sigma0].append(run)
            print(f"CMA-ES sigma0 {sigma0:g} seed {args.seed + k}: {shown(run['solved_at'])} evaluations "
                  f"({run['restarts']} restarts), {run['seconds']:.2f} s, best loss {run['history'][-1][1]:.3g}",
                  flush=True)
    best_sigma = min(sigmas, key=lambda s: median_solved(cma_runs[s], args.cma_budget))
    write_results(args, out_dir, throw, gd, sweep, starts, restarted, cma_runs, best_sigma)
    print(f"wrote {out_dir / 'ball_throw.md'}")


def write_results(args, out_dir, throw, gd, sweep, starts, restarted, cma_runs, best_sigma):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = cma_runs[best_sigma]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, column, xlabel in ((axes[0], 0, "iterations (CMA-ES: loss evaluations)"), (axes[1], 2, "wall time [s]")):
        for k, run in enumerate(runs):
            h = np.array(run["history"])
            ax.loglog(np.maximum(h[:, column], 1e-4 if column else 1), h[:, 1], color="tab:orange", lw=0.9, alpha=0.7,
                      label=f"CMA-ES sigma0 {best_sigma:g} (best so far), {len(runs)} seeds" if k == 0 else None)
        for k, run in enumerate(restarted):
            h = np.array(run["history"])
            ax.loglog(np.maximum(h[:, column], 1e-4 if column else 1), np.minimum.accumulate(h[:, 1]), color="tab:cyan",
                      lw=0.8, alpha=0.8, label=f"L-BFGS with restarts from random throws (lowest so far), "
                      f"{len(restarted)} seeds" if k == 0 else None)
        h = np.array(gd["history"])
        ax.loglog(np.maximum(h[:, column], 1e-4 if column else 1), h[:, 1], color="tab:blue", lw=1.6,
                  label="gradient (L-BFGS, lr 1) from rest")
        ax.axhline(16.667, color="gray", ls=":", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("loss |p - target|^2 + |v|^2 + |w|^2")
        ax.legend(fontsize=8)
    axes[0].set_title("ball throw, loss vs iterations (dotted: the rolling valley)", fontsize=9)
    axes[1].set_title("loss vs wall time (one thread)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out_dir / "ball_throw.png", dpi=110)
    plt.close(fig)

    command = "`.venv/bin/python examples/control/ball_throw.py" + (" --quick" if args.quick else "") + \
        f" --seed {args.seed} --cma-seeds {args.cma_seeds} --cma-budget {args.cma_budget}" + \
        ("" if args.quick else f" --gd-starts {args.gd_starts} --gd-restart-seeds {args.gd_restart_seeds} "
                               f"--gd-budget {args.gd_budget}") + "`"
    gd_per = gd["seconds"] / len(gd["history"])
    solved = [r for r in runs if r["solved_at"] is not None]
    med = median_solved(runs, args.cma_budget)
    med_seconds = float(np.median([r["seconds"] for r in runs]))
    lines = [
        "# Ball throw (paper 002, section 2.1.1; issue 17)\n",
        f"Written by {command} (CMA-ES seeds {args.seed} to {args.seed + args.cma_seeds - 1}; the headline gradient run has "
        "no randomness; the random starts below draw from the seed). Scene, loss, parameterisation and every deviation from the paper: the script's docstring. In "
        f"short: 1 m, {MASS:g} kg solid ball, friction {FRICTION:g}, restitution {RESTITUTION:g}, PGS contact, "
        f"semi-implicit Euler at dt {DT} s for {SECONDS:g} s; optimised theta = (v0, r w0) from theta = 0 (at rest); "
        "tolerance |p(5) - (10, 0, 0.5)| < 0.01 m, |v(5)| < 0.01 m/s, |w(5)| < 0.01 rad/s; one thread.\n",
        "## Result\n",
        "| method | iterations to tolerance | evaluations per iteration | wall s | final throw |",
        "|---|---|---|---|---|",
        f"| gradient: L-BFGS (torch.optim, lr 1, history 100, no line search) | {shown(gd['solved_at'])} | 1 rollout + "
        f"1 rollout_vjp ({1e3 * gd_per:.2f} ms) | {gd['seconds']:.2f} | {describe(throw, gd['theta'])} |",
    ]
    for k, run in enumerate(runs):
        lines.append(f"| CMA-ES sigma0 {best_sigma:g}, seed {args.seed + k} | {shown(run['solved_at'])} "
                     f"({run['restarts']} restarts) | 1 rollout ({1e3 * run['seconds'] / max(len(run['history']), 1):.2f} "
                     f"ms) | {run['seconds']:.2f} | {describe(throw, run['theta']) if run['solved_at'] else 'best loss %.3g' % run['history'][-1][1]} |")
    lines += [
        "",
        f"CMA-ES (sigma0 {best_sigma:g}, the best of the sweep below): median {med if np.isfinite(med) else 'not reached'} "
        f"evaluations over {len(runs)} seeds ({len(solved)} of {len(runs)} reached the tolerance within "
        f"{args.cma_budget} evaluations), median wall {med_seconds:.2f} s. Paper 002: gradient descent "
        f"{PAPER['gd_iterations']} iterations ({PAPER['gd_seconds']} s), CMA-ES {PAPER['cma_iterations']:,} "
        f"({PAPER['cma_seconds']} s).\n",
    ]
    if gd["solved_at"] is not None and np.isfinite(med):
        holds = gd["solved_at"] < med / 10 and gd["seconds"] < med_seconds
        lines.append(f"Proof line, \"gradient descent reaches the tolerance in fewer than 1/10 of CMA-ES's iterations and "
                     f"less wall time\": **{'holds' if holds else 'does not hold'}** here ({gd['solved_at']} vs "
                     f"{med:g} / 10 = {med / 10:g} iterations; {gd['seconds']:.2f} s vs {med_seconds:.2f} s; medians "
                     "over CMA-ES's seeds).\n")
    else:
        lines.append("Proof line: **not established** (one of the methods did not reach the tolerance).\n")
    if starts:
        reached = [r["solved_at"] for _, r, _ in starts if r["solved_at"] is not None]
        lines += ["## Gradient from random initial throws\n",
                  f"The headline gradient method (L-BFGS lr 1) from {len(starts)} throws theta0 ~ N(0, 1 m/s) per "
                  f"number (numpy default_rng({args.seed})), at most {args.gd_cap} "
                  f"iterations each: **{len(reached)} of {len(starts)} reached the tolerance**"
                  + (f" (in {', '.join(map(str, reached))} iterations)" if reached else "") + ".\n",
                  "| theta0 (v0 m/s, r w0 m/s) | iterations to tolerance | wall s | lowest loss seen |",
                  "|---|---|---|---|"]
        for theta0, run, low in starts:
            lines.append(f"| {', '.join(f'{x:.2f}' for x in theta0)} | {shown(run['solved_at'])} | "
                         f"{run['seconds']:.2f} | {low:.3g} |")
        if 2 * len(reached) < len(starts):
            lines += ["", "So the headline's success from rest is not robust: from most of these starts the same "
                      "optimiser (which has no restarts) stalls in the rolling valley (loss about 16.67) or below it "
                      "without reaching the tolerance, while CMA-ES above restarts when stuck.", ""]
        else:
            lines += ["", "Most of these starts reach the tolerance too.", ""]
    if restarted:
        m = median_solved(restarted, args.gd_budget)
        m_seconds = float(np.median([r["seconds"] for r in restarted]))
        lines += ["## Gradient with restarts from random throws\n",
                  "L-BFGS (lr 1) from a throw theta0 ~ N(0, 1 m/s) per number, restarted from a new draw whenever "
                  "the lowest loss has not halved in 50 iterations or a rollout diverged (the first setting tried), "
                  f"seeds {args.seed} to {args.seed + len(restarted) - 1} (numpy default_rng(seed)), at most "
                  f"{args.gd_budget} iterations per seed. This is the robust counterpart of IPOP-CMA-ES above: no "
                  "run relies on the start at rest.\n",
                  "| seed | iterations to tolerance (all restarts) | restarts | wall s |", "|---|---|---|---|"]
        for k, r in enumerate(restarted):
            lines.append(f"| {args.seed + k} | {shown(r['solved_at'])} | {r['restarts']} | {r['seconds']:.2f} |")
        lines.append("")
        if np.isfinite(m) and np.isfinite(med):
            holds = m < med / 10 and m_seconds < med_seconds
            lines.append(f"Median {m:g} iterations, {m_seconds:.2f} s, against CMA-ES's median {med:g} evaluations "
                         f"({med_seconds:.2f} s): the proof line **{'holds' if holds else 'does not hold'}** for this "
                         f"variant ({m:g} vs {med / 10:g}; ratio of medians {med / m:.1f}; per seed the gradient took "
                         f"{span(restarted)} iterations and CMA-ES {span(runs)} evaluations, so a ratio this close "
                         "to 10 is within the spread of the seeds).\n" if med / m < 20 else
                         f"variant ({m:g} vs {med / 10:g}; ratio of medians {med / m:.1f}).\n")
        else:
            lines.append(f"Median: {m if np.isfinite(m) else 'not reached'}.\n")
    if len(cma_runs) > 1:
        lines += ["## CMA-ES sweep over sigma0\n", "| sigma0 (m/s) | evaluations to tolerance per seed | median | "
                  "median wall s |", "|---|---|---|---|"]
        for sigma0, rs in cma_runs.items():
            m = median_solved(rs, args.cma_budget)
            lines.append(f"| {sigma0:g} | {', '.join(shown(r['solved_at']) for r in rs)} | "
                         f"{m if np.isfinite(m) else 'not reached'} | {np.median([r['seconds'] for r in rs]):.2f} |")
        lines.append("")
    if sweep:
        lines += ["## Gradient sweep (the headline run is L-BFGS lr 1 on (v0, r w0))\n",
                  "| optimiser | lr | parameters | iterations to tolerance (cap) | wall s | lowest loss seen |",
                  "|---|---|---|---|---|---|"]
        for method, lr, scaled, cap, run, final in sweep:
            name = "L-BFGS (history 100, no line search)" if method == "lbfgs" else "Adam"
            lines.append(f"| {name} | {lr:g} | {'(v0, r w0)' if scaled else '(v0, w0) raw'} | "
                         f"{shown(run['solved_at'])} ({cap}) | {run['seconds']:.2f} | {final:.3g} |")
        lines += ["", "The runs that do not reach the tolerance stall in the rolling valley (loss 16.67) or push the "
                  "ball down into the floor (v0 z of tens of m/s) until it bounces into a flight that lasts past 5 s; "
                  "so the result depends on the step size. The headline's lr 1 is torch's default for L-BFGS; "
                  "the (v0, r w0) parameterisation was chosen after the raw (v0, w0) failed at lr 1 (the row above), "
                  "so the headline is not free of selection on this problem.", ""]
    lines += ["![loss vs iterations and wall time](ball_throw.png)", ""]
    (out_dir / "ball_throw.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
