"""gradyn.rollout(device='cuda'): the Python side of the CUDA backend (gradyn.cuda).

Without a GPU (CI), the backend's C interface is served by a host stand-in compiled here from
tests/python/host_backend/host_backend.cpp, which runs the very per-world code the GPU kernels run
(include/gradyn/flat/rollout.hpp): shapes, layouts, dtypes and errors are checked against the CPU
engine. The real library is checked for its answer without a GPU; with a GPU, for its numbers.
"""

import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gradyn
import gradyn.cuda as gcuda

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402


@pytest.fixture(scope="module")
def host_library(tmp_path_factory):
    out = tmp_path_factory.mktemp("host_backend") / "libgradyn_cuda_host.so"
    flags = []
    try:  # with jaxlib's FFI headers, the stand-in serves gradyn.jax too (JAX's CPU platform)
        import jax.ffi

        flags = ["-DGRADYN_HOST_JAX", "-isystem", jax.ffi.include_dir()]
    except ImportError:
        pass
    subprocess.run(["g++", "-std=c++17", "-O2", "-shared", "-fPIC", "-I", str(ROOT / "include"), *flags,
                    str(ROOT / "tests" / "python" / "host_backend" / "host_backend.cpp"), "-o", str(out)], check=True)
    return out


@pytest.fixture
def host_backend(host_library, monkeypatch):
    monkeypatch.setenv("GRADYN_CUDA_LIBRARY", str(host_library))
    monkeypatch.setattr(gcuda, "_lib", None)
    yield
    gcuda._lib = None


def laikago():
    return scene.load_gradyn("penalty")


def humanoid():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gradyn.load(str(ROOT / "models" / "mujoco" / "humanoid.xml")).with_contact(model="penalty")
    # the GPU kernels do not simulate tendons yet, and refuse them: the humanoid without its hamstrings
    return model.without_tendons()


def laikago_pgs():
    return scene.load_gradyn("pgs")


def humanoid_pgs():
    return humanoid().with_contact(model="pgs")


MODELS = [laikago, humanoid, laikago_pgs, humanoid_pgs]


def batch_inputs(model, B, T, seed=0):
    rng = np.random.default_rng(seed)
    q = scene.stance(model, clearance=0.005) if model.nq == 19 else model.q0
    q0 = np.broadcast_to(q, (B, model.nq)).copy()
    v0 = 0.1 * rng.normal(size=(B, model.nv))
    ctrls = rng.uniform(-0.2, 0.2, size=(B, T, model.nu))
    taus = rng.normal(size=(B, T, model.nv))
    return q0, v0, taus, ctrls


