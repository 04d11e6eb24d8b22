"""The command line, python -m gradyn info|simulate|view|bench, run as a user runs it (subprocess)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradyn
from gradyn import cli

ROOT = Path(__file__).resolve().parents[2]
LAIKAGO = "models/laikago/laikago_toes_zup.urdf"
PENDULUM = "models/pendulums/pendulum2.urdf"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gradyn", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def load_quietly(path: str, **kwargs) -> gradyn.Model:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gradyn.load(str(ROOT / path), **kwargs)


def section(stdout: str, title: str) -> list[str]:
    """The table rows under 'title (n):' (header row dropped)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title + " ("))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        rows.append(line.split())
    return rows


def test_info_lists_the_laikago():
    result = run("info", LAIKAGO)
    assert result.returncode == 0, result.stderr
    model = load_quietly(LAIKAGO)
    out = result.stdout
    assert f"nq {model.nq}, nv {model.nv}, nu {model.nu}" in out
    assert f"parameters  {len(model.param_names)} " in out
    assert f"total mass  {gradyn.total_mass(model):.6g} kg" in out
    assert "contact     none" in out

    bodies = section(out, "bodies")
    assert [row[0] for row in bodies] == model.body_names
    assert [float(row[2]) for row in bodies] == pytest.approx(model.body_masses, rel=1e-5)
    joints = section(out, "joints")
    assert [(row[0], row[1]) for row in joints] == list(zip(model.joint_names, model.joint_types))
    actuators = section(out, "actuators")
    assert [(row[0], row[1]) for row in actuators] == [(a["name"], a["kind"]) for a in model.actuators]
    geoms = section(out, "geoms")
    assert [(row[0], row[1], row[2]) for row in geoms] == [(g["name"], g["type"], g["body"]) for g in model.geoms]
    # the laikago's mesh files are not shipped: the loader's warnings are listed, one per line
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradyn.load(LAIKAGO)
    assert f"loader warnings ({len(caught)}):" in out
    assert len(caught) > 0 and str(caught[0].message) in out


def test_info_on_a_floating_base_mjcf_names_its_free_joint():
    result = run("info", "models/mujoco/humanoid.xml", "--contact", "pgs")
    assert result.returncode == 0, result.stderr
    assert "base        free joint(s) root" in result.stdout
    assert "contact     pgs" in result.stdout
    # MuJoCo's humanoid has a keyframe, condim 1 and contact softness, which gradyn reads but does not
    # simulate: the loader says so, once per kind, and `info` lists it; its two hamstring tendons are
    # simulated, and `info` lists them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gradyn.load(ROOT / "models" / "mujoco" / "humanoid.xml")
    assert len(caught) > 0 and f"loader warnings ({len(caught)})" in result.stdout
    assert not any("<tendon>" in str(w.message) for w in caught)
    assert [t["name"] for t in model.tendons] == ["hamstring_right", "hamstring_left"]
    assert "hamstring_right" in result.stdout


def test_a_missing_file_is_one_line_and_status_2(tmp_path):
    missing = tmp_path / "no_such_robot.urdf"
    for command in ("info", "simulate", "view", "bench"):
        result = run(command, str(missing))
        assert result.returncode == 2, (command, result.stderr)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert str(missing) in lines[0] and "no such file" in lines[0]


