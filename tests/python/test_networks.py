"""Networks inside the dynamics from Python (python/src/bind_networks.cpp, gradyn/hybrid.py):
Model.with_network and its names, the weights as parameters (gradcheck, batched per-world params, a
NaN weight flagging its world only), the sparse-group lasso in NumPy, torch and JAX, pruning."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import gradyn

ROOT = Path(__file__).resolve().parents[2]
ARM = ROOT / "tests" / "data" / "mjcf" / "actuated_arm.xml"
INPUTS = ["shoulder.q", "elbow.q", "shoulder.v", "elbow.v", "slide.v", "elbow_servo.ctrl"]


def assert_gradcheck_passes(r):
    """Every block of gradyn.gradcheck's result: adjoint = forward mode to 1e-9, = FD to 1e-6."""
    for name, block in r.items():
        assert block["ad_error"] < 1e-9 and block["fd_error"] < 1e-6, (name, block)


def hybrid(zero_last_layer=False, **kwargs):
    model = gradyn.load(str(ARM))
    spec = dict(inputs=INPUTS, outputs=["shoulder", "elbow"], hidden=[8, 6], seed=5, zero_last_layer=zero_last_layer)
    spec.update(kwargs)
    return model, model.with_network("residual", **spec)


def test_names_weights_and_layout():
    model, h = hybrid()
    assert model.network_inputs() == ["shoulder.q", "elbow.q", "slide.q", "shoulder.v", "elbow.v", "slide.v",
                                      "shoulder_motor.ctrl", "elbow_servo.ctrl", "shoulder_damping.ctrl",
                                      "slide_velocity.ctrl", "elbow_damper.ctrl", "slide_general.ctrl"]
    assert model.network_outputs() == ["shoulder", "elbow", "slide"]
    (info,) = h.networks
    assert info["widths"] == [6, 8, 6, 2] and info["activation"] == "tanh" and info["inputs"] == INPUTS
    n = info["param_count"]
    assert n == 7 * 8 + 9 * 6 + 7 * 2
    assert info["param_offset"] == len(model.param_names) and len(h.param_names) == len(model.param_names) + n
    sl = slice(info["param_offset"], info["param_offset"] + n)
    assert np.array_equal(h.params[sl], info["weights"])
    assert h.param_names[sl.start] == "residual.layer0.weight[0,0]"
    assert h.param_names[sl.start + 1] == "residual.layer0.weight[0,1]"
    assert h.param_names[-1] == "residual.layer2.bias[1]"
    assert "networks=1" in repr(h)
    assert model.networks == []  # models are immutable
    # the same seed, the same weights; another seed, others
    assert np.array_equal(hybrid()[1].networks[0]["weights"], info["weights"])
    assert not np.array_equal(hybrid(seed=6)[1].networks[0]["weights"], info["weights"])


def test_a_fresh_network_leaves_the_dynamics_as_they_were():
    model, h = hybrid(zero_last_layer=True)
    rng = np.random.default_rng(0)
    q0, v0 = 0.3 * rng.normal(size=model.nq), rng.normal(size=model.nv)
    ctrls = rng.normal(size=(40, model.nu))
    plain = gradyn.rollout(model, q0, v0, None, 0.002, ctrls=ctrls)
    mixed = gradyn.rollout(h, q0, v0, None, 0.002, ctrls=ctrls)
    assert np.array_equal(plain[0], mixed[0]) and np.array_equal(plain[1], mixed[1])


def test_bad_requests_say_what_is_valid():
    model = gradyn.load(str(ARM))
    with pytest.raises(ValueError, match=r"network 'n': unknown input 'wrist.v' at site 'joint_force'; valid inputs: "
                                         r"'shoulder.q', 'elbow.q'"):
        model.with_network("n", inputs=["wrist.v"])
    with pytest.raises(ValueError, match=r"inputs: expected a list of names, got the single name 'elbow.v'"):
        model.with_network("n", inputs="elbow.v")
    with pytest.raises(ValueError, match=r"unknown output 'elbow.v'.*valid outputs: 'shoulder', 'elbow', 'slide'"):
        model.with_network("n", inputs=["elbow.v"], outputs=["elbow.v"])
    with pytest.raises(ValueError, match=r"site: expected one of 'joint_force', 'body_wrench', 'contact_force', "
                                         r"'contact_friction', got 'contact'"):
        model.with_network("n", inputs=["elbow.v"], site="contact")
    with pytest.raises(ValueError, match=r"site 'contact_force' needs the body whose contacts it acts on; body '' is "
                                         r"not one of the model's bodies: 'upper', 'fore', 'tip'"):
        model.with_network("n", inputs=["contact.depth"], site="contact_force")
    with pytest.raises(ValueError, match=r"activation: expected one of 'identity', 'tanh'"):
        model.with_network("n", inputs=["elbow.v"], activation="gelu")
    with pytest.raises(ValueError, match=r"hidden layer 0 needs at least one unit, got 0"):
        model.with_network("n", inputs=["elbow.v"], hidden=[0])
    with pytest.raises(ValueError, match=r"no network named 'x'; networks: none"):
        gradyn.group_lasso(model, "x", l1=1.0)


