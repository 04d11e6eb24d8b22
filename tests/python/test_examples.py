"""The examples run and reach what they claim (on reduced settings, to keep the suite fast)."""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> str:
    result = subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_demo_identifies_the_floor_and_lands_the_box_on_the_target(tmp_path):
    out = run("examples/demo.py", "--iterations", "60", "--no-plot", "--no-record")
    fit = re.search(r"identified: friction ([0-9.]+) \(true 0.3\), restitution ([0-9.]+) \(true 0.5\); "
                    r"rms position error ([0-9.]+) mm \(the tracking noise alone: ([0-9.]+) mm\)", out)
    assert fit, out
    assert abs(float(fit.group(1)) - 0.3) < 0.01 and abs(float(fit.group(2)) - 0.5) < 0.03, out
    assert float(fit.group(3)) < 1.1 * float(fit.group(4)), out  # down to the noise
    misses = dict(re.findall(r"throw planned on the (guessed|identified) floor: .* by ([0-9.]+) cm in the true world", out))
    assert float(misses["identified"]) < 5.0, out  # on the 15 cm target disc
    assert float(misses["guessed"]) > 50.0, out  # the guessed floor's plan is far off


def test_pendulum_energy_conserved_with_rk4_and_balances_the_dampers():
    out = run("examples/pendulum_energy.py", "--seconds", "2", "--no-plot")
    rk4 = re.search(r"RK4, no damping .* max \|E - E0\|/\|E0\| = ([0-9.e+-]+)", out)
    assert rk4 and float(rk4.group(1)) < 1e-6, out
    balance = re.search(r"lost ([0-9.]+) J, dissipated by the dampers ([0-9.]+) J", out)
    assert balance, out
    lost, dissipated = float(balance.group(1)), float(balance.group(2))
    assert lost > 1.0 and abs(lost - dissipated) < 1e-4 * lost, out
    assert "energy rises in 0 of" in out, out


def test_sysid_recovers_link_lengths_from_most_start_cells():
    pytest.importorskip("scipy")
    out = run("examples/sysid_double_pendulum/sysid.py", "--grid", "4", "--seconds", "5", "--no-plot")
    share = re.search(r"parallel basin hopping: recovered to 0.001 from (\d+)% of the cells; "
                      r"best estimate l1 = ([0-9.]+), l2 = ([0-9.]+)", out)
    assert share, out
    assert int(share.group(1)) >= 80, out
    assert abs(float(share.group(2)) - 3.0) < 1e-3 and abs(float(share.group(3)) - 4.0) < 1e-3, out


def load_example(relative_path: str):
    """Import an example script as a module (its main() does not run)."""
    import importlib.util

    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chain_mass_gradient_pieces_match_central_differences_without_contact():
    """The example's own chain rule (body positions -> qs_bar, flat parameters -> link masses with
    inertia scaling) against central differences, on a swinging chain with contact switched off."""
    import numpy as np

    cm = load_example("examples/lcp_physics/chain_mass.py")
    scene = cm.ChainScene(3, 1.0, contact=False, swing=np.array([0.5, -0.4, 0.3]))
    scene.observe(np.array([1.0, 2.0, 7.0]))
    assert scene.check_positions(scene.rollout(1.0)[1]) < 1e-9
    masses = np.array([1.5, 1.0, 3.0])
    loss, grad = scene.loss_and_grad(masses)
    fd_loss, fd = scene.loss_and_fd_grad(masses)
    assert loss == fd_loss and loss > 1.0
    assert np.all(np.abs(grad) > 1e-2), grad
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_chain_mass_gradient_through_contact_matches_fd_and_descends():
    """Short horizon (1 s: the ball strikes at 0.45 s), 3 links: the analytic gradient w.r.t. the
    bottom link's mass matches central differences and a few clipped descent steps lower the loss."""
    import numpy as np

    cm = load_example("examples/lcp_physics/chain_mass.py")
    scene = cm.ChainScene(3, 1.0, unknown=[2])
    scene.observe(cm.TRUE_MASS)
    for mass in (1.0, 4.0, 9.0):
        _, grad = scene.loss_and_grad(mass)
        _, fd = scene.loss_and_fd_grad(mass)
        np.testing.assert_allclose(grad, fd, rtol=1e-4)
        assert np.sign(grad[0]) == np.sign(mass - cm.TRUE_MASS)
    masses, losses = cm.descend(scene, cm.START_MASS, 5, "analytic")
    assert np.all(np.diff(losses) < 0), losses
    assert np.all(np.diff(masses[:, 0]) > 0) and masses[-1, 0] < cm.TRUE_MASS + 0.05, masses[:, 0]


