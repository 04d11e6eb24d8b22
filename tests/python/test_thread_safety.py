"""One Model used from several Python threads at once gives bitwise the results of sequential use
(Models are immutable; every call runs on a workspace of its own, fresh for each rollout): the
laikago on PGS contact, rollouts and gradients submitted together to a pool of 4 threads."""

import concurrent.futures as cf
import pathlib
import sys

import numpy as np
import pytest

import gradyn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_concurrent_rollouts_and_gradients_are_the_sequential_ones(contact):
    model = scene.load_gradyn(contact)
    q = scene.stance(model, clearance=0.01)
    rng = np.random.default_rng(0)
    T = 200
    # some worlds push joints into their limits (more LCP rows: the workspaces grow) and some do not
    jobs = [(0.1 * rng.normal(size=model.nv), (0.5 if k % 2 else 60.0) * rng.normal(size=(T, model.nv)))
            for k in range(12)]
    vs_bar = np.zeros((T + 1, model.nv))
    vs_bar[-1] = 1.0

    def forward(job):
        return gradyn.rollout(model, q, job[0], job[1], 1e-3)

    def backward(job):
        return gradyn.rollout_vjp(model, q, job[0], job[1], 1e-3, None, vs_bar)[:3]

    want_f = [forward(j) for j in jobs]
    want_b = [backward(j) for j in jobs]
    for _ in range(3):
        with cf.ThreadPoolExecutor(4) as pool:
            got_f = [pool.submit(forward, j) for j in jobs]
            got_b = [pool.submit(backward, j) for j in jobs]
            for g, w in zip(got_f, want_f):
                assert all(np.array_equal(a, b) for a, b in zip(g.result(), w))
            for g, w in zip(got_b, want_b):
                assert all(np.array_equal(a, b) for a, b in zip(g.result(), w))
