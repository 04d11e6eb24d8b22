"""Bad input, audited (issue 21, item 5): one table over every public Python function.

Each row of TABLE is one public function with a good call; each of its cases changes one argument
of that call into something a user may pass by mistake (a wrong shape, strings, complex numbers, a
NaN or an inf, dt <= 0, a wrong name, ...) or into something that only looks odd and is valid
(a non-contiguous or read-only array: it is converted; T = 0; an empty batch; a model without
joints). Every case must end in one of:

* ``raises(...)``: a ValueError (or the TypeError or KeyError Python uses for a wrong type or an
  unknown name) whose message names the argument and says what was expected, in the user's words
  (no C++ or internal names);
* ``FLAG``: the call returns and its status carries ``gradyn.Status.NON_FINITE`` (the documented
  flag of numerical trouble: the step family never raises for it, so one bad world does not stop a
  batch);
* ``SAME``: the call returns what the good call returns (the argument was converted);
* a ``valid(check)``: the call returns and ``check(result)`` holds.

None may crash, and none may corrupt a later call: after every case the good call is made again and
must give bitwise what it gave before. ``test_every_public_function_has_a_row`` fails when a public
function (an ``__all__`` entry, a method of Model, ModelBuilder or Policy) has no row: a new public
function gets its bad-input cases here.

Bad model files (written here into tmp_path, see FILES) must raise gradyn.ModelError naming the
file, the line and the element, or load when they are valid.
"""

from __future__ import annotations

import dataclasses
import inspect
import pathlib
import warnings
from typing import Any, Callable

import numpy as np
import pytest

import gradyn
import gradyn.control as control
import gradyn.cuda as gcuda
import gradyn.envs as genvs
import gradyn.hybrid as hybrid
import gradyn.viewer as viewer

# Words that must not reach a user: C++ and binding internals.
INTERNAL = ("std::", "Eigen", "nanobind", "_core", "check_step_options", "VectorArg", "assert")


# --------------------------------------------------------------------------------------------
# models the rows run on (built once)


class Models:
    def __init__(self, tmp: pathlib.Path):
        self.tmp = tmp  # for recordings
        self.pend = gradyn.load(str(_ROOT / "models" / "pendulums" / "pendulum2.urdf"))
        b = gradyn.ModelBuilder()
        b.add_link("base")
        b.add_link("bob", mass=1.0, com=(0, 0, -0.5), inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
        b.add_joint("hinge", "revolute", parent="base", child="bob", axis=(0, 1, 0), damping=0.1)
        b.add_actuator("hinge", kind="position", name="servo", kp=5.0, kv=0.5)
        self.act = b.build()
        self.nojoint = gradyn.ModelBuilder().add_link("lonely", mass=1.0, inertia=(1, 1, 1, 0, 0, 0)).build()
        self.net = self.act.with_network("residual", inputs=["hinge.q", "hinge.v"], outputs=["hinge"], hidden=[4],
                                         zero_last_layer=False, seed=1)
        self.policy = gradyn.Policy(self.act, ["hinge.q", "hinge.v", "task[0]"], hidden=[4], zero_last_layer=False)
        sensing = tmp / "sensing.xml"  # a hinge with an accelerometer (reads a step) and a joint sensor
        sensing.write_text("<mujoco><worldbody><body name='arm'><joint name='h' type='hinge' axis='0 1 0'/>"
                           "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/><site name='tip' "
                           "pos='0.5 0 0'/></body></worldbody><actuator><motor name='m' joint='h'/></actuator>"
                           "<sensor><jointpos name='angle' joint='h'/><accelerometer name='acc' site='tip'/>"
                           "</sensor></mujoco>")
        self.sens = gradyn.load(str(sensing))


_ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Models(tmp_path_factory.mktemp("bad_input"))


# --------------------------------------------------------------------------------------------
# expectations


@dataclasses.dataclass
class Raises:
    types: tuple
    words: tuple  # each must be in the message (case-insensitive)


def raises(*words, types=(ValueError,)):
    return Raises(tuple(types), tuple(words))


SAME = "same"
FLAG = "flag"


@dataclasses.dataclass
class Valid:
    check: Callable[[Any], bool]
    what: str


def valid(check, what="a valid result"):
    return Valid(check, what)


@dataclasses.dataclass
class Case:
    id: str
    mutate: Callable[[dict, Models], dict]  # good kwargs -> bad kwargs
    expect: Any


@dataclasses.dataclass
class Row:
    name: str  # the public name, e.g. 'gradyn.aba', 'gradyn.Model.with_params'
    call: Callable  # call(models, **kwargs)
    good: Callable[[Models], dict]
    cases: list
    good_call: bool = True  # False: the good call cannot run here (it needs a GPU, or serves a page)


def setarg(arg, value):
    """A case's mutation: argument `arg` set to value(old value, models) (or to value itself)."""
    def mutate(kw, m):
        kw = dict(kw)
        kw[arg] = value(kw.get(arg), m) if callable(value) else value
        return kw
    return mutate


def with_entry(x, value, index=0):
    x = np.array(x, dtype=np.float64, copy=True)
    x.reshape(-1)[index] = value
    return x


def noncontiguous(x):
    x = np.asarray(x, dtype=np.float64)
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],)) if x.ndim else np.zeros(2)
    wide[..., ::2] = x
    out = wide[..., ::2]
    assert x.ndim == 0 or not out.flags.c_contiguous or out.size <= 1
    return out


def readonly(x):
    x = np.array(x, dtype=np.float64, copy=True)
    x.flags.writeable = False
    return x


def one_more(x):
    x = np.asarray(x, dtype=np.float64)
    return np.concatenate([x, np.zeros(x.shape[:-1] + (1,))], axis=-1)


def array_cases(arg, *, nonfinite=None, shape=True, ndim=True, layout=True):
    """The cases of an array argument: a wrong last dimension, an extra dimension, strings, complex
    numbers, a NaN and an inf (expected `nonfinite`: raises naming the argument by default), and a
    non-contiguous and a read-only copy (the same result)."""
    nonfinite = raises(arg, "finite") if nonfinite is None else nonfinite
    cases = []
    if shape:
        cases.append(Case(f"{arg}-wrong-shape", setarg(arg, lambda x, m: one_more(x)), raises(arg, "expected shape")))
    if ndim:
        cases.append(Case(f"{arg}-extra-dim", setarg(arg, lambda x, m: np.asarray(x, dtype=float)[..., None]),
                          raises(arg, "expected shape")))
    cases += [
        Case(f"{arg}-strings", setarg(arg, lambda x, m: np.full(np.shape(x), "1.0")), raises(arg, "numbers")),
        Case(f"{arg}-complex", setarg(arg, lambda x, m: np.asarray(x, dtype=float) + 1j), raises(arg, "real")),
    ]
    if nonfinite is not False:
        cases += [
            Case(f"{arg}-nan", setarg(arg, lambda x, m: with_entry(x, np.nan)), nonfinite),
            Case(f"{arg}-inf", setarg(arg, lambda x, m: with_entry(x, np.inf, -1)), nonfinite),
        ]
    if layout:
        cases += [
            Case(f"{arg}-noncontiguous", setarg(arg, lambda x, m: noncontiguous(x)), SAME),
            Case(f"{arg}-readonly", setarg(arg, lambda x, m: readonly(x)), SAME),
        ]
    return cases


def dt_cases(arg="dt"):
    return [Case(f"{arg}={v}", setarg(arg, v), raises(arg, "positive finite"))
            for v in (0.0, -0.01, float("nan"), float("inf"))] + [
        Case(f"{arg}-string", setarg(arg, "0.01"), raises(arg, types=(TypeError, ValueError)))]


def threads_cases():
    return [Case(f"threads={t}", setarg("threads", t), raises("threads", "positive")) for t in (0, -2)]


def name_cases(arg, bad="no_such_name", words=None):
    return [Case(f"{arg}-unknown", setarg(arg, bad), raises(*(words or (bad,)), types=(KeyError, ValueError))),
            Case(f"{arg}-not-a-string", setarg(arg, 3), raises(arg, types=(TypeError,)))]


def model_cases():
    return [Case("model-None", setarg("model", None), raises("model", types=(TypeError,))),
            Case("model-a-string", setarg("model", "pendulum.urdf"), raises("model", types=(TypeError,)))]


def nojoint_case(make, check=None, what="empty results"):
    """The call on a model without joints (nq = nv = 0), with arguments make(models)."""
    def mutate(kw, m):
        return make(m)
    return Case("model-without-joints", mutate, valid(check or (lambda r: True), what))


def empty(n):
    return np.zeros((0,) + ((n,) if n is not None else ()))


def status_of(result):
    return np.asarray(result[-1])


def flagged(result):
    return bool((status_of(result) & int(gradyn.Status.NON_FINITE)).any())


# --------------------------------------------------------------------------------------------
# the table

TABLE: list[Row] = []


def row(name, call, good, *case_lists):
    TABLE.append(Row(name, call, good, [c for cases in case_lists for c in cases]))


def call_class(fn):
    """A row's call: fn(**kwargs) (a class or a function without a model first)."""
    return lambda m, **kw: fn(**kw)


def model_first(fn):
    return lambda m, model, **kw: fn(model, **kw)


def state(m, model=None):
    model = model or m.pend
    q = model.neutral() + 0.3 if model.nq else model.neutral()
    return q, np.linspace(-0.5, 0.5, model.nv)


def qv(m, model=None, *extra):
    q, v = state(m, model)
    kw = dict(model=model or m.pend, q=q, v=v)
    for name in extra:
        kw[name] = np.linspace(0.1, 0.2, kw["model"].nv)
    return kw


def nojoint_qv(*extra):
    return lambda m: dict(model=m.nojoint, q=empty(None), v=empty(None), **{e: empty(None) for e in extra})


# the analysis functions: one state in, numbers out; a NaN or an inf in a state is a ValueError
for _name, _extra in [("aba", ("tau",)), ("rnea", ("a",)), ("forward_dynamics", ("tau",)), ("nonlinear_effects", ()),
                      ("passive_forces", ()), ("kinetic_energy", ())]:
    row(f"gradyn.{_name}", model_first(getattr(gradyn, _name)), lambda m, e=_extra: qv(m, None, *e),
        model_cases(), *[array_cases(a) for a in ("q", "v") + _extra],
        [nojoint_case(nojoint_qv(*_extra))])

for _name in ("crba", "generalized_gravity", "potential_energy", "center_of_mass"):
    row(f"gradyn.{_name}", model_first(getattr(gradyn, _name)), lambda m: dict(model=m.pend, q=state(m)[0]),
        model_cases(), array_cases("q"), [nojoint_case(lambda m: dict(model=m.nojoint, q=empty(None)))])

row("gradyn.total_mass", model_first(gradyn.total_mass), lambda m: dict(model=m.pend), model_cases(),
    [nojoint_case(lambda m: dict(model=m.nojoint), lambda r: r == 0.0, "0: the lonely root link is the world")])

row("gradyn.forward_kinematics", model_first(gradyn.forward_kinematics), lambda m: qv(m), model_cases(),
    array_cases("q"), array_cases("v"),
    [Case("v-None", setarg("v", None), valid(lambda r: "body_poses" in r)),
     nojoint_case(nojoint_qv())])

row("gradyn.frame_pose", model_first(gradyn.frame_pose), lambda m: dict(model=m.pend, q=state(m)[0], frame="link1"),
    model_cases(), array_cases("q"), name_cases("frame", words=("no frame named 'no_such_name'", "frame_names")))

