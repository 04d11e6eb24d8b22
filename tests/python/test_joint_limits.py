"""Joint-limit settings from Python: Model.with_contact(limit_stiffness=, limit_damping=,
limit_margin=) round-trip through contact_settings, are validated (finite, >= 0), and change the
motion: a rod resting on its limit under the penalty spring sits load / stiffness past it, a damper
shortens the impact's overshoot, and the velocity-level models (pgs, ipm) hold it within the slop."""

import math

import numpy as np
import pytest

import gradyn

# A 1 kg, 1 m rod on a hinge about y (horizontal at q = 0; gravity turns it towards +q), q <= 0.3.
PENDULUM = """
<robot name="limited_pendulum">
  <link name="base"/>
  <link name="rod">
    <inertial>
      <origin xyz="0.5 0 0"/>
      <mass value="1"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.0833333333333" iyz="0" izz="0.0833333333333"/>
    </inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="base"/>
    <child link="rod"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.0" upper="0.3" effort="100" velocity="10"/>
  </joint>
</robot>
"""
UPPER = 0.3


@pytest.fixture
def pendulum_path(tmp_path):
    path = tmp_path / "pendulum.urdf"
    path.write_text(PENDULUM)
    return path


def swing(model, seconds, dt=1e-3):
    """Released horizontal at rest: (largest violation q - upper, final q, final v)."""
    steps = int(round(seconds / dt))
    qs, vs = gradyn.rollout(model, np.zeros(1), np.zeros(1), np.zeros((steps, 1)), dt, "euler")
    return (qs[:, 0] - UPPER).max(), qs[-1, 0], vs[-1, 0]


def test_limit_settings_round_trip(pendulum_path):
    model = gradyn.load(pendulum_path, contact="penalty")
    s = model.contact_settings
    assert (s["limit_stiffness"], s["limit_damping"], s["limit_margin"]) == (1e4, 20.0, 1e-3)
    tuned = model.with_contact(limit_stiffness=2e3, limit_damping=5.0, limit_margin=0.01)
    s = tuned.contact_settings
    assert (s["limit_stiffness"], s["limit_damping"], s["limit_margin"]) == (2e3, 5.0, 0.01)
    # other settings are kept, and so are these when others change
    assert tuned.with_contact(model="pgs").contact_settings["limit_margin"] == 0.01


@pytest.mark.parametrize("field", ["limit_stiffness", "limit_damping", "limit_margin"])
@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan")])
def test_bad_limit_settings_raise(pendulum_path, field, bad):
    model = gradyn.load(pendulum_path)
    with pytest.raises(gradyn.ModelError, match=f"{field}: expected a finite number >= 0"):
        model.with_contact(**{field: bad})


def test_stiffer_limit_spring_gives_a_smaller_violation(pendulum_path):
    model = gradyn.load(pendulum_path, contact="penalty")
    rest = {}
    for k in (1e3, 1e4):
        violation_max, q, v = swing(model.with_contact(limit_stiffness=k, limit_damping=20.0), 4.0)
        assert abs(v) < 1e-4
        rest[k] = q - UPPER
        # at rest the spring carries gravity's torque where the rod rests: violation = load / stiffness
        assert rest[k] == pytest.approx(9.81 * 0.5 * math.cos(q) / k, rel=1e-4)
        assert violation_max > rest[k]  # the impact overshoots the static violation
    assert rest[1e4] < 0.2 * rest[1e3]


def test_limit_damping_shortens_the_overshoot(pendulum_path):
    model = gradyn.load(pendulum_path, contact="penalty").with_contact(limit_stiffness=1e4)
    undamped, _, _ = swing(model.with_contact(limit_damping=0.0), 1.0)
    damped, _, _ = swing(model.with_contact(limit_damping=40.0), 1.0)
    # undamped: the spring alone stops the rod arriving at w after w sqrt(I / k) (plus the load's share)
    w = math.sqrt(2 * 9.81 * 0.5 * math.sin(UPPER) * 3.0)
    assert undamped == pytest.approx(w * math.sqrt(1 / 3 / 1e4), rel=0.1)
    assert damped < 0.8 * undamped


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_velocity_level_models_hold_the_limit_within_the_slop(pendulum_path, contact):
    model = gradyn.load(pendulum_path, contact=contact)
    slop = model.contact_settings["slop"]
    violation_max, q, v = swing(model, 2.0)
    assert violation_max <= slop + 1e-9
    assert q == pytest.approx(UPPER, abs=slop + 1e-9)
    assert abs(v) < 1e-6
    # without a contact model the limit is not enforced
    free_max, _, _ = swing(model.with_contact("none"), 0.5)
    assert free_max > 0.5
