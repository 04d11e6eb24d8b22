"""Models and random inputs shared by the ML bridge tests (test_torch_bridge, test_jax_bridge)."""

from pathlib import Path

import numpy as np

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"
DT = 0.01


def build_pendulum():
    """The shipped double pendulum, with damping and stiffness so that the passive-force
    parameters matter for the gradients too."""
    model = gradyn.load(MODELS / "pendulums" / "pendulum2.urdf")
    return model.with_damping([0.3, 0.2]).with_stiffness([0.5, 0.1])


def build_floating():
    """A free-floating torso with a hinged arm and a ball-jointed head: two quaternions in q."""
    b = gradyn.ModelBuilder()
    b.add_link("torso", mass=3.0, com=(0.02, -0.01, 0.03), inertia=(0.1, 0.2, 0.3, 0.01, 0.0, 0.02))
    b.add_link("arm", mass=1.0, com=(0.0, 0.0, -0.3), inertia=(0.02, 0.03, 0.01, 0.0, 0.0, 0.0))
    b.add_link("head", mass=0.5, com=(0.05, 0.0, 0.1), inertia=(0.01, 0.012, 0.005, 0.0, 0.0, 0.0))
    b.add_joint("shoulder", "revolute", parent="torso", child="arm", xyz=(0.2, 0.0, 0.0), rpy=(0.1, 0.0, 0.2),
                axis=(0, 1, 0), damping=0.1, stiffness=0.3, rest=0.2)
    b.add_joint("neck", "spherical", parent="torso", child="head", xyz=(0.0, 0.0, 0.3), damping=0.05)
    return b.build(floating_base=True)


def random_state(model, rng, batch=None, quaternion_scale=1.0):
    """A random configuration on the manifold and a random velocity; with batch, B of each.
    quaternion_scale != 1 scales every quaternion off the unit sphere, where the q gradients are
    exact too (the dynamics read quaternions normalised)."""
    count = 1 if batch is None else batch
    q = np.stack([gradyn.integrate(model, model.neutral(), 0.5 * rng.normal(size=model.nv)) for _ in range(count)])
    for k in quaternion_starts(model):
        q[:, k:k + 4] *= quaternion_scale
    v = rng.normal(size=(count, model.nv))
    return (q[0], v[0]) if batch is None else (q, v)


def quaternion_starts(model):
    """Offsets in q of every quaternion (free and spherical joints)."""
    starts = []
    for joint in model.joint_names:
        kind = model.joint_type(joint)
        if kind in ("free", "spherical"):
            starts.append(model.joint_idx_q(joint) + (3 if kind == "free" else 0))
    return starts


def axis_starts(model):
    """Offsets in the parameter vector of every joint axis (x, y, z)."""
    return [k for k, name in enumerate(model.param_names) if name.endswith(".axis.x")]


def perturbed_params(model, rng, scale=0.05, axis_norm=1.7):
    """The model's parameters moved a little (relative), so that with_params really rebuilds it.
    Joint axes are scaled to norm `axis_norm`: with_params normalises them, and the bridges'
    gradient with respect to those raw entries must account for it."""
    p = np.asarray(model.params)
    p = p * (1 + scale * rng.uniform(-1, 1, size=p.shape))
    for k in axis_starts(model):
        p[k:k + 3] *= axis_norm / np.linalg.norm(p[k:k + 3])
    return p


def build_cart_pole():
    """A cart on a rail carrying a pole on a hinge, the cart driven by one motor (gear 2): the
    actuated system of the policy tests."""
    b = gradyn.ModelBuilder()
    b.add_link("world")
    b.add_link("cart", mass=1.0, inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0))
    b.add_link("pole", mass=0.2, com=(0, 0, 0.5), inertia=(0.02, 0.02, 1e-4, 0, 0, 0))
    b.add_joint("slider", "prismatic", parent="world", child="cart", axis=(1, 0, 0), damping=0.1)
    b.add_joint("hinge", "continuous", parent="cart", child="pole", axis=(0, 1, 0), damping=0.01)
    b.add_actuator("slider", gear=2.0)
    return b.build()