def test_gradcheck_through_the_network_weights():
    model, h = hybrid()
    rng = np.random.default_rng(1)
    T = 8
    r = gradyn.gradcheck(h, 0.3 * rng.normal(size=h.nq), rng.normal(size=h.nv), np.zeros((T, h.nv)), 0.002,
                         ctrls=rng.normal(size=(T, h.nu)), running_loss=True)
    assert_gradcheck_passes(r)
    assert r["params"]["scale"] > 0


def test_per_world_weights_and_a_nan_weight_flags_its_world_only():
    model, h = hybrid()
    B, T, dt = 6, 25, 0.002
    rng = np.random.default_rng(2)
    q0, v0 = 0.3 * rng.normal(size=(B, h.nq)), rng.normal(size=(B, h.nv))
    ctrls = rng.normal(size=(B, T, h.nu))
    info = h.networks[0]
    sl = slice(info["param_offset"], info["param_offset"] + info["param_count"])
    p = np.tile(h.params, (B, 1))
    p[:, sl] *= np.linspace(0.5, 1.5, B)[:, None]  # a population of networks
    qs, vs, status = gradyn.rollout(h, q0, v0, None, dt, ctrls=ctrls, params=p, return_status=True, threads=2)
    for b in (0, 4):
        alone = gradyn.rollout(h.with_params(p[b]), q0[b], v0[b], None, dt, ctrls=ctrls[b])
        assert np.array_equal(alone[0], qs[b]) and np.array_equal(alone[1], vs[b])
    grads = gradyn.rollout_vjp(h, q0, v0, None, dt, None, np.ones((B, T + 1, h.nv)), ctrls=ctrls, params=p)
    assert np.abs(grads[3][:, sl]).max() > 0
    poisoned = p.copy()
    poisoned[2, sl.start + 3] = np.nan
    qs2, vs2, status2 = gradyn.rollout(h, q0, v0, None, dt, ctrls=ctrls, params=poisoned, return_status=True, threads=2)
    assert (status2[2] & int(gradyn.Status.NON_FINITE)).any()
    others = np.arange(B) != 2
    assert np.array_equal(qs2[others], qs[others]) and np.array_equal(status2[others], status[others])


def reference_penalty(h, p, l1, group, l2):
    info = h.networks[0]
    w = info["widths"]
    at = info["param_offset"]
    W1 = p[at:at + w[0] * w[1]].reshape(w[1], w[0])
    total = l1 * np.abs(W1).sum() + group * math.sqrt(w[1]) * np.linalg.norm(W1, axis=0).sum()
    at += (w[0] + 1) * w[1]
    for i, o in zip(w[1:-1], w[2:]):
        total += l2 * (p[at:at + i * o] ** 2).sum()
        at += (i + 1) * o
    return total


