"""Inferring the mass of a chain from a collision (paper 000, Belbute-Peres et al. 2018, Sec. 4.1, Fig. 1).

Scene (the paper's 2-D scene in the x-z plane; its pixels read as centimetres)
    A chain of `--links` capsules (length 50 cm, radius 5 cm, 1 kg) hangs from a fixed point;
    neighbouring links are joined by hinges about y (no joint damping). A ball (radius 10 cm,
    known mass 0.5 kg, on slide joints x, z and a hinge y) is launched at 3 m/s towards the
    bottom link, level with its centre, and strikes it. As in the paper the projectile feels no
    gravity (a constant force m g on its z slide cancels it); the chain hangs under gravity 9.81
    m/s^2 (the paper's engine pulled only the bottom link, with g = 100 px/s^2). Semi-implicit
    Euler, dt = 1 ms, 10 s observed.

Contact (--contact)
    'ipm' (default, the paper's own formulation): velocity-level contact as a mixed LCP solved by
    gradyn's interior-point method, differentiated through its KKT conditions (paper 000, Eq. 3);
    friction 1, no restitution. Contacts enter the LCP from a gap of 2 cm (the model's contact
    margin), so the strike's first impulse does not jump from one time step to the next as the
    mass changes: without it the loss is rough on the scale of 1e-4 kg and its exact derivative
    is no guide to its trend (finite differences at steps 1e-5 ... 1e-3 disagree in sign).
    'penalty': gradyn's Hunt-Crossley penalty (stiffness 1e5, exponent 1.5, damping 0.1 s/m: a
    nearly elastic bounce).

Unknown
    The mass of the chain's bottom link, the one the ball strikes: the paper's text says "the
    mass of the chain", and its code (lcp-physics demos/inference_demo.py) makes the bottom link's
    mass the unknown. A link's rotational inertia scales with its mass (a uniform capsule), so
    the parameter is the mass m with inertia m * I_unit; the chain rule maps gradyn's gradient
    w.r.t. the flat parameters (<link>.mass and <link>.inertia.*) onto m.

Inference (the paper's recipe)
    Observed: the positions (x, z) of every body (link centres and ball) at every step of the
    10 s rollout with the true mass 7. Start at m = 1; each iteration rolls out the scene, takes
    the position MSE (cm^2) and its gradient dMSE/dm, clips the gradient to [-100, 100] and takes
    a gradient-descent step with learning rate 0.01 (mass kept >= 1e-3). Stops when an update
    moves m by less than 1e-4 (`--tol`) or after `--iterations`; the truth is not used to stop.
    Gradients: 'analytic' = one rollout + one reverse pass (gradyn.rollout_vjp with the forward
    trajectory), or 'fd' = central differences (two more rollouts per parameter).

Timing study (Fig. 1, bottom right)
    "The same optimisation process ... repeated for a varying number of links"; the paper's curve
    is against the number of parameters. The honest equivalent here: every link's mass is an
    unknown (N parameters for N links, bottom link true 7, the others true 1, all start at 1), and
    30 gradient updates are timed with the analytic gradient (1 rollout + 1 reverse pass, however
    many parameters) and with central finite differences (1 rollout for the loss + 2 N rollouts).
    We also time FD of the bottom mass alone (1 parameter, 1 + 2 rollouts per update) to show where
    FD is cheaper: for one parameter it does not lose, the gap comes from the parameter count.

Outputs, beside this file (or in --out-dir): chain_mass.md (the numbers of this run, with the
command), chain_mass_inference.png (scene, mass and MSE per iteration) and chain_mass_timing.png
(run time of 30 updates against the number of links).

Run:  .venv/bin/python examples/lcp_physics/chain_mass.py  [--contact ipm|penalty] [--links 10]
          [--seconds 10] [--gradient analytic|fd] [--timing-links 2,4,8,16] [--updates 30] [--repeats 1]
      (several minutes on two cores, most of it the FD timings; --no-timing skips them)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

import gradyn

LINK_LENGTH = 0.5  # m, joint to joint
LINK_RADIUS = 0.05
BALL_RADIUS = 0.1
BALL_MASS = 0.5
BALL_SPEED = 3.0  # m/s, towards +x
BALL_START_X = -1.5  # m; the chain hangs at x = 0
CONTACT_DAMPING = 0.1  # penalty: Hunt-Crossley damping c (s/m): restitution about 1 - 2 c v / 3 = 0.8 at 3 m/s
IPM_MARGIN = 0.02  # ipm: contacts enter the LCP from this gap (m), see the docstring
TRUE_MASS = 7.0
START_MASS = 1.0
LEARNING_RATE = 0.01
GRAD_CLIP = 100.0
MIN_MASS = 1e-3
UNITS = 100.0  # positions in cm (the paper's positions are pixels at about this scale)
DT = 1e-3
GRAVITY = 9.81


def scene_mjcf(links: int) -> str:
    """The chain (nested bodies link0 ... link<N-1>) and the ball, as MJCF, every link 1 kg."""
    L, r = LINK_LENGTH, LINK_RADIUS
    i_xx = (3 * r * r + L * L) / 12  # uniform rod-like capsule of unit mass, about its centre
    chain = ""
    for k in range(links):
        chain += (f'<body name="link{k}" pos="0 0 {0 if k == 0 else -L}">'
                  f'<joint name="hinge{k}" type="hinge" axis="0 1 0"/>'
                  f'<inertial pos="0 0 {-L / 2}" mass="1" diaginertia="{i_xx} {i_xx} {r * r / 2}"/>'
                  f'<geom name="link{k}" type="capsule" fromto="0 0 {-r} 0 0 {-L + r}" size="{r}"/>\n')
    chain += "</body>" * links
    i_ball = 0.4 * BALL_MASS * BALL_RADIUS**2
    ball = (f'<body name="ball" pos="{BALL_START_X} 0 {bottom_centre_z(links)}">'
            '<joint name="ball_x" type="slide" axis="1 0 0"/><joint name="ball_z" type="slide" axis="0 0 1"/>'
            '<joint name="ball_spin" type="hinge" axis="0 1 0"/>'
            f'<inertial pos="0 0 0" mass="{BALL_MASS}" diaginertia="{i_ball} {i_ball} {i_ball}"/>'
            f'<geom name="ball" type="sphere" size="{BALL_RADIUS}"/></body>')
    return f'<mujoco model="chain{links}"><worldbody>\n{chain}\n{ball}\n</worldbody></mujoco>'


def bottom_centre_z(links: int) -> float:
    return -(links - 0.5) * LINK_LENGTH


class ChainScene:
    """The scene with N links; rollouts and the position MSE against observations, with gradients
    w.r.t. the masses of the links in `unknown` (indices; the inertia of each scales with it).
    contact=False and swing (initial hinge angles) give a contact-free variant for checks."""

    def __init__(self, links: int, seconds: float, unknown: list[int] | None = None, dt: float = DT,
                 contact: bool = True, swing: np.ndarray | None = None, contact_model: str = "ipm"):
        self.links = links
        self.dt = dt
        self.steps = int(round(seconds / dt))
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / f"chain{links}.xml"
            path.write_text(scene_mjcf(links))
            if contact_model == "penalty":
                model = gradyn.load(str(path), contact="penalty").with_contact(damping=CONTACT_DAMPING)
            else:
                model = gradyn.load(str(path), contact=contact_model).with_contact(margin=IPM_MARGIN)
        self.base = model if contact else model.with_contact("none")
        self.unknown = list(range(links)) if unknown is None else list(unknown)
        names = self.base.param_names
        self.p0 = self.base.params
        self.mass_index = np.array([names.index(f"link{k}.mass") for k in self.unknown])
        axes = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        self.inertia_index = np.array([[names.index(f"link{k}.inertia.{a}") for a in axes] for k in self.unknown])
        self.unit_inertia = self.p0[self.inertia_index] / self.p0[self.mass_index][:, None]
        nv = self.base.nv
        self.q0 = self.base.neutral()
        if swing is not None:  # initial hinge angles (the paper's chain starts at rest)
            self.q0[:links] = swing
        self.v0 = np.zeros(nv)
        self.v0[self.base.joint_idx_v("ball_x")] = BALL_SPEED
        self.taus = np.zeros((self.steps, nv))
        self.taus[:, self.base.joint_idx_v("ball_z")] = BALL_MASS * GRAVITY  # the projectile floats
        # positions() reads the hinge angles as the first N entries of q (depth-first joint order).
        assert [self.base.joint_idx_q(f"hinge{k}") for k in range(links)] == list(range(links))
        self.ball_x = self.base.joint_idx_q("ball_x")
        self.ball_z = self.base.joint_idx_q("ball_z")
        self.observed: np.ndarray | None = None

    def masses_vector(self, mass) -> np.ndarray:
        """A scalar (every unknown link) or one mass per unknown link."""
        return np.broadcast_to(np.asarray(mass, dtype=float), (len(self.unknown),)).copy()

    def model(self, mass) -> gradyn.Model:
        m = self.masses_vector(mass)
        p = self.p0.copy()
        p[self.mass_index] = m
        p[self.inertia_index] = m[:, None] * self.unit_inertia
        return self.base.with_params(p)

    def rollout(self, mass) -> tuple[gradyn.Model, np.ndarray, np.ndarray]:
        model = self.model(mass)
        qs, vs = gradyn.rollout(model, self.q0, self.v0, self.taus, self.dt)
        return model, qs, vs

    # Body positions. The chain is planar: link k points along phi_k = theta_0 + ... + theta_k
    # (hinges about y), direction (-sin phi, -cos phi) in (x, z). Checked against
    # gradyn.forward_kinematics in check_positions().
    def positions(self, qs: np.ndarray) -> np.ndarray:
        """(T+1, 2 (N+1)) in cm: x of the link centres, z of the link centres, ball x, ball z."""
        phi = np.cumsum(qs[:, :self.links], axis=1)
        dx, dz = -np.sin(phi), -np.cos(phi)
        L = LINK_LENGTH
        jx = np.cumsum(L * dx, axis=1) - L * dx  # joint k sits at the end of links 0..k-1
        jz = np.cumsum(L * dz, axis=1) - L * dz
        ball = np.stack([BALL_START_X + qs[:, self.ball_x], bottom_centre_z(self.links) + qs[:, self.ball_z]], 1)
        return UNITS * np.concatenate([jx + 0.5 * L * dx, jz + 0.5 * L * dz, ball], axis=1)

    def positions_vjp(self, qs: np.ndarray, pos_bar: np.ndarray) -> np.ndarray:
        """Adjoint of positions(): d(loss)/d(qs) given d(loss)/d(positions)."""
        n, L = self.links, LINK_LENGTH
        phi = np.cumsum(qs[:, :n], axis=1)
        gx, gz = UNITS * pos_bar[:, :n], UNITS * pos_bar[:, n:2 * n]
        # centre_k = sum_{j<k} L d_j + L/2 d_k, d = (-sin phi, -cos phi): d(centre_k)/d(phi_j) is
        # L d'_j for j < k and L/2 d'_k for j = k, with d' = (-cos phi, sin phi).
        later_x = np.cumsum(gx[:, ::-1], axis=1)[:, ::-1] - gx  # sum over k > j
        later_z = np.cumsum(gz[:, ::-1], axis=1)[:, ::-1] - gz
        phi_bar = (-np.cos(phi) * (L * later_x + 0.5 * L * gx) + np.sin(phi) * (L * later_z + 0.5 * L * gz))
        qs_bar = np.zeros_like(qs)
        qs_bar[:, :n] = np.cumsum(phi_bar[:, ::-1], axis=1)[:, ::-1]  # theta_i enters every phi_j, j >= i
        qs_bar[:, self.ball_x] = UNITS * pos_bar[:, 2 * n]
        qs_bar[:, self.ball_z] = UNITS * pos_bar[:, 2 * n + 1]
        return qs_bar

    def check_positions(self, qs: np.ndarray, rows: int = 5) -> float:
        """Largest difference (cm) between positions() and gradyn.forward_kinematics on a few rows."""
        worst = 0.0
        names = self.base.body_names
        centre = np.array([0.0, 0.0, -LINK_LENGTH / 2, 1.0])
        for t in np.linspace(0, len(qs) - 1, rows).astype(int):
            poses = gradyn.forward_kinematics(self.base, qs[t])["body_poses"]
            links = np.array([poses[names.index(f"link{k}")] @ centre for k in range(self.links)])
            ball = poses[names.index("ball")][:3, 3]
            fk = UNITS * np.concatenate([links[:, 0], links[:, 2], ball[[0, 2]]])
            worst = max(worst, float(np.abs(fk - self.positions(qs[t:t + 1])[0]).max()))
        return worst

    def observe(self, true_mass) -> np.ndarray:
        _, qs, _ = self.rollout(true_mass)
        self.observed = self.positions(qs)
        return qs

    def loss(self, mass) -> float:
        _, qs, _ = self.rollout(mass)
        return float(np.mean((self.positions(qs) - self.observed) ** 2))

    def loss_and_grad(self, mass) -> tuple[float, np.ndarray]:
        """MSE and its exact gradient w.r.t. the unknown masses: one rollout, one reverse pass."""
        model, qs, vs = self.rollout(mass)
        err = self.positions(qs) - self.observed
        loss = float(np.mean(err**2))
        qs_bar = self.positions_vjp(qs, 2.0 * err / err.size)
        _, _, _, p_bar = gradyn.rollout_vjp(model, self.q0, self.v0, self.taus, self.dt, qs_bar, None, qs=qs, vs=vs)
        grad = p_bar[self.mass_index] + np.sum(p_bar[self.inertia_index] * self.unit_inertia, axis=1)
        return loss, grad

    def loss_and_fd_grad(self, mass, which: list[int] | None = None, rel_step: float = 1e-5) -> tuple[float, np.ndarray]:
        """MSE and central differences w.r.t. the unknown masses listed in `which` (positions in
        self.unknown; default all): 1 + 2 len(which) rollouts. The others' entries are 0."""
        m = self.masses_vector(mass)
        loss = self.loss(m)
        grad = np.zeros_like(m)
        for i in range(len(m)) if which is None else which:
            h = rel_step * max(1.0, abs(m[i]))
            up, down = m.copy(), m.copy()
            up[i] += h
            down[i] -= h
            grad[i] = (self.loss(up) - self.loss(down)) / (2 * h)
        return loss, grad


