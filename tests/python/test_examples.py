"""The examples run and reach what they claim (on reduced settings, to keep the suite fast)."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> str:
    result = subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_demo_conserves_energy_with_rk4_and_balances_the_dampers():
    out = run("examples/demo.py", "--seconds", "2", "--no-plot")
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