row("gradyn.frame_jacobian", model_first(gradyn.frame_jacobian),
    lambda m: dict(model=m.pend, q=state(m)[0], frame="link1"), model_cases(), array_cases("q"),
    name_cases("frame", words=("no frame named", "frame_names")),
    [Case("reference-unknown", setarg("reference", "body"), raises("reference", "'local_world_aligned'"))])

row("gradyn.integrate", model_first(gradyn.integrate), lambda m: dict(model=m.pend, q=state(m)[0], dv=state(m)[1]),
    model_cases(), array_cases("q"), array_cases("dv"),
    [nojoint_case(lambda m: dict(model=m.nojoint, q=empty(None), dv=empty(None)))])

row("gradyn.difference", model_first(gradyn.difference),
    lambda m: dict(model=m.pend, q0=state(m)[0], q1=state(m)[0] * 2), model_cases(), array_cases("q0"),
    array_cases("q1"), [nojoint_case(lambda m: dict(model=m.nojoint, q0=empty(None), q1=empty(None)))])

row("gradyn.collide", model_first(gradyn.collide), lambda m: dict(model=m.pend, q=state(m)[0]), model_cases(),
    array_cases("q"),
    [Case(f"margin={x}", setarg("margin", x), raises("margin")) for x in (-1.0, float("nan"), float("inf"))])


def actuator_good(m, *extra):
    kw = dict(model=m.pend, q=state(m)[0], v=state(m)[1], u=np.array([0.2, -0.1]))
    if extra:
        kw["tau_bar"] = np.ones(2)
    return kw


row("gradyn.actuator_torques", model_first(gradyn.actuator_torques), actuator_good, model_cases(),
    array_cases("q"), array_cases("v"), array_cases("u"),
    [Case("kind-unknown", setarg("kind", "rocket"), raises("kind", "rocket"))])
row("gradyn.actuator_torques_vjp", model_first(gradyn.actuator_torques_vjp), lambda m: actuator_good(m, "bar"),
    model_cases(), array_cases("q"), array_cases("u"), array_cases("tau_bar"))


# the sensors: one state (and the step the accelerometer reads) in, readings out; NaN and inf raise
def sensors_good(m, *bar):
    kw = dict(model=m.sens, q=np.array([0.3]), v=np.array([-0.2]), tau=np.array([0.1]), dt=0.01, ctrl=np.array([0.5]))
    if bar:
        kw["readings_bar"] = np.linspace(0.5, 1.0, m.sens.nsensordata)
    return kw


_sensor_extra = [Case("q-extra-dims", setarg("q", lambda x, m: np.asarray(x, dtype=float)[..., None, None]),
                      raises("q", "expected shape")),  # (1, 1) would be a batch of one world: see batch-of-2
                 Case("dt-missing", setarg("dt", None), raises("dt", "accelerometer", "reads a step")),
                 Case("tau-None", setarg("tau", None), valid(lambda r: True)),
                 Case("batch-of-2", lambda kw, m: {k: (np.repeat(np.asarray(x)[None], 2, axis=0)
                                                       if k in ("q", "v", "tau", "ctrl", "readings_bar") else x)
                                                   for k, x in kw.items()},
                      valid(lambda r: np.shape(r if isinstance(r, np.ndarray) else r[0])[0] == 2, "(2, ...)"))]
row("gradyn.sensors", model_first(gradyn.sensors), sensors_good, model_cases(), array_cases("q", ndim=False),
    array_cases("v"),
    array_cases("tau"), array_cases("ctrl"), dt_cases(), _sensor_extra,
    [Case("integrator-unknown", setarg("integrator", "leapfrog"), raises("integrator", "leapfrog"))])
row("gradyn.sensors_vjp", model_first(gradyn.sensors_vjp), lambda m: sensors_good(m, "bar"), model_cases(),
    array_cases("q", ndim=False), array_cases("v"), array_cases("readings_bar"), array_cases("tau"), dt_cases(), _sensor_extra)


# the camera: a NaN or an inf in q draws the bodies it reaches nowhere (no error, documented in
# gradyn.render); the camera and the look are checked where they are made and against the model
def render_good(m, *bar):
    kw = dict(model=m.sens, q=np.array([0.3]), camera=gradyn.Camera.look_at((0.25, -2, 0), (0.25, 0, 0), width=8,
                                                                              height=6))
    if bar:
        kw["image_bar"] = np.linspace(-1.0, 1.0, 6 * 8 * 3).reshape(6, 8, 3)
    return kw


_render_extra = [
    Case("q-extra-dims", setarg("q", lambda x, m: np.asarray(x, dtype=float)[..., None, None]), raises("q", "expected shape")),
    Case("q-nan", setarg("q", lambda x, m: with_entry(x, np.nan)), valid(lambda r: True, "the world geoms only")),
    Case("camera-unknown-name", setarg("camera", "front"), raises("no camera named 'front'", "its cameras")),
    Case("camera-a-number", setarg("camera", 3), raises("camera", "gradyn.Camera", types=(TypeError,))),
    Case("camera-zero-width", setarg("camera", dict(width=0, height=4)), raises("width", "positive")),
    Case("camera-unknown-body", setarg("camera", dict(width=8, height=6, body="wheel")), raises("Camera.body", "wheel")),
    Case("appearance-colours-per-geom", setarg("appearance", dict(colors=np.zeros((2, 3)))),
         raises("Appearance.colors", "expected shape")),
    Case("appearance-unknown-geom", setarg("appearance", dict(colors={"lid": (1, 0, 0)})), raises("lid")),
    Case("texture-unreadable", setarg("appearance", lambda a, m: dict(textures={m.sens.geom_names[0]: "/no/such.png"})),
         raises("/no/such.png", types=(gradyn.ModelError,))),
    Case("batch-of-2", setarg("q", lambda x, m: np.repeat(np.asarray(x, dtype=float)[None], 2, axis=0)),
         valid(lambda r: np.shape(r if isinstance(r, np.ndarray) else r["q"])[0] == 2, "(2, ...)")),
    nojoint_case(lambda m: dict(model=m.nojoint, q=np.zeros(0), camera=dict(width=4, height=4)),
                 lambda r: np.shape(r) == (4, 4, 3), "the background")]
row("gradyn.render", model_first(gradyn.render), render_good, model_cases(), array_cases("q", nonfinite=False, ndim=False),
    threads_cases(), _render_extra)
row("gradyn.render_vjp", model_first(gradyn.render_vjp), lambda m: render_good(m, "bar"), model_cases(),
    array_cases("q", nonfinite=False, ndim=False), array_cases("image_bar"), threads_cases(),
    [c for c in _render_extra if c.id not in ("batch-of-2", "model-without-joints")])
row("gradyn.Camera", call_class(gradyn.Camera), lambda m: dict(width=8, height=6, fovy=60.0, pos=(0, 0, 1)), [
    Case("width=0", setarg("width", 0), raises("width", "positive")),
    Case("height-a-fraction", setarg("height", 6.5), raises("height", "positive integers")),
    Case("width-a-string", setarg("width", "8"), raises("width")),
    Case("fovy=180", setarg("fovy", 180), raises("fovy", "(0, 180)")),
    Case("fovy-a-string", setarg("fovy", "wide"), raises("fovy")),
    Case("pos-wrong-shape", setarg("pos", (0, 1)), raises("Camera.pos", "expected shape")),
    Case("pos-nan", setarg("pos", (np.nan, 0, 1)), raises("Camera.pos", "finite")),
    Case("quat-zero", setarg("quat", (0, 0, 0, 0)), raises("Camera.quat", "non-zero"))])
row("gradyn.Appearance", call_class(gradyn.Appearance), lambda m: dict(background=(0.1, 0.2, 0.3)), [
    Case("background-wrong-shape", setarg("background", (1, 2)), raises("Appearance.background", "expected shape")),
    Case("light-zero", setarg("light_dir", (0, 0, 0)), raises("Appearance.light_dir", "non-zero")),
    Case("ambient-a-string", setarg("ambient", "dim"), raises("Appearance.ambient", "number")),
    Case("diffuse-nan", setarg("diffuse", float("nan")), raises("Appearance.diffuse", "finite"))])


# the step family: a NaN or an inf in a state or a control is numerical trouble, flagged in the
# status (Status.NON_FINITE), never raised; bad parameters (the model itself) are ValueErrors
def step_good(m):
    q, v = state(m, m.act)
    return dict(model=m.act, q=q, v=v, tau=np.array([0.3]), dt=0.01, ctrl=np.array([0.2]), return_status=True)


def batch_of(n_worlds):
    def mutate(kw, m):
        kw = dict(kw)
        for k in ("q", "v", "tau", "ctrl", "q0", "v0", "taus", "ctrls", "q_next_bar", "v_next_bar", "qs_bar", "vs_bar"):
            if kw.get(k) is not None:
                kw[k] = np.repeat(np.asarray(kw[k])[None], n_worlds, axis=0)
        return kw
    return mutate


def params_cases(model_attr="act", nonfinite_words=("params", "finite")):
    return [
        Case("params-wrong-length", setarg("params", lambda x, m: np.zeros(3)), raises("params", "expected shape")),
        Case("params-nan", setarg("params", lambda x, m: with_entry(getattr(m, model_attr).params, np.nan)),
             raises(*nonfinite_words)),
        Case("params-inf", setarg("params", lambda x, m: with_entry(getattr(m, model_attr).params, np.inf)),
             raises(*nonfinite_words)),
        Case("params-negative-mass", setarg("params", lambda x, m: with_entry(getattr(m, model_attr).params, -1.0)),
             raises("params", "mass")),
    ]


def integrator_cases():
    return [Case("integrator-unknown", setarg("integrator", "midpoint"), raises("integrator", "'euler' or 'rk4'"))]


