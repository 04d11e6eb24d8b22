"""gradyn.losses: trajectory losses over the model's sensors and their adjoints, against central
differences, against a loss written by hand, and their bad input."""

import numpy as np
import pytest

import gradyn
from test_policy import SENSOR_ARM_XML, sensor_arm


@pytest.fixture
def arm(tmp_path):
    model, q0, v0 = sensor_arm(tmp_path)
    policy = gradyn.Policy(model, ["shoulder.q", "elbow.q", "clock.sin(1)"], hidden=[6], seed=3,
                           zero_last_layer=False)
    q0s = np.stack([q0, q0 + np.r_[0, 0, 0.1, 0, 0, 0, 0, 0.2, -0.1]])
    q0s[1, 3:7] /= np.linalg.norm(q0s[1, 3:7])
    qs, vs, _, _ = policy.rollout(q0s, np.stack([v0, -v0]), 30, 0.01)
    return model, qs, vs


def central_difference(f, x, direction, h=1e-6):
    return (f(x + h * direction) - f(x - h * direction)) / (2 * h)


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("last_only", [False, True])
def test_sensor_distance_adjoints_match_central_differences(arm, squared, last_only):
    model, qs, vs = arm
    target = np.array([[0.3, 0.1, 0.8], [0.1, -0.2, 1.0]])
    value, qs_bar, vs_bar = gradyn.losses.sensor_distance(model, qs, vs, "tip_pos", target, squared=squared,
                                                          last_only=last_only)
    rng = np.random.default_rng(1)
    dq, dv = rng.normal(size=qs.shape), rng.normal(size=vs.shape)
    dq[..., 3:7] = 0  # the quaternion's ambient directions leave the sphere
    f_q = lambda x: gradyn.losses.sensor_distance(model, x, vs, "tip_pos", target, squared=squared,  # noqa: E731
                                                  last_only=last_only)[0]
    f_v = lambda x: gradyn.losses.sensor_distance(model, qs, x, "tip_vel", np.zeros(3))[0]  # noqa: E731
    assert np.sum(qs_bar * dq) == pytest.approx(central_difference(f_q, qs, dq), rel=1e-6)
    _, _, vel_bar = gradyn.losses.sensor_distance(model, qs, vs, "tip_vel", np.zeros(3))
    assert np.sum(vel_bar * dv) == pytest.approx(central_difference(f_v, vs, dv), rel=1e-6)
    # the value by hand: the tip's world position from gradyn.sensors, averaged over states and worlds
    tip = np.array([[gradyn.sensors(model, q, v, None, 0.01)[model.sensor_slices["tip_pos"]] for q, v in zip(qw, vw)]
                    for qw, vw in zip(qs, vs)])
    err = tip - target[:, None]
    per_state = (err**2).sum(-1) if squared else np.linalg.norm(err, axis=-1)
    expected = per_state[:, -1].mean() if last_only else per_state.mean()
    assert value == pytest.approx(expected, rel=1e-12)


def test_sensor_mean_is_a_forward_speed_and_its_adjoint(arm):
    model, qs, vs = arm
    value, qs_bar, vs_bar = gradyn.losses.sensor_mean(model, qs, vs, "tip_vel", entries=[0])
    speeds = np.array([[gradyn.sensors(model, q, v, None, 0.01)[model.sensor_slices["tip_vel"]][0] for q, v in zip(qw, vw)]
                       for qw, vw in zip(qs, vs)])
    assert value == pytest.approx(speeds.mean(), rel=1e-12)
    dv = np.random.default_rng(2).normal(size=vs.shape)
    f = lambda x: gradyn.losses.sensor_mean(model, qs, x, "tip_vel", entries=[0])[0]  # noqa: E731
    assert np.sum(vs_bar * dv) == pytest.approx(central_difference(f, vs, dv), rel=1e-6)
    one = gradyn.losses.sensor_mean(model, qs[0], vs[0], "tip_vel", entries=[0])
    assert one[1].shape == qs[0].shape and one[2].shape == vs[0].shape


def test_losses_feed_the_policy_adjoint(arm):
    """The documented loop: rollout, loss, rollout_vjp; the result equals central differences of the
    loss through the whole closed loop."""
    model, qs, vs = arm
    policy = gradyn.Policy(model, ["shoulder.q", "elbow.q", "clock.sin(1)"], hidden=[6], seed=3,
                           zero_last_layer=False)
    q0, v0 = qs[:, 0], vs[:, 0]
    target = np.array([0.3, 0.1, 0.8])

    def loss(weights):
        qs, vs, _, _ = policy.rollout(q0, v0, 30, 0.01, weights=weights)
        return gradyn.losses.sensor_distance(model, qs, vs, "tip_pos", target)

    value, qs_bar, vs_bar = loss(policy.weights)
    grads = policy.rollout_vjp(qs, vs, qs_bar, vs_bar, 0.01)
    d = np.random.default_rng(5).normal(size=policy.param_count)
    fd = central_difference(lambda w: loss(w)[0], policy.weights, d)
    assert grads["weights"] @ d == pytest.approx(fd, rel=1e-5)


def test_bad_input_says_what_was_expected(arm):
    model, qs, vs = arm
    with pytest.raises(ValueError, match=r"no sensor 'nope'; its sensors: \['acc', "):
        gradyn.losses.sensor_distance(model, qs, vs, "nope", np.zeros(3))
    with pytest.raises(ValueError, match="is a accelerometer|is an? accelerometer"):
        gradyn.losses.sensor_mean(model, qs, vs, "acc")
    with pytest.raises(ValueError, match=r"target: expected shape \(3,\) or \(2, 3\).*got \(4,\)"):
        gradyn.losses.sensor_distance(model, qs, vs, "tip_pos", np.zeros(4))
    with pytest.raises(ValueError, match=r"entries: expected indices into the 3 entries of sensor 'tip_pos'"):
        gradyn.losses.sensor_mean(model, qs, vs, "tip_pos", entries=[3])
    with pytest.raises(ValueError, match=r"qs, vs: expected shapes \(B, T\+1, 9\)"):
        gradyn.losses.sensor_mean(model, qs[..., :5], vs, "tip_pos")
    assert SENSOR_ARM_XML
