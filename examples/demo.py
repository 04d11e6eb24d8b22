"""gradyn's main demo: learn a floor from one tracked throw, then plan the throw that lands a box on
a target, both by gradients through contact.

The scene (examples/demo_shuffleboard.xml): a 1 kg box, 20 x 20 x 10 cm, thrown from 0.8 m onto a
floor; it bounces, slides and stops. Its friction and restitution are unknown.

1. Identify. A throw is "observed": positions of the box at 200 Hz for 2.5 s with 5 mm of tracking
   noise (simulated here with the true friction 0.3 and restitution 0.5, unknown to the fit). Starting
   from a slippery, dull guess (friction 0.1, restitution 0.25), projected gradient descent on the
   mean squared position error, the gradient of the whole 500-step rollout through the
   interior-point contact solver from one `gradyn.rollout_vjp`, recovers both. (Where a parameter changes nothing its
   gradient is exactly zero, and no gradient method can start there: a friction high enough to stop
   the box at its first impact, about 0.4 here, or a restitution below about 0.15, whose bounce the
   contact's position correction outruns. The guess starts where both act.)
2. Plan. Find the throw velocity that makes the box come to rest on the target disc 3.1 m away, by
   Gauss-Newton on the final position: the exact 2 x 6 Jacobian of the final (x, y) with respect to
   the initial velocity is one batched `rollout_vjp` of two worlds. Planned once with the initial
   guess of the floor and once with the identified one.
3. Check. Both throws are executed in the true world: the throw planned on the guessed (slippery) floor
   stops short of the target, the one planned on the identified floor stops on it.

Writes examples/out/demo.png (the fit, the trajectories, the two throws seen from above) and two
recordings to open in a browser, examples/out/demo_before.html and examples/out/demo_after.html
(self-contained: they play the two throws in the true world, no network needed).

Run:  python examples/demo.py  [--seed 0] [--no-plot] [--no-record]
Needs numpy, matplotlib, tqdm and the viewer's library (scripts/demo.sh installs them).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np
from tqdm import tqdm

import gradyn

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENE = ROOT / "examples" / "demo_shuffleboard.xml"
OUT = ROOT / "examples" / "out"

DT = 0.005  # [s] semi-implicit Euler
# The interior-point LCP contact of paper 000, its friction cone a polyhedron of 8 directions (4 by
# default): a sliding box's path bends toward the nearest of them, and more directions bend it less
# (8: a few centimetres over this slide; the PGS model's friction box bends it much more).
CONTACT, CONTACT_SETTINGS = "ipm", {"ipm_friction_directions": 8}
STEPS = 500  # 2.5 s
TRUE_FLOOR = {"friction": 0.3, "restitution": 0.5}
GUESS_FLOOR = {"friction": 0.1, "restitution": 0.25}
TRACKING_NOISE = 0.005  # [m]
THROWN_FROM = np.array([0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 1.0])  # x, y, z, quaternion (x, y, z, w)
OBSERVED_THROW = np.array([2.5, 0.0, 2.0, 0.0, 0.0, 0.0])  # body-frame linear then angular velocity


class Scene:
    """The box model and the two unknowns' places in its flat parameter vector."""

    def __init__(self):
        self.model = gradyn.load(str(SCENE)).with_contact(model=CONTACT, **CONTACT_SETTINGS)
        names = self.model.param_names
        self.index = [names.index("box.friction"), names.index("box.restitution")]
        self.base = np.array(self.model.params)
        target = next(g for g in self.model.geoms if g["name"] == "target")
        self.target = target["placement"][:2, 3].copy()

    def params(self, floor: np.ndarray) -> np.ndarray:
        p = self.base.copy()
        p[self.index] = floor
        return p

    def throw(self, floor, v0):
        """Positions and velocities of the box thrown at v0 on a floor (friction, restitution)."""
        ones = np.ones(np.shape(v0)[:-1] + (1,))
        q0 = THROWN_FROM * ones
        params = self.params(np.asarray(floor)) * ones
        no_forces = np.zeros(np.shape(v0)[:-1] + (STEPS, self.model.nv))
        return gradyn.rollout(self.model, q0, v0, no_forces, DT, params=params)


