"""Penalty contact on inclines: static friction holds as MuJoCo's does (issue 23, item 5).

A 10 cm, 1 kg body (box, sphere, or capsule lying across the slope) starts at rest touching a plane
inclined by theta (15, 30, 40 degrees); gradyn (penalty contact with Hunt-Crossley damping 3 s/m, the
rest default) and MuJoCo run the same MJCF file, time step included. Why damping 3 and not the
default 1: with 1 a box's rocking on its corners is too weakly damped (ratio 0.035) and the
friction-normal coupling makes it rock and walk down the slope; 3 is not the default because the
explicit damper then diverges light limbs at dt = 2 ms (contact/penalty.hpp, "Resting on a slope").
The last test checks both.

Stick or slide is read at the contact point, not from the body's motion: a sphere or capsule on an
incline rolls for any friction (no friction can stop rolling), so "sticking" means rolling without
slipping. The slip speed is the tangential velocity of the body's material point at the contact
point (halfway through the overlap, where collide() and MuJoCo put it), averaged over the last
0.15 s of 0.5 s. Stick: below 1 cm/s. Slide: above 10 cm/s. Thresholds of friction:
  box:      slides iff mu < tan(theta)
  sphere:   slips  iff mu < k/(1+k) tan(theta), k = I/(m r^2) = 2/5 (rolling needs only that ratio)
  capsule:  the same with its own k about its axis (cylinder plus two hemispheres)
Each shape is run at mu = 2 tan(theta) (sticks / rolls without slipping), at half its threshold
(slips), and the round ones also at 0.8 tan(theta): below tan(theta) yet above their threshold,
they roll without slipping in both engines (a box there would slide).

Penalty friction is regularised: a held body creeps at eps tan / sqrt(mu^2 - tan^2), eps the
velocity scale (5.8 mm/s at mu = 2 tan(theta)); dt = 0.5 ms resolves the friction's viscous slope
(at 1 ms it chatters at 1-2 cm/s). The issue's own scene (the cube dropped 5 cm on 30 degrees,
mu = 1) is the last test.
"""

import math

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import gradyn  # noqa: E402

HALF = 0.05  # half-size of the box, radius of the sphere and capsule [m]
CAPSULE_HALF_LENGTH = 0.1
DT = 5e-4
T = 0.5
WINDOW = 0.15
STICK = 0.01  # m/s
SLIDE = 0.1  # m/s


def capsule_k():
    """I/(m r^2) of a solid capsule about its axis (uniform density)."""
    r, length = HALF, 2 * CAPSULE_HALF_LENGTH
    vc, vs = math.pi * r * r * length, 4 / 3 * math.pi * r**3
    return (vc * r * r / 2 + vs * 2 / 5 * r * r) / ((vc + vs) * r * r)


ROLL_K = {"box": None, "sphere": 2 / 5, "capsule": capsule_k()}


def slip_threshold(shape, theta):
    t = math.tan(math.radians(theta))
    k = ROLL_K[shape]
    return t if k is None else t * k / (1 + k)


def scene(shape, theta, mu, drop=0.0, dt=DT):
    """MJCF: a plane inclined by theta about y, the body resting on it (aligned with it), drop m above."""
    n = np.array([math.sin(math.radians(theta)), 0, math.cos(math.radians(theta))])
    fr = f'friction="{mu!r} 0.005 0.0001"'
    geom = {
        "box": f'<geom type="box" size="{HALF} {HALF} {HALF}" mass="1" {fr}/>',
        "sphere": f'<geom type="sphere" size="{HALF}" mass="1" {fr}/>',
        "capsule": f'<geom type="capsule" fromto="0 {-CAPSULE_HALF_LENGTH} 0 0 {CAPSULE_HALF_LENGTH} 0" '
                   f'size="{HALF}" mass="1" {fr}/>',
    }[shape]
    p = [float(x) for x in n * (HALF + drop)]
    return f"""<mujoco><option timestep="{dt!r}" integrator="Euler"/>
<worldbody><geom name="slope" type="plane" size="5 5 0.1" euler="0 {theta} 0" {fr}/>
<body name="obj" pos="{p[0]!r} {p[1]!r} {p[2]!r}" euler="0 {theta} 0"><freejoint/>{geom}</body>
</worldbody></mujoco>"""


def quat_xyzw_to_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def contact_slip(theta, positions, lin_world, ang_world):
    """Tangential speed of the body's material point at the contact point, per sample."""
    n = np.array([math.sin(math.radians(theta)), 0, math.cos(math.radians(theta))])
    height = positions @ n  # of the centre above the plane (through the origin)
    below = -((height + HALF) / 2)[:, None] * n[None, :]  # centre -> midpoint of the overlap
    u = lin_world + np.cross(ang_world, below)
    return np.linalg.norm(u - np.outer(u @ n, n), axis=1)


def along_slope(theta, positions):
    return positions @ np.array([math.cos(math.radians(theta)), 0, -math.sin(math.radians(theta))])


DAMPING = 3.0