def test_chain_mass_example_infers_with_finite_differences():
    out = run("examples/lcp_physics/chain_mass.py", "--links", "3", "--seconds", "2", "--gradient", "fd",
              "--iterations", "40", "--no-timing", "--no-plot", "--no-results")
    assert re.search(r"strikes at t = 0\.4[0-9]+ s, ball vx 3\.000 -> -[0-9.]+ m/s", out), out
    result = re.search(r"mass 1 -> ([0-9.]+) .* position MSE ([0-9.e+-]+) -> ([0-9.e+-]+) cm\^2", out)
    assert result, out
    assert 1.5 < float(result.group(1)) < 7.05 and float(result.group(3)) < 0.1 * float(result.group(2)), out


def test_laikago_stands_and_falls_under_each_contact_model():
    """Short run (0.8 s standing, 0.25 s falling): every contact model holds the robot on its toes
    with its own penetration, then lets it fall once the PD control is cut."""
    pytest.importorskip("mujoco")
    out = run("examples/laikago_contact/laikago_contact.py", "--stand", "0.8", "--no-plot")
    pattern = (r"  (gradyn \w+|MuJoCo)\s+stands at ([0-9.]+) m \(toe penetration ([0-9.-]+) mm, max ([0-9.]+) mm\); "
               r"in its last 0.1 s max\|v\| ([0-9.]+), base moved ([0-9.]+) mm; falls to ([0-9.-]+) m")
    rows = {m.group(1): [float(x) for x in m.groups()[1:]] for m in re.finditer(pattern, out)}
    assert {"gradyn penalty", "gradyn pgs", "MuJoCo"} <= set(rows), out
    stance = float(re.search(r"touch the ground at base height ([0-9.]+) m", out).group(1))
    for label, (standing, depth, deepest, speed, moved, fallen) in rows.items():
        assert 0 < depth < 10 and deepest < 20, (label, out)
        assert stance - 0.02 < standing < stance, (label, out)  # the legs give a little under the PD law
        assert speed < 0.1 and moved < 1.0, (label, out)
        assert standing - fallen > 0.2, (label, out)
    assert rows["gradyn pgs"][1] < 0.5 < rows["gradyn penalty"][1], out  # PGS: slop-level; penalty: springs
    if "gradyn ipm" in rows:  # the same LCP as PGS: the same stance
        assert abs(rows["gradyn ipm"][0] - rows["gradyn pgs"][0]) < 1e-3 and rows["gradyn ipm"][1] < 0.5, out
    else:
        assert "ipm: skipped" in out, out


def test_mujoco_contact_benchmark_checks_and_reports(tmp_path):
    """bench/compare_mujoco_contact.py on a short horizon: its checks pass (the generated MJCF is
    the URDF's robot; without contact gradyn's step Jacobian matches finite differences and
    MuJoCo's), every row is measured, and gradients that gradyn cannot take yet say why."""
    pytest.importorskip("mujoco")
    out_base = tmp_path / "mujoco_contact"
    out = run("bench/compare_mujoco_contact.py", "--steps", "200", "--repeats", "1", "--settle", "0.5",
              "--memory-steps", "200,2000", "--models", "none,pgs", "--out", str(out_base))
    import json

    result = json.loads(out_base.with_suffix(".json").read_text())
    assert result["free_dynamics_error"] < 1e-9, out
    rows = {r["contact"]: r for r in result["rows"]}
    none, pgs = rows["none"], rows["pgs"]
    assert none["gradients"] == "ok", out
    assert none["jacobian_fd_check"] < 1e-6 and none["jacobian_mujoco_check"] < 1e-5, out
    assert none["backward_over_forward"] > 0 and none["jacobian_us"]["gradyn"] > 0, out
    assert none["memory"]["states"]["read_bytes_per_step"] == (19 + 2 * 18) * 8, out
    assert pgs["contacts"] and min(pgs["contacts"]) == 4, out
    assert pgs["gradyn_step_us"] > 0 and pgs["mujoco_step_us"] > 0, out
    if pgs["gradients"] != "ok":
        assert pgs["gradients"].startswith("n/a (gradients through pgs contact not available: "), out
    assert "| none |" in out_base.with_suffix(".md").read_text()