def descend(scene: ChainScene, start, iterations: int, gradient: str, tol: float = 0.0,
            fd_which: list[int] | None = None) -> tuple[np.ndarray, list[float]]:
    """The paper's loop: clipped gradient, plain gradient descent. Returns the mass after every
    update (row 0: the start) and the loss at every evaluated mass."""
    m = scene.masses_vector(start)
    masses, losses = [m.copy()], []
    for _ in range(iterations):
        if gradient == "analytic":
            loss, grad = scene.loss_and_grad(m)
        else:
            loss, grad = scene.loss_and_fd_grad(m, which=fd_which)
        losses.append(loss)
        new = np.maximum(MIN_MASS, m - LEARNING_RATE * np.clip(grad, -GRAD_CLIP, GRAD_CLIP))
        step = np.abs(new - m).max()
        m = new
        masses.append(m.copy())
        if step < tol:
            break
    losses.append(scene.loss(m))
    return np.array(masses), losses


def infer(args) -> tuple[ChainScene, np.ndarray, list[float], np.ndarray]:
    scene = ChainScene(args.links, args.seconds, unknown=[args.links - 1], contact_model=args.contact)
    qs_true = scene.observe(TRUE_MASS)
    fk_error = scene.check_positions(qs_true)
    assert fk_error < 1e-9, f"planar positions disagree with gradyn.forward_kinematics by {fk_error} cm"
    ball_vx = np.diff(qs_true[:, scene.ball_x]) / scene.dt
    hit = int(np.argmax(np.abs(np.diff(ball_vx)) > 1e-6))
    scene_line = (f"scene: {args.links} links, ball {BALL_MASS} kg at {BALL_SPEED} m/s, {scene.steps} steps of "
                  f"{scene.dt:g} s, {args.contact} contact; strikes at t = {hit * scene.dt:.3f} s, ball vx "
                  f"{ball_vx[0]:.3f} -> {ball_vx[-1]:.3f} m/s, bottom link swings to "
                  f"{np.degrees(np.abs(np.cumsum(qs_true[:, :args.links], 1)[:, -1]).max()):.1f} deg; "
                  f"positions vs forward_kinematics {fk_error:.1e} cm")
    print(scene_line)
    args.report.append(scene_line)
    start = time.perf_counter()
    masses, losses = descend(scene, START_MASS, args.iterations, args.gradient, tol=args.tol)
    elapsed = time.perf_counter() - start
    final = masses[-1, 0]
    line = (f"inference ({args.gradient} gradients): mass {START_MASS:g} -> {final:.4f} (true {TRUE_MASS:g}, "
            f"error {abs(final - TRUE_MASS):.4f}) after {len(masses) - 1} updates, {elapsed:.1f} s; "
            f"position MSE {losses[0]:.3e} -> {losses[-1]:.3e} cm^2")
    print(line)
    args.report.append(line)
    first_close = np.flatnonzero(np.abs(masses[:, 0] - TRUE_MASS) < 0.05)
    if first_close.size:
        line = (f"within 0.05 of the truth from update {first_close[0]} on: "
                f"{bool(np.all(np.abs(masses[first_close[0]:, 0] - TRUE_MASS) < 0.05))}")
        print("  " + line)
        args.report.append(line)
    return scene, masses, losses, qs_true


