"""Common losses of a trajectory, with their adjoints: what training through a rollout needs between
``Policy.rollout`` (or ``gradyn.rollout``) and ``Policy.rollout_vjp`` (or ``gradyn.rollout_vjp``). ::

    qs, vs, ctrls, status = policy.rollout(q0, v0, steps, dt, task=targets)        # (B, T+1, nq), ...
    loss, qs_bar, vs_bar = gradyn.losses.sensor_distance(model, qs, vs, "tip_pos", targets)
    grads = policy.rollout_vjp(qs, vs, qs_bar, vs_bar, dt, task=targets)

The quantities are the model's sensors (MJCF ``<sensor>``, ``ModelBuilder.add_sensor``) that read
the state: a site's or body's position (framepos), orientation (framequat), velocities
(framelinvel, frameangvel), a gyro, a joint (jointpos, jointvel); see ``gradyn.sensors``. Each loss
is averaged over every state of the trajectory (paper 002's per-step loss averaged over the
horizon) and over the worlds, so its adjoints are ready for ``reduce="sum"``; ``last_only=True``
takes the final state alone (a terminal loss). The adjoints come from ``gradyn.sensors_vjp``, one
batched call over every state.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sensor_distance", "sensor_mean"]


def _readings(model, qs, vs, sensor: str, entries):
    """The sensor's readings at every state: (worlds, states, k), the flat (N, nq) / (N, nv) states,
    the entries' indices into the readings, and whether qs had no world axis."""
    from . import sensors

    qs, vs = np.asarray(qs, dtype=np.float64), np.asarray(vs, dtype=np.float64)
    single = qs.ndim == 2
    if single:
        qs, vs = qs[None], vs[None]
    if qs.ndim != 3 or qs.shape[2] != model.nq or vs.shape[:2] != qs.shape[:2] or vs.shape[2] != model.nv:
        raise ValueError(f"qs, vs: expected shapes (B, T+1, {model.nq}) and (B, T+1, {model.nv}) (or without B), "
                         f"got {qs.shape} and {vs.shape}")
    slices = model.sensor_slices
    if sensor not in slices:
        raise ValueError(f"sensor: the model has no sensor {sensor!r}; its sensors: {sorted(slices) or 'none'} "
                         "(add one in the MJCF <sensor> or with ModelBuilder.add_sensor)")
    kind = model.sensor_types[model.sensor_names.index(sensor)]
    if kind in ("accelerometer", "touch"):
        raise ValueError(f"sensor {sensor!r} is a {kind}: it reads a step (its controls), not the state; these "
                         "losses take sensors of the state (framepos, framequat, framelinvel, frameangvel, gyro, "
                         "jointpos, jointvel)")
    s = slices[sensor]
    index = np.arange(s.start, s.stop)
    if entries is not None:
        picked = np.atleast_1d(np.asarray(entries))
        if picked.dtype.kind not in "iu" or (picked < 0).any() or (picked >= len(index)).any():
            raise ValueError(f"entries: expected indices into the {len(index)} entries of sensor {sensor!r}, got {entries!r}")
        index = index[picked]
    B, T1 = qs.shape[:2]
    flat_q, flat_v = qs.reshape(B * T1, model.nq), vs.reshape(B * T1, model.nv)
    readings = np.asarray(sensors(model, flat_q, flat_v, dt=_step_dt(model))).reshape(B, T1, -1)[..., index]
    return readings, flat_q, flat_v, index, single


def _step_dt(model):
    """gradyn.sensors steps the model when it has an accelerometer or a touch sensor (whose readings
    these losses do not use: the state's sensors are read from (q, v) alone): any dt serves then."""
    return 1e-3 if {"accelerometer", "touch"} & set(model.sensor_types) else None


def _adjoints(model, flat_q, flat_v, index, readings_bar, shape, single):
    from . import sensors_vjp

    B, T1 = shape
    full = np.zeros((B * T1, model.nsensordata))
    full[:, index] = readings_bar.reshape(B * T1, -1)
    q_bar, v_bar = sensors_vjp(model, flat_q, flat_v, full, dt=_step_dt(model))[:2]
    q_bar, v_bar = np.asarray(q_bar).reshape(B, T1, model.nq), np.asarray(v_bar).reshape(B, T1, model.nv)
    return (q_bar[0], v_bar[0]) if single else (q_bar, v_bar)


def _weights_over_states(T1: int, last_only: bool) -> np.ndarray:
    w = np.zeros(T1) if last_only else np.full(T1, 1.0 / T1)
    if last_only:
        w[-1] = 1.0
    return w


def sensor_distance(model, qs, vs, sensor: str, target, entries=None, squared: bool = False,
                    last_only: bool = False):
    """The distance between a sensor's reading and a target, averaged over the states and the
    worlds: e.g. an end effector's framepos to a point (paper 002's reaching loss).

    qs, vs: (B, T+1, nq), (B, T+1, nv) or one world's (T+1, ...). target: (k,) shared or (B, k), k
    the number of entries read (``entries``: indices into the sensor's, default all). squared: the
    squared distance instead (smooth at the target). Returns (loss, qs_bar, vs_bar), the adjoints
    shaped like qs and vs."""
    readings, flat_q, flat_v, index, single = _readings(model, qs, vs, sensor, entries)
    B, T1, k = readings.shape
    target = np.asarray(target, dtype=np.float64)
    if target.shape not in ((k,), (B, k)) or (single and target.ndim != 1):
        raise ValueError(f"target: expected shape ({k},)" + ("" if single else f" or ({B}, {k})") +
                         f" for sensor {sensor!r}'s {k} entries read, got {target.shape}")
    error = readings - (target[None, None] if target.ndim == 1 else target[:, None])
    per_state = _weights_over_states(T1, last_only) / B
    if squared:
        value = float(np.einsum("t,btk,btk->", per_state, error, error))
        readings_bar = 2 * per_state[None, :, None] * error
    else:
        distance = np.linalg.norm(error, axis=-1)
        value = float(np.einsum("t,bt->", per_state, distance))
        # d|e|/de = e/|e|; at the target itself (|e| = 0) the subgradient 0
        readings_bar = per_state[None, :, None] * error / np.where(distance > 0, distance, np.inf)[..., None]
    return (value,) + _adjoints(model, flat_q, flat_v, index, readings_bar, (B, T1), single)


def sensor_mean(model, qs, vs, sensor: str, entries=None, last_only: bool = False):
    """The mean of a sensor's reading over the states, the entries read and the worlds: e.g. a body's
    forward speed (a framelinvel's x entry; minimise its negative to go fast) or a height.
    Returns (value, qs_bar, vs_bar) as sensor_distance."""
    readings, flat_q, flat_v, index, single = _readings(model, qs, vs, sensor, entries)
    B, T1, k = readings.shape
    per_state = _weights_over_states(T1, last_only) / (B * k)
    value = float(np.einsum("t,btk->", per_state, readings))
    readings_bar = np.broadcast_to(per_state[None, :, None], readings.shape)
    return (value,) + _adjoints(model, flat_q, flat_v, index, readings_bar, (B, T1), single)