row("gradyn.step", model_first(gradyn.step), step_good, model_cases(),
    array_cases("q", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    array_cases("v", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    array_cases("tau", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    array_cases("ctrl", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    dt_cases(), integrator_cases(), params_cases(),
    [Case("batch-of-0", batch_of(0), valid(lambda r: r[0].shape == (0, 1) and r[2].shape == (0,), "(0, nq)")),
     Case("batch-of-2", batch_of(2), valid(lambda r: r[0].shape == (2, 1))),
     Case("batch-threads-0", lambda kw, m: dict(batch_of(2)(kw, m), threads=0), raises("threads", "positive")),
     nojoint_case(lambda m: dict(model=m.nojoint, q=empty(None), v=empty(None), tau=None, dt=0.01,
                                 return_status=True), lambda r: r[0].shape == (0,) and r[2] == 0)])


def rollout_good(m, T=3):
    q, v = state(m, m.act)
    return dict(model=m.act, q0=q, v0=v, taus=np.full((T, 1), 0.3), dt=0.01, ctrls=np.full((T, 1), 0.2),
                return_status=True)


def rows_cases(arg):
    return [
        Case(f"{arg}-wrong-width", setarg(arg, lambda x, m: one_more(x)), raises(arg, "expected shape")),
        Case(f"{arg}-1d", setarg(arg, lambda x, m: np.asarray(x)[:, 0]), raises(arg, "expected shape")),
        Case(f"{arg}-strings", setarg(arg, lambda x, m: np.full(np.shape(x), "a")), raises(arg, "numbers")),
        Case(f"{arg}-complex", setarg(arg, lambda x, m: np.asarray(x) + 1j), raises(arg, "real")),
        Case(f"{arg}-nan", setarg(arg, lambda x, m: with_entry(x, np.nan, -1)), valid(flagged, "Status.NON_FINITE")),
        Case(f"{arg}-noncontiguous", setarg(arg, lambda x, m: noncontiguous(x)), SAME),
        Case(f"{arg}-readonly", setarg(arg, lambda x, m: readonly(x)), SAME),
    ]


def t0(kw, m):
    return dict(kw, taus=np.zeros((0, 1)), ctrls=np.zeros((0, 1)))


row("gradyn.rollout", model_first(gradyn.rollout), rollout_good, model_cases(),
    array_cases("q0", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    array_cases("v0", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False),
    rows_cases("taus"), rows_cases("ctrls"), dt_cases(), integrator_cases(), params_cases(),
    [Case("taus-and-ctrls-disagree-on-T", setarg("ctrls", np.zeros((5, 1))), raises("taus", "ctrls", "steps")),
     Case("taus-and-ctrls-None", lambda kw, m: dict(kw, taus=None, ctrls=None), raises("taus", "ctrls")),
     Case("T=0", t0, valid(lambda r: r[0].shape == (1, 1) and r[2].shape == (0,), "(1, nq) and no status")),
     Case("batch-of-0", batch_of(0), valid(lambda r: r[0].shape == (0, 4, 1), "(0, T + 1, nq)")),
     Case("batch-threads-0", lambda kw, m: dict(batch_of(2)(kw, m), threads=0), raises("threads", "positive")),
     Case("device-unknown", setarg("device", "tpu"), raises("device", "'cpu' or 'cuda'")),
     Case("dtype-on-cpu", setarg("dtype", "float32"), raises("dtype", "float64")),
     Case("cuda-with-params", lambda kw, m: dict(kw, device="cuda", params=m.act.params),
          raises("params", "with_params")),
     nojoint_case(lambda m: dict(model=m.nojoint, q0=empty(None), v0=empty(None), taus=np.zeros((4, 0)), dt=0.01),
                  lambda r: r[0].shape == (5, 0))])


def step_vjp_good(m):
    kw = step_good(m)
    del kw["return_status"]
    return dict(kw, q_next_bar=np.ones(1), v_next_bar=np.ones(1))


row("gradyn.step_vjp", model_first(gradyn.step_vjp), step_vjp_good, model_cases(),
    array_cases("q", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN adjoints"),
                ndim=False),
    array_cases("q_next_bar", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN adjoints"), ndim=False),
    array_cases("v_next_bar", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN adjoints"), ndim=False),
    dt_cases(), integrator_cases(), params_cases(),
    [Case("batch-of-0", batch_of(0), valid(lambda r: r[0].shape == (0, 1))),
     nojoint_case(lambda m: dict(model=m.nojoint, q=empty(None), v=empty(None), tau=None, dt=0.01,
                                 q_next_bar=empty(None), v_next_bar=empty(None)))])


def rollout_vjp_good(m):
    kw = rollout_good(m)
    del kw["return_status"]
    return dict(kw, qs_bar=np.ones((4, 1)), vs_bar=np.ones((4, 1)))


row("gradyn.rollout_vjp", model_first(gradyn.rollout_vjp), rollout_vjp_good, model_cases(),
    array_cases("q0", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN adjoints (and a warning)"),
                ndim=False),
    rows_cases("taus")[:4], rows_cases("ctrls")[:4], rows_cases("qs_bar")[:4], rows_cases("vs_bar")[:4],
    dt_cases(), integrator_cases(), params_cases(),
    [Case("qs_bar-wrong-T", setarg("qs_bar", np.ones((3, 1))), raises("qs_bar", "expected shape")),
     Case("max_snapshots=-1", setarg("max_snapshots", -1), raises("max_snapshots")),
     Case("clip_norm=nan", setarg("clip_norm", float("nan")), raises("clip_norm")),
     Case("clip_norm=-1", setarg("clip_norm", -1.0), raises("clip_norm")),
     Case("qs-without-vs", lambda kw, m: dict(kw, qs=np.zeros((4, 1))), raises("qs", "vs")),
     Case("T=0", lambda kw, m: dict(t0(kw, m), qs_bar=np.ones((1, 1)), vs_bar=np.ones((1, 1))),
          valid(lambda r: r[2].shape == (0, 1))),
     Case("batch-of-0", batch_of(0), valid(lambda r: r[0].shape == (0, 1))),
     Case("device-unknown", setarg("device", "gpu"), raises("device", "'cpu' or 'cuda'"))])


def jac_good(m):
    kw = step_good(m)
    del kw["return_status"]
    return kw


row("gradyn.step_jacobian", model_first(gradyn.step_jacobian), jac_good, model_cases(),
    array_cases("q", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN Jacobians"), ndim=False),
    array_cases("ctrl", nonfinite=valid(lambda r: not np.isfinite(r[0]).all(), "NaN Jacobians"), ndim=False),
    dt_cases(), integrator_cases(), params_cases(),
    [Case("batch-of-0", batch_of(0), valid(lambda r: r[0].shape[0] == 0))])


def gradcheck_good(m):
    q, v = state(m)
    return dict(model=m.pend, q=q, v=v, taus=np.zeros((2, 2)), dt=0.01, check_ad=False)


row("gradyn.gradcheck", model_first(gradyn.gradcheck), gradcheck_good, model_cases(),
    array_cases("q", nonfinite=raises("q", "finite"), ndim=False, layout=False),
    [c for c in rows_cases("taus")[:4] if c.id != "taus-1d"],
    dt_cases(), integrator_cases())

row("gradyn.load", call_class(gradyn.load), lambda m: dict(path=str(_ROOT / "models" / "cartpole.urdf")),
    [Case("path-missing", setarg("path", "nowhere.urdf"), raises("nowhere.urdf", types=(gradyn.ModelError,))),
     Case("path-a-folder", setarg("path", str(_ROOT / "models")), raises("models", types=(gradyn.ModelError,))),
     Case("path-unknown-suffix", setarg("path", str(_ROOT / "README.md")), raises("README.md", ".urdf",
                                                                                   types=(gradyn.ModelError,))),
     Case("path-a-number", setarg("path", 3), raises("int", types=(TypeError,))),
     Case("contact-unknown", setarg("contact", "lcp"), raises("'lcp'", "penalty")),
     Case("inertia-unknown", setarg("inertia", "fix"), raises("inertia", "'fix'", "'repair'", "'accept'")),
     Case("inertia-not-a-string", setarg("inertia", 1), raises("int", types=(TypeError,)))])

row("gradyn.param_index", model_first(gradyn.param_index), lambda m: dict(model=m.pend, name="link0.mass"),
    model_cases(), name_cases("name", words=("no parameter named", "param_names")))

row("gradyn.policy_observations", model_first(gradyn.policy_observations), lambda m: dict(model=m.act),
    model_cases(), [nojoint_case(lambda m: dict(model=m.nojoint))])


# Model methods
def method(name):
    return lambda m, self, **kw: getattr(self, name)(**kw)


def per_dof_cases(arg, nonnegative=True):
    cases = array_cases(arg, nonfinite=raises(arg, "finite"))
    if nonnegative:
        cases.append(Case(f"{arg}-negative", setarg(arg, lambda x, m: -np.ones_like(x)), raises(arg, "non-negative")))
    return cases


for _name in ("damping", "stiffness", "armature", "frictionloss"):
    row(f"gradyn.Model.with_{_name}", method(f"with_{_name}"),
        lambda m, n=_name: {"self": m.pend, n: np.full(2, 0.1)}, per_dof_cases(_name))

row("gradyn.Model.without_tendons", method("without_tendons"), lambda m: {"self": m.pend},
    [Case("an-argument", setarg("tendons", ["t"]), raises("tendons", types=(TypeError,)))])

row("gradyn.Model.with_gravity", method("with_gravity"), lambda m: {"self": m.pend, "gravity": (0, 0, -3.0)},
    array_cases("gravity", ndim=True))

row("gradyn.Model.with_params", method("with_params"), lambda m: {"self": m.pend, "p": m.pend.params},
    array_cases("p", nonfinite=raises("parameter", "p[", "finite")),
    [Case("p-negative-inertia", setarg("p", lambda x, m: with_entry(m.pend.params, -1.0, 4)),
          raises("inertia")),
     Case("p-nan-com", setarg("p", lambda x, m: with_entry(m.pend.params, np.nan, 2)),
          raises("link0.com.y", "finite")),
     Case("p-inf-origin", setarg("p", lambda x, m: with_entry(m.pend.params, np.inf, 10)), raises("origin", "finite")),
     Case("p-list", setarg("p", lambda x, m: list(m.pend.params)), SAME)])

row("gradyn.Model.with_contact", method("with_contact"), lambda m: {"self": m.pend, "model": "penalty"},
    [Case("model-unknown", setarg("model", "lcp"), raises("'lcp'", "penalty")),
     Case("stiffness-negative", setarg("stiffness", -1.0), raises("stiffness")),
     Case("stiffness-nan", setarg("stiffness", float("nan")), raises("stiffness")),
     Case("damping-inf", setarg("damping", float("inf")), raises("damping")),
     Case("friction-unknown", setarg("friction", "sticky"), raises("friction", "sticky")),
     Case("max_correction_velocity-negative", setarg("max_correction_velocity", -1.0),
          raises("max_correction_velocity"))])

row("gradyn.Model.with_ground_plane", method("with_ground_plane"), lambda m: {"self": m.pend, "height": -1.0},
    [Case("height-nan", setarg("height", float("nan")), raises("height", "finite")),
     Case("friction-negative", setarg("friction", -1.0), raises("friction")),
     Case("restitution-2", setarg("restitution", 2.0), raises("restitution")),
     Case("name-taken", lambda kw, m: {"self": m.pend.with_ground_plane(name="g"), "name": "g"}, raises("g"))])

row("gradyn.Model.with_network", method("with_network"),
    lambda m: {"self": m.act, "name": "n", "inputs": ["hinge.q"], "outputs": ["hinge"], "hidden": [3]},
    [Case("inputs-unknown", setarg("inputs", ["nope.q"]), raises("nope.q")),
     Case("inputs-a-string", setarg("inputs", "hinge.q"), raises("inputs", types=(TypeError, ValueError))),
     Case("outputs-unknown", setarg("outputs", ["nope"]), raises("nope")),
     Case("hidden-0", setarg("hidden", [0]), raises("hidden")),
     Case("activation-unknown", setarg("activation", "gelu"), raises("activation", "gelu")),
     Case("site-unknown", setarg("site", "everywhere"), raises("site", "everywhere"))])

row("gradyn.Model.with_network_inputs", method("with_network_inputs"),
    lambda m: {"self": m.net, "name": "residual", "inputs": ["hinge.q", "hinge.v"]},
    [Case("name-unknown", setarg("name", "nope"), raises("nope")),
     Case("inputs-unknown", setarg("inputs", ["nope.v"]), raises("nope.v"))])

for _name in ("joint_idx_q", "joint_idx_v", "joint_nq", "joint_nv", "joint_type"):
    row(f"gradyn.Model.{_name}", method(_name), lambda m: {"self": m.pend, "name": "joint1"},
        name_cases("name", words=("no_such_name",)))

for _name in ("network_inputs", "network_outputs"):
    row(f"gradyn.Model.{_name}", method(_name), lambda m: {"self": m.net},
        [Case("site-unknown", setarg("site", "everywhere"), raises("site", "everywhere"))])

row("gradyn.Model.neutral", method("neutral"), lambda m: {"self": m.pend},
    [nojoint_case(lambda m: {"self": m.nojoint}, lambda r: r.shape == (0,))])


# ModelBuilder
def builder(m):
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=1.0, inertia=(1, 1, 1, 0, 0, 0))
    return b


def builder_method(name):
    """Calls builder.<name>(**kw) on a fresh builder made by `self` (a function of the models)."""
    def call(m, self, **kw):
        out = getattr(self(m), name)(**kw)
        return None if isinstance(out, gradyn.ModelBuilder) else out
    return call


def fresh_builder(kw):
    return lambda m: dict(kw, self=builder)


row("gradyn.ModelBuilder.add_link", builder_method("add_link"),
    fresh_builder(dict(name="arm", mass=1.0, com=(0, 0, 0.1), inertia=(0.1, 0.2, 0.25, 0, 0, 0))),
    [Case("name-duplicate", setarg("name", "bob"), raises("bob", types=(gradyn.ModelError,))),
     Case("mass-negative", setarg("mass", -1.0), raises("mass", "positive", types=(gradyn.ModelError,))),
     Case("mass-nan", setarg("mass", float("nan")), raises("mass", "finite", types=(gradyn.ModelError,))),
     Case("inertia-negative-moment", setarg("inertia", (-0.1, 0.2, 0.25, 0, 0, 0)),
          raises("inertia", "negative", types=(gradyn.ModelError,))),
     Case("inertia-wrong-shape", setarg("inertia", (1, 2, 3)), raises("inertia", "expected shape")),
     Case("inertia-nan", setarg("inertia", (np.nan, 1, 1, 0, 0, 0)), raises("inertia", "finite")),
     Case("com-wrong-shape", setarg("com", (0, 0)), raises("com", "expected shape")),
     Case("com-inf", setarg("com", (0, 0, np.inf)), raises("com", "finite"))])

row("gradyn.ModelBuilder.add_joint", builder_method("add_joint"),
    fresh_builder(dict(name="j", type="revolute", parent="base", child="bob", axis=(0, 1, 0))),
    [Case("type-unknown", setarg("type", "hinged"), raises("type", "'hinged'")),
     Case("axis-zero", setarg("axis", (0, 0, 0)), raises("axis")),
     Case("axis-nan", setarg("axis", (np.nan, 0, 1)), raises("axis", "finite")),
     Case("xyz-wrong-shape", setarg("xyz", (0, 0)), raises("xyz", "expected shape")),
     Case("xyz-inf", setarg("xyz", (0, 0, np.inf)), raises("xyz", "finite")),
     Case("damping-negative", setarg("damping", -1.0), raises("damping")),
     Case("lower-above-upper", lambda kw, m: dict(kw, lower=1.0, upper=-1.0), raises("lower", "upper"))])

row("gradyn.ModelBuilder.add_actuator", builder_method("add_actuator"),
    lambda m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="base", child="bob"), joint="j"),
    [Case("kind-unknown", setarg("kind", "rocket"), raises("kind", "rocket")),
     Case("gear-nan", setarg("gear", float("nan")), raises("gear", "finite")),
     Case("ctrlrange-reversed", setarg("ctrlrange", (1.0, -1.0)), raises("ctrlrange"))])

row("gradyn.ModelBuilder.add_joint_coupling", builder_method("add_joint_coupling"),
    lambda m: dict(self=lambda m: builder(m).add_link("arm", mass=1.0, inertia=(1, 1, 1, 0, 0, 0))
                   .add_joint("j", "revolute", parent="base", child="bob")
                   .add_joint("k", "prismatic", parent="base", child="arm"), joint1="k", joint2="j"),
    [Case("polycoef-too-many", setarg("polycoef", np.zeros(6)), raises("polycoef", "1 to 5", "(6,)")),
     Case("polycoef-2d", setarg("polycoef", np.zeros((2, 2))), raises("polycoef", "(2, 2)")),
     Case("polycoef-not-numbers", setarg("polycoef", "gear"), raises("polycoef"))])

row("gradyn.ModelBuilder.add_connection", builder_method("add_connection"),
    lambda m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="base", child="bob"),
                   frame1="bob", anchor1=(0.1, 0, 0)),
    [Case("anchor1-wrong-shape", setarg("anchor1", (0.1, 0)), raises("anchor1", "expected shape")),
     Case("anchor1-nan", setarg("anchor1", (np.nan, 0, 0)), raises("anchor1", "finite")),
     Case("anchor2-inf", setarg("anchor2", (0, 0, np.inf)), raises("anchor2", "finite"))])

row("gradyn.ModelBuilder.add_tendon", builder_method("add_tendon"),
    lambda m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="base", child="bob"),
                   joints=["j"], coefs=(0.5,), range=(-1.0, 1.0)),
    [Case("coefs-too-many", setarg("coefs", (0.5, 1.0)), raises("coefs", "one coefficient per joint", "(2,)")),
     Case("coefs-not-numbers", setarg("coefs", "half"), raises("coefs")),
     Case("range-wrong-shape", setarg("range", (1.0,)), raises("range", "(lower, upper)", "(1,)")),
     Case("joints-not-names", setarg("joints", [3]), raises("joints", types=(TypeError,)))])

row("gradyn.ModelBuilder.add_camera", builder_method("add_camera"),
    fresh_builder(dict(name="eye", link="bob", xyz=(0.1, 0, 0), rpy=(0, 0.3, 0), fovy=60.0)),
    [Case("fovy-zero", setarg("fovy", 0.0), raises("fovy", "(0, 180)", types=(gradyn.ModelError,))),
     Case("fovy-nan", setarg("fovy", float("nan")), raises("fovy", types=(gradyn.ModelError,))),
     Case("xyz-wrong-shape", setarg("xyz", (0.1, 0)), raises("xyz", "expected shape")),
     Case("rpy-inf", setarg("rpy", (0, np.inf, 0)), raises("rpy", "finite")),
     Case("name-empty", setarg("name", ""), raises("a camera needs a name", types=(gradyn.ModelError,)))])

row("gradyn.ModelBuilder.set_gravity", builder_method("set_gravity"), fresh_builder(dict(gravity=(0, 0, -1.0))),
    [Case("gravity-wrong-shape", setarg("gravity", (0, -1.0)), raises("gravity", "expected shape")),
     Case("gravity-nan", setarg("gravity", (0, 0, np.nan)), raises("gravity", "finite"))])
row("gradyn.ModelBuilder.set_name", builder_method("set_name"), fresh_builder(dict(name="x")),
    [Case("name-not-a-string", setarg("name", 3), raises("name", types=(TypeError,)))])
row("gradyn.ModelBuilder.build", builder_method("build"),
    lambda m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="base", child="bob")),
    [Case("links-without-joint", lambda kw, m: dict(self=builder), raises("root", "bob", types=(gradyn.ModelError,))),
     Case("empty-builder", lambda kw, m: dict(self=lambda m: gradyn.ModelBuilder()),
          raises("link", types=(gradyn.ModelError,))),
     Case("cycle", lambda kw, m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="base", child="bob")
                                      .add_joint("k", "revolute", parent="bob", child="base")),
          raises("parent", types=(gradyn.ModelError,))),
     Case("parent-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint("j", "revolute", parent="nope",
                                                                                     child="bob")),
          raises("nope", types=(gradyn.ModelError,))),
     Case("actuator-joint-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_actuator("nope")), raises("nope", types=(gradyn.ModelError,))),
     Case("coupling-joint-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_joint_coupling("j", "nope")),
          raises("coupling", "unknown joint2 'nope'", types=(gradyn.ModelError,))),
     Case("connection-frame-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_connection("nope")),
          raises("connection", "unknown body1 'nope'", types=(gradyn.ModelError,))),
     Case("connection-on-one-body", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_connection("bob", "bob")),
          raises("connection", "move as one body", types=(gradyn.ModelError,))),
     Case("tendon-joint-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_tendon(["j", "nope"], (1.0, 1.0))),
          raises("tendon", "unknown joint 'nope'", types=(gradyn.ModelError,))),
     Case("tendon-coupling-unknown", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_joint_coupling("t", tendons=True)),
          raises("tendon coupling", "unknown tendon1 't'", types=(gradyn.ModelError,))),
     Case("tendon-range-reversed", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "revolute", parent="base", child="bob").add_tendon(["j"], (1.0,), range=(1.0, -1.0))),
          raises("tendon", "above upper bound", types=(gradyn.ModelError,))),
     Case("coupling-ball-joint", lambda kw, m: dict(self=lambda m: builder(m).add_joint(
         "j", "spherical", parent="base", child="bob").add_joint_coupling("j")),
          raises("coupling", "'j' is spherical", "hinge and slide", types=(gradyn.ModelError,))),
     Case("massless-leaf-welded", lambda kw, m: dict(self=lambda m: builder(m).add_link("tool").add_joint(
          "j", "revolute", parent="base", child="bob").add_joint("f", "fixed", parent="bob", child="tool")),
          valid(lambda r: r.nv == 1 and "tool" in r.frame_names, "the tool as a frame of bob"))])


