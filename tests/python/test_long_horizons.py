"""Long horizons (issue 21, item 4; the full 10^5-step run with its memory report is
bench/long_horizons.py): a long contact rollout and its gradient under binomial checkpointing stay
finite (clipped through time), report the adjoint's norm at every state, and, without solver state
carried between steps, give bitwise the gradient of the stored trajectory."""

import pathlib
import sys

import numpy as np
import pytest

import gradyn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402


@pytest.mark.parametrize("contact", ["penalty", "pgs"])
def test_a_long_contact_rollout_and_its_checkpointed_gradient_stay_finite(contact):
    model = scene.load_gradyn(contact)
    q = scene.stance(model, clearance=0.002)
    T = 20_000
    taus = np.zeros((T, model.nv))
    legs = [model.joint_idx_v(n) for n in model.joint_names[1:]]
    taus[:, legs] = 2.0 * np.sin(np.linspace(0, 0.02 * T, T))[:, None]
    qs, vs = gradyn.rollout(model, q, np.zeros(model.nv), taus, 1e-3)
    assert np.isfinite(qs).all() and np.isfinite(vs).all()
    vs_bar = np.zeros_like(vs)
    vs_bar[-1] = 1.0
    # (unclipped, the adjoint of 20,000 contact steps can overflow, and rollout_vjp warns so; clipped
    # through time it stays finite)
    out = gradyn.rollout_vjp(model, q, np.zeros(model.nv), taus, 1e-3, None, vs_bar, max_snapshots=16,
                             clip_norm=1e3, return_norms=True)
    norms = out[-1]
    assert norms.shape == (T + 1,) and np.isfinite(norms).all() and norms[-1] == pytest.approx(np.sqrt(model.nv))
    assert all(np.isfinite(g).all() for g in out[:3])
    if contact == "penalty":  # no solver state between steps: checkpointing changes no bit
        full = gradyn.rollout_vjp(model, q, np.zeros(model.nv), taus, 1e-3, None, vs_bar, qs=qs, vs=vs, clip_norm=1e3)
        for a, b in zip(out[:3], full[:3]):
            np.testing.assert_array_equal(a, b)