def identify(scene: Scene, observed: np.ndarray, start: np.ndarray, iterations: int):
    """Projected gradient descent with backtracking on the mean squared position error, over
    (friction, restitution) in [0, 2] x [0, 1]. Returns the estimates and losses per iteration."""
    lower, upper = np.array([0.0, 0.0]), np.array([2.0, 1.0])

    def loss_and_gradient(floor):
        qs, vs = scene.throw(floor, OBSERVED_THROW)
        error = qs[:, :3] - observed
        qs_bar = np.zeros_like(qs)
        qs_bar[:, :3] = 2.0 * error / len(qs)
        grads = gradyn.rollout_vjp(scene.model, THROWN_FROM, OBSERVED_THROW, np.zeros((STEPS, 6)), DT, qs_bar, None,
                                   params=scene.params(floor), qs=qs, vs=vs)
        return float(np.mean(np.sum(error**2, axis=1))), grads[3][scene.index]

    floor, step = start.astype(float), 0.1
    loss, gradient = loss_and_gradient(floor)
    history = [(floor.copy(), loss)]
    bar = tqdm(range(iterations), desc="1/2 identify the floor", unit="it")
    for _ in bar:
        # Backtracking (Armijo) along the projected gradient; the step grows again after a success.
        while step > 1e-12:
            trial = np.clip(floor - step * gradient / max(np.linalg.norm(gradient), 1e-300), lower, upper)
            trial_loss, trial_gradient = loss_and_gradient(trial)
            if trial_loss <= loss - 1e-4 * np.dot(gradient, floor - trial):
                break
            step *= 0.5
        if step <= 1e-12 or trial_loss >= loss:
            break
        floor, loss, gradient, step = trial, trial_loss, trial_gradient, min(2.0 * step, 0.5)
        history.append((floor.copy(), loss))
        bar.set_postfix(friction=f"{floor[0]:.3f}", restitution=f"{floor[1]:.3f}",
                        rms=f"{1e3 * np.sqrt(loss):.1f} mm")
    bar.close()
    return floor, history