def run_gradyn(path, theta, dt=DT, duration=T, damping=DAMPING):
    model = gradyn.load(str(path), contact="penalty")
    if damping is not None:
        model = model.with_contact(damping=damping)
    steps = round(duration / dt)
    qs, vs, status = gradyn.rollout(model, model.q0, np.zeros(model.nv), np.zeros((steps, model.nv)), dt,
                                    return_status=True)
    assert not np.any(status & int(gradyn.Status.NON_FINITE))
    R = np.array([quat_xyzw_to_matrix(q[3:7]) for q in qs])
    lin = np.einsum("tij,tj->ti", R, vs[:, :3])  # free joint: body-frame linear, then angular
    ang = np.einsum("tij,tj->ti", R, vs[:, 3:6])
    return qs[:, :3], lin, ang


def run_mujoco(path, steps):
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    P, V, W = [], [], []
    for k in range(steps + 1):
        if k:
            mujoco.mj_step(m, d)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, d.qpos[3:7])
        P.append(d.qpos[:3].copy())
        V.append(d.qvel[:3].copy())  # world-frame linear velocity
        W.append(R.reshape(3, 3) @ d.qvel[3:6])  # body-frame angular velocity
    return np.array(P), np.array(V), np.array(W)


def late_mean(x, dt=DT):
    return float(np.mean(x[-round(WINDOW / dt):]))


CASES = []
for _shape in ("box", "sphere", "capsule"):
    for _theta in (15, 30, 40):
        _t = math.tan(math.radians(_theta))
        CASES.append((_shape, _theta, 2 * _t, "stick"))
        CASES.append((_shape, _theta, 0.5 * slip_threshold(_shape, _theta), "slide"))
        if _shape != "box":
            CASES.append((_shape, _theta, 0.8 * _t, "stick"))  # below tan(theta): rolls without slipping


@pytest.mark.parametrize("shape,theta,mu,expected", CASES,
                         ids=[f"{s}-{th}deg-mu{mu:.3f}-{e}" for s, th, mu, e in CASES])
def test_penalty_sticks_or_slides_as_mujoco(tmp_path, shape, theta, mu, expected):
    path = tmp_path / f"{shape}_{theta}.xml"
    path.write_text(scene(shape, theta, mu))
    P, V, W = run_gradyn(path, theta)
    slip = late_mean(contact_slip(theta, P, V, W))
    Pm, Vm, Wm = run_mujoco(path, round(T / DT))
    slip_mj = late_mean(contact_slip(theta, Pm, Vm, Wm))
    where = f"{shape} on {theta} deg, mu {mu:.3f}: gradyn slip {slip:.4f} m/s, MuJoCo {slip_mj:.4f} m/s"
    if expected == "stick":
        assert slip_mj < STICK, where  # the oracle agrees with the expectation
        assert slip < STICK, where
        if shape == "box":  # held, not tumbling: it barely moved along the slope
            assert abs(along_slope(theta, P)[-1] - along_slope(theta, P)[0]) < 0.01, where
            assert np.linalg.norm(W[-1]) < 0.2, where  # a tumbling box turns at ~10 rad/s
    else:
        assert slip_mj > SLIDE, where
        assert slip > SLIDE, where
        # sliding: gradyn's slip speed follows MuJoCo's (Coulomb friction in both; penalty contact
        # sinks a little deeper, so the numbers differ by a few percent)
        assert abs(slip - slip_mj) < 0.15 * slip_mj, where


def test_issue_cube_dropped_on_thirty_degrees_holds(tmp_path):
    """The issue's scene: a 10 cm, 1 kg cube dropped 5 cm onto 30 degrees with mu = 1 tumbles down
    the slope (0.5 m in a second, 10 rad/s) with the default damping 1; MuJoCo holds it. With damping
    3 it lands, then creeps at the smoothed-Coulomb speed (7 mm/s) without rocking; at dt = 1 ms too
    it holds (its creep then chatters near 1 cm/s)."""
    theta, mu = 30, 1.0
    path = tmp_path / "cube.xml"
    for dt, creep_bar in ((DT, STICK), (1e-3, 0.02)):
        path.write_text(scene("box", theta, mu, drop=0.05, dt=dt))
        P, V, W = run_gradyn(path, theta, dt=dt, duration=1.0)
        Pm, Vm, Wm = run_mujoco(path, round(1.0 / dt))
        s, sm = along_slope(theta, P), along_slope(theta, Pm)
        creep = late_mean(contact_slip(theta, P, V, W), dt)
        where = (f"dt {dt}: gradyn moved {s[-1] - s[0]:.4f} m (creep {creep:.4f} m/s, spin {np.linalg.norm(W[-1]):.3g}), "
                 f"MuJoCo {sm[-1] - sm[0]:.4f} m")
        assert creep < creep_bar, where
        assert np.max(np.linalg.norm(W[round(0.5 / dt):], axis=1)) < 0.3, where  # not rocking (tumbling: 10 rad/s)
        assert s[-1] - s[0] < sm[-1] - sm[0] + 0.03, where  # MuJoCo: ~4 cm (the fall, then its own creep)
    # the default damping (1): the cube rocks, hops and walks away
    P, V, W = run_gradyn(path, theta, dt=1e-3, duration=1.0, damping=None)
    s = along_slope(theta, P)
    assert gradyn.load(str(path), contact="penalty").contact_settings["damping"] == 1.0
    assert s[-1] - s[0] > 0.2 and np.max(np.linalg.norm(W, axis=1)) > 5.0, (s[-1] - s[0])