# gradyn.control
row("gradyn.control.GradynDynamics", call_class(control.GradynDynamics), lambda m: dict(model=m.act, dt=0.05),
    model_cases()[:1],
    [Case(f"dt={v}", setarg("dt", v), raises("dt", "positive")) for v in (0.0, -0.01, float("nan"), float("inf"))],
    [Case("controls-unknown", setarg("controls", "x"), raises("controls", "'ctrl', 'tau' or 'auto'")),
     Case("u_min-above-u_max", lambda kw, m: dict(kw, u_min=[1.0], u_max=[-1.0]), raises("u_min", "u_max")),
     Case("u_min-wrong-shape", lambda kw, m: dict(kw, u_min=[0.0, 0.0], u_max=[1.0, 1.0]),
          raises("u_min", "expected shape"))])


def cost_good(m):
    return dict(dynamics=control.GradynDynamics(m.act, 0.05), Q=np.eye(2), R=np.eye(1))


row("gradyn.control.QuadraticCost", call_class(control.QuadraticCost), cost_good,
    [Case("Q-wrong-shape", setarg("Q", np.eye(3)), raises("Q", "expected shape")),
     Case("Q-nan", setarg("Q", np.full((2, 2), np.nan)), raises("Q", "finite")),
     Case("R-negative", setarg("R", -np.eye(1)), raises("R", "non-negative")),
     Case("Q_final-indefinite", setarg("Q_final", np.array([[0.0, 1.0], [1.0, 0.0]])), raises("Q_final", "non-negative")),
     Case("q_goal-wrong-shape", setarg("q_goal", [1.0, 2.0]), raises("q_goal", "expected shape")),
     Case("q_goal-nan", setarg("q_goal", [np.nan]), raises("q_goal", "finite"))])


def ilqr_good(m):
    d = control.GradynDynamics(m.act, 0.05)
    return dict(dynamics=d, cost=control.QuadraticCost(d, Q=np.eye(2), R=np.eye(1)), q0=np.array([0.3]),
                v0=np.zeros(1), u_init=np.zeros((4, 1)), max_iterations=3)


def ilqr_call(m, **kw):
    r = control.ilqr(**kw)
    return r.u, r.q, r.cost


row("gradyn.control.ilqr", ilqr_call, ilqr_good,
    array_cases("q0", ndim=False, layout=False), array_cases("v0", ndim=False, layout=False),
    [Case("u_init-wrong-width", setarg("u_init", np.zeros((4, 2))), raises("u_init", "expected shape")),
     Case("u_init-T=0", setarg("u_init", np.zeros((0, 1))), raises("u_init", "T >= 1")),
     Case("u_init-nan", setarg("u_init", with_entry(np.zeros((4, 1)), np.nan)), raises("u_init", "finite")),
     Case("max_iterations=-1", setarg("max_iterations", -1), raises("max_iterations"))])