def test_mujoco_rollout_benchmark_checks_and_reports(tmp_path):
    """bench/compare_mujoco_rollout.py --quick: its same-robot checks pass (gradyn follows MuJoCo
    without contact, actuators included) and every scene, batch size and thread count is measured."""
    pytest.importorskip("mujoco")
    out_base = tmp_path / "mujoco_rollout"
    out = run("bench/compare_mujoco_rollout.py", "--quick", "--out", str(out_base))
    import json

    result = json.loads(out_base.with_suffix(".json").read_text())
    assert all(err < 1e-8 for err in result["checks"].values()), out
    assert {"laikago-pgs", "laikago-penalty"} <= {r["scene"] for r in result["rows"]}, out
    for r in result["rows"]:
        assert r["gradyn_forward_steps_per_s"] > 0 and r["gradyn_vjp_steps_per_s"] > 0 and r["mujoco_steps_per_s"] > 0
        assert r["finite_worlds"] == r["B"], (r, out)
    assert "| laikago-pgs |" in out_base.with_suffix(".md").read_text()


def test_ilqr_benchmark_checks_and_reports(tmp_path):
    """bench/ilqr_speed.py --quick: its cart-poles agree (states and MuJoCo's finite-difference
    Jacobians against gradyn's analytic ones), every backend is timed, and on the same cart-pole
    both Jacobian sources lead the iLQR to the same cost."""
    pytest.importorskip("mujoco")
    out_base = tmp_path / "ilqr_speed"
    out = run("bench/ilqr_speed.py", "--quick", "--out", str(out_base))
    import json

    rows = {r["problem"]: r for r in json.loads(out_base.with_suffix(".json").read_text())["rows"]}
    assert set(rows) == {"cartpole-swingup", "laikago-standing (pgs)", "laikago-standing (penalty)"}, out
    cartpole = rows["cartpole-swingup"]
    assert cartpole["state_gap"] < 1e-9 and cartpole["jacobian_gap"] < 1e-4, out
    for row in rows.values():
        for backend in ("mujoco_fd", "gradyn_1_thread", "gradyn_all_threads"):
            assert row[backend]["iterations_per_s"] > 0 and np.isfinite(row[backend]["final_cost"]), out
    mj, g = cartpole["mujoco_fd"]["final_cost"], cartpole["gradyn_1_thread"]["final_cost"]
    assert abs(mj - g) <= 1e-3 * abs(g), out
    assert "| cartpole-swingup |" in out_base.with_suffix(".md").read_text()


def test_ten_laikagos_stand_and_report():
    """examples/ten_laikagos on a short horizon: ten robots under servos inside the step, one
    batched forward and backward call; they stand, the control gradient is finite and non-zero."""
    out = run("examples/ten_laikagos/ten_laikagos.py", "--steps", "200", "--repeats", "1", "--no-plot",
              "--no-readme")
    m = re.search(r"T = 200: forward ([0-9.]+) ms/step, backward ([0-9.]+) ms/step, states read (\d+) B/step.*"
                  r"final base heights ([0-9.]+)\.\.([0-9.]+) m; \|d loss / d ctrls\| ([0-9.e+-]+); "
                  r"steps with status flags (\d+)", out)
    assert m, out
    assert float(m.group(1)) > 0 and float(m.group(2)) > 0, out
    assert int(m.group(3)) == 10 * (19 + 18) * 8, out
    assert 0.4 < float(m.group(4)) <= float(m.group(5)) < 0.6, out
    assert 0 < float(m.group(6)) < float("inf"), out


