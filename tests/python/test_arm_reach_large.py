"""examples/control/arm_reach_large.py: the open-loop network held over the rollout gets the same
gradient as gradyn.Policy's closed loop; its forward kinematics are gradyn's; the stages run."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gradyn

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "control" / "arm_reach_large.py"
sys.path.insert(0, str(SCRIPT.parent))
import arm_reach  # noqa: E402
import arm_reach_large as large  # noqa: E402

torch = pytest.importorskip("torch")


def test_tip_positions_are_gradyns_frame_pose():
    model = arm_reach.arm()
    qs = np.random.default_rng(3).uniform(-np.pi, np.pi, size=(20, 4))
    expected = np.array([gradyn.frame_pose(model, q, "tip")[:3, 3] for q in qs])
    np.testing.assert_allclose(large.tip_positions(qs), expected, atol=1e-12)
    np.testing.assert_allclose(large.tip_positions(torch.tensor(qs)).numpy(), expected, atol=1e-12)


def test_held_network_gradient_equals_policy_closed_loop():
    """The network evaluated once and held, differentiated through the summed control adjoint, is
    gradyn.Policy's gradient (the network re-evaluated at every step inside the C++ loop)."""
    model = arm_reach.arm()
    steps, dt = 60, 0.01
    net = large.network([6, 5], seed=1, device="cpu", dtype=torch.float64)
    with torch.no_grad():  # a non-zero output layer, so that every layer's gradient is non-zero
        net[-1].weight.normal_(0.0, 0.5)
        net[-1].bias.normal_(0.0, 0.5)
    targets = large.random_targets(3, np.random.default_rng(0))
    arms = large.Arms("cpu", steps, dt)
    net.zero_grad()
    loss, _, _ = large.evaluate(net, arms, targets, "cpu")
    ours = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).numpy()

    policy = gradyn.Policy(model, ["task[0]", "task[1]", "task[2]"], hidden=[6, 5], activation="relu")
    weights = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).numpy()  # torch's layout is gradyn's
    assert weights.size == policy.param_count
    q0, v0 = np.zeros((3, model.nq)), np.zeros((3, model.nv))
    qs, vs, _, _ = policy.rollout(q0, v0, steps, dt, weights=weights, task=targets)
    loss_policy, qs_bar, _, _ = large.loss_and_qs_bar(qs, targets)
    grads = policy.rollout_vjp(qs, vs, qs_bar, np.zeros_like(vs), dt, weights=weights, task=targets)
    assert loss == pytest.approx(loss_policy, rel=1e-12)
    assert np.abs(ours).max() > 1e-4
    np.testing.assert_allclose(ours, grads["weights"], rtol=1e-9, atol=1e-12 * np.abs(ours).max())


def test_train_and_report_quick(tmp_path):
    run = tmp_path / "run"
    subprocess.run([sys.executable, str(SCRIPT), "train", "--quick", "--out", str(run)], check=True, timeout=120)
    records = [json.loads(line) for line in (run / "arm_reach_large.jsonl").read_text().splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds[:2] == ["machine", "config"] and kinds[-1] == "timing"
    assert [r["update"] for r in records if r["kind"] == "validation"] == [0, 1, 2, 3]
    subprocess.run([sys.executable, str(SCRIPT), "report", str(run), "--out", str(tmp_path)], check=True, timeout=120)
    text = (tmp_path / "arm_reach_large.md").read_text()
    assert "| 404 | 4 | 3 |" in text and (tmp_path / "arm_reach_large.png").stat().st_size > 0