def mpc_good(m):
    kw = ilqr_good(m)
    return dict(dynamics=kw["dynamics"], cost=kw["cost"], horizon=4, iterations=1)


row("gradyn.control.MPC", call_class(control.MPC), mpc_good,
    [Case("horizon=0", setarg("horizon", 0), raises("horizon", "at least 1"))])


def run_mpc_good(m):
    return dict(mpc=control.MPC(**mpc_good(m)), q0=np.array([0.3]), v0=np.zeros(1), steps=2)


row("gradyn.control.run_mpc", call_class(control.run_mpc), run_mpc_good,
    array_cases("q0", ndim=False, layout=False),
    [Case("steps=-1", setarg("steps", -1), raises("steps", "non-negative")),
     Case("steps=0", setarg("steps", 0), valid(lambda r: r[0].shape == (1, 1), "the start alone"))])

row("gradyn.control.box_qp", call_class(control.box_qp),
    lambda m: dict(H=np.eye(2), g=np.array([1.0, -1.0]), lower=-np.ones(2), upper=np.ones(2)),
    [Case("g-wrong-shape", setarg("g", np.zeros(3)), raises("g", "expected shape")),
     Case("g-nan", setarg("g", np.array([np.nan, 0.0])), raises("g", "finite")),
     Case("H-inf", setarg("H", np.diag([np.inf, 1.0])), raises("H", "finite")),
     Case("lower-above-upper", setarg("lower", 2 * np.ones(2)), raises("lower", "upper")),
     Case("upper-nan", setarg("upper", np.array([np.nan, 1.0])), raises("lower", "upper", "nan")),
     Case("unbounded", lambda kw, m: dict(kw, lower=np.full(2, -np.inf), upper=np.full(2, np.inf)),
          valid(lambda r: r[2], "ok"))])


# gradyn.Policy and gradyn.hybrid
row("gradyn.Policy", call_class(gradyn.Policy), lambda m: dict(model=m.act, observations=["hinge.q", "hinge.v"],
                                                               hidden=[3]),
    [Case("observation-unknown", setarg("observations", ["nope.q"]), raises("nope.q")),
     Case("activation-unknown", setarg("activation", "gelu"), raises("activation", "gelu")),
     Case("hidden-0", setarg("hidden", [0]), raises("hidden", "at least one")),
     Case("memory=-1", setarg("memory", -1), raises("memory"))])


def policy_rollout_good(m):
    return dict(self=m.policy, q0=np.array([0.3]), v0=np.zeros(1), steps=4, dt=0.01, task=[1.0])


row("gradyn.Policy.rollout", method("rollout"), policy_rollout_good,
    array_cases("q0", nonfinite=valid(flagged, "Status.NON_FINITE"), ndim=False), dt_cases()[:4],
    [Case("steps=0", setarg("steps", 0), raises("steps", "at least 1")),
     Case("task-missing", setarg("task", None), raises("task")),
     Case("weights-wrong-shape", setarg("weights", np.zeros(3)), raises("weights", "expected shape")),
     Case("weights-nan", setarg("weights", lambda x, m: with_entry(m.policy.weights, np.nan)),
          raises("weights", "finite")),
     Case("batch-of-0", lambda kw, m: dict(kw, q0=np.zeros((0, 1)), v0=np.zeros((0, 1))),
          valid(lambda r: r[0].shape[0] == 0))])


def policy_vjp_good(m):
    qs, vs, _, _ = m.policy.rollout(np.array([0.3]), np.zeros(1), 4, 0.01, task=[1.0])
    return dict(self=m.policy, qs=qs, vs=vs, qs_bar=np.ones_like(qs), vs_bar=np.ones_like(vs), dt=0.01, task=[1.0])


row("gradyn.Policy.rollout_vjp", method("rollout_vjp"), policy_vjp_good,
    [Case("qs_bar-wrong-T", setarg("qs_bar", np.ones((3, 1))), raises("qs_bar", "expected shape")),
     Case("qs_bar-strings", setarg("qs_bar", np.full((5, 1), "x")), raises("qs_bar", types=(ValueError,))),
     Case("reduce-unknown", setarg("reduce", "mean"), raises("reduce", "'sum' or 'none'")),
     Case("decay-nan", setarg("decay", float("nan")), raises("decay", "[0, 1]"))] + dt_cases()[:4])

for _name, _fn in (("group_lasso", gradyn.group_lasso), ("input_group_norms", gradyn.input_group_norms),
                   ("prune_inputs", gradyn.prune_inputs)):
    row(f"gradyn.{_name}", call_class(_fn), lambda m: dict(model=m.net, network="residual"),
        [Case("network-unknown", setarg("network", "nope"), raises("no network named 'nope'", "residual")),
         Case("params-wrong-shape", setarg("params", np.zeros(3)), raises("params", "expected shape"))])
row("gradyn.hybrid.network_info", call_class(hybrid.network_info), lambda m: dict(model=m.net, network="residual"),
    [Case("network-unknown", setarg("network", "nope"), raises("no network named 'nope'", "residual"))])
TABLE[-4].cases.append(Case("l1-negative", setarg("l1", -1.0), raises("l1", "non-negative")))
TABLE[-2].cases.append(Case("threshold-nan", setarg("threshold", float("nan")), raises("threshold", "[0, 1)")))


# gradyn.torch and gradyn.jax: the same checks, on tensors
def torch_rows():
    torch = pytest.importorskip("torch")
    import gradyn.torch as gt

    t = lambda x: torch.as_tensor(np.asarray(x, dtype=np.float64))  # noqa: E731
    good_step = lambda m: dict(model=m.act, q=t([0.3]), v=t([0.0]), tau=t([0.1]), dt=0.01, ctrl=t([0.2]))  # noqa: E731
    yield Row("gradyn.torch.step", model_first(gt.step), good_step, [
        Case("q-wrong-shape", setarg("q", t([0.3, 0.0])), raises("q", "expected")),
        Case("q-complex", setarg("q", torch.tensor([0.3 + 1j])), raises("q", "real", types=(TypeError,))),
        Case("q-nan", lambda kw, m: dict(kw, q=t([np.nan]), return_status=True), valid(flagged, "Status.NON_FINITE")),
        Case("q-int", setarg("q", torch.tensor([0])), valid(lambda r: r[0].dtype == torch.float64)),
        Case("params-wrong-shape", setarg("params", t([1.0])), raises("params", "expected")),
        *dt_cases()[:4]])
    good_rollout = lambda m: dict(model=m.act, q0=t([0.3]), v0=t([0.0]), taus=t(np.zeros((3, 1))), dt=0.01)  # noqa: E731
    yield Row("gradyn.torch.rollout", model_first(gt.rollout), good_rollout, [
        Case("taus-wrong-shape", setarg("taus", t(np.zeros((3, 2)))), raises("taus", "expected")),
        Case("taus-complex", setarg("taus", torch.zeros((3, 1), dtype=torch.complex128)),
             raises("taus", "real", types=(TypeError,))),
        Case("T=0", setarg("taus", t(np.zeros((0, 1)))), valid(lambda r: r[0].shape == (1, 1))),
        Case("device-unknown", setarg("device", "tpu"), raises("device")), *dt_cases()[:4]])
    good_sensors = lambda m: dict(model=m.sens, q=t([0.3]), v=t([0.0]), tau=t([0.1]), dt=0.01)  # noqa: E731
    yield Row("gradyn.torch.sensors", model_first(gt.sensors), good_sensors, [
        Case("q-wrong-shape", setarg("q", t([0.3, 0.0])), raises("q", "expected")),
        Case("q-complex", setarg("q", torch.tensor([0.3 + 1j])), raises("q", "real", types=(TypeError,))),
        Case("q-nan", setarg("q", t([np.nan])), raises("q", "finite")),
        Case("q-int", setarg("q", torch.tensor([0])), valid(lambda r: r.dtype == torch.float64)),
        Case("dt-missing", setarg("dt", None), raises("dt", "accelerometer")), *dt_cases()[:4]])
    camera = gradyn.Camera.look_at((0.25, -2, 0), (0.25, 0, 0), width=8, height=6)
    yield Row("gradyn.torch.render", model_first(gt.render), lambda m: dict(model=m.sens, q=t([0.3]), camera=camera), [
        Case("q-wrong-shape", setarg("q", t([0.3, 0.0])), raises("q", "expected")),
        Case("q-complex", setarg("q", torch.tensor([0.3 + 1j])), raises("q", "real", types=(TypeError,))),
        Case("camera-unknown-name", setarg("camera", "front"), raises("no camera named 'front'")),
        Case("camera-a-number", setarg("camera", 3), raises("camera", types=(TypeError,))),
        Case("model-None", setarg("model", None), raises("model", types=(TypeError,)))])
    yield Row("gradyn.torch.policy_rollout", lambda m, **kw: gt.policy_rollout(**kw),
              lambda m: dict(policy=m.policy, q0=t([0.3]), v0=t([0.0]), steps=3, dt=0.01, task=t([1.0])), [
                  Case("q0-wrong-shape", setarg("q0", t([0.3, 0.0])), raises("q0", "expected")),
                  Case("steps=0", setarg("steps", 0), raises("steps")), *dt_cases()[:4]])


def jax_rows():
    jnp = pytest.importorskip("jax.numpy")
    import gradyn.jax as gj

    a = lambda x: jnp.asarray(np.asarray(x, dtype=np.float64))  # noqa: E731
    good_step = lambda m: dict(model=m.act, q=a([0.3]), v=a([0.0]), tau=a([0.1]), dt=0.01)  # noqa: E731
    yield Row("gradyn.jax.step", model_first(gj.step), good_step, [
        Case("q-wrong-shape", setarg("q", a([0.3, 0.0])), raises("q", "expected")),
        Case("q-complex", setarg("q", jnp.asarray([0.3 + 1j])), raises("q", "real", types=(TypeError,))),
        Case("q-nan", lambda kw, m: dict(kw, q=a([np.nan]), return_status=True), valid(flagged, "Status.NON_FINITE")),
        Case("integrator-unknown", setarg("integrator", "midpoint"), raises("integrator")), *dt_cases()[:4]])
    good_rollout = lambda m: dict(model=m.act, q0=a([0.3]), v0=a([0.0]), taus=a(np.zeros((3, 1))), dt=0.01)  # noqa: E731
    yield Row("gradyn.jax.rollout", model_first(gj.rollout), good_rollout, [
        Case("taus-wrong-shape", setarg("taus", a(np.zeros((3, 2)))), raises("taus", "expected")),
        Case("q0-complex", setarg("q0", jnp.asarray([0.3 + 1j])), raises("q0", "real", types=(TypeError,))),
        Case("T=0", setarg("taus", a(np.zeros((0, 1)))), valid(lambda r: r[0].shape == (1, 1))),
        Case("device-unknown", setarg("device", "tpu"), raises("device")), *dt_cases()[:4]])
    camera = gradyn.Camera.look_at((0.25, -2, 0), (0.25, 0, 0), width=8, height=6)
    yield Row("gradyn.jax.render", model_first(gj.render), lambda m: dict(model=m.sens, q=a([0.3]), camera=camera), [
        Case("q-wrong-shape", setarg("q", a([0.3, 0.0])), raises("q", "expected")),
        Case("camera-unknown-name", setarg("camera", "front"), raises("no camera named 'front'")),
        Case("camera-a-number", setarg("camera", 3), raises("camera", types=(TypeError,))),
        Case("model-None", setarg("model", None), raises("model", types=(TypeError,)))])
    yield Row("gradyn.jax.policy_rollout", lambda m, **kw: gj.policy_rollout(**kw),
              lambda m: dict(policy=m.policy, q0=a([0.3]), v0=a([0.0]), steps=3, dt=0.01, task=a([1.0])), [
                  Case("q0-wrong-shape", setarg("q0", a([0.3, 0.0])), raises("q0", "expected")),
                  Case("steps=0", setarg("steps", 0), raises("steps")), *dt_cases()[:4]])