def plan_throw(scene: Scene, floor: np.ndarray, start: np.ndarray, iterations: int, label: str):
    """Gauss-Newton (damped, minimum-norm steps) on the box's final (x, y) minus the target, over
    the initial velocity. Each Jacobian is one batched rollout_vjp of two worlds (one per row)."""
    v0 = start.astype(float)
    bar = tqdm(range(iterations), desc=f"2/2 plan the throw ({label})", unit="it")
    miss = np.inf
    for _ in bar:
        qs, vs = scene.throw(floor, v0)
        residual = qs[-1, :2] - scene.target
        miss = float(np.linalg.norm(residual))
        bar.set_postfix(miss=f"{100 * miss:.2f} cm")
        if miss < 1e-3:
            break
        qs_bar = np.zeros((2,) + qs.shape)
        qs_bar[0, -1, 0] = 1.0  # d x_T
        qs_bar[1, -1, 1] = 1.0  # d y_T
        grads = gradyn.rollout_vjp(scene.model, np.tile(THROWN_FROM, (2, 1)), np.tile(v0, (2, 1)), np.zeros((2, STEPS, 6)), DT,
                                   qs_bar, None, params=np.tile(scene.params(floor), (2, 1)),
                                   qs=np.stack([qs, qs]), vs=np.stack([vs, vs]))
        jacobian = grads[1]  # (2 rows, 6 velocity entries)
        step = -jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + 1e-6 * np.eye(2), residual)
        v0 = v0 + step * min(1.0, 1.0 / max(np.linalg.norm(step), 1e-300))  # at most 1 m/s per update
    bar.close()
    return v0, miss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="seed of the tracking noise")
    parser.add_argument("--iterations", type=int, default=60, help="gradient steps of the identification")
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    parser.add_argument("--no-record", action="store_true", help="skip the HTML recordings")
    args = parser.parse_args()
    started = time.perf_counter()

    scene = Scene()
    truth = np.array([TRUE_FLOOR["friction"], TRUE_FLOOR["restitution"]])
    guess = np.array([GUESS_FLOOR["friction"], GUESS_FLOOR["restitution"]])
    print(f"{scene.model}: a box thrown onto a floor, target at {np.round(scene.target, 2).tolist()} m")

    rng = np.random.default_rng(args.seed)
    true_qs, _ = scene.throw(truth, OBSERVED_THROW)
    observed = true_qs[:, :3] + TRACKING_NOISE * rng.normal(size=(STEPS + 1, 3))

    fitted, history = identify(scene, observed, guess, args.iterations)
    print(f"identified: friction {fitted[0]:.3f} (true {truth[0]}), restitution {fitted[1]:.3f} "
          f"(true {truth[1]}); rms position error {1e3 * np.sqrt(history[-1][1]):.1f} mm "
          f"(the tracking noise alone: {1e3 * TRACKING_NOISE * np.sqrt(3):.1f} mm) after {len(history) - 1} steps")

    throws = {}
    for label, floor in (("guessed floor", guess), ("identified floor", fitted)):
        v0, planned_miss = plan_throw(scene, floor, OBSERVED_THROW, 40, label)
        qs, _ = scene.throw(truth, v0)  # what happens in the true world
        real_miss = float(np.linalg.norm(qs[-1, :2] - scene.target))
        throws[label] = (v0, qs, real_miss)
        print(f"throw planned on the {label}: v0 = {np.round(v0[:3], 3).tolist()} m/s; misses the target by "
              f"{100 * planned_miss:.2f} cm in its own model and by {100 * real_miss:.1f} cm in the true world")

    OUT.mkdir(parents=True, exist_ok=True)
    if not args.no_record:
        from gradyn import viewer

        for name, label in (("before", "guessed floor"), ("after", "identified floor")):
            path = OUT / f"demo_{name}.html"
            viewer.record(scene.model, throws[label][1], str(path), dt=DT,
                          camera=viewer.Camera(azimuth=-110, elevation=30, distance=4.5, target=(1.5, 0.4, 0.0)))
            print(f"recording of the throw planned on the {label}: {path.relative_to(ROOT)}")
    if not args.no_plot:
        path = plot(scene, observed, true_qs, history, throws, guess)
        print(f"figure: {path.relative_to(ROOT)}")
    print(f"done in {time.perf_counter() - started:.1f} s")


def plot(scene, observed, true_qs, history, throws, guess) -> pathlib.Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(STEPS + 1) * DT
    guess_qs, _ = scene.throw(guess, OBSERVED_THROW)
    fitted_qs, _ = scene.throw(history[-1][0], OBSERVED_THROW)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    ax.semilogy([1e3 * np.sqrt(loss) for _, loss in history], "k.-")
    ax.axhline(1e3 * TRACKING_NOISE * np.sqrt(3), color="gray", ls=":", label="tracking noise")
    ax.set(xlabel="gradient step", ylabel="rms position error [mm]", title="1. identify friction and restitution")
    ax.legend()
    ax = axes[1]
    ax.plot(t, observed[:, 0], ".", ms=2, color="gray", label="observed x")
    ax.plot(t, observed[:, 2], ".", ms=2, color="silver", label="observed z")
    ax.plot(t, guess_qs[:, 0], "r--", label="guessed floor")
    ax.plot(t, guess_qs[:, 2], "r--")
    ax.plot(t, fitted_qs[:, 0], "b-", label="identified floor")
    ax.plot(t, fitted_qs[:, 2], "b-")
    ax.set(xlabel="time [s]", ylabel="box position [m]", title="the observed throw, simulated")
    ax.legend(fontsize=8)
    ax = axes[2]
    for (label, (_, qs, miss)), color in zip(throws.items(), ("r", "b")):
        ax.plot(qs[:, 0], qs[:, 1], color=color, label=f"planned on the {label}: misses by {100 * miss:.0f} cm")
        ax.plot(*qs[-1, :2], "s", color=color)
    ax.add_patch(plt.Circle(scene.target, 0.15, color="g", alpha=0.3, label="target"))
    ax.set(xlabel="x [m]", ylabel="y [m]", title="2. the planned throws, in the true world", aspect="equal")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = OUT / "demo.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    main()
