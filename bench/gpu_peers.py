"""Forward-simulation throughput of gradyn's GPU peers on the same MJCF models: MuJoCo MJX
(mujoco.mjx, its JAX implementation).

What is timed: `batch` worlds of one MJCF model, each started at the model's qpos0 with a small
seeded random joint velocity (normal, 0.01 rad/s or m/s per dof) and zero controls, stepped
`steps` times by jax.jit(jax.lax.scan(jax.vmap(mjx.step))) on jax.devices()[0]. The program is
compiled once ahead of time (compile_s), run once to warm up, then timed `repeats` times (3) with
time.perf_counter around the call and jax.block_until_ready; seconds is the median. steps_per_s is
batch * steps / seconds (world-steps per second). The model's own solver settings (opt.solver,
iterations, ls_iterations, integrator, time step) are used unchanged and reported.

Precision: dtype="float32" is JAX's default. dtype="float64" turns on jax_enable_x64 for the WHOLE
PROCESS (jax.config.update("jax_enable_x64", True)), before this module makes any array: every
jax array made afterwards in the process defaults to 64 bits, so run float64 cases in their own
process (the CLI does, one process per call) or after the float32 ones. Asking for float32 in a
process where x64 is already on raises instead of silently timing float64.

MuJoCo Warp (mujoco-warp + warp-lang) is not included: warp-lang's wheel is about 149 MB, over
what the GPU machine can be sent, and it is not installed there.

This file imports neither gradyn nor anything of the repository at import time: the GPU machine
has jax but no gradyn build. Models: a path to an MJCF file, or one of the names in MODEL_NAMES
(files of this repository), or "laikago", the MJCF of examples/laikago_contact/laikago_scene.py's
mujoco_xml(timestep=1e-3, position_servos=(150.0, 5.0)), generated from the URDF without
importing gradyn (the scene module needs gradyn only inside functions that are not called).

CLI (one JSON object per model and batch size, one per line, on stdout; MuJoCo's and JAX's
messages go to stderr):
    python bench/gpu_peers.py --model humanoid --batch 1024 --steps 100 --dtype float32
    python bench/gpu_peers.py --model /tmp/laikago.xml --batch 256 4096 --steps 100
Install without network (what .whl/ holds: mujoco 3.17.0 for CPython 3.12 without its GUI apps
under mujoco/experimental/, mujoco-mjx 3.17.0 without its test_data/, trimesh; the rest of their
requirements are either on the machine or not needed for stepping):
    python3 -m pip install --no-index --no-deps --target /tmp/peer_site .whl/*.whl
    PYTHONPATH=/tmp/peer_site python3 bench/gpu_peers.py --model humanoid --batch 4096 --steps 100
By default the CLI adds --xla_gpu_triton_gemm_any=True to XLA_FLAGS (as MJX's own benchmark,
mujoco.mjx._src.test_util.benchmark, does; it affects GPU matrix products only); --no-triton-gemm
leaves XLA_FLAGS alone. A library caller sets XLA_FLAGS itself before JAX starts if it wants it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import statistics
import sys
import time
import types
import warnings

REPO = pathlib.Path(__file__).resolve().parents[1]
MODEL_NAMES = {
    "humanoid": REPO / "models" / "mujoco" / "humanoid.xml",
    "ant": REPO / "models" / "mujoco" / "ant.xml",
    "swimmer": REPO / "models" / "mujoco" / "swimmer.xml",
}
LAIKAGO_SCENE = REPO / "examples" / "laikago_contact" / "laikago_scene.py"
DTYPES = ("float32", "float64")
TRITON_GEMM_FLAG = "--xla_gpu_triton_gemm_any=True"


def laikago_xml(timestep=1e-3, position_servos=(150.0, 5.0)):
    """The laikago MJCF of laikago_scene.mujoco_xml, loaded from the example's file with a stand-in
    for `gradyn` (the scene imports it at the top but mujoco_xml does not use it). gradyn itself
    is never imported: a real one already imported is left as it is, and otherwise the stand-in is
    removed again afterwards."""
    had_gradyn = "gradyn" in sys.modules
    if not had_gradyn:
        sys.modules["gradyn"] = types.ModuleType("gradyn")
    try:
        spec = importlib.util.spec_from_file_location("_gpu_peers_laikago_scene", LAIKAGO_SCENE)
        scene = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(scene)
        return scene.mujoco_xml(timestep=timestep, position_servos=position_servos)
    finally:
        if not had_gradyn:
            del sys.modules["gradyn"]


def model_xml(path_or_name):
    """(label, MJCF text) of a file path or of a name: MODEL_NAMES or "laikago"."""
    path = pathlib.Path(path_or_name)
    if path.is_file():
        return path.stem, path.read_text()
    if path_or_name == "laikago":
        return "laikago", laikago_xml()
    if path_or_name in MODEL_NAMES:
        return path_or_name, MODEL_NAMES[path_or_name].read_text()
    raise ValueError(f"--model {path_or_name!r}: neither a file nor one of "
                     f"{sorted(MODEL_NAMES) + ['laikago']}")


def _import_mjx(dtype):
    """jax, mujoco and mujoco.mjx with the precision of `dtype` set (see the module docstring)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    import jax

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    elif jax.config.jax_enable_x64:
        raise RuntimeError("dtype='float32' asked for, but jax_enable_x64 is already on in this "
                           "process (a float64 case ran before?): run it in a fresh process")
    # mujoco.mjx prints "Failed to import warp: ..." on stdout when warp-lang is absent (it is
    # here, on purpose): keep stdout for the JSON.
    with contextlib.redirect_stdout(sys.stderr):
        import mujoco
        from mujoco import mjx
    return jax, mujoco, mjx


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def mjx_forward_throughput(xml_text: str, batch: int, steps: int, dtype: str = "float32",
                           seed: int = 0, *, repeats: int = 3, iterations: int | None = None,
                           ls_iterations: int | None = None) -> dict:
    """World-steps per second of MuJoCo MJX (JAX implementation) on `batch` copies of the MJCF
    `xml_text`, stepped `steps` times under one jit (see the module docstring for the protocol).
    dtype="float64" turns on jax_enable_x64 for the whole process. iterations / ls_iterations:
    override the model's opt.iterations / opt.ls_iterations (None: the model's own; MJX's solver
    stops early once every world has converged, so these are upper bounds)."""
    if batch < 1 or steps < 1 or repeats < 1:
        raise ValueError("batch, steps and repeats must be at least 1")
    jax, mujoco, mjx = _import_mjx(dtype)
    import jax.numpy as jnp
    import numpy as np

    m = mujoco.MjModel.from_xml_string(xml_text)
    if iterations is not None:
        m.opt.iterations = iterations
    if ls_iterations is not None:
        m.opt.ls_iterations = ls_iterations
    device = jax.devices()[0]
    mx = mjx.put_model(m, device=device, impl="jax")
    d0 = mjx.make_data(m, device=device, impl="jax")
    d0 = d0.replace(ctrl=jnp.zeros_like(d0.ctrl))  # zero controls in every world

    rng = np.random.default_rng(seed)
    qvel = rng.normal(scale=0.01, size=(batch, m.nv)).astype(dtype)
    qvel = jax.device_put(qvel, device)
    d = jax.jit(jax.vmap(lambda v: d0.replace(qvel=v)))(qvel)
    jax.block_until_ready(d)

    step = jax.vmap(mjx.step, in_axes=(None, 0))
    # With x64 on, make_data gives a few integer fields (tendon wrap indices) int32 while step
    # returns them int64, which scan's carry rejects: start from step's own output dtypes.
    shapes = jax.eval_shape(step, mx, d)
    d = jax.tree_util.tree_map(lambda x, s: x.astype(s.dtype) if x.dtype != s.dtype else x, d, shapes)

    def rollout(d):
        def body(d, _):
            return step(mx, d), None

        d, _ = jax.lax.scan(body, d, None, length=steps)
        return d

    t = time.perf_counter()
    compiled = jax.jit(rollout).lower(d).compile()
    compile_s = time.perf_counter() - t

    t = time.perf_counter()
    out = jax.block_until_ready(compiled(d))  # warm-up
    warmup_s = time.perf_counter() - t

    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = jax.block_until_ready(compiled(d))
        times.append(time.perf_counter() - t)
    seconds = statistics.median(times)

    qpos = np.asarray(out.qpos)
    result = {
        "engine": "mjx",
        "impl": "jax",
        "steps_per_s": batch * steps / seconds,
        "seconds": seconds,
        "times_s": times,
        "compile_s": compile_s,
        "warmup_s": warmup_s,
        "batch": batch,
        "steps": steps,
        "dtype": dtype,
        "state_dtype": str(qpos.dtype),
        "seed": seed,
        "finite_worlds": int(np.isfinite(qpos).all(axis=1).sum()),
        "device": str(device),
        "platform": device.platform,
        "mujoco": mujoco.__version__,
        "mjx": _version("mujoco-mjx"),
        "jax": jax.__version__,
        "jaxlib": _version("jaxlib"),
        "jax_cuda_plugin": _version("jax-cuda13-plugin") or _version("jax-cuda12-plugin"),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "xml_sha256": hashlib.sha256(xml_text.encode()).hexdigest()[:16],
        "model": {
            "nq": m.nq, "nv": m.nv, "nu": m.nu, "nbody": m.nbody, "ngeom": m.ngeom,
            "timestep": float(m.opt.timestep),
            "integrator": mujoco.mjtIntegrator(m.opt.integrator).name,
            "solver": mujoco.mjtSolver(m.opt.solver).name,
            "cone": mujoco.mjtCone(m.opt.cone).name,
            "iterations": int(m.opt.iterations),
            "ls_iterations": int(m.opt.ls_iterations),
        },
    }
    # The JAX implementation evaluates every candidate contact pair each step (a fixed number,
    # contacts_allocated); penetrating_contacts is the mean count with dist < 0 at the end.
    contact = getattr(getattr(out, "_impl", None), "contact", None)
    if contact is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            contact = getattr(out, "contact", None)
    dist = getattr(contact, "dist", None)
    if dist is not None:
        result["contacts_allocated"] = int(dist.shape[-1])
        result["penetrating_contacts"] = float(np.mean(np.sum(np.asarray(dist) < 0, axis=-1)))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True,
                        help="MJCF file, or a name: " + ", ".join(sorted(MODEL_NAMES) + ["laikago"])
                        + " (repeatable)")
    parser.add_argument("--batch", type=int, nargs="+", required=True, help="world counts")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--dtype", choices=DTYPES, default="float32")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=None,
                        help="override the model's opt.iterations")
    parser.add_argument("--ls-iterations", type=int, default=None,
                        help="override the model's opt.ls_iterations")
    parser.add_argument("--no-triton-gemm", action="store_true",
                        help=f"do not add {TRITON_GEMM_FLAG} to XLA_FLAGS")
    args = parser.parse_args(argv)

    if not args.no_triton_gemm and "triton_gemm_any" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + TRITON_GEMM_FLAG).strip()
    models = [model_xml(name) for name in args.model]
    for label, xml in models:
        for batch in args.batch:
            result = mjx_forward_throughput(xml, batch, args.steps, args.dtype, args.seed,
                                            repeats=args.repeats, iterations=args.iterations,
                                            ls_iterations=args.ls_iterations)
            print(json.dumps({"model_name": label, **result}), flush=True)


if __name__ == "__main__":
    main()
