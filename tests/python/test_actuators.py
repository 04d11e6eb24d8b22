"""gradyn.actuator_torques / actuator_torques_vjp: paper 002's servo motors from Python."""

from pathlib import Path

import numpy as np
import pytest

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"
PENDULUM1 = MODELS / "pendulums" / "pendulum1.urdf"
PENDULUM2 = MODELS / "pendulums" / "pendulum2.urdf"


def test_position_servo_matches_the_formula_unsaturated_and_saturated():
    model = gradyn.load(PENDULUM2)
    q, v, u = np.array([0.1, -0.2]), np.array([0.05, 0.1]), np.array([0.3, -0.4])
    kp, kv = np.array([2.0, 3.0]), 10.0
    tau = gradyn.actuator_torques(model, q, v, u, kind="position", kp=kp, kv=kv, effort_limit=np.inf,
                                  velocity_limit=np.inf)
    np.testing.assert_allclose(tau, kv * (kp * (u - q) - v), rtol=0, atol=1e-12)
    # Commanded velocity clipped to +-0.3, then the torque to +-2.
    tau = gradyn.actuator_torques(model, q, v, u, kind="position", kp=kp, kv=kv, effort_limit=2.0,
                                  velocity_limit=0.3)
    np.testing.assert_allclose(tau, [2.0, -2.0], rtol=0, atol=1e-12)
    tau = gradyn.actuator_torques(model, q, v, u, kind="position", kp=kp, kv=kv, effort_limit=[5.0, 5.0],
                                  velocity_limit=[0.3, 0.1])
    np.testing.assert_allclose(tau, [10 * (0.3 - 0.05), 10 * (-0.1 - 0.1)], rtol=0, atol=1e-12)


def test_per_dof_kinds():
    model = gradyn.load(PENDULUM2)
    q, v = np.zeros(2), np.array([0.5, 0.2])
    # A torque motor clipped to 3; a velocity servo whose target 2 is clipped to 1: 4 (1 - 0.2).
    tau = gradyn.actuator_torques(model, q, v, [7.0, 2.0], kind=["torque", "velocity"], kv=4.0,
                                  effort_limit=[3.0, 5.0], velocity_limit=1.0)
    np.testing.assert_allclose(tau, [3.0, 3.2], rtol=0, atol=1e-12)


def test_vjp_matches_central_differences_away_from_the_kinks():
    model = gradyn.load(PENDULUM2, floating_base=True)
    assert (model.nq, model.nv) == (9, 8)
    kinds = ["torque", "torque", "velocity", "velocity", "velocity", "torque", "position", "position"]
    kp = 4.0
    kv = np.array([0, 0, 3.0, 3.0, 3.0, 0, 2.0, 2.0])
    effort = np.array([1.0, 1.0, np.inf, 5.0, 0.2, np.inf, 10.0, 0.3])
    velocity = np.array([np.inf, np.inf, np.inf, 0.5, np.inf, np.inf, 3.0, 3.0])
    settings = dict(kind=kinds, kp=kp, kv=kv, effort_limit=effort, velocity_limit=velocity)
    q = np.array([0.1, -0.2, 0.3, 0.1, 0.2, -0.1, 0.97, 0.2, -0.1])
    v = np.array([0.3, -0.2, 0.1, 0.2, 0.3, -0.4, 0.1, 0.2])
    u = np.array([0.4, 1.7, 0.5, 0.9, -0.6, 2.0, 0.5, 0.3])
    tau_bar = np.random.default_rng(0).uniform(-1, 1, model.nv)
    q_bar, v_bar, u_bar = gradyn.actuator_torques_vjp(model, q, v, u, tau_bar, **settings)

    def loss(q, v, u):
        return tau_bar @ gradyn.actuator_torques(model, q, v, u, **settings)

    h = 1e-6
    for x, x_bar, name in ((q, q_bar, "q"), (v, v_bar, "v"), (u, u_bar, "u")):
        fd = np.zeros_like(x)
        for k in range(x.size):
            xp, xm = x.copy(), x.copy()
            xp[k] += h
            xm[k] -= h
            args_p = {"q": q, "v": v, "u": u, name: xp}
            args_m = {"q": q, "v": v, "u": u, name: xm}
            fd[k] = (loss(**args_p) - loss(**args_m)) / (2 * h)
        np.testing.assert_allclose(x_bar, fd, rtol=0, atol=1e-8, err_msg=name)
    # Clipped DoFs pass nothing back; an unclipped position servo does.
    assert u_bar[1] == 0 and u_bar[3] == 0 and u_bar[4] == 0 and u_bar[7] == 0
    assert u_bar[6] != 0 and q_bar[7] == -u_bar[6]


def test_position_servo_drives_a_pendulum_within_its_limits():
    model = gradyn.load(PENDULUM1)
    q, v = np.zeros(model.nq), np.zeros(model.nv)
    settings = dict(kind="position", kp=20.0, kv=40.0, effort_limit=20.0, velocity_limit=1.0)
    target = np.full(model.nv, 0.8)
    max_tau = max_speed = 0.0
    for _ in range(3000):
        tau = gradyn.actuator_torques(model, q, v, target, **settings)
        max_tau = max(max_tau, np.abs(tau).max())
        q, v = gradyn.step(model, q, v, tau, 1e-3)
        max_speed = max(max_speed, np.abs(v).max())
    assert max_tau <= 20.0
    assert 0.8 <= max_speed <= 1.05  # the velocity limit bound the speed
    assert abs(q[0] - 0.8) < 0.05
    assert abs(v[0]) < 1e-3


def test_bad_settings_raise_value_error_naming_the_dof():
    model = gradyn.load(PENDULUM2)
    z = np.zeros(2)
    with pytest.raises(ValueError, match=r"DoF 1 \(joint '.*'\): kp must be >= 0"):
        gradyn.actuator_torques(model, z, z, z, kind="position", kp=[1.0, -1.0], kv=1.0)
    with pytest.raises(ValueError, match="effort_limit must be >= 0"):
        gradyn.actuator_torques(model, z, z, z, effort_limit=-1.0)
    with pytest.raises(ValueError, match="kind: expected 'torque', 'position' or 'velocity'"):
        gradyn.actuator_torques(model, z, z, z, kind="servo")
    with pytest.raises(ValueError, match=r"kp: expected shape \(2,\), got \(3,\)"):
        gradyn.actuator_torques(model, z, z, z, kind="position", kp=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="position servo needs a 1-DoF joint"):
        floating = gradyn.load(PENDULUM2, floating_base=True)
        gradyn.actuator_torques(floating, np.r_[np.zeros(6), 1.0, 0, 0], np.zeros(8), np.zeros(8), kind="position")
