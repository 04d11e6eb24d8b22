"""examples/billiards/billiards.py (paper 000, section 4.2): the scene bounces elastically, the frames
show each ball where it is, the gradyn physics layer's gradient is the physics' (free flight and a
bounce), labelled fractions, and the --quick smoke run writes its README, figures and numbers."""

import importlib.util
import json
import math
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "billiards" / "billiards.py"


@pytest.fixture(scope="module")
def billiards():
    spec = importlib.util.spec_from_file_location("billiards_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_ball_bounces_off_the_wall_elastically(billiards):
    model = billiards.scene(1)
    # From the centre at 1 m/s along +x: it meets the wall (x = HALF - RADIUS = 0.75) after 0.75 s,
    # comes back at the same speed and is at 0.75 - 1.25 = -0.5 after 2 s (20 frames).
    frames = round(2.0 / billiards.DT_FRAME)
    qs, vs = billiards.simulate(model, np.zeros((1, 2)), np.array([[1.0, 0.0]]), frames)
    assert qs.shape == (1, frames + 1, 2) and vs.shape == (1, frames + 1, 2)
    assert qs[0, -1, 0] == pytest.approx(-0.5, abs=0.03)
    assert vs[0, -1, 0] == pytest.approx(-1.0, abs=0.02)
    assert qs[0, :, 0].max() < billiards.HALF - billiards.RADIUS + 0.03  # no tunnelling through the wall
    np.testing.assert_allclose(qs[0, :, 1], 0.0, atol=1e-9)


def test_two_equal_balls_exchange_velocities(billiards):
    model = billiards.scene(2)
    q0 = np.array([[-0.5, 0.0, 0.2, 0.0]])
    v0 = np.array([[1.0, 0.0, 0.0, 0.0]])
    qs, vs = billiards.simulate(model, q0, v0, round(0.5 / billiards.DT_FRAME))  # they touch after 0.2 s
    np.testing.assert_allclose(vs[0, -1], [0.0, 0.0, 1.0, 0.0], atol=0.03)


def test_frames_show_each_ball_where_it_is(billiards):
    model = billiards.scene(3)
    q = np.array([[-0.5, 0.4, 0.3, -0.2, 0.5, 0.6]])
    size = 32
    image = billiards.render(model, q, size)
    assert image.shape == (1, 3, size, size) and image.dtype == np.float32
    for i in range(3):
        col, row = billiards.pixel_of(q[0, 2 * i], q[0, 2 * i + 1], size)
        np.testing.assert_allclose(image[0, :, row, col], billiards.COLORS[i], atol=1e-6)
    col, row = billiards.pixel_of(0.0, -0.8, size)  # the empty table: background
    np.testing.assert_allclose(image[0, :, row, col], billiards.BACKGROUND, atol=1e-6)
    col, row = billiards.pixel_of(1.1, 0.0, size)  # on the right wall
    np.testing.assert_allclose(image[0, :, row, col], billiards.WALL_COLOR, atol=1e-6)


def test_data_samples_are_windows_of_one_trajectory(billiards):
    data = billiards.make_data(1, 3, 16, seed=5)
    assert data["x"].shape == (3, 9, 16, 16) and data["y"].shape == (3, 3, 16, 16)
    assert data["phi"].shape == (3, 4) and data["phi_next"].shape == (3, 4)
    speed = np.linalg.norm(data["phi"][:, 2:], axis=1)
    assert np.all((speed > 0.5 - 0.02) & (speed < 1.5 + 0.02))  # elastic: the speed stays in its range
    np.testing.assert_allclose(np.linalg.norm(data["phi_next"][:, 2:], axis=1), speed, rtol=0.03)


def test_physics_layer_gradient_is_the_physics(billiards):
    layer = billiards.GradynPhysics(billiards.scene(1))
    horizon_s = billiards.HORIZON * billiards.DT_FRAME
    # Free flight: x' = x + horizon_s * v, so d x' / d vx = horizon_s and d x' / d x = 1.
    phi = torch.tensor([[0.0, 0.0, 0.4, 0.2]], dtype=torch.float32, requires_grad=True)
    out = layer(phi)
    assert 0.4 * horizon_s < billiards.HALF - billiards.RADIUS  # no wall reached
    np.testing.assert_allclose(out.detach().numpy()[0], [0.4 * horizon_s, 0.2 * horizon_s, 0.4, 0.2], atol=1e-6)
    out[0, 0].backward()
    np.testing.assert_allclose(phi.grad.numpy()[0], [1.0, 0.0, horizon_s, 0.0], atol=1e-6)
    # A bounce off the right wall reverses vx: d vx' / d vx = -1, and x' moves against vx.
    phi = torch.tensor([[0.6, 0.0, 1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    out = layer(phi)
    assert out[0, 2].item() == pytest.approx(-1.0, abs=0.02)
    out[0, 2].backward()
    assert phi.grad[0, 2].item() == pytest.approx(-1.0, abs=0.05)
    phi.grad = None
    layer(phi)[0, 0].backward()
    assert phi.grad[0, 2].item() < 0


def test_labelled_mask(billiards):
    for fraction, count in ((1.0, 100), (0.25, 25), (0.1, 10), (0.02, 2), (0.001, 1)):
        mask = billiards.labelled_mask(100, fraction, seed=0)
        assert mask.sum() == count
    np.testing.assert_array_equal(billiards.labelled_mask(100, 0.1, 3), billiards.labelled_mask(100, 0.1, 3))
    with pytest.raises(ValueError, match="fraction"):
        billiards.labelled_mask(100, 0.0, seed=0)
    with pytest.raises(ValueError, match="balls"):
        billiards.scene(5)


def test_quick_run_writes_its_numbers_and_figures(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--balls", "1", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    finals = re.findall(r"1 ball\(s\) (physics|mlp|mlp_all)\s+(\d+)% labelled, seed 0: (\d+) labelled samples used, "
                        r"validation image MSE ([0-9.]+)", out)
    assert len(finals) == 6, out  # quick: 100 % and 10 %, three models
    used = {(k, int(f)): int(n) for k, f, n, _ in finals}
    # One epoch: the physics model and the baseline used the same labelled samples at a fraction.
    assert used[("physics", 100)] == used[("mlp", 100)] == used[("mlp_all", 100)] == 60
    assert used[("physics", 10)] == used[("mlp", 10)] == used[("mlp_all", 10)] == 6
    assert all(0 < float(v) < 1 for *_, v in finals)
    readme = (tmp_path / "README.md").read_text()
    assert "billiards.py --quick" in readme and "seeds 0" in readme
    for _, _, _, value in finals:
        assert value in readme  # the README quotes the printed numbers
    assert (tmp_path / "billiards_loss.png").stat().st_size > 1000
    assert (tmp_path / "billiards_frames.png").stat().st_size > 1000
    results = json.loads((tmp_path / "results.json").read_text())
    assert len(results["runs"]) == 6
    assert all(math.isfinite(c[1]) for r in results["runs"] for c in r["curve"])