def timing(args) -> dict[str, list[float]]:
    """Wall time of `updates` gradient updates of all N link masses, per N, per gradient method."""
    results: dict[str, list[float]] = {"analytic": [], "fd": [], "fd_bottom_only": []}
    for n in args.timing_links:
        scene = ChainScene(n, args.seconds, contact_model=args.contact)  # every link's mass unknown
        truth = np.ones(n)
        truth[-1] = TRUE_MASS
        scene.observe(truth)
        for method in results:
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                if method == "analytic":
                    masses, _ = descend(scene, START_MASS, args.updates, "analytic")
                elif method == "fd":
                    masses, _ = descend(scene, START_MASS, args.updates, "fd")
                else:
                    masses, _ = descend(scene, START_MASS, args.updates, "fd", fd_which=[n - 1])
                times.append(time.perf_counter() - start)
            results[method].append(float(np.mean(times)))
            line = (f"N = {n:2d} links ({n} parameters), {args.updates} updates, {method:15s}: "
                    f"{np.mean(times):7.2f} s (mean of {args.repeats}); bottom mass after: {masses[-1, -1]:.3f}")
            print("  " + line)
            args.report.append(line)
    return results


def plot_inference(args, scene: ChainScene, masses: np.ndarray, losses: list[float], qs_true: np.ndarray) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    pos = scene.positions(qs_true) / UNITS
    n = scene.links
    frames = [int(round(t / scene.dt)) for t in (0.0, 0.45, 0.9, 1.6)]
    for alpha, t in zip(np.linspace(0.25, 1.0, len(frames)), [f for f in frames if f < len(pos)]):
        x = np.concatenate([[0.0], pos[t, :n]])
        z = np.concatenate([[0.0], pos[t, n:2 * n]])
        axes[0].plot(x, z, "o-", color="tab:blue", alpha=alpha, markersize=3)
        axes[0].add_patch(plt.Circle((pos[t, 2 * n], pos[t, 2 * n + 1]), BALL_RADIUS, color="tab:red", alpha=alpha))
        axes[0].annotate(f"{t * scene.dt:.1f} s", (pos[t, 2 * n], pos[t, 2 * n + 1] + 0.15), fontsize=7,
                         ha="center", alpha=alpha)
    axes[0].set_aspect("equal")
    axes[0].set_title("true scene (link centres, ball), a few instants", fontsize=10)
    axes[0].set_xlabel("x [m]")
    axes[0].set_ylabel("z [m]")
    axes[1].plot(masses[:, 0], "o-", markersize=3)
    axes[1].axhline(TRUE_MASS, ls="--", color="k", lw=1)
    axes[1].set_xlabel("iteration")
    axes[1].set_ylabel("bottom link mass [kg]")
    axes[1].set_title(f"estimated mass ({args.gradient} gradients, lr {LEARNING_RATE}, clip {GRAD_CLIP:g})", fontsize=10)
    axes[2].semilogy(losses, "o-", markersize=3)
    axes[2].set_xlabel("iteration")
    axes[2].set_ylabel("position MSE [cm^2]")
    axes[2].set_title(f"position MSE over {args.seconds:g} s", fontsize=10)
    fig.tight_layout()
    out = args.out_dir / "chain_mass_inference.png"
    fig.savefig(out, dpi=110)
    print(f"figure: {out}")


