"""examples/control/quadruped_gait.py (paper 002, section 3.3): the loss's adjoint, the weight
gradient through the laikago rollout against central differences, and the --quick smoke run."""

import importlib.util
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "control" / "quadruped_gait.py"


@pytest.fixture(scope="module")
def gait():
    spec = importlib.util.spec_from_file_location("quadruped_gait", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def active_loss(gait, steps):
    # a level term and thresholds every row crosses (u_z <= 1, base ~0.5 m): every term of the adjoint is exercised
    return gait.GaitLoss(steps, level=2.0, guard=10.0, up_min=1.0, z_min=0.6)


def test_loss_adjoint_matches_central_differences_in_the_configurations(gait):
    rng = np.random.default_rng(0)
    qs = np.tile(np.r_[0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0, np.zeros(12)], (6, 1))
    qs[:, :7] += 0.05 * rng.normal(size=(6, 7))
    loss = active_loss(gait, steps=5)
    bar = loss.adjoint(qs)
    d = rng.normal(size=qs.shape)
    fd = (loss(qs + 1e-6 * d) - loss(qs - 1e-6 * d)) / 2e-6
    assert float(np.sum(bar * d)) == pytest.approx(fd, rel=1e-7)


def test_weight_gradient_matches_central_differences_on_a_short_horizon(gait):
    """Policy.rollout_vjp of GaitLoss's adjoint, 0.2 s of laikago on the relaxed ipm contact, with a
    random (non-zero) output layer so that the robot moves and every weight matters."""
    model = gait.laikago()
    q0, v0 = gait.start_state(model)
    policy = gait.make_policy(model, seed=1)
    rng = np.random.default_rng(1)
    weights = policy.weights.copy()
    last = 128 * model.nu + model.nu
    weights[-last:] = 0.02 * rng.normal(size=last)
    steps = 100
    loss = active_loss(gait, steps)

    def value(w):
        return loss(policy.rollout(q0, v0, steps, gait.DT, weights=w)[0])

    qs, vs, _, status = policy.rollout(q0, v0, steps, gait.DT, weights=weights)
    assert not (status != 0).any()
    assert np.ptp(qs[:, 0]) > 1e-3  # the base moves
    grad = policy.rollout_vjp(qs, vs, loss.adjoint(qs), np.zeros_like(vs), gait.DT, weights=weights)["weights"]
    assert np.isfinite(grad).all()
    for _ in range(2):
        d = rng.normal(size=weights.size)
        d /= np.linalg.norm(d)
        fd = (value(weights + 1e-5 * d) - value(weights - 1e-5 * d)) / 2e-5
        assert grad @ d == pytest.approx(fd, rel=1e-4, abs=1e-7)


def test_quick_run_writes_the_results(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    pytest.importorskip("meshcat")
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path)], capture_output=True,
                            text=True, timeout=600, check=False)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for contact in ("relaxed", "exact"):
        assert re.search(rf"hand-tuned trot, {contact} contact, .*: -?[0-9.]+ m/s over 0.5 s", out), out
        assert re.search(rf"network, best \(update \d+\), on the {contact} contact: -?[0-9.]+ m/s", out), out
    md = (tmp_path / "quadruped_gait.md").read_text()
    assert "hand-tuned trot" in md and "--quick" in md and "seed 0" in md
    for name in ("quadruped_gait.png", "quadruped_gait.html", "quadruped_gait_best.npz"):
        assert (tmp_path / name).stat().st_size > 0