try:
    TABLE.extend(torch_rows())
except pytest.skip.Exception:
    pass
try:
    TABLE.extend(jax_rows())
except pytest.skip.Exception:
    pass


# gradyn.envs
_ENVS: dict = {}  # one environment of each class, made once (the Ant and Laikago load MJCF and URDF files)


def env_step(m, env_class, action, **env_kwargs):
    if env_kwargs:
        env = env_class(**env_kwargs)
    else:
        env = _ENVS.setdefault(env_class, env_class())
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    return obs, reward


_ACTION_SIZES = {genvs.PendulumEnv: 1, genvs.CartPoleEnv: 1, genvs.SwimmerEnv: 2, genvs.AntEnv: 8, genvs.LaikagoEnv: 12,
                 genvs.ReachingEnv: 2}
for _cls, _nu in _ACTION_SIZES.items():
    row(f"gradyn.envs.{_cls.__name__}", env_step, lambda m, c=_cls, n=_nu: dict(env_class=c, action=np.zeros(n)),
        [Case("action-wrong-shape", setarg("action", lambda x, m: one_more(x)), raises("action", "expected shape")),
         Case("action-nan", setarg("action", lambda x, m: with_entry(x, np.nan)), raises("action", "finite")),
         Case("action-strings", setarg("action", lambda x, m: np.full(np.shape(x), "a")), raises("action", "numbers")),
         Case("threads=0", lambda kw, m: dict(kw, threads=0), raises("threads", "positive")),
         Case("render_mode-human", lambda kw, m: dict(kw, render_mode="human"), raises("render_mode"))])
row("gradyn.envs.GradynEnv", lambda m, **kw: genvs.PendulumEnv(**kw).threads, lambda m: dict(threads=1),
    [Case("threads=0", setarg("threads", 0), raises("threads", "positive")),
     Case("width=0", lambda kw, m: dict(kw, render_mode="rgb_array", width=0), raises("width"))])


def vector_step(m, env_class, num_envs, actions):
    envs = genvs.GradynVectorEnv(env_class, num_envs=num_envs)
    envs.reset(seed=0)
    return envs.step(actions)[:2]


row("gradyn.envs.GradynVectorEnv", vector_step,
    lambda m: dict(env_class=genvs.PendulumEnv, num_envs=2, actions=np.zeros((2, 1))),
    [Case("num_envs=0", setarg("num_envs", 0), raises("num_envs", "positive")),
     Case("env_class-not-an-env", setarg("env_class", lambda x, m: int), raises("env_class", types=(TypeError,))),
     Case("actions-wrong-shape", setarg("actions", np.zeros((3, 1))), raises("actions", "expected shape")),
     Case("actions-nan", setarg("actions", np.full((2, 1), np.nan)), raises("actions", "finite"))])



# gradyn.rl (reinforcement learning through the gradients; needs PyTorch and Stable-Baselines3)
def rl_rows():
    import gymnasium as gym
    import torch

    grl = pytest.importorskip("gradyn.rl")
    plain = lambda kw, m: dict(kw, env=gym.make("Pendulum-v1"))  # noqa: E731  Gymnasium's own: no gradients
    no_gradients = Case("env-without-gradients", plain, raises("differentiable_step", "gradyn/Reaching-v0",
                                                                types=(TypeError,)))
    not_an_env = Case("env-not-an-env", setarg("env", 42), raises("env", "Gymnasium environment", types=(TypeError,)))
    reaching = lambda: gym.make("gradyn/Reaching-v0", links=2)  # noqa: E731
    states = np.array([[0.1, -0.2, 0.3, 0.0], [0.0, 0.5, -0.1, 0.2]])
    actions = np.array([[0.2, -0.1], [0.0, 0.4]])

    def transition(m, env, states, actions):
        with torch.no_grad():
            obs, reward, _, _ = grl.DifferentiableTransition(env)(states, actions)
        return obs, reward

    def batch_cases(arg):
        return [Case(f"{arg}-wrong-width", setarg(arg, lambda x, m: one_more(x)), raises(arg, "expected shape")),
                Case(f"{arg}-1d", setarg(arg, lambda x, m: np.asarray(x)[0]), raises(arg, "expected shape")),
                Case(f"{arg}-strings", setarg(arg, lambda x, m: np.full(np.shape(x), "a")), raises(arg, "numbers")),
                Case(f"{arg}-nan", setarg(arg, lambda x, m: with_entry(x, np.nan)), raises(arg, "finite")),
                Case(f"{arg}-readonly", setarg(arg, lambda x, m: readonly(x)), SAME)]

    rows_ = []
    add = lambda *a: rows_.append(Row(a[0], a[1], a[2], [c for cases in a[3:] for c in cases]))  # noqa: E731
    add("gradyn.rl.check_differentiable", lambda m, **kw: grl.check_differentiable(**kw).action_space.shape,
        lambda m: dict(env="gradyn/Reaching-v0"), [no_gradients, not_an_env])
    add("gradyn.rl.StateInfo", lambda m, env: grl.StateInfo(env).unwrapped.links, lambda m: dict(env=reaching()),
        [no_gradients, not_an_env])
    add("gradyn.rl.DifferentiableTransition", transition,
        lambda m: dict(env=reaching(), states=states, actions=actions),
        [no_gradients, not_an_env], batch_cases("states"), batch_cases("actions"),
        [Case("batch-sizes-differ", setarg("actions", actions[:1]), raises("states and actions", "batch"))])

    def jacobian(m, states, actions):
        return tuple(x.numpy() for x in grl.action_jacobian(grl.DifferentiableTransition(reaching()), states,
                                                             actions))

    add("gradyn.rl.action_jacobian", jacobian, lambda m: dict(states=states, actions=actions),
        batch_cases("states"), batch_cases("actions"))

    def neighbours(m, k, perturbation):
        tr = grl.DifferentiableTransition(reaching())
        with torch.no_grad():
            obs, reward, _, _ = tr(states, actions)
        return tuple(x.numpy() for x in grl.neighbours(tr, states, actions, obs, reward, k, perturbation,
                                                        generator=torch.Generator().manual_seed(0)))

    add("gradyn.rl.neighbours", neighbours, lambda m: dict(k=3, perturbation=0.1),
        [Case("k=-1", setarg("k", -1), raises("neighbours", "whole number")),
         Case("k=1.5", setarg("k", 1.5), raises("neighbours", "whole number")),
         Case("k=0", setarg("k", 0), valid(lambda r: r[0].shape == (2, 0, 2), "no neighbours")),
         Case("perturbation=0", setarg("perturbation", 0.0), raises("perturbation", "> 0")),
         Case("perturbation-nan", setarg("perturbation", np.nan), raises("perturbation", "finite"))])

    def first_order(m, actions, next_obs, rewards, jac, reward_gradient, k, perturbation):
        return tuple(x.numpy() for x in grl.first_order_neighbours(
            actions, next_obs, rewards, jac, reward_gradient, k, perturbation,
            generator=torch.Generator().manual_seed(0)))

    obs_width = 6  # any width: the function checks only that the shapes agree
    add("gradyn.rl.first_order_neighbours", first_order,
        lambda m: dict(actions=actions, next_obs=np.zeros((2, obs_width)), rewards=np.zeros(2),
                       jac=np.ones((2, obs_width, 2)), reward_gradient=np.ones((2, 2)), k=3, perturbation=0.1),
        [Case("k=-1", setarg("k", -1), raises("neighbours", "whole number")),
         Case("perturbation=0", setarg("perturbation", 0.0), raises("perturbation", "> 0")),
         Case("jac-wrong-shape", setarg("jac", np.ones((2, 2, obs_width))), raises("jac", "expected shape (2, 6, 2)")),
         Case("reward_gradient-one-row", setarg("reward_gradient", np.ones((1, 2))),
              raises("reward_gradient", "expected shape (2, 2)")),
         Case("rewards-too-many", setarg("rewards", np.zeros(3)), raises("rewards", "expected shape (2,)")),
         Case("actions-1d", setarg("actions", np.zeros(2)), raises("actions", "(B, m)")),
         Case("jac-nan", setarg("jac", lambda x, m: with_entry(x, np.nan)), raises("jac", "finite")),
         Case("next_obs-strings", setarg("next_obs", lambda x, m: np.full(np.shape(x), "a")),
              raises("next_obs", "numbers")),
         Case("k=0", setarg("k", 0), valid(lambda r: r[0].shape == (2, 0, 2), "no neighbours")),
         Case("jac-readonly", setarg("jac", lambda x, m: readonly(x)), SAME)])

    def buffer(m, **kw):
        env = reaching()
        kw.setdefault("transition", grl.DifferentiableTransition(env))
        b = grl.GradientReplayBuffer(100, env.observation_space, env.action_space, **kw)
        return b.k, b.perturbation

    add("gradyn.rl.GradientReplayBuffer", buffer, lambda m: dict(neighbours=9, perturbation=0.1),
        [Case("neighbours=-1", setarg("neighbours", -1), raises("neighbours", "whole number")),
         Case("perturbation=0", setarg("perturbation", 0.0), raises("perturbation", "> 0")),
         Case("perturbation-string", setarg("perturbation", "0.1"), raises("perturbation", "number")),
         Case("transition-not-one", setarg("transition", "env"), raises("transition", types=(TypeError,))),
         Case("optimize_memory_usage", setarg("optimize_memory_usage", True), raises("optimize_memory_usage"))])

    def sac(cls):
        def call(m, **kw):
            agent = cls("MlpPolicy", policy_kwargs=dict(net_arch=[8]), seed=0, device="cpu", **kw)
            return agent.actor.mu.weight.detach().numpy().copy()
        return call

    add("gradyn.rl.SampleEnhancedSAC", sac(grl.SampleEnhancedSAC), lambda m: dict(env=reaching()),
        [no_gradients, not_an_env,
         Case("neighbours=-1", setarg("neighbours", -1), raises("neighbours")),
         Case("perturbation=-1", setarg("perturbation", -1.0), raises("perturbation")),
         Case("replay_buffer_class", lambda kw, m: dict(kw, replay_buffer_class=object),
              raises("replay_buffer_class"))])
    add("gradyn.rl.PolicyEnhancedSAC", sac(grl.PolicyEnhancedSAC), lambda m: dict(env=reaching()),
        [no_gradients, not_an_env,
         Case("enhancement_weight=2", setarg("enhancement_weight", 2.0), raises("enhancement_weight", "[0, 1]")),
         Case("enhancement_weight-string", setarg("enhancement_weight", "1"), raises("enhancement_weight")),
         Case("next_critic-unknown", setarg("next_critic", "best"), raises("next_critic", "'critic' or 'target'")),
         Case("weight=0", setarg("enhancement_weight", 0.0), valid(lambda r: r.shape == (2, 8), "an agent"))])

    def shac(m, **kw):
        agent = grl.SHAC(seed=0, hidden=(8,), **kw)
        return agent.actor[0].weight.detach().numpy().copy()

    add("gradyn.rl.SHAC", shac, lambda m: dict(env=reaching(), horizon=4, num_envs=2),
        [no_gradients, not_an_env,
         Case("horizon=0", setarg("horizon", 0), raises("horizon", "whole number")),
         Case("num_envs-float", setarg("num_envs", 2.0), raises("num_envs", "whole number")),
         Case("gamma=2", lambda kw, m: dict(kw, gamma=2.0), raises("gamma", "[0, 1]")),
         Case("lam-nan", lambda kw, m: dict(kw, lam=np.nan), raises("lam", "[0, 1]"))])
    return rows_