def plot_timing(args, results: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.3))
    ax.plot(args.timing_links, results["analytic"], "o-", label="analytic (rollout + rollout_vjp)")
    ax.plot(args.timing_links, results["fd"], "s-", label="central differences, all N masses")
    ax.plot(args.timing_links, results["fd_bottom_only"], "^--", color="gray",
            label="central differences, bottom mass only")
    ax.set_xlabel("number of links N (= number of unknown masses)")
    ax.set_ylabel(f"run time of {args.updates} updates [s]")
    ax.set_title(f"{args.seconds:g} s rollouts, dt {DT:g} s (mean of {args.repeats})", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = args.out_dir / "chain_mass_timing.png"
    fig.savefig(out, dpi=110)
    print(f"figure: {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--links", type=int, default=10, help="links in the chain (the paper: 10)")
    parser.add_argument("--seconds", type=float, default=10.0, help="observed time (the paper: 10 s)")
    parser.add_argument("--iterations", type=int, default=100, help="most gradient updates (the paper: 100)")
    parser.add_argument("--tol", type=float, default=1e-4, help="stop when an update moves the mass less than this")
    parser.add_argument("--gradient", choices=["analytic", "fd"], default="analytic")
    parser.add_argument("--timing-links", type=lambda s: [int(x) for x in s.split(",")], default=[2, 4, 8, 16])
    parser.add_argument("--updates", type=int, default=30, help="gradient updates per timing run (the paper: 30)")
    parser.add_argument("--repeats", type=int, default=1, help="timing runs averaged (the paper: 5)")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--contact", choices=["ipm", "penalty"], default="ipm",
                        help="contact model (the paper's: ipm, an LCP solved by an interior-point method)")
    parser.add_argument("--out-dir", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent,
                        help="where chain_mass.md and the figures go (default: beside this script)")
    parser.add_argument("--no-results", action="store_true", help="do not write chain_mass.md")
    args = parser.parse_args()
    args.report = []
    command = " ".join(["python", "examples/lcp_physics/chain_mass.py"] + sys.argv[1:])

    scene, masses, losses, qs_true = infer(args)
    if not args.no_plot:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        plot_inference(args, scene, masses, losses, qs_true)
    if not args.no_timing:
        line = (f"timing: {args.updates} updates of all N link masses, {args.seconds:g} s rollouts "
                f"({os.cpu_count()} cores, single-threaded rollouts)")
        print(line)
        args.report.append(line)
        results = timing(args)
        ratios = [f / a for f, a in zip(results["fd"], results["analytic"])]
        line = "FD / analytic (all N masses): " + ", ".join(f"N={n}: {r:.1f}x" for n, r in zip(args.timing_links, ratios))
        print("  " + line)
        args.report.append(line)
        if not args.no_plot:
            plot_timing(args, results)
    if not args.no_results:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        text = ["# Chain mass inference (paper 000, Fig. 1): the numbers of one run\n",
                f"Written by `{command}` (deterministic: no random numbers) on a machine with "
                f"{os.cpu_count()} cores.\n", "```"] + args.report + ["```", ""]
        if not args.no_plot:
            text.append("![inference](chain_mass_inference.png)")
            if not args.no_timing:
                text.append("![timing](chain_mass_timing.png)")
        (args.out_dir / "chain_mass.md").write_text("\n".join(text) + "\n")
        print(f"results: {args.out_dir / 'chain_mass.md'}")


if __name__ == "__main__":
    main()
