"""Determinism (issue 21, item 3): a 10 s laikago contact rollout and its gradient, under each contact
model, hash bit for bit the same across repeated runs, thread counts and positions in a batch.

What may differ elsewhere: the bits hold for one build (compiler, flags, Eigen version, CPU
instruction set). Another compiler, -march=native (FMA contraction) or -ffast-math changes the
rounding, and contact dynamics grow rounding differences (bench/results/gpu_throughput.md measures
how fast), so trajectories from different builds agree to rounding per step, not bit for bit over
seconds. The GPU backend is deterministic run to run (one world per thread, no atomics) but rounds
differently from the CPU (fused multiply-adds).
"""

import hashlib
import pathlib
import sys

import numpy as np
import pytest

import gradyn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402

T = 10_000  # 10 s at 1 ms


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float64) + 0.0  # -0.0 -> +0.0
        h.update(a.tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("contact", ["penalty", "pgs", "ipm"])
def test_a_ten_second_contact_rollout_and_its_gradient_hash_the_same(contact):
    model = scene.load_gradyn(contact)
    q = scene.stance(model, clearance=0.005)
    rng = np.random.default_rng(3)
    taus = 2.0 * np.sin(np.linspace(0, 40, T))[:, None] * rng.normal(size=model.nv)  # the legs push and lift
    v0 = 0.05 * rng.normal(size=model.nv)
    vs_bar = np.zeros((T + 1, model.nv))
    vs_bar[-1] = 1.0

    def run(threads):
        qs, vs = gradyn.rollout(model, q, v0, taus, 1e-3, threads=threads)
        # (through 10 s of contact the adjoint grows past float range: clipped through time, as a
        # long-horizon user would; the clipped gradient is deterministic too)
        grads = gradyn.rollout_vjp(model, q, v0, taus, 1e-3, None, vs_bar, qs=qs, vs=vs, clip_norm=1e3,
                                   threads=threads)
        assert all(np.isfinite(g).all() for g in grads[:3])
        return digest(qs, vs), digest(*grads[:3])

    first = run(1)
    assert run(1) == first  # repeated
    assert run(2) == first  # another thread count (one world: the same thread's work)
    # position in a batch, on 2 threads: the world's bits do not depend on its neighbours
    q0 = np.stack([q, q, q])
    v0s = np.stack([v0 * 0.5, v0, v0 * 2.0])
    tau3 = np.stack([taus * 0.5, taus, taus * 1.5])
    qs, vs = gradyn.rollout(model, q0, v0s, tau3, 1e-3, threads=2)
    assert digest(qs[1], vs[1]) == first[0]
    vs_bar3 = np.stack([vs_bar] * 3)
    grads = gradyn.rollout_vjp(model, q0, v0s, tau3, 1e-3, None, vs_bar3, qs=qs, vs=vs, clip_norm=1e3, threads=2)
    assert digest(grads[0][1], grads[1][1], grads[2][1]) == first[1]
    assert np.isfinite(qs).all()