try:
    TABLE.extend(rl_rows())
except (pytest.skip.Exception, ImportError):
    pass


# gradyn.viewer (offscreen images and recordings; show serves a page, checked before it starts)
row("gradyn.viewer.render_rgb", call_class(viewer.render_rgb), lambda m: dict(model=m.pend, q=state(m)[0], width=16,
                                                                              height=16),
    [Case("q-wrong-shape", setarg("q", np.zeros(3)), raises("q", "expected shape")),
     Case("q-nan", setarg("q", [np.nan, 0.0]), raises("q", "NaN")),
     Case("width=0", setarg("width", 0), raises("width")),
     Case("camera-track-unknown", setarg("camera", {"track": "nope"}), raises("track", "nope"))])
def camera_image(m, **camera):
    """A Camera (or its dict) is checked where it is used: render_rgb and record."""
    return viewer.render_rgb(m.pend, state(m)[0], width=16, height=16, camera=viewer.Camera(**camera))


row("gradyn.viewer.Camera", camera_image, lambda m: dict(fov=60.0),
    [Case("fov=0", setarg("fov", 0.0), raises("fov")), Case("fov-nan", setarg("fov", float("nan")), raises("fov")),
     Case("distance-negative", setarg("distance", -1.0), raises("distance")),
     Case("target-wrong-shape", setarg("target", (0, 0)), raises("target")),
     Case("target-nan", setarg("target", (0, 0, np.nan)), raises("target"))])


def record_good(m):
    return dict(model=m.pend, qs=np.zeros((3, 2)), path=str(m.tmp / "x.html"), progress=False)


def record_call(m, **kw):
    out = viewer.record(**kw)
    return pathlib.Path(out).stat().st_size > 0


row("gradyn.viewer.record", record_call, record_good,
    [Case("qs-wrong-shape", setarg("qs", np.zeros((3, 5))), raises("qs", "expected shape")),
     Case("fps=0", setarg("fps", 0.0), raises("fps", "positive"))])
row("gradyn.viewer.show", call_class(viewer.show), lambda m: dict(model=m.pend, qs=np.zeros((2, 2)), open_browser=False),
    [Case("qs-wrong-shape", setarg("qs", np.zeros((3, 5))), raises("qs", "expected shape"))])
TABLE[-1].good_call = False


# gradyn.cuda: the argument checks made before any GPU is looked for
for _name in ("rollout", "rollout_vjp"):
    row(f"gradyn.cuda.{_name}", call_class(getattr(gcuda, _name)),
        lambda m, n=_name: dict(model=m.act, q0=[0.3], v0=[0.0], taus=np.zeros((2, 1)), dt=0.01,
                                **({"qs_bar": None, "vs_bar": None} if n == "rollout_vjp" else {})),
        dt_cases()[:4])
    TABLE[-1].good_call = False
TABLE[-2].cases.append(Case("keep-unknown", setarg("keep", "some"), raises("keep", "'all' or 'final'")))
row("gradyn.cuda.DeviceModel", call_class(gcuda.DeviceModel), lambda m: dict(model=m.act),
    [Case("dtype-float16", setarg("dtype", "float16"), raises("dtype", "'float64' or 'float32'"))])
TABLE[-1].good_call = False
row("gradyn.cuda.jax_rollout", call_class(gcuda.jax_rollout),
    lambda m: dict(model=m.act, q0=[0.3], v0=[0.0], taus=np.zeros((2, 1)), dt=0.01),
    [Case("dt=0", setarg("dt", 0.0), raises(types=(ValueError, gcuda.CudaError)))])  # no GPU: a CudaError first
TABLE[-1].good_call = False


# the command line: bad arguments are one line on stderr and exit status 2
def cli_main(m, argv):
    import contextlib
    import io

    import gradyn.cli as cli

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse's own errors
            code = exit_.code
    return code, err.getvalue().strip().splitlines()[-1:] if code else []


def cli_error(*words):
    return valid(lambda r: r[0] == 2 and all(w in r[1][0] for w in words), f"exit status 2 and a line naming {words}")


row("gradyn.cli.main", cli_main, lambda m: dict(argv=["info", str(_ROOT / "models" / "pendulums" / "pendulum2.urdf")]),
    [Case("no-such-file", setarg("argv", ["simulate", "nope.urdf"]), cli_error("nope.urdf", "no such file")),
     Case("dt-negative", setarg("argv", ["simulate", str(_ROOT / "models" / "cartpole.urdf"), "--dt", "-1"]),
          cli_error("--dt", "expected")),
     Case("steps-text", setarg("argv", ["simulate", str(_ROOT / "models" / "cartpole.urdf"), "--steps", "ten"]),
          cli_error("--steps", "expected"))])


# --------------------------------------------------------------------------------------------
# the audit


def _flatten(x):
    """Every number a result holds, as a list of float64 arrays (models by their parameters)."""
    if isinstance(x, gradyn.Model):
        return [np.asarray(x.params), np.asarray([x.nq, x.nv])]
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in _flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [a for item in x for a in _flatten(item)]
    if x is None or isinstance(x, str):
        return []
    if hasattr(x, "detach"):
        x = x.detach().numpy()
    if hasattr(x, "__dict__") and not isinstance(x, np.ndarray):  # an object: its numbers
        return [a for k, v in sorted(vars(x).items()) if isinstance(v, (np.ndarray, float, int)) for a in _flatten(v)]
    return [np.asarray(x, dtype=np.float64)]


def _same(a, b):
    fa, fb = _flatten(a), _flatten(b)
    return len(fa) == len(fb) and all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
                                      for x, y in zip(fa, fb))


def _cases():
    return [pytest.param(r, c, id=f"{r.name.removeprefix('gradyn.')}[{c.id}]") for r in TABLE for c in r.cases]


