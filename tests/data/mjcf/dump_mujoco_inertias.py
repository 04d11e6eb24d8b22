"""Prints, as C++ table rows, what MuJoCo's compiler makes of an MJCF file: nq, nv, qpos0 and
every body's mass, centre of mass and rotational inertia about the centre of mass, both in the
body frame. tests/io/test_mjcf.cpp holds the output for the models it checks.

    .venv/bin/python tests/data/mjcf/dump_mujoco_inertias.py ../shared/models/mujoco/humanoid.xml

Unnamed bodies are printed as "body<id>", the name gradyn's loader gives them.
With --poses it also prints the per-DoF damping and armature, per-joint stiffness, springref
and limits, and every body's world position and rotation (row-major) at qpos0 and at the test
configuration test_qpos(m) defined below.
"""
import sys

import mujoco
import numpy as np


def dump(path):
    m = mujoco.MjModel.from_xml_path(path)
    print(f"// {path}: mujoco {mujoco.__version__}")
    print(f"// nq = {m.nq}, nv = {m.nv}, total mass = {float(m.body_mass.sum())!r}")
    print("// qpos0 = {" + ", ".join(repr(float(x)) for x in m.qpos0) + "}")
    for b in range(1, m.nbody):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, m.body_iquat[b])
        rot = rot.reshape(3, 3)
        inertia = rot @ np.diag(m.body_inertia[b]) @ rot.T
        values = [m.body_mass[b], *m.body_ipos[b], inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1],
                  inertia[0, 2], inertia[1, 2]]
        print(f'{{"{name}", {{' + ", ".join(f"{float(v):.17g}" for v in values) + "}},")


def test_qpos(m):
    """A fixed configuration away from qpos0: scalar joints moved by 0.3 + 0.1 * joint id,
    free joints shifted by (0.1, -0.2, 0.3) and turned, ball joints turned."""
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] += [0.1, -0.2, 0.3]
            q = np.array([0.8, 0.2, -0.3, 0.4])
            qpos[a + 3:a + 7] = q / np.linalg.norm(q)
        elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            q = np.array([0.9, -0.1, 0.3, 0.2])
            qpos[a:a + 4] = q / np.linalg.norm(q)
        else:
            qpos[a] += 0.3 + 0.1 * j
    return qpos


def fmt(values):
    return "{" + ", ".join(f"{float(v):.17g}" for v in values) + "}"


def dump_poses(path):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    print(f"// dof_damping = {fmt(m.dof_damping)}")
    print(f"// dof_armature = {fmt(m.dof_armature)}")
    print(f"// jnt_stiffness = {fmt(m.jnt_stiffness)}")
    print(f"// qpos_spring = {fmt(m.qpos_spring)}")
    print(f"// jnt_range (limited only) = {fmt(m.jnt_range[m.jnt_limited.astype(bool)].ravel())}")
    for label, qpos in (("qpos0", m.qpos0), ("test_qpos", test_qpos(m))):
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        print(f"// poses at {label} = {fmt(qpos)}")
        for b in range(1, m.nbody):
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}"
            print(f'{{"{name}", {fmt([*d.xpos[b], *d.xmat[b]])}}},')


if __name__ == "__main__":
    poses = "--poses" in sys.argv
    for p in sys.argv[1:]:
        if p == "--poses":
            continue
        dump(p)
        if poses:
            dump_poses(p)