def test_a_malformed_file_gives_the_loaders_message_in_one_line(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text('<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="bogus">\n'
                   '    <parent link="a"/><child link="b"/>\n  </joint>\n</robot>\n')
    result = run("info", str(bad))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    # file, line and element, as the loader says them
    assert f"{bad}:3:" in lines[0] and "<joint name='j'>" in lines[0] and "bogus" in lines[0]

    unclosed = tmp_path / "unclosed.xml"
    unclosed.write_text("<mujoco>\n  <worldbody>\n    <body>\n</mujoco>\n")
    result = run("simulate", str(unclosed))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and str(unclosed) in result.stderr


def test_simulate_saves_the_rollout_it_summarises(tmp_path):
    out = tmp_path / "pendulum.npz"
    steps, dt = 2500, 2e-3  # more than one chunk of the progress bar
    result = run("simulate", PENDULUM, "--steps", str(steps), "--dt", str(dt), "--integrator", "rk4",
                 "--out", str(out))
    assert result.returncode == 0, result.stderr
    model = load_quietly(PENDULUM)
    saved = np.load(out)
    qs, vs = gradyn.rollout(model, model.q0, np.zeros(model.nv), np.zeros((steps, model.nv)), dt, integrator="rk4")
    # chunks of a rollout without contact carry no state between calls: the same bits as one call
    np.testing.assert_array_equal(saved["qs"], qs)
    np.testing.assert_array_equal(saved["vs"], vs)
    assert saved["status"].shape == (steps,) and not saved["status"].any()
    assert saved["t"][-1] == pytest.approx(steps * dt)
    assert list(saved["joint_names"]) == model.joint_names
    assert "final q     " + cli._vector(qs[-1]).split(",")[0] in result.stdout
    assert "every step OK" in result.stdout

    e0 = gradyn.kinetic_energy(model, qs[0], vs[0]) + gradyn.potential_energy(model, qs[0])
    e1 = gradyn.kinetic_energy(model, qs[-1], vs[-1]) + gradyn.potential_energy(model, qs[-1])
    assert f"energy      {e0:.6g} J -> {e1:.6g} J, drift {e1 - e0:.6g} J" in result.stdout


def test_simulate_reports_status_flags_and_refused_options(tmp_path):
    # a floating laikago started inside the ground plane: penetration is flagged, not raised
    result = run("simulate", LAIKAGO, "--floating-base", "--contact", "pgs", "--ground", "0.3", "--steps", "50")
    assert result.returncode == 0, result.stderr
    assert "status      DEEP_PENETRATION:" in result.stdout
    assert "no drift reported" in result.stdout
    assert "loader gave" in result.stderr  # the missing meshes, summarised in one line
    assert len(result.stderr.strip().splitlines()) == 1

    result = run("simulate", PENDULUM, "--contact", "pgs", "--integrator", "rk4")
    assert result.returncode == 2
    # one line for the refusal; the pendulum's <dynamics friction> (not simulated) is the loader's one line
    errors = [line for line in result.stderr.strip().splitlines() if "loader gave" not in line]
    assert len(errors) == 1 and "rk4" in errors[0] and "pgs" in errors[0]

    result = run("simulate", PENDULUM, "--out", str(tmp_path / "no_folder" / "x.npz"))
    assert result.returncode == 2 and "does not exist" in result.stderr

    result = run("simulate", PENDULUM, "--steps", "-3")
    assert result.returncode == 2 and "--steps" in result.stderr


def test_simulate_records_with_the_viewer(tmp_path):
    pytest.importorskip("meshcat")
    page = tmp_path / "pendulum.html"
    result = run("simulate", PENDULUM, "--steps", "200", "--record", str(page))
    assert result.returncode == 0, result.stderr
    assert f"recorded    {page}" in result.stdout
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_view_passes_the_rollout_to_the_viewer(monkeypatch, capsys):
    from gradyn import viewer

    shown = {}
    monkeypatch.setattr(viewer, "show", lambda model, qs, **options: shown.update(model=model, qs=qs, **options))
    assert cli.main(["view", str(ROOT / PENDULUM), "--steps", "30", "--no-browser"]) == 0
    model = load_quietly(PENDULUM)
    qs, _ = gradyn.rollout(model, model.q0, np.zeros(model.nv), np.zeros((30, model.nv)), 1e-3)
    np.testing.assert_array_equal(shown["qs"], qs)
    assert shown["open_browser"] is False and shown["dt"] == 1e-3

    assert cli.main(["view", str(ROOT / PENDULUM), "--steps", "0", "--no-browser"]) == 0
    np.testing.assert_array_equal(shown["qs"], model.q0[None])


def test_bench_times_forward_and_adjoint():
    result = run("bench", LAIKAGO, "--contact", "penalty", "--steps", "20", "--batch", "3", "--repeat", "1")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()
            if line.startswith(("rollout ", "rollout_vjp "))]
    assert [(r[0], r[1]) for r in rows] == [("rollout", "1"), ("rollout_vjp", "1"), ("rollout", "3"),
                                            ("rollout_vjp", "3")]
    assert all(float(r[3].replace(",", "")) > 0 for r in rows)


def test_help_for_each_command():
    result = run("--help")
    assert result.returncode == 0 and "info" in result.stdout and "bench" in result.stdout
    for command, option in (("info", "--floating-base"), ("simulate", "--record"), ("view", "--steps"),
                            ("bench", "--batch")):
        result = run(command, "--help")
        assert result.returncode == 0 and option in result.stdout, command
    result = run()
    assert result.returncode == 2 and "usage" in result.stderr


def test_info_lists_friction_couplings_and_loops():
    out = run("info", "examples/closed_loops/four_bar.xml", "--contact", "pgs")
    assert out.returncode == 0, out.stderr
    assert "constraints (enforced by pgs, ipm and penalty):" in out.stdout
    assert "connection" in out.stdout and "coupler - rocker" in out.stdout
    plain = run("info", "models/pendulums/pendulum2.urdf")
    assert "dry friction" in plain.stdout and "not enforced without a contact model" in plain.stdout