def test_group_lasso_in_numpy_and_batches():
    model, h = hybrid()
    p = h.params
    got = gradyn.group_lasso(h, "residual", p, l1=0.3, group=0.7, l2=0.2)
    assert got == pytest.approx(reference_penalty(h, p, 0.3, 0.7, 0.2), rel=1e-14)
    batch = np.stack([p, 2 * p])
    both = gradyn.group_lasso(h, "residual", batch, l1=0.3, group=0.7, l2=0.2)
    assert both.shape == (2,) and both[0] == pytest.approx(got, rel=1e-14)
    assert gradyn.group_lasso(h, "residual", l1=0.3) == pytest.approx(reference_penalty(h, p, 0.3, 0, 0), rel=1e-14)
    with pytest.raises(ValueError, match=r"params: expected shape \(\d+,\) or \(B, \d+\)"):
        gradyn.group_lasso(h, "residual", p[:-1], l1=1.0)
    with pytest.raises(ValueError, match="l1: expected a finite non-negative weight"):
        gradyn.group_lasso(h, "residual", p, l1=-1.0)
    # one group weight per input: the adaptive group lasso
    info = h.networks[0]
    w = np.arange(1.0, 7.0)
    W1 = p[info["param_offset"]:info["param_offset"] + 6 * 8].reshape(8, 6)
    expected = math.sqrt(8) * (w * np.linalg.norm(W1, axis=0)).sum()
    assert gradyn.group_lasso(h, "residual", p, group=w) == pytest.approx(expected, rel=1e-14)
    with pytest.raises(ValueError, match=r"group: expected one weight or one per input of network 'residual', "
                                         r"shape \(6,\), got shape \(5,\)"):
        gradyn.group_lasso(h, "residual", p, group=w[:5])
    with pytest.raises(ValueError, match="group: expected finite non-negative weights"):
        gradyn.group_lasso(h, "residual", p, group=-w)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_group_lasso_is_a_torch_loss_term_with_a_zero_subgradient_at_zero_groups():
    import torch

    model, h = hybrid()
    info = h.networks[0]
    p = h.params
    p[info["param_offset"]:info["param_offset"] + 6 * 8].reshape(8, 6)[:, 2] = 0.0  # input 2's group is zero
    x = torch.tensor(p, requires_grad=True)
    loss = gradyn.group_lasso(h, "residual", x, l1=0.0, group=0.7, l2=0.2)
    loss.backward()
    assert torch.isfinite(x.grad).all()
    assert float(loss.detach()) == pytest.approx(reference_penalty(h, p, 0.0, 0.7, 0.2), rel=1e-13)
    g = x.grad.numpy()
    # central differences on a few entries of a non-zero group and of the upper layers
    for k in (info["param_offset"] + 1, info["param_offset"] + 6 * 8 + 8 + 3):
        e = np.zeros_like(p)
        e[k] = 1e-6
        fd = (reference_penalty(h, p + e, 0, 0.7, 0.2) - reference_penalty(h, p - e, 0, 0.7, 0.2)) / 2e-6
        assert g[k] == pytest.approx(fd, rel=1e-6)
    assert g[info["param_offset"] + 2] == 0.0


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_group_lasso_in_jax_has_finite_gradients_at_zero_groups():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    model, h = hybrid()
    p = h.params
    info = h.networks[0]
    p[info["param_offset"]:info["param_offset"] + 6 * 8].reshape(8, 6)[:, 0] = 0.0
    value, grad = jax.value_and_grad(lambda x: gradyn.group_lasso(h, "residual", x, group=0.7, l2=0.2))(jnp.asarray(p))
    assert float(value) == pytest.approx(reference_penalty(h, p, 0, 0.7, 0.2), rel=1e-13)
    assert np.isfinite(np.asarray(grad)).all() and float(grad[info["param_offset"]]) == 0.0


def test_prune_inputs_removes_the_zero_groups_and_keeps_the_dynamics():
    model, h = hybrid()
    info = h.networks[0]
    p = h.params
    W1 = p[info["param_offset"]:info["param_offset"] + 6 * 8].reshape(8, 6)
    W1[:, 0] = 0.0
    W1[:, 4] *= 1e-5  # slide.v: below 1e-3 of the largest group
    norms = gradyn.input_group_norms(h, "residual", p)
    assert norms["shoulder.q"] == 0.0 and set(norms) == set(INPUTS)
    pruned, removed = gradyn.prune_inputs(h, "residual", p, threshold=1e-3)
    assert removed == ["shoulder.q", "slide.v"]
    assert pruned.networks[0]["inputs"] == ["elbow.q", "shoulder.v", "elbow.v", "elbow_servo.ctrl"]
    rng = np.random.default_rng(3)
    q0, v0, ctrls = 0.3 * rng.normal(size=h.nq), rng.normal(size=h.nv), rng.normal(size=(30, h.nu))
    W1[:, 4] = 0.0  # what pruning removed exactly
    full = gradyn.rollout(h.with_params(p), q0, v0, None, 0.002, ctrls=ctrls)
    small = gradyn.rollout(pruned, q0, v0, None, 0.002, ctrls=ctrls)
    assert np.abs(full[0] - small[0]).max() < 1e-12


