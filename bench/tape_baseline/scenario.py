"""The benchmark scenario shared by the tape baseline's test and bench/gradient_benchmarks.py:
laikago (floating base, no contact) in free flight, with joint damping, under smooth torques.

A moving, non-trivial trajectory: the base starts with a twist, the legs with velocities, and
every leg joint gets a different sinusoidal torque, so every term of the step (Coriolis, the
free joint's SE(3) exponential, damping) is exercised. Damping keeps the legs' motion bounded,
so long horizons stay well conditioned (the benchmark compares states to 1e-9 at every horizon).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAIKAGO = os.path.join(REPO, "models", "laikago", "laikago_toes_zup.urdf")
DT = 1e-3
LEG_DAMPING = 0.5  # N m s / rad on the 12 leg joints


def load_laikago():
    """laikago with a free base and damped leg joints (the URDF has no damping)."""
    import gradyn

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDF's mesh files are not shipped: irrelevant here
        model = gradyn.load(LAIKAGO, floating_base=True)
    damping = np.zeros(model.nv)
    damping[6:] = LEG_DAMPING
    return model.with_damping(damping)


def initial_state(model):
    q0 = model.neutral()
    q0[2] = 0.5
    v0 = np.zeros(model.nv)
    v0[:6] = (0.1, -0.2, 0.3, 0.4, -0.3, 0.2)  # base twist, body frame (linear, angular)
    v0[6:] = 0.5 * np.sin(np.arange(model.nv - 6) + 1.0)
    return q0, v0


def controls(model, steps: int, dt: float = DT):
    """(steps, nv) torques: none on the base, a sinusoid per leg joint."""
    t = np.arange(steps)[:, None] * dt
    k = np.arange(model.nv - 6)[None, :]
    taus = np.zeros((steps, model.nv))
    taus[:, 6:] = 2.0 * np.sin(2 * np.pi * (1.0 + 0.25 * k) * t + k)
    return taus