@pytest.mark.parametrize("make", MODELS)
def test_batched_rollout_is_the_cpu_engines(host_backend, make):
    model = make()
    q0, v0, taus, ctrls = batch_inputs(model, 3, 40)
    qs, vs, status = gradyn.rollout(model, q0, v0, taus, 1e-3, ctrls=ctrls, return_status=True, device="cuda")
    qs_cpu, vs_cpu, status_cpu = gradyn.rollout(model, q0, v0, taus, 1e-3, ctrls=ctrls, return_status=True)
    assert qs.shape == qs_cpu.shape and vs.shape == vs_cpu.shape and status.shape == status_cpu.shape
    np.testing.assert_allclose(qs, qs_cpu, rtol=0, atol=1e-10)
    np.testing.assert_allclose(vs, vs_cpu, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(status, status_cpu)


@pytest.mark.parametrize("make", MODELS)
def test_gradients_are_the_cpu_engines(host_backend, make):
    model = make()
    B, T = 3, 30
    q0, v0, taus, ctrls = batch_inputs(model, B, T, seed=1)
    rng = np.random.default_rng(2)
    qs_bar, vs_bar = rng.normal(size=(B, T + 1, model.nq)), rng.normal(size=(B, T + 1, model.nv))
    got = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, ctrls=ctrls, device="cuda")
    want = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, ctrls=ctrls)
    assert len(got) == len(want) == 5 and got[3] is None  # no parameter gradient on the GPU
    # (the humanoid's feet make redundant PGS rows: their least-norm adjoint is a Jacobi SVD on the GPU
    # kernels and a complete orthogonal decomposition on the CPU, which round differently, and the
    # ill-conditioned solve amplifies that: since the CPU's CRBA/RNEA rewrite (074e4f8) changed its
    # rounding, the one-world q0_bar below differs by 3.7e-6 of its largest entry (it was < 1e-8),
    # while the forward states still agree to 1e-10)
    tolerance = 1e-5 if make is humanoid_pgs else 1e-8
    for name, g, w in zip(("q0_bar", "v0_bar", "taus_bar", "ctrls_bar"), got[:3] + got[4:], want[:3] + want[4:]):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=0, atol=tolerance * (1 + np.abs(w).max()), err_msg=name)
    # one world, a terminal loss on q only, no controls given: (q0_bar, v0_bar, taus_bar, None)
    one = gradyn.rollout_vjp(model, q0[0], v0[0], taus[0], 1e-3, qs_bar[0], None, device="cuda")
    ref = gradyn.rollout_vjp(model, q0[0], v0[0], taus[0], 1e-3, qs_bar[0], None)
    assert len(one) == 4 and one[3] is None
    np.testing.assert_allclose(one[0], ref[0], rtol=0, atol=tolerance * (1 + np.abs(ref[0]).max()))
    with pytest.raises(ValueError, match=r"vs_bar: expected shape \(3, 31, " + str(model.nv)):
        gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar[:, :5], ctrls=ctrls, device="cuda")
    # max_snapshots: 4 states kept, segments of 8 steps recomputed. Under penalty contact the very
    # numbers of keeping every state; under pgs each segment's warm start restarts (close, not equal).
    kept = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, ctrls=ctrls, max_snapshots=4, device="cuda")
    pgs = model.contact_model == "pgs"
    for name, g, w in zip(("q0_bar", "v0_bar", "taus_bar", "ctrls_bar"), kept[:3] + kept[4:], got[:3] + got[4:]):
        if pgs:  # (the falling humanoid amplifies the restarts' differences to about 1e-3 over 30 steps)
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-2 * (1 + np.abs(w).max()), err_msg=name)
        else:
            np.testing.assert_array_equal(g, w, err_msg=name)
    with pytest.raises(ValueError, match="max_snapshots: expected an integer >= 2"):
        gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, max_snapshots=1, device="cuda")


def test_one_world_final_states_and_float32(host_backend):
    model = laikago()
    q0, v0, taus, ctrls = batch_inputs(model, 1, 25)
    qs, vs = gradyn.rollout(model, q0[0], v0[0], None, 1e-3, ctrls=ctrls[0], device="cuda")
    assert qs.shape == (26, model.nq) and vs.shape == (26, model.nv)
    qs_cpu, vs_cpu = gradyn.rollout(model, q0[0], v0[0], None, 1e-3, ctrls=ctrls[0])
    np.testing.assert_allclose(qs, qs_cpu, atol=1e-10)
    qf, vf, flags = gcuda.rollout(model, q0, v0, None, 1e-3, ctrls, keep="final", return_status=True)
    assert qf.shape == (1, model.nq) and flags.shape == (1,)
    np.testing.assert_array_equal(qf[0], qs[-1])
    np.testing.assert_array_equal(vf[0], vs[-1])
    q32, v32 = gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, device="cuda", dtype="float32")
    assert q32.dtype == np.float32
    np.testing.assert_allclose(q32[0], qs_cpu, atol=1e-4)
    # steps=T without controls or torques: zero inputs
    q_free, _ = gcuda.rollout(model, q0, v0, None, 1e-3, steps=25)
    q_zero, _ = gradyn.rollout(model, q0, v0, np.zeros((1, 25, model.nv)), 1e-3)
    np.testing.assert_allclose(q_free, q_zero, atol=1e-10)


def test_divergent_world_flags_only_itself(host_backend):
    model = laikago()
    q0, v0, _, ctrls = batch_inputs(model, 3, 10)
    v0[1, 8] = np.nan
    qs, _, status = gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, return_status=True, device="cuda")
    assert status[1].any() and not status[0].any() and not status[2].any()
    assert (status[1] & int(gradyn.Status.NON_FINITE)).all()
    assert np.isfinite(qs[[0, 2]]).all()


