"""libFuzzer (atheris) harness: the Python-facing argument conversion of gradyn.step and
gradyn.rollout (nanobind's array casts, as_array, check_shape, steps_of, OptionalRowsArg,
step_options, is_batched/one_world, params and threads).

Each input picks a model, a function and every argument: None, a scalar, a (nested) list, a string,
or a NumPy array of a fuzzed shape (exact, off by one, empty, extra dimensions), dtype (float64,
float32, int, bool, complex, object), layout (C, Fortran, strided, read-only) and values (NaN, inf,
huge). A call must return arrays of the documented shapes or raise ValueError/TypeError; anything
else (another exception, a crash, a sanitizer report) is a finding. After every call a reference
step must give the same bits as before: no call corrupts a later one.

    PYTHONPATH=build/fuzz/pydeps .venv/bin/python tests/fuzz/fuzz_args.py [libFuzzer flags] CORPUS
(scripts/fuzz.sh args SECONDS does this.) Without atheris installed, `python fuzz_args.py FILE...`
replays inputs once each (what tests/python/test_fuzz_regressions.py does).
"""
import os
import sys

import warnings

import numpy as np

warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # complex input is cast (NumPy warns); not a finding

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradyn  # noqa: E402

MODELS = [
    gradyn.load(os.path.join(ROOT, "models/pendulums/pendulum2.urdf")),
    gradyn.load(os.path.join(ROOT, "models/mujoco/ant.xml")),
]
MODELS.append(MODELS[1].with_contact("penalty"))
_REF = MODELS[1]
_REF_ARGS = (_REF.neutral(), np.linspace(-1, 1, _REF.nv), np.ones(_REF.nv))
_REF_OUT = gradyn.step(_REF, *_REF_ARGS, dt=0.01)

SPECIAL = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324, 1e-3, 1e3]
DTYPES = [np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128, object, np.float16, np.uint64]


