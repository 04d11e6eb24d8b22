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