def test_friction_discovery_finds_each_hinges_own_velocity():
    """examples/hybrid/friction_discovery on one training-set size: the lasso leaves each hinge's
    network its own velocity only, and the hybrid model beats the fully learned one."""
    pytest.importorskip("torch")
    out = run("examples/hybrid/friction_discovery.py", "--samples", "300", "--steps", "6", "--no-plot", "--no-readme")
    m = re.search(r"300 samples: test MSE hybrid ([0-9.e+-]+) .*fully learned ([0-9.e+-]+) .*inputs kept: "
                  r"hinge1_residual (.*); hinge2_residual (.*)", out)
    assert m, out
    hybrid, learned = float(m.group(1)), float(m.group(2))
    assert hybrid < 1e-2 * learned, out
    assert m.group(3) == "hinge1.v" and m.group(4) == "hinge2.v", out
    ratio = re.search(r"worst wrong-input group norm / right-input group norm = ([0-9.e+-]+)", out)
    assert ratio and float(ratio.group(1)) < 1e-3, out


def test_swimmer_drag_networks_beat_the_vacuum_model():
    """examples/hybrid/swimmer on a few optimiser steps: the drag networks, trained on 200 steps of
    MuJoCo's swimmer in water, already predict the held-out 900 steps better than the model without
    fluid, with fewer parameters than the LSTM baseline."""
    pytest.importorskip("torch")
    pytest.importorskip("mujoco")
    out = run("examples/hybrid/swimmer.py", "--steps", "3", "--lstm-epochs", "20", "--no-plot", "--no-readme")
    hybrid = re.search(r"hybrid: RMS state error over steps 1-900 ([0-9.]+)", out)
    vacuum = re.search(r"analytical model alone \(vacuum\): RMS state error over steps 1-900 ([0-9.]+)", out)
    params = re.search(r"parameters: hybrid networks (\d+), LSTM (\d+)", out)
    assert hybrid and vacuum and params, out
    assert float(hybrid.group(1)) < 0.5 * float(vacuum.group(1)), out
    assert int(params.group(1)) <= int(params.group(2)), out


def test_cartpole_physics_model_balances_gymnasium_from_few_samples(tmp_path):
    """examples/lcp_physics/cartpole --quick: the gradyn cart-pole fitted to 20 random-force
    transitions predicts held-out transitions better than the MLP, and its iLQR-MPC balances
    Gymnasium's CartPole for the whole (shortened) episode; the results file and figure appear."""
    pytest.importorskip("torch")
    pytest.importorskip("gymnasium")
    out = run("examples/lcp_physics/cartpole.py", "--quick", "--out", str(tmp_path))
    rows = re.findall(r"N=\s*(\d+): physics \(mc ([0-9.]+), mp ([0-9.]+), l ([0-9.]+)\) MSE ([0-9.e+-]+) "
                      r"reward ([0-9.]+) \| MLP MSE ([0-9.e+-]+) reward ([0-9.]+)", out)
    assert [int(r[0]) for r in rows] == [20, 200], out
    for n, mc, mp, length, mse_physics, reward_physics, mse_mlp, reward_mlp in rows:
        assert float(mse_physics) < float(mse_mlp), out
        assert float(reward_physics) == 100, out  # the --quick episode cap
    assert "| 20 |" in (tmp_path / "cartpole.md").read_text()
    assert (tmp_path / "cartpole.png").stat().st_size > 0


def test_breakout_fits_the_paddle_and_plays(tmp_path):
    """examples/lcp_physics/breakout --quick: the paddle's top speed fitted from 1,000 frames of
    random play lies near the game's (about 6 px per frame), and iLQR on the gradyn scene scores
    in a short game; the results file and figure appear."""
    pytest.importorskip("torch")
    pytest.importorskip("ale_py")
    out = run("examples/lcp_physics/breakout.py", "--quick", "--out", str(tmp_path))
    rows = re.findall(r"(\d+) frames of random play: paddle gain ([0-9.]+), damping ([0-9.]+) "
                      r"\(top speed ([0-9.]+) px/frame\); scores \[([0-9., ]+)\]", out)
    assert [int(r[0]) for r in rows] == [0, 1000], out
    assert 3.0 < float(rows[1][3]) < 8.0, out
    assert all(float(s) > 0 for r in rows for s in r[4].split(",")), out
    assert "| 1000 |" in (tmp_path / "breakout.md").read_text()
    assert (tmp_path / "breakout.png").stat().st_size > 0