class Provider:
    """A minimal FuzzedDataProvider (atheris's when it is there, so inputs replay the same way)."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def byte(self):
        if self.pos >= len(self.data):
            return 0
        b = self.data[self.pos]
        self.pos += 1
        return b

    def pick(self, seq):
        return seq[self.byte() % len(seq)]

    def flag(self):
        return self.byte() & 1 == 1

    def rare(self, usual, odd):
        """usual, or (one time in eight) one of the odd choices"""
        if self.byte() % 8 != 0:
            return usual
        return self.pick(odd)

    def value(self):
        b = self.byte()
        if b < 96:
            return SPECIAL[b % len(SPECIAL)]
        return (b - 176) / 16.0


def fuzz_array(p, shape_choices):
    kind = p.byte() % 16
    if kind == 0:
        return None
    if kind == 1:
        return p.value()  # a scalar
    if kind == 2:
        return p.pick(["abc", b"xy", {}, object(), [[1.0], [1.0, 2.0]], [None, 1.0], (1.0, "x")])
    shape = list(p.pick(shape_choices))
    # off by one, an extra or a missing dimension, an empty one
    m = p.byte() % 12
    if m == 1 and shape:
        i = p.byte() % len(shape)
        shape[i] = max(0, shape[i] + p.pick([-1, 1]))
    elif m == 2:
        shape.insert(p.byte() % (len(shape) + 1), p.pick([0, 1, 2]))
    elif m == 3 and shape:
        shape.pop(p.byte() % len(shape))
    elif m == 4 and shape:
        shape[p.byte() % len(shape)] = 0
    shape = [min(s, 64) for s in shape]
    while shape and int(np.prod(shape)) > 4096:  # keep each call fast (a (64, 64, 64, 64) array took minutes to build)
        shape[shape.index(max(shape))] //= 2
    n = int(np.prod(shape)) if shape else 1
    values = np.array([p.value() if p.flag() else 0.1 * ((p.pos + i) % 7) for i in range(n)], dtype=np.float64)
    values = values.reshape(shape)
    dtype = p.pick(DTYPES) if p.byte() % 4 == 0 else np.float64
    with np.errstate(all="ignore"):
        a = values.astype(dtype)
    layout = p.byte() % 8
    if layout == 1 and a.ndim >= 2:
        a = np.asfortranarray(a)
    elif layout == 2 and a.ndim >= 1:
        big = np.repeat(a, 2, axis=-1)
        a = big[..., ::2]  # strided view: the same values, not contiguous
    elif layout == 3:
        a = a.copy()
        a.flags.writeable = False
    elif layout == 4:
        return a.tolist()
    elif layout == 5 and a.ndim >= 1:
        return tuple(a.tolist())
    return a


def one_input(data):
    p = Provider(data)
    model = p.pick(MODELS)
    nq, nv, nu = model.nq, model.nv, model.nu
    npar = len(model.param_names)
    batched = p.byte() % 3 == 0
    B = p.pick([1, 2, 3, 0])
    T = p.pick([1, 2, 3, 0, 5])
    lead = [B] if batched else []
    rollout = p.flag()
    neutral = np.asarray(model.neutral())
    if p.flag():
        q = np.tile(neutral, (B, 1)) if batched else neutral.copy()
    else:
        q = fuzz_array(p, [lead + [nq], [nq], [B, nq]])
    v = fuzz_array(p, [lead + [nv], [nv]])
    if rollout:
        taus = fuzz_array(p, [lead + [T, nv], [T, nv], lead + [nv]])
        ctrls = fuzz_array(p, [lead + [T, nu], [T, nu], lead + [T, nu + 1]])
    else:
        taus = fuzz_array(p, [lead + [nv], [nv]])
        ctrls = fuzz_array(p, [lead + [nu], [nu]])
    params = None
    if p.byte() % 4 == 0:
        if p.flag():
            base = np.asarray(model.params() if callable(model.params) else model.params)
            params = np.tile(base, (B, 1)) if batched else base.copy()
            if p.flag() and params.size:
                params.flat[p.byte() % params.size] = p.value()
        else:
            params = fuzz_array(p, [lead + [npar], [npar]])
    dt = p.rare(p.pick([0.01, 0.001, 1e-6, 0.1]), [0.0, -0.01, np.nan, np.inf, 1e-300, 1e300, 1, "0.01", None, -np.inf])
    integrator = p.rare(p.pick(["euler", "rk4"]), ["semi_implicit_euler", "", "RK4", "euler\0", 3, None])
    threads = p.rare(p.pick([None, 1, 2]), [0, -1, "2", 1.5, 2**40])
    return_status = p.rare(p.flag(), [1, "yes", None, 0.5])
    kwargs = dict(dt=dt, integrator=integrator, return_status=return_status, params=params, threads=threads)
    try:
        if rollout:
            out = gradyn.rollout(model, q, v, taus, ctrls=ctrls, **kwargs)
        else:
            out = gradyn.step(model, q, v, taus, ctrl=ctrls, **kwargs)
    except (ValueError, TypeError) as e:
        msg = str(e)
        assert msg, "an error without a message"
    else:
        assert isinstance(out, tuple) and len(out) == (3 if return_status else 2), type(out)
        qo, vo = np.asarray(out[0]), np.asarray(out[1])
        assert qo.dtype == np.float64 and vo.dtype == np.float64
        assert qo.shape[-1] == nq and vo.shape[-1] == nv, (qo.shape, vo.shape)
    # nothing a call does may change a later call's answer
    ref = gradyn.step(_REF, *_REF_ARGS, dt=0.01)
    assert all(np.array_equal(a, b) for a, b in zip(ref, _REF_OUT)), "a reference step changed after a fuzzed call"


def main(argv):
    try:
        import atheris
    except ImportError:
        atheris = None
    if atheris is None or (len(argv) > 1 and all(os.path.isfile(a) for a in argv[1:])):
        for path in argv[1:]:
            with open(path, "rb") as f:
                one_input(f.read())
        return
    atheris.instrument_all()  # coverage of this harness's choices and of gradyn's Python layer
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