def test_the_readme_snippet_runs(monkeypatch):
    pytest.importorskip("torch")
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Hybrid models"):]
    snippet = section[section.index("```python") + len("```python"):section.index("```", section.index("```python") + 9)]
    monkeypatch.chdir(ROOT)
    scope = {}
    exec(compile(snippet, "README.md (hybrid models)", "exec"), scope)
    assert scope["weights"].grad is not None and scope["weights"].grad.abs().max() > 0


def test_body_wrench_networks_on_the_swimmer_train_through_batches():
    """The swimmer (paper 001's fluid experiment) with a drag network on each link, in its own
    frame: gradcheck of the weights, and a batch with per-world weights equals its worlds alone."""
    swimmer_file = ROOT / "models" / "mujoco" / "swimmer.xml"
    with pytest.warns(UserWarning, match="fluid forces"):
        model = gradyn.load(str(swimmer_file))
    h = model
    for body in ("torso", "mid", "back"):
        h = h.with_network(f"drag_{body}", site="body_wrench", body=body, hidden=[6], zero_last_layer=False,
                           inputs=["vel.ang.z", "vel.lin.x", "vel.lin.y", "rot[0,0]"], seed=len(h.networks))
    assert [n["inputs"] for n in h.networks][0] == ["vel.ang.z", "vel.lin.x", "vel.lin.y", "rot[0,0]"]
    assert h.networks[1]["outputs"] == ["torque.x", "torque.y", "torque.z", "force.x", "force.y", "force.z"]
    rng = np.random.default_rng(4)
    T = 6
    r = gradyn.gradcheck(h, 0.2 * rng.normal(size=h.nq), rng.normal(size=h.nv), np.zeros((T, h.nv)), 0.01,
                         ctrls=rng.normal(size=(T, h.nu)), running_loss=True)
    assert_gradcheck_passes(r)
    # the step Jacobian includes the wrenches (the swimmer's joints are all scalar: q is its own tangent)
    q, v, u = 0.2 * rng.normal(size=h.nq), rng.normal(size=h.nv), rng.normal(size=h.nu)
    A, B, B_ctrl = gradyn.step_jacobian(h, q, v, None, 0.01, ctrl=u)

    def f(x):
        qn, vn = gradyn.step(h, x[:h.nq], x[h.nq:], None, 0.01, ctrl=u)
        return np.concatenate([qn, vn])

    x0, eps = np.concatenate([q, v]), 1e-6
    fd = np.stack([(f(x0 + eps * e) - f(x0 - eps * e)) / (2 * eps) for e in np.eye(len(x0))], axis=1)
    assert np.abs(A - fd).max() < 1e-6 * np.abs(fd).max()
    with pytest.raises(ValueError, match="body 'tail' is not one of the model's bodies"):
        model.with_network("x", site="body_wrench", body="tail", inputs=["vel.lin.x"])
    B = 4
    p = np.tile(h.params, (B, 1))
    p[:, h.networks[0]["param_offset"]:] *= np.linspace(0.5, 1.5, B)[:, None]
    q0, v0, ctrls = 0.2 * rng.normal(size=(B, h.nq)), rng.normal(size=(B, h.nv)), rng.normal(size=(B, 30, h.nu))
    qs, vs = gradyn.rollout(h, q0, v0, None, 0.01, ctrls=ctrls, params=p, threads=2)
    alone = gradyn.rollout(h.with_params(p[1]), q0[1], v0[1], None, 0.01, ctrls=ctrls[1])
    assert np.array_equal(alone[0], qs[1]) and np.array_equal(alone[1], vs[1])
    assert not np.allclose(qs[0], gradyn.rollout(model, q0[0], v0[0], None, 0.01, ctrls=ctrls[0])[0])


def test_a_welded_link_names_the_body_it_is_part_of():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its meshes are not shipped
        laikago = gradyn.load(str(ROOT / "models" / "laikago" / "laikago_toes_zup.urdf"), floating_base=True)
    with pytest.raises(ValueError, match=r"'toeFR' is welded to body 'FR_lower_leg' \(gradyn merges links joined by "
                                         r"fixed joints\); give that body"):
        laikago.with_network("drag", site="body_wrench", body="toeFR", inputs=["vel.lin.x"])
    h = laikago.with_network("drag", site="body_wrench", body="FR_lower_leg", inputs=["vel.lin.x", "pos.z"])
    assert h.networks[0]["outputs"][0] == "torque.x"


