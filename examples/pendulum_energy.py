"""Energy of a real 7-link pendulum (models/pendulums/pendulum7.urdf, from the
diffarticulated benchmarks), simulated passively for 10 s with both integrators.

What a person can check in the output:
* without damping, the total energy is conserved: RK4 keeps it to about 1e-9 relative; semi-implicit
  Euler, first order, is off by a few percent on this chaotic chain (its error is O(dt));
* with the file's joint damping, the energy only ever decreases, and the energy lost equals the
  work of the dampers, the integral of sum(damping * v^2);
* the figure examples/out/pendulum_energy.png shows the three energy curves.

Run:  python examples/pendulum_energy.py  [--seconds 10] [--dt 1e-3] [--no-plot]
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import gradyn

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "pendulums" / "pendulum7.urdf"


def energies(model: gradyn.Model, qs: np.ndarray, vs: np.ndarray) -> np.ndarray:
    return np.array([gradyn.kinetic_energy(model, q, v) + gradyn.potential_energy(model, q) for q, v in zip(qs, vs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--no-plot", action="store_true", help="skip the figure")
    args = parser.parse_args()

    damped = gradyn.load(str(MODEL))
    passive = damped.with_damping(np.zeros(damped.nv))
    print(damped)
    print(f"  joints: {', '.join(damped.joint_names)}")
    print(f"  total mass {gradyn.total_mass(damped):.3f} kg, damping per joint {damped.damping[0]:.2f} N m s/rad")

    steps = int(round(args.seconds / args.dt))
    q0 = np.full(damped.nq, 0.2)
    q0[0] = -np.pi / 2 + 0.6  # released 0.6 rad from hanging straight down
    v0 = np.zeros(damped.nv)
    taus = np.zeros((steps, damped.nv))
    t = np.arange(steps + 1) * args.dt

    runs = {}
    for label, model, integrator in [
        ("RK4, no damping", passive, "rk4"),
        ("semi-implicit Euler, no damping", passive, "euler"),
        ("RK4, file damping", damped, "rk4"),
    ]:
        start = time.perf_counter()
        qs, vs = gradyn.rollout(model, q0, v0, taus, args.dt, integrator=integrator)
        elapsed = time.perf_counter() - start
        runs[label] = (qs, vs, energies(model, qs, vs), elapsed)

    print(f"\n{args.seconds:g} s at dt = {args.dt:g} ({steps} steps):")
    for label, (qs, vs, e, elapsed) in runs.items():
        drift = np.max(np.abs(e - e[0])) / abs(e[0])
        print(f"  {label:34s} E0 = {e[0]:9.4f} J  E_end = {e[-1]:9.4f} J  max |E - E0|/|E0| = {drift:.2e}"
              f"  ({elapsed * 1e3:.0f} ms, {elapsed / steps * 1e6:.1f} us/step)")

    # With damping the energy must only fall, by the dissipated power sum(b v^2) dt per step.
    qs, vs, e, _ = runs["RK4, file damping"]
    power = np.sum(damped.damping * vs**2, axis=1)
    dissipated = np.cumsum(0.5 * (power[1:] + power[:-1])) * args.dt  # trapezoid rule
    print(f"  damped run: energy rises in {np.sum(np.diff(e) > 1e-9)} of {steps} steps; "
          f"lost {e[0] - e[-1]:.6f} J, dissipated by the dampers {dissipated[-1]:.6f} J")

    if args.no_plot:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for label, (_, _, e, _) in runs.items():
        axes[0].plot(t, e, label=label)
    axes[0].set_xlabel("time [s]")
    axes[0].set_ylabel("total energy [J]")
    axes[0].set_title("pendulum7.urdf: total energy")
    axes[0].legend(fontsize=8)
    for label in ["RK4, no damping", "semi-implicit Euler, no damping"]:
        e = runs[label][2]
        axes[1].semilogy(t[1:], np.abs(e[1:] - e[0]) / abs(e[0]) + 1e-17, label=label)
    axes[1].set_xlabel("time [s]")
    axes[1].set_ylabel("|E - E0| / |E0|")
    axes[1].set_title("energy error without damping")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    out = ROOT / "examples" / "out"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "pendulum_energy.png", dpi=120)
    print(f"\nfigure: {out / 'pendulum_energy.png'}")


if __name__ == "__main__":
    main()
