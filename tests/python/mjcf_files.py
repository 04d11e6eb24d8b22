"""Helpers of the constraint tests: MJCF text in a temporary file, MuJoCo's rollout of it, and the
checks of a gradcheck result."""

import warnings

import numpy as np

import gradyn


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def load_quietly(path, **kw):
    """The model and its loader warnings' messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gradyn.load(path, **kw)
    return model, [str(w.message) for w in caught]


def mujoco_rollout(text, q0, ctrls):
    """MuJoCo's qpos after each of the controls' steps, from qpos q0 at rest."""
    import mujoco

    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    d.qpos[:] = q0
    qs = []
    for u in ctrls:
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        qs.append(d.qpos.copy())
    return np.array(qs)


def assert_gradcheck(result, fd_tolerance, what, ad_tolerance=1e-7):
    """Every block of a gradyn.gradcheck result within the tolerances (adjoint against forward-mode AD
    and against central differences, relative to the block's scale)."""
    for name, b in result.items():
        assert b["ad_error"] <= ad_tolerance, (what, name, b)
        assert b["fd_error"] <= fd_tolerance, (what, name, b)
