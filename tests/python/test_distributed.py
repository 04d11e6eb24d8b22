"""examples/distributed/populations.py on a local Ray cluster of several worker processes: basin
hopping and CMA-ES split into Ray tasks give bitwise the results of one process alone."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("ray", reason="ray is installed by scripts/setup.sh (test profile)")
pytest.importorskip("cma")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_example():
    spec = importlib.util.spec_from_file_location("populations", ROOT / "examples" / "distributed" / "populations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["populations"] = module  # as an import would: Ray pickles its functions by value
    spec.loader.exec_module(module)
    return module


def test_split_covers_every_index_once():
    populations = load_example()
    for n, parts in [(1, 4), (7, 3), (12, 12), (100, 7)]:
        pieces = populations.split(n, parts)
        assert len(pieces) == min(n, parts)
        assert np.array_equal(np.concatenate(pieces), np.arange(n))


def test_ray_tasks_equal_one_process(capsys):
    populations = load_example()
    code = populations.main(["both", "--workers", "3", "--grid", "3", "--seconds", "2", "--generations", "6",
                             "--popsize", "9", "--check", "--no-write"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("results bitwise equal") == 2, out
    assert "in 3 tasks" in out and "Ray, 3 CPUs" in out, out


def test_workers_must_be_positive():
    populations = load_example()
    with pytest.raises(SystemExit):
        populations.main(["cma-es", "--workers", "0"])