PUSHING = ROOT / "examples" / "hybrid" / "pushing.xml"


def pushing_state(model):
    """The block 1 mm into the ground and moving, the tip pressing on its back face."""
    q = np.array(model.q0, dtype=float)
    q[2] = 0.029
    q[3:7] = (0.0, 0.0, np.sin(0.05), np.cos(0.05))
    q[7:9] = (-0.0595, 0.004)
    v = np.zeros(model.nv)
    v[:6] = (0.1, -0.05, 0.2, 0.1, 0.02, -0.03)
    v[6] = 0.1
    return q, v


def test_contact_site_networks_train_through_rollouts():
    """contact_friction and contact_force networks on the pushing scene: their names, the body and
    other side they act on, gradients through both (adjoint = forward mode = FD), and the refusal
    under a contact model that does not evaluate them."""
    plain = gradyn.load(str(PUSHING), contact="penalty")
    assert plain.network_outputs("contact_force") == ["normal", "force.x", "force.y", "force.z"]
    assert "contact.pos.x" in plain.network_inputs("contact_friction")
    assert "tip_x.v" not in plain.network_inputs("contact_friction")
    h = plain.with_network("surface", site="contact_friction", body="block", other="world",
                           inputs=["contact.pos.x", "contact.vel.y", "vel.ang.z"], hidden=[3], seed=1,
                           zero_last_layer=False)
    h = h.with_network("push", site="contact_force", body="tip", other="block",
                       inputs=["contact.depth", "contact.normal.y", "pos.y"], outputs=["normal", "force.y"],
                       seed=2, zero_last_layer=False)
    assert [(n["site"], n["body"], n["other"]) for n in h.networks] == [
        ("contact_friction", "block", "world"), ("contact_force", "tip", "block")]
    p = np.array(h.params)
    for n in h.networks:  # small residuals: the coefficient stays away from its clamp at 0
        p[n["param_offset"]:n["param_offset"] + n["param_count"]] *= 0.2
    h = h.with_params(p)
    q, v = pushing_state(h)
    T = 4
    r = gradyn.gradcheck(h, q, v, np.zeros((T, h.nv)), 1e-3, ctrls=np.tile(q[7:9] + 0.002, (T, 1)),
                         running_loss=True)
    assert_gradcheck_passes(r)
    rng = np.random.default_rng(0)
    grads = gradyn.rollout_vjp(h, q, v, None, 1e-3, None, rng.normal(size=(T + 1, h.nv)),
                               ctrls=np.tile(q[7:9] + 0.002, (T, 1)))
    for n in h.networks:  # each network's weights have a gradient
        assert np.abs(grads[3][n["param_offset"]:n["param_offset"] + n["param_count"]]).max() > 1e-6, n["name"]
    # a NaN weight in one world's contact network flags that world only, the others stay bitwise
    B, steps = 3, 20
    p = np.tile(h.params, (B, 1))
    info = h.networks[1]
    p[1, info["param_offset"] + 2] = np.nan
    qs, vs, status = gradyn.rollout(h, np.tile(q, (B, 1)), np.tile(v, (B, 1)), None, 1e-3,
                                    ctrls=np.tile(q[7:9] + 0.002, (B, steps, 1)), params=p, return_status=True)
    alone = gradyn.rollout(h, q, v, None, 1e-3, ctrls=np.tile(q[7:9] + 0.002, (steps, 1)))
    assert (status[1] & int(gradyn.Status.NON_FINITE)).any() and not status[[0, 2]].any()
    assert np.array_equal(qs[0], alone[0]) and np.array_equal(qs[2], alone[0])
    with pytest.raises(ValueError, match="network 'surface' is at site 'contact_friction', which only the penalty"):
        gradyn.step(h.with_contact(model="pgs"), q, v, np.zeros(h.nv), 1e-3)
    with pytest.raises(ValueError, match="other: expected 'world' or the body on the contacts' other side; body 'table'"):
        plain.with_network("x", site="contact_force", body="block", other="table", inputs=["contact.depth"])