@pytest.mark.parametrize("row_,case", _cases())
def test_bad_input(models, row_, case):
    good = row_.good(models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = row_.call(models, **good) if row_.good_call else None
        bad = case.mutate(good, models)
        expect = case.expect
        if isinstance(expect, Raises):
            with pytest.raises(expect.types) as err:
                row_.call(models, **bad)
            message = str(err.value.args[0]) if isinstance(err.value, KeyError) else str(err.value)
            for word in expect.words:
                assert word.lower() in message.lower(), f"{word!r} not in the message: {message}"
            for word in INTERNAL:
                assert word not in message, f"internal name {word!r} in the message: {message}"
        else:
            result = row_.call(models, **bad)
            if expect == SAME:
                assert _same(result, before), "a converted argument gave another result"
            else:
                assert expect.check(result), f"expected {expect.what}, got {result!r}"
        if not row_.good_call:
            return
        after = row_.call(models, **row_.good(models))
    assert _same(after, before), "the bad call changed the result of a later good call"


# --------------------------------------------------------------------------------------------
# every public function has a row

# Public names that take no argument a user can get wrong, or are not functions.
NO_ROW = {
    "gradyn.Model": "a type (its methods have rows)",
    "gradyn.ModelBuilder": "a type (its methods have rows)",
    "gradyn.ModelError": "an exception",
    "gradyn.Status": "an enum",
    "gradyn.control": "a module", "gradyn.cuda": "a module", "gradyn.viewer": "a module",
    "gradyn.losses": "a module; its functions' bad input (shapes, unknown or step sensors, entries) is tested in "
                     "tests/python/test_losses.py on a model with sensors",
    "gradyn.control.Cost": "a Protocol", "gradyn.control.Dynamics": "a Protocol",
    "gradyn.control.ILQRResult": "a result dataclass", "gradyn.control.IterationReport": "a result dataclass",
    "gradyn.cuda.CudaError": "an exception",
    "gradyn.cuda.devices": "no arguments", "gradyn.cuda.library_path": "no arguments",
    "gradyn.envs.DIVERGED": "a constant", "gradyn.envs.ENV_IDS": "a constant",
    "gradyn.envs.register_envs": "no arguments",
    "gradyn.torch.StepFunction": "the autograd.Function behind gradyn.torch.step (its row)",
    "gradyn.torch.SensorsFunction": "the autograd.Function behind gradyn.torch.sensors (its row)",
    "gradyn.torch.RenderFunction": "the autograd.Function behind gradyn.torch.render (its row)",
    "gradyn.torch.RolloutFunction": "the autograd.Function behind gradyn.torch.rollout (its row)",
    "gradyn.torch.CudaRolloutFunction": "the autograd.Function behind gradyn.torch.rollout(device='cuda')",
    "gradyn.torch.PolicyRolloutFunction": "the autograd.Function behind gradyn.torch.policy_rollout (its row)",
    "gradyn.viewer.LiveView": "made by gradyn.viewer.show (its row)",
    "gradyn.rl.GradientReplaySamples": "a NamedTuple of tensors, made by GradientReplayBuffer.sample",
}


def public_names():
    import gradyn.jax  # noqa: F401
    import gradyn.torch  # noqa: F401
    import gradyn.cli as cli

    names = set()
    modules = [gradyn, control, gcuda, hybrid, genvs, viewer, gradyn.torch, gradyn.jax, cli]
    try:
        import gradyn.rl  # needs Stable-Baselines3

        modules.append(gradyn.rl)
    except ImportError:
        pass
    for module in modules:
        names |= {f"{module.__name__}.{n}" for n in module.__all__}
    names = {n.replace("gradyn.hybrid.", "gradyn.") if n.split(".")[-1] in gradyn.__all__ else n for n in names}
    names = {n.replace("gradyn.policy.", "gradyn.") for n in names}
    for cls, prefix in ((gradyn.Model, "gradyn.Model"), (gradyn.ModelBuilder, "gradyn.ModelBuilder"),
                        (gradyn.Policy, "gradyn.Policy")):
        names |= {f"{prefix}.{n}" for n, v in inspect.getmembers(cls) if not n.startswith("_") and callable(v)}
    return names


def test_every_public_function_has_a_row():
    covered = {r.name for r in TABLE} | {k for k, v in NO_ROW.items() if v}
    missing = sorted(public_names() - covered)
    assert not missing, ("public functions without a row in tests/python/test_bad_input.py's TABLE (add their "
                         f"bad-input cases there, or a reason in NO_ROW): {missing}")


# --------------------------------------------------------------------------------------------
# bad model files: each raises gradyn.ModelError naming the file, the line and the element, or
# loads (with the warnings it must give)


def _link(name, mass="1", inertia=("0.1", "0.1", "0.1"), extra=""):
    ixx, iyy, izz = inertia
    return (f'<link name="{name}"><inertial><mass value="{mass}"/><inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" '
            f'ixy="0" ixz="0" iyz="0"/></inertial>{extra}</link>')


def _joint(name, parent, child, kind="revolute", origin=""):
    return (f'<joint name="{name}" type="{kind}">{origin}<parent link="{parent}"/><child link="{child}"/>'
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')


def _urdf(*parts):
    return '<?xml version="1.0"?>\n<robot name="r">\n' + "\n".join(parts) + "\n</robot>\n"


def _mjcf(body, head=""):
    return f'<mujoco model="m">\n{head}<worldbody>\n{body}\n</worldbody>\n</mujoco>\n'


_MJ_BODY = '<body name="{n}"><joint name="{n}_j" type="hinge"/><inertial pos="0 0 0" mass="{m}" diaginertia="{i}"/></body>'
_TETRAHEDRON = ("solid t\n" + "".join(
    f"facet normal 0 0 0\nouter loop\n{''.join(f'vertex {v}' + chr(10) for v in tri)}endloop\nendfacet\n"
    for tri in (("0 0 0", "1 0 0", "0 1 0"), ("0 0 0", "0 0 1", "1 0 0"), ("0 0 0", "0 1 0", "0 0 1"),
                ("1 0 0", "0 0 1", "0 1 0"))) + "endsolid t\n")
_DEEP = 10_000


def _deep_mjcf():
    body = ""
    for i in reversed(range(_DEEP)):
        body = f'<body name="b{i}"><joint type="hinge"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{body}</body>'
    return _mjcf(body)


@dataclasses.dataclass
class BadFile:
    id: str
    files: dict  # relative path -> text; the first is the model
    line: int | None = None  # the line the error names (None: loads)
    element: str = ""  # the element the error names, e.g. "<joint name='j3'>"
    words: tuple = ()  # more words the message (or, for a file that loads, a warning) holds
    check: Callable | None = None  # for a file that loads: check(model)


FILES = [
    # kinematic cycles, duplicates, missing parents
    BadFile("urdf-cycle", {"r.urdf": _urdf(_link("a"), _link("b"), _link("c"), _joint("j1", "a", "b"),
                                           _joint("j2", "b", "c"), _joint("j3", "c", "b"))},
            8, "<joint name='j3'>", ("loop",)),
    BadFile("urdf-closed-cycle", {"r.urdf": _urdf(_link("a"), _link("b"), _joint("j1", "a", "b"),
                                                  _joint("j2", "b", "a"))}, 5, "<joint name='j1'>", ("cycle",)),
    BadFile("urdf-duplicate-link", {"r.urdf": _urdf(_link("a"), _link("a"))}, 4, "<link name='a'>", ("duplicate",)),
    BadFile("urdf-duplicate-joint", {"r.urdf": _urdf(_link("a"), _link("b"), _link("c"), _joint("j", "a", "b"),
                                                     _joint("j", "b", "c"))}, 7, "<joint name='j'>", ("duplicate",)),
    BadFile("urdf-missing-parent", {"r.urdf": _urdf(_link("a"), _link("b"), _joint("j", "nope", "b"))},
            5, "<joint name='j'>", ("parent link 'nope'",)),
    BadFile("urdf-missing-child", {"r.urdf": _urdf(_link("a"), _joint("j", "a", "nope"))},
            4, "<joint name='j'>", ("child link 'nope'",)),
    BadFile("urdf-two-roots", {"r.urdf": _urdf(_link("a"), _link("b"))}, 4, "<link name='b'>", ("root",)),
    BadFile("mjcf-duplicate-body", {"m.xml": _mjcf(_MJ_BODY.format(n="a", m=1, i="1 1 1") + _MJ_BODY.format(
        n="a", m=1, i="1 1 1"))}, 3, "<body name='a'>", ("duplicate",)),
    # impossible inertias
    BadFile("urdf-negative-mass", {"r.urdf": _urdf(_link("a"), _link("b", mass="-1"), _joint("j", "a", "b"))},
            4, "<link name='b'>", ("mass",)),
    BadFile("urdf-negative-moment", {"r.urdf": _urdf(_link("a"), _link("b", inertia=("-0.1", "0.1", "0.1")),
                                                     _joint("j", "a", "b"))}, 4, "<link name='b'>",
            ("negative", "inertia='repair'", "inertia='accept'")),
    BadFile("urdf-triangle-inequality", {"r.urdf": _urdf(_link("a"), _link("b", inertia=("0.1", "0.1", "1")),
                                                         _joint("j", "a", "b"))}, 4, "<link name='b'>", ("triangle",)),
    BadFile("mjcf-negative-mass", {"m.xml": _mjcf(_MJ_BODY.format(n="a", m=-1, i="1 1 1"))}, 3, "<inertial>",
            ("mass",)),
    BadFile("mjcf-negative-moment", {"m.xml": _mjcf(_MJ_BODY.format(n="a", m=1, i="-1 1 1"))}, 3, "<inertial>",
            ("negative", "inertia='repair'")),
    BadFile("mjcf-triangle-inequality", {"m.xml": _mjcf(_MJ_BODY.format(n="a", m=1, i="1 1 5"))}, 3, "<inertial>",
            ("triangle",)),
    # huge and non-numbers
    BadFile("urdf-mass-1e400", {"r.urdf": _urdf(_link("a"), _link("b", mass="1e400"), _joint("j", "a", "b"))},
            4, "<link name='b'>", ("1e400",)),
    BadFile("urdf-origin-nan", {"r.urdf": _urdf(_link("a"), _link("b"), _joint(
        "j", "a", "b", origin='<origin xyz="nan 0 0"/>'))}, 5, "<joint name='j'>", ("nan",)),
    BadFile("mjcf-size-1e400", {"m.xml": _mjcf('<body name="a"><joint type="hinge"/><geom type="sphere" '
                                                'size="1e400"/></body>')}, 3, "<geom>", ("1e400",)),
    BadFile("urdf-huge-but-finite", {"r.urdf": _urdf(_link("a"), _link("b", mass="1e300", inertia=("1e300",) * 3),
                                                     _joint("j", "a", "b"))},
            check=lambda m: m.nv == 1 and np.isfinite(gradyn.step(m, [0.1], [0.0], None, 0.01)[0]).all()),
    # XML entity tricks: tinyxml2 expands no user entity (no billion laughs, no external file read)
    BadFile("urdf-billion-laughs", {"r.urdf": '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
                                              + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip(
                                                  "abcdefgh", "bcdefghi"))
                                              + ']>\n<robot name="&i;">' + _link("x") + "</robot>\n"},
            check=lambda m: len(m.name) < 100),
    BadFile("urdf-external-entity", {"r.urdf": '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM '
                                               '"file:///etc/passwd">]>\n<robot name="&x;">' + _link("x") + "</robot>"},
            check=lambda m: "root" not in m.name),
    BadFile("mjcf-billion-laughs", {"m.xml": '<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">'
                                             '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<mujoco model="&b;">'
                                             '<worldbody/></mujoco>'}, check=lambda m: len(m.name) < 100),
    # deep nesting: no stack overflow
    # (10^4 links welded in a chain below one hinge: 10^4 moving joints would load too, but the
    # workspace of a model holds dense nv x nv matrices, 8.7 GB at nv = 10^4)
    BadFile("urdf-chain-of-10^4", {"r.urdf": _urdf(*[_link(f"l{i}") for i in range(_DEEP + 1)], _joint("j", "l0", "l1"),
                                                   *[_joint(f"f{i}", f"l{i}", f"l{i + 1}", "fixed",
                                                            '<origin xyz="0 0 0.001"/>') for i in range(1, _DEEP)])},
            check=lambda m: m.nv == 1 and m.body_masses[0] == _DEEP and abs(gradyn.frame_pose(
                m, [0.3], f"l{_DEEP}")[2, 3] - 0.001 * (_DEEP - 1)) < 1e-9),
    BadFile("urdf-chain-of-300-hinges", {"r.urdf": _urdf(*[_link(f"l{i}") for i in range(301)],
                                                         *[_joint(f"j{i}", f"l{i}", f"l{i + 1}") for i in range(300)])},
            check=lambda m: m.nv == 300 and np.isfinite(gradyn.step(m, m.neutral() + 0.1, np.zeros(300), None,
                                                                    1e-3)[1]).all()),
    BadFile("mjcf-nested-10^4", {"m.xml": _deep_mjcf()}, 3, "", ("nest", "deep")),
    BadFile("mjcf-include-cycle", {"m.xml": '<mujoco model="m"><include file="m.xml"/><worldbody/></mujoco>'},
            1, "<include>", ("cycle",)),
    # mesh paths that leave the model's folder: read, with a warning naming file, line and element
    # (a URDF's meshes may sit in its folder's parent, as ROS packages keep meshes/ beside urdf/)
    BadFile("urdf-mesh-outside", {"robot/urdf/r.urdf": _urdf(_link("a"), _link("b", extra=(
        '<collision><geometry><mesh filename="../../outside/t.stl"/></geometry></collision>')), _joint("j", "a", "b")),
        "outside/t.stl": _TETRAHEDRON},
        4, "<link name='b'>", ("../../outside/t.stl", "outside the model's folder"), check=lambda m: len(m.geoms) == 1),
    BadFile("mjcf-mesh-outside", {"robot/m.xml": _mjcf(
        '<body name="a"><joint type="hinge"/><geom type="mesh" mesh="t"/></body>',
        head='<asset><mesh name="t" file="../outside/t.stl"/></asset>\n'), "outside/t.stl": _TETRAHEDRON},
        2, "<mesh", ("../outside/t.stl", "outside the model's mesh folder"), check=lambda m: len(m.geoms) == 1),
    # valid: massless and point-mass links welded by fixed joints, a model without joints
    BadFile("urdf-massless-tool-welded", {"r.urdf": _urdf(_link("a"), _link("b"), '<link name="tool"/>',
                                                          _joint("j", "a", "b"), _joint("f", "b", "tool", "fixed"))},
            check=lambda m: m.nv == 1 and "tool" in m.frame_names),
    BadFile("urdf-point-mass-welded", {"r.urdf": _urdf(_link("a"), _link("b"), _link("tip", "0.5", ("0",) * 3),
                                                       _joint("j", "a", "b"), _joint("f", "b", "tip", "fixed"))},
            check=lambda m: m.nv == 1 and m.body_masses[0] == 1.5),
    BadFile("urdf-no-joints", {"r.urdf": _urdf(_link("a"))}, check=lambda m: (m.nq, m.nv) == (0, 0)),
    BadFile("mjcf-empty-world", {"m.xml": _mjcf("")}, check=lambda m: (m.nq, m.nv) == (0, 0)),
    # not model files at all
    BadFile("urdf-empty-file", {"r.urdf": ""}, 0, "", ("empty",)),
    BadFile("urdf-not-xml", {"r.urdf": "hello"}, 1, "", ("XML",)),
]
_XFAIL = {}  # id -> reason, for a known defect (strict xfail)


@pytest.mark.parametrize("bad", [pytest.param(f, id=f.id, marks=pytest.mark.xfail(reason=_XFAIL[f.id], strict=True))
                                 if f.id in _XFAIL else pytest.param(f, id=f.id) for f in FILES])
def test_bad_model_file(tmp_path, bad):
    for name, text in bad.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    path = tmp_path / next(iter(bad.files))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if bad.check is None:
            with pytest.raises(gradyn.ModelError) as err:
                gradyn.load(str(path))
            message = str(err.value)
            assert isinstance(err.value, ValueError)
        else:
            model = gradyn.load(str(path))
            assert bad.check(model), f"{bad.id} loaded, but not as expected: {model!r}"
            message = " | ".join(str(w.message) for w in caught)
    if bad.check is not None and bad.line is None:
        return
    assert path.name in message, f"the file is not named: {message}"
    if bad.line:
        assert f"{path.name}:{bad.line}:" in message, f"line {bad.line} is not named: {message}"
    assert bad.element in message, f"the element {bad.element} is not named: {message}"
    for word in bad.words:
        assert word.lower() in message.lower(), f"{word!r} not in: {message}"
    for word in INTERNAL:
        assert word not in message, f"internal name {word!r} in: {message}"
