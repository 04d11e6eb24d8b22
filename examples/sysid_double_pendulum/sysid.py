"""System identification of a double pendulum's link lengths (paper 001, NeuralSim, Fig. 4).

A planar double pendulum with point-like bobs at the ends of two links of lengths l1 = 3 and
l2 = 4 swings from rest; we observe its joint positions for `--seconds` and recover (l1, l2) by
minimising the mean squared joint-position error. Gradients come from gradyn's adjoint
(gradyn.rollout_vjp), mapped from the flat parameter vector to the two lengths by the chain rule.

From every cell of a grid of starting guesses we run
* a local optimiser: L-BFGS-B (scipy) alone, and
* parallel basin hopping: rounds of several L-BFGS runs started around the best solution so far,
  perturbed at random, keeping the best (McCarty et al.; TDS/NeuralSim's global strategy).
Figure (examples/out/sysid_double_pendulum.png): the loss landscape over the grid and, for each
start cell, the distance of the recovered lengths from the truth after each strategy.

Run:  python examples/sysid_double_pendulum/sysid.py  [--grid 10] [--seconds 10] [--workers 2]
(about a minute on two cores; it prints the share of start cells each strategy recovers)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import pathlib
import time

import numpy as np
from scipy.optimize import minimize

import gradyn

TRUE_LENGTHS = np.array([3.0, 4.0])
BOUNDS = [(0.5, 8.0), (0.5, 8.0)]
MASSES = (1.0, 1.0)
BOB_INERTIA = 1e-3  # a small sphere at each end keeps the inertias positive definite
DT = 1e-2


def double_pendulum(l1: float, l2: float) -> gradyn.Model:
    """Links hang along -z and swing about y; each bob sits at the end of its link."""
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("link1", mass=MASSES[0], com=(0, 0, -l1), inertia=(BOB_INERTIA,) * 3 + (0, 0, 0))
    b.add_link("link2", mass=MASSES[1], com=(0, 0, -l2), inertia=(BOB_INERTIA,) * 3 + (0, 0, 0))
    b.add_joint("joint1", "revolute", parent="base", child="link1", axis=(0, 1, 0))
    b.add_joint("joint2", "revolute", parent="link1", child="link2", xyz=(0, 0, -l1), axis=(0, 1, 0))
    return b.build()


class Problem:
    """The loss L(l1, l2) = mean over steps of |q_sim - q_obs|^2, and its exact gradient."""

    def __init__(self, seconds: float):
        self.steps = int(round(seconds / DT))
        self.q0 = np.array([0.9, -0.5])
        self.v0 = np.zeros(2)
        self.taus = np.zeros((self.steps, 2))
        model = double_pendulum(*TRUE_LENGTHS)
        self.observed, _ = gradyn.rollout(model, self.q0, self.v0, self.taus, DT)
        # Where each length enters the flat parameter vector (each entry is -length).
        names = model.param_names
        self.l1_entries = [names.index("link1.com.z"), names.index("joint2.origin.z")]
        self.l2_entries = [names.index("link2.com.z")]

    def loss_and_grad(self, lengths: np.ndarray) -> tuple[float, np.ndarray]:
        model = double_pendulum(*lengths)
        qs, vs = gradyn.rollout(model, self.q0, self.v0, self.taus, DT)
        err = qs - self.observed
        n = err.size
        loss = float(np.sum(err**2) / n)
        _, _, _, p_bar = gradyn.rollout_vjp(model, self.q0, self.v0, self.taus, DT, 2.0 * err / n, np.zeros_like(vs))
        grad = -np.array([p_bar[self.l1_entries].sum(), p_bar[self.l2_entries].sum()])
        return loss, grad

    def local(self, start: np.ndarray) -> np.ndarray:
        result = minimize(self.loss_and_grad, start, jac=True, method="L-BFGS-B", bounds=BOUNDS,
                          options={"maxiter": 200, "ftol": 1e-15, "gtol": 1e-12})
        return result.x

    def basin_hopping(self, start: np.ndarray, seed: int, rounds: int = 12, population: int = 4,
                      step: float = 1.0) -> np.ndarray:
        rng = np.random.default_rng(seed)
        best = self.local(start)
        best_loss = self.loss_and_grad(best)[0]
        for _ in range(rounds):
            if best_loss < 1e-14:
                break
            for _ in range(population):
                trial_start = np.clip(best + rng.normal(scale=step, size=2), *np.array(BOUNDS).T)
                trial = self.local(trial_start)
                trial_loss = self.loss_and_grad(trial)[0]
                if trial_loss < best_loss:
                    best, best_loss = trial, trial_loss
        return best


_PROBLEM: Problem | None = None


def _init_worker(seconds: float) -> None:
    global _PROBLEM
    _PROBLEM = Problem(seconds)


def _solve_cell(args: tuple[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    index, start = args
    assert _PROBLEM is not None
    return _PROBLEM.local(start), _PROBLEM.basin_hopping(start, seed=index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", type=int, default=10, help="start cells per axis (grid x grid)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the observed trajectory")
    parser.add_argument("--workers", type=int, default=2, help="processes (cells are solved in parallel)")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="success: |l - l_true| below this")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent / "out" / "sysid_double_pendulum.png")
    args = parser.parse_args()

    axis = np.linspace(1.0, 7.0, args.grid)
    starts = [np.array([a, b]) for b in axis for a in axis]
    start_time = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(args.workers, initializer=_init_worker,
                                                initargs=(args.seconds,)) as pool:
        results = list(pool.map(_solve_cell, enumerate(starts)))
    elapsed = time.perf_counter() - start_time

    local = np.array([r[0] for r in results])
    global_ = np.array([r[1] for r in results])
    local_err = np.max(np.abs(local - TRUE_LENGTHS), axis=1)
    global_err = np.max(np.abs(global_ - TRUE_LENGTHS), axis=1)
    best = global_[np.argmin(global_err)]
    print(f"true lengths {TRUE_LENGTHS}, {len(starts)} start cells in [1, 7]^2, {args.seconds:g} s observed "
          f"({int(round(args.seconds / DT))} steps), {elapsed:.1f} s")
    print(f"  L-BFGS alone:          recovered to {args.tolerance:g} from {np.mean(local_err < args.tolerance):.0%} "
          f"of the cells")
    print(f"  parallel basin hopping: recovered to {args.tolerance:g} from {np.mean(global_err < args.tolerance):.0%} "
          f"of the cells; best estimate l1 = {best[0]:.6f}, l2 = {best[1]:.6f}")

    if args.no_plot:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problem = Problem(args.seconds)
    fine = np.linspace(1.0, 7.0, 61)
    landscape = np.array([[problem.loss_and_grad(np.array([a, b]))[0] for a in fine] for b in fine])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    im = axes[0].imshow(np.log10(landscape + 1e-16), origin="lower", extent=(1, 7, 1, 7), cmap="viridis")
    axes[0].set_title(f"log10 loss landscape ({args.seconds:g} s observed)", fontsize=10)
    fig.colorbar(im, ax=axes[0])
    step = axis[1] - axis[0] if len(axis) > 1 else 1.0
    extent = (axis[0] - step / 2, axis[-1] + step / 2, axis[0] - step / 2, axis[-1] + step / 2)
    for ax, err, title in [(axes[1], local_err, "L-BFGS from each start cell"),
                           (axes[2], global_err, "parallel basin hopping")]:
        im = ax.imshow(np.log10(err.reshape(args.grid, args.grid) + 1e-16), origin="lower", extent=extent,
                       cmap="magma_r", vmin=-12, vmax=1)
        ax.set_title(f"{title}\nlog10 max |l - l_true|", fontsize=10)
        fig.colorbar(im, ax=ax)
    for ax in axes:
        ax.plot(*TRUE_LENGTHS, marker="*", color="white", markersize=14, markeredgecolor="black")
        ax.set_xlabel("l1 [m]")
        ax.set_ylabel("l2 [m]")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