def test_bad_arguments_say_what_was_expected(host_backend):
    model = laikago()
    q0, v0, _, ctrls = batch_inputs(model, 2, 5)
    with pytest.raises(ValueError, match=r"v0: expected shape \(2, 18\), got \(2, 17\)"):
        gradyn.rollout(model, q0, v0[:, :17], None, 1e-3, ctrls=ctrls, device="cuda")
    with pytest.raises(ValueError, match=r"ctrls: expected shape \(2, 5, 12\)"):
        gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls[:, :, :3], device="cuda")
    with pytest.raises(ValueError, match="dt: expected a positive finite"):
        gradyn.rollout(model, q0, v0, None, -1.0, ctrls=ctrls, device="cuda")
    with pytest.raises(ValueError, match="device: expected 'cpu' or 'cuda', got 'tpu'"):
        gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, device="tpu")
    with pytest.raises(ValueError, match="dtype: the CPU computes in float64"):
        gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, dtype="float32")
    with pytest.raises(ValueError, match="'rk4' runs on the CPU"):
        gradyn.rollout(model, q0, v0, None, 1e-3, "rk4", ctrls=ctrls, device="cuda")
    with pytest.raises(ValueError, match=r"pass model.with_params\(params\) instead"):
        gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, params=np.zeros((2, 3)), device="cuda")
    with pytest.raises(ValueError, match="contact model 'ipm'"):
        gradyn.rollout(model.with_contact(model="ipm"), q0, v0, None, 1e-3, ctrls=ctrls, device="cuda")
    with pytest.raises(ValueError, match="pgs_gradient='implicit'"):
        gradyn.rollout(model.with_contact(model="pgs", pgs_gradient="sweeps"), q0, v0, None, 1e-3, ctrls=ctrls,
                       device="cuda")
    # fixed tendons are not in the GPU kernels: refused, naming them and the explicit way out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tendons = gradyn.load(str(ROOT / "models" / "mujoco" / "humanoid.xml")).with_contact(model="penalty")
    hq0, hv0, _, hctrls = batch_inputs(tendons, 2, 5)
    with pytest.raises(ValueError, match=r"2 fixed tendon\(s\) \('hamstring_right', \.\.\.\).*without_tendons\(\)"):
        gradyn.rollout(tendons, hq0, hv0, None, 1e-3, ctrls=hctrls, device="cuda")
    stripped = tendons.without_tendons()
    assert stripped.tendons == [] and len(tendons.tendons) == 2  # a copy


def test_torch_rollout_on_the_gpu_backend_has_the_cpu_gradients(host_backend):
    torch = pytest.importorskip("torch")
    import gradyn.torch as gtorch

    model = laikago()
    q0, v0, taus, ctrls = batch_inputs(model, 2, 20, seed=4)
    grads = {}
    for device in ("cpu", "cuda"):
        q = torch.tensor(q0, requires_grad=True)
        v = torch.tensor(v0, requires_grad=True)
        u = torch.tensor(ctrls, requires_grad=True)
        tau = torch.tensor(taus[0], requires_grad=True)  # shared by both worlds
        qs, vs = gtorch.rollout(model, q, v, tau, 1e-3, ctrls=u, device=device)
        loss = (qs[:, -1, :3] ** 2).sum() + (vs ** 2).sum()
        loss.backward()
        grads[device] = [x.grad.numpy() for x in (q, v, u, tau)] + [qs.detach().numpy()]
    for got, want in zip(grads["cuda"], grads["cpu"]):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-8 * (1 + np.abs(want).max()))
    with pytest.raises(ValueError, match="params: not available with device='cuda'"):
        gtorch.rollout(model, q0, v0, taus, 1e-3, params=model.params, device="cuda")


def test_jax_rollout_on_the_gpu_kernels_has_the_cpu_gradients(host_backend):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import gradyn.jax as gjax

    jax.config.update("jax_enable_x64", True)
    model = laikago()
    q0, v0, taus, ctrls = batch_inputs(model, 2, 15, seed=6)

    def loss(q0, v0, taus, ctrls, device):
        qs, vs = gjax.rollout(model, q0, v0, taus, 1e-3, ctrls=ctrls, device=device)
        return jnp.sum(qs[:, -1, :3] ** 2) + jnp.sum(vs ** 2)

    args = tuple(jnp.asarray(x) for x in (q0, v0, taus, ctrls))
    got = jax.jit(jax.grad(lambda *a: loss(*a, "cuda"), argnums=(0, 1, 2, 3)))(*args)
    want = jax.grad(lambda *a: loss(*a, "cpu"), argnums=(0, 1, 2, 3))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=0, atol=1e-8 * (1 + np.abs(np.asarray(w)).max()))
    qs, _ = gjax.rollout(model, args[0][0], args[1][0], args[2][0], 1e-3, ctrls=args[3][0], device="cuda")
    assert qs.shape == (16, model.nq)  # one world: no batch dimension
    with pytest.raises(ValueError, match="params: not available with device='cuda'"):
        gjax.rollout(model, *args[:3], 1e-3, params=jnp.asarray(model.params), device="cuda")