def test_arm_reach_trains_a_policy_through_the_physics(tmp_path):
    """examples/control/arm_reach --quick: the example's loss adjoint (through the end-effector
    Jacobian and Policy.rollout_vjp) matches central differences, and 20 Adam updates bring the arm
    much closer to the target."""
    pytest.importorskip("torch")
    pytest.importorskip("cma")
    arm = load_example("examples/control/arm_reach.py")
    import gradyn

    model = arm.arm()
    policy = gradyn.Policy(model, ["task[0]"], hidden=[8], activation="tanh", seed=1, zero_last_layer=False)
    loss = arm.ReachLoss(model)
    q0, v0 = np.zeros(model.nq), np.zeros(model.nv)

    def value(w):
        return loss(policy.rollout(q0, v0, 100, arm.DT, weights=w, task=[1.0])[0])[0]

    qs, vs, _, _ = policy.rollout(q0, v0, 100, arm.DT, task=[1.0])
    grads = policy.rollout_vjp(qs, vs, loss.adjoint(qs), np.zeros_like(vs), arm.DT, task=[1.0])
    d = np.random.default_rng(0).normal(size=policy.param_count)
    fd = (value(policy.weights + 1e-6 * d) - value(policy.weights - 1e-6 * d)) / 2e-6
    assert grads["weights"] @ d == pytest.approx(fd, rel=1e-5)
    out = run("examples/control/arm_reach.py", "--quick", "--out", str(tmp_path))
    m = re.search(r"gradient: mean distance ([0-9.]+) -> ([0-9.]+) m", out)
    assert m and float(m.group(2)) < 0.5 * float(m.group(1)), out
    assert "| CMA-ES (diagonal) | 20 |" in (tmp_path / "arm_reach.md").read_text()


def test_policy_benchmark_and_random_reaching_smoke_runs(tmp_path):
    """bench/policy_rollout.py --quick measures every network and batch it lists, and
    examples/control/arm_reach_random.py --quick lowers the validation distance in 3 updates."""
    out_base = tmp_path / "policy_rollout"
    out = run("bench/policy_rollout.py", "--quick", "--out", str(out_base))
    import json

    rows = json.loads(out_base.with_suffix(".json").read_text())["rows"]
    assert {(r["network"], r["batch"]) for r in rows} == {("1.5k", 1), ("1.5k", 4), ("18k", 1), ("18k", 4)}, out
    assert all(r["forward_s"] > 0 and r["gradient_s"] > 0 for r in rows), out
    pytest.importorskip("torch")
    out = run("examples/control/arm_reach_random.py", "--quick", "--out", str(tmp_path))
    distances = [float(x) for x in re.findall(r"validation mean distance ([0-9.]+) m", out)]
    assert len(distances) == 4 and distances[-1] < distances[0], out
    assert (tmp_path / "arm_reach_random.md").exists() and (tmp_path / "arm_reach_random.png").exists()


def test_open_loop_policy_benchmark_smoke_run():
    """bench/open_loop_policy.py --quick times both forms (their controls checked equal inside)."""
    out = run("bench/open_loop_policy.py", "--quick")
    row = out.strip().splitlines()[-1]
    assert row.startswith("(68, 4, 20,") and all(float(x) > 0 for x in row.strip("()").split(",")[3:]), out


