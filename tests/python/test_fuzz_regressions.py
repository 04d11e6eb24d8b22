"""The step/rollout argument fuzzer (tests/fuzz/fuzz_args.py, an atheris harness run by
`bash scripts/fuzz.sh args SECONDS`) without atheris: every kept input under
tests/fuzz/regressions/args/ and a few hundred fixed pseudo-random inputs go through the harness's
one_input, which calls gradyn.step or gradyn.rollout with fuzzed shapes, dtypes, layouts, values,
dt, integrator, params and threads and requires arrays of the documented shapes or a
ValueError/TypeError, and that a reference step keeps its bits afterwards."""
import importlib.util
import pathlib
import random

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"


@pytest.fixture(scope="module")
def harness():
    spec = importlib.util.spec_from_file_location("fuzz_args", FUZZ / "fuzz_args.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kept_inputs():
    return sorted((FUZZ / "regressions" / "args").glob("*"))


@pytest.mark.parametrize("path", kept_inputs(), ids=lambda p: p.name)
def test_kept_input(harness, path):
    harness.one_input(path.read_bytes())


def test_fixed_random_inputs(harness):
    rng = random.Random(21)
    for _ in range(300):
        harness.one_input(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