def test_too_many_worlds_say_how_many_fit(host_backend):
    model = laikago()  # the stand-in has 4 GiB
    q0 = np.broadcast_to(scene.stance(model), (100_000, model.nq))
    v0 = np.zeros((100_000, model.nv))
    with pytest.raises(gcuda.CudaError, match=r"out of GPU memory: a rollout of 100000 worlds x 10000 steps needs "
                                              r"[0-9.]+ GiB on the GPU and 4.00 GiB are free: at most [0-9]+ worlds fit"):
        gcuda.rollout(model, q0, v0, None, 1e-3, steps=10_000)
    qf, _ = gcuda.rollout(model, q0[:2], v0[:2], None, 1e-3, steps=3, keep="final")  # a small batch still runs
    assert qf.shape == (2, model.nq)
    with pytest.raises(gcuda.CudaError, match="out of GPU memory: the gradient of 100000 worlds x 10000 steps"):
        gcuda.rollout_vjp(model, q0, v0, None, 1e-3, None, None, steps=10_000)


def test_no_backend_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADYN_CUDA_LIBRARY", str(tmp_path / "missing.so"))
    monkeypatch.setattr(gcuda, "_lib", None)
    model = laikago()
    q0, v0, _, ctrls = batch_inputs(model, 2, 3)
    with pytest.raises(gcuda.CudaError, match="this install has none.*missing.so, which does not exist"):
        gradyn.rollout(model, q0, v0, None, 1e-3, ctrls=ctrls, device="cuda")
    gcuda._lib = None


def gpu_usable():
    try:
        gcuda.devices()
        return True
    except gcuda.CudaError:
        return False


@pytest.mark.skipif(gcuda.library_path() is None, reason="this install was built without nvcc (no CUDA backend)")
def test_the_real_backend_says_when_there_is_no_gpu():
    if gpu_usable():
        pytest.skip("a GPU is usable here: test_gpu_rollouts_are_the_cpu_engines checks it")
    with pytest.raises(gcuda.CudaError, match="no usable GPU here"):
        gcuda.devices()


@pytest.mark.skipif(gcuda.library_path() is None or not gpu_usable(), reason="needs a GPU and the CUDA backend")
@pytest.mark.parametrize("make", [laikago, humanoid, laikago_pgs])
def test_gpu_rollouts_are_the_cpu_engines(make):
    """1,024 worlds on the GPU against the CPU engine (float64). Over 30 steps the contact dynamics
    have not yet grown rounding differences (bench/gpu_throughput.py measures that growth). Not the
    humanoid under PGS: its solves stop at 100 sweeps unconverged, where rounding moves the impulses
    (1e-7 per step on the H200, bench/results/gpu_throughput.md; the CPU against itself 1e-8)."""
    model = make()
    q0, v0, taus, ctrls = batch_inputs(model, 1024, 30)
    qs, vs = gradyn.rollout(model, q0, v0, taus, 1e-3, ctrls=ctrls, device="cuda")
    qs_cpu, vs_cpu = gradyn.rollout(model, q0, v0, taus, 1e-3, ctrls=ctrls)
    scale = 1 + np.abs(vs_cpu).max()
    assert np.abs(vs - vs_cpu).max() / scale < 1e-9
    assert np.abs(qs - qs_cpu).max() / (1 + np.abs(qs_cpu).max()) < 1e-9
    import torch

    qt, vt = gradyn.rollout(model, torch.as_tensor(q0, device="cuda"), torch.as_tensor(v0, device="cuda"),
                            torch.as_tensor(taus, device="cuda"), 1e-3, ctrls=torch.as_tensor(ctrls, device="cuda"),
                            device="cuda")
    assert qt.is_cuda and tuple(qt.shape) == qs.shape
    np.testing.assert_array_equal(qt.cpu().numpy(), qs)
    rng = np.random.default_rng(5)
    qs_bar, vs_bar = rng.normal(size=qs.shape), rng.normal(size=vs.shape)
    got = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, ctrls=ctrls, device="cuda")
    want = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, ctrls=ctrls)
    for g, w in zip(got[:3] + got[4:], want[:3] + want[4:]):
        assert np.abs(g - w).max() / (1 + np.abs(w).max()) < 1e-9