def test_four_bar_example_keeps_its_loop_closed_and_follows_mujoco():
    """examples/closed_loops/four_bar on a short horizon: gradyn's loop gap below 1e-6 m under pgs and
    ipm, MuJoCo's soft connect wider, the joint angles within 1e-3 rad of MuJoCo's, and the gradient
    through the loop equal to central differences."""
    pytest.importorskip("mujoco")
    example = load_example("examples/closed_loops/four_bar.py")
    rows, gap_mujoco, (adjoint, central) = example.main(["--seconds", "0.5", "--no-plot", "--no-readme"])
    assert [r[0] for r in rows] == ["pgs", "ipm"]
    for contact, gap, diff, flagged, _, _ in rows:
        assert gap < 1e-6, contact
        assert diff.max() < 1e-3, contact
        assert flagged == 0, contact
    assert gap_mujoco.max() > 10 * max(r[1] for r in rows)
    assert adjoint == pytest.approx(central, rel=1e-5)


def test_pushing_friction_network_beats_every_constant_coefficient():
    """examples/hybrid/pushing on 4 training pushes and 40 Adam steps: the contact_friction network
    learns enough of the position-dependent friction to predict held-out pushes' final poses
    better than the tuned constant coefficient, whose error hardly moves with the coefficient."""
    pytest.importorskip("torch")
    pytest.importorskip("tqdm")
    out = run("examples/hybrid/pushing.py", "--train", "4", "--test", "4", "--iterations", "40",
              "--tune-iterations", "2", "--no-plot", "--no-readme")
    loss = re.search(r"hybrid training loss ([0-9.e+-]+) -> ([0-9.e+-]+)", out)
    tuned = re.search(r"plain, tuned .* pose +([0-9.]+) mm", out)
    hybrid = re.search(r"hybrid +final position .* pose +([0-9.]+) mm", out)
    assert loss and tuned and hybrid, out
    assert float(loss.group(2)) < 0.2 * float(loss.group(1)), out
    assert float(hybrid.group(1)) < 0.5 * float(tuned.group(1)), out


def test_laikago_mpc_smoke_run_trots_and_times_both_controllers(tmp_path):
    """examples/control/laikago_mpc.py --quick: the OSQP MPC trots 0.6 s from rest without falling
    (base up, toes lifting), a network is trained on its transitions (one DAgger round), and both
    controllers' times per control step are written, finite and positive."""
    pytest.importorskip("torch")
    pytest.importorskip("osqp")
    out = run("examples/control/laikago_mpc.py", "--quick", "--out", str(tmp_path))
    md = (tmp_path / "laikago_mpc.md").read_text()
    assert (tmp_path / "laikago_mpc.png").stat().st_size > 0
    number = r"(-?[0-9.]+|nan)"
    rows = {m.group(1): [m.group(i) for i in range(2, 9)] for m in re.finditer(
        rf"^\| (MPC|network) \| 0\.40 \| {number} \| {number} \| {number} \| {number} \| {number}% \| {number} \| "
        r"(yes|no) \|", md, re.M)}
    assert set(rows) == {"MPC", "network"}, md
    mpc = [float(x) for x in rows["MPC"][:6]]
    assert all(np.isfinite(mpc)), md
    _, _, z_mean, z_min, lifted, toe_peak = mpc
    assert rows["MPC"][-1] == "no" and z_min > 0.45, md  # stands up and trots (stance base: 0.506 m)
    assert 20 <= lifted <= 80 and toe_peak > 3.0, md  # the feet lift (a trot: about half the time)
    assert all(np.isfinite([float(x) for x in rows["network"][:6]])), md
    times = re.search(r"\| MPC \(OSQP\) \| (\d+) \| ([0-9.]+) \|.*\n\| network \| (\d+) \| ([0-9.]+) \|", md)
    assert times and int(times.group(1)) == 600 and float(times.group(2)) > 0 and float(times.group(4)) > 0, md
    speedup = re.search(r"per control step \(median MPC / median network\): \*\*([0-9.]+)x\*\*", md)
    assert speedup and float(speedup.group(1)) == pytest.approx(float(times.group(2)) / float(times.group(4)),
                                                               rel=0.01), md
    assert "DAgger: 1 rounds" in md and "QP solves not reported 'solved' by OSQP (demonstrations and evaluation): 0" in md
    assert "MPC transitions" in out
