"""Paper 003's control and estimation applications (examples/control): smoke runs of each script's
--quick mode into a temporary folder, and the gradients they rely on against central differences."""

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONTROL = ROOT / "examples" / "control"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, CONTROL / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _quick(name, tmp_path):
    out = tmp_path / name
    subprocess.run([sys.executable, str(CONTROL / f"{name}.py"), "--quick", "--out", str(out)], check=True,
                   cwd=ROOT, timeout=120, capture_output=True)
    md = (out / f"{name}.md").read_text()
    assert "--quick" in md and (out / f"{name}.png").stat().st_size > 0
    return md


def test_racecar_friction_gradient_matches_central_difference():
    rf = _load("racecar_friction")
    car = rf.Racecar()
    for mu in (0.01, 0.05, 0.21):  # sliding throughout; wheels gripping mid-episode; near the answer
        x, dx = car.final_x_and_grad(mu)
        fd = rf.central_difference(car, mu)
        assert np.isfinite(dx) and abs(dx - fd) <= 0.01 * abs(fd) + 1e-4, (mu, dx, fd)
    # friction decelerates the car: x_T falls with mu, from near 1 m towards the rolling speed's limit
    assert car.final_x(0.002) > 0.98 and car.final_x(0.002) > car.final_x(0.21) > car.final_x(2.0) > 0.7


def test_racecar_friction_quick(tmp_path):
    md = _quick("racecar_friction", tmp_path)
    assert "SGD on log mu" in md and "CMA-ES" in md


def test_arm_throw_gradient_close_to_central_difference():
    at = _load("arm_throw")
    task = at.Throw()
    rng = np.random.default_rng(0)
    u = rng.normal(0.0, 2.0, (at.INTERVALS, at.NJOINTS))
    # The ball is flung out of the cup: the final position depends on the torques.
    assert task.loss(u) != pytest.approx(task.loss(np.zeros_like(u)))
    for _ in range(2):
        adjoint, fd = at.directional_check(task, u, rng.normal(size=u.shape))
        # within 10 %: PGS steps stopped at their sweep limit leave a few per cent (see arm_throw.md)
        assert abs(adjoint - fd) <= 0.1 * abs(fd), (adjoint, fd)


def test_arm_throw_quick(tmp_path):
    md = _quick("arm_throw", tmp_path)
    assert "Adam, analytic gradient" in md and "CMA-ES, seed 0" in md


def test_golf_gradient_matches_central_difference():
    golf = _load("golf")
    task = golf.Golf()
    rng = np.random.default_rng(0)
    u = rng.normal(0.0, 1.0, (golf.INTERVALS, golf.NJOINTS))
    for _ in range(2):
        adjoint, fd = golf.directional_check(task, u, rng.normal(size=u.shape))
        assert abs(adjoint - fd) <= 1e-3 * abs(fd) + 1e-6, (adjoint, fd)
    # with zero torques the falling club hits the ball, which settles short of the 3 m target
    ball = task.ball(task.rollout(np.zeros_like(u))[0])
    assert 1.0 < ball[-1, 0] < golf.TARGET[0]


def test_golf_quick(tmp_path):
    md = _quick("golf", tmp_path)
    assert "Adam, analytic gradient" in md and "CMA-ES, seed 0" in md
