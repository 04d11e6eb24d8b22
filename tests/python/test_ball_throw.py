"""examples/control/ball_throw.py (paper 002 section 2.1.1): the scene, the tolerance test, the
loss gradient against central differences, and a --quick smoke run."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "control" / "ball_throw.py"
sys.path.insert(0, str(SCRIPT.parent))
import ball_throw  # noqa: E402


def test_within_tolerance():
    small = np.full(3, 0.004)  # norm 0.0069
    assert ball_throw.within_tolerance(small, small, small)
    assert not ball_throw.within_tolerance(np.array([0.011, 0, 0]), small, small)
    assert not ball_throw.within_tolerance(small, np.array([0, 0.011, 0]), small)
    assert not ball_throw.within_tolerance(small, small, np.array([0, 0, 0.011]))
    assert not ball_throw.within_tolerance(np.full(3, 0.006), small, small)  # each < 0.01, norm 0.0104


def test_median_counts_unreached_runs_as_infinite():
    runs = [{"solved_at": 3}, {"solved_at": None}, {"solved_at": 1}]
    assert ball_throw.median_solved(runs, 100) == 3
    assert ball_throw.median_solved(runs[:2], 100) == np.inf
    assert ball_throw.median_solved([{"solved_at": 2}, {"solved_at": 4}], 100) == 3


def test_rolling_ball_keeps_its_speed_and_backspin_stops_it():
    """The slides-plus-ball-joint scene: a ball rolling at 14 m/s (28 rad/s) keeps its speed for 5 s
    (a free joint's explicit body-frame rotation of v would grow it), and the textbook backspin throw
    (w0 = -2.5 v0 / r, v0 = sqrt(2 mu g 10 m)) slides to rest near 10 m."""
    throw = ball_throw.Throw()
    qs, vs = throw.rollout([14.0, 0, 0, 0, 14.0, 0])  # theta = (v0, r w0): rolling forward
    assert np.allclose(vs[-1, :3], [14.0, 0, 0], atol=1e-9)
    assert np.allclose(vs[-1, 3:], [0, 28.0, 0], atol=1e-9)
    assert qs[-1, 0] == pytest.approx(70.0, abs=1e-6)
    v0 = np.sqrt(2 * 1.0 * 9.81 * 10.0)
    qs, vs = throw.rollout([v0, 0, 0, 0, -2.5 * v0, 0])  # theta's r w0 = -2.5 v0
    assert np.abs(vs[-1]).max() < 1e-6
    assert qs[-1, 0] == pytest.approx(10.0, abs=0.1)  # 9.93: semi-implicit Euler at dt 0.01


def test_loss_gradient_matches_central_differences():
    throw = ball_throw.Throw(seconds=0.6)  # 60 steps: sliding with backspin, a small hop
    theta = np.array([4.0, 0.7, 0.3, 0.4, -3.0, 0.5])
    value, grad, _, _ = throw.loss_and_gradient(theta)
    h = 1e-6
    fd = np.array([(throw.loss(theta + h * e)[0] - throw.loss(theta - h * e)[0]) / (2 * h) for e in np.eye(6)])
    assert np.abs(grad).max() > 1.0
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-5 * np.abs(fd).max())


def test_quick_run_writes_results(tmp_path):
    subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path)], check=True, timeout=120)
    text = (tmp_path / "ball_throw.md").read_text()
    assert "Written by `.venv/bin/python examples/control/ball_throw.py --quick --seed 0" in text
    assert "| gradient: L-BFGS" in text and "| CMA-ES sigma0" in text
    assert "## Gradient with restarts from random throws" in text
    assert (tmp_path / "ball_throw.png").stat().st_size > 10_000
