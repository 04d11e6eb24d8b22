"""gradyn's smooth semi-implicit Euler step, re-written in PyTorch so that torch.autograd can
differentiate a rollout by recording a tape: the "autodiff tool" baseline of the gradient
benchmarks (bench/gradient_benchmarks.py), as in Qiao et al. 2021, Tables 1-3.

It is the SAME algorithm as gradyn's C++ code, operation for operation, not a simplification:

* forward dynamics = passive forces (viscous damping, joint springs) + the articulated-body
  algorithm in the WORLD frame (src/dynamics/aba.cpp): pass 1 computes poses, world-frame
  motion subspaces oS, velocities ov, velocity-product accelerations oc, world inertias oI and
  bias forces opA; pass 2 the articulated inertias oIa (child inertias added straight into the
  parent's, no change of frame), with a scalar fast path for 1-DoF joints and a 6x6 inverse for
  the free joint; pass 3 the accelerations, gravity entering as an upward acceleration of the
  world;
* the step (src/sim/step.cpp): v+ = v + dt a;  q+ = q (+) dt v+, where (+) is gradyn's
  joint_integrate (include/gradyn/model/joint.hpp): q + dv on revolute/continuous/prismatic
  joints; on the free joint the SE(3) exponential of the body twist (p+ = p + R(quat) V(w) lin,
  quat+ = normalize(quat * exp(w)), with the same small-angle Taylor branches).

The model description (topology, joint placements, axes, body inertias, per-DoF parameters,
gravity) is read from a gradyn.Model, so both sides simulate exactly the same robot. Supported
joints: free, revolute, continuous, prismatic (what the benchmark robot, laikago, uses);
others raise NotImplementedError rather than silently differing.

Every model parameter is a torch tensor (float64, CPU) that can require grad, so the tape
differentiates with respect to the same quantities gradyn's rollout_vjp returns (controls,
initial state, model parameters in the Model's own representation).
"""

from __future__ import annotations

import numpy as np
import torch

DTYPE = torch.float64
ONE_DOF = ("revolute", "continuous", "prismatic")
SUPPORTED = ONE_DOF + ("free",)


def _cross(a, b):
    return torch.linalg.cross(a, b, dim=0)


# skew(w) = (SKEW_BASIS @ w).reshape(3, 3): one matrix product instead of nine scalar ops.
_SKEW_BASIS = torch.zeros(9, 3, dtype=DTYPE)
for _row, _col, _k, _sign in ((0, 1, 2, -1), (0, 2, 1, 1), (1, 0, 2, 1), (1, 2, 0, -1), (2, 0, 1, -1), (2, 1, 0, 1)):
    _SKEW_BASIS[3 * _row + _col, _k] = _sign


def _skew(w):
    """[w]x, so that _skew(w) @ x = w x x."""
    return (_SKEW_BASIS @ w).reshape(3, 3)


def _cross_motion(v, m):
    """Spatial motion cross product v x m ([angular; linear])."""
    w, vl = v[:3], v[3:]
    return torch.cat((_cross(w, m[:3]), _cross(w, m[3:]) + _cross(vl, m[:3])))


def _cross_force(v, f):
    """Spatial force cross product v x* f."""
    w, vl = v[:3], v[3:]
    return torch.cat((_cross(w, f[:3]) + _cross(vl, f[3:]), _cross(w, f[3:])))


def _quat_to_matrix(x, y, z, w):
    """gradyn's quaternion_xyzw_to_matrix (of a unit quaternion)."""
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    return torch.stack(
        (
            torch.stack((1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy))),
            torch.stack((2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx))),
            torch.stack((2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy))),
        )
    )


def _quat_mul(a, b):
    """Hamilton product of quaternions stored (x, y, z, w)."""
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    return torch.cat((aw * bv + bw * av + _cross(av, bv), (aw * bw - torch.dot(av, bv)).reshape(1)))


def _quat_rotate(quat, x):
    """Eigen's Quaternion * vector: x + 2 w (u x x) + u x (2 u x x), u = vec(quat)."""
    u, w = quat[:3], quat[3]
    uv = 2 * _cross(u, x)
    return x + w * uv + _cross(u, uv)


def _quat_exp(w):
    """gradyn's quaternion_exp (x, y, z, w), with its Taylor branch near zero."""
    th2 = torch.dot(w, w)
    if float(th2.detach()) < 1e-12:  # branch chosen on the value, as in C++
        half_sinc = 0.5 - th2 / 48
        c = 1 - th2 / 8
    else:
        th = torch.sqrt(th2)
        half_sinc = torch.sin(th / 2) / th
        c = torch.cos(th / 2)
    return torch.cat((half_sinc * w, c.reshape(1)))


def _se3_V(w):
    """gradyn's se3_V: I + (1 - cos t)/t^2 [w] + (t - sin t)/t^3 [w]^2, Taylor branch near 0."""
    t2 = torch.dot(w, w)
    if float(t2.detach()) < 1e-10:
        a = 0.5 - t2 / 24
        b = 1.0 / 6 - t2 / 120
    else:
        t = torch.sqrt(t2)
        a = (1 - torch.cos(t)) / t2
        b = (t - torch.sin(t)) / (t2 * t)
    K = _skew(w)
    return torch.eye(3, dtype=DTYPE) + a * K + b * (K @ K)


class TorchModel:
    """A gradyn.Model's description as torch tensors, and gradyn's dynamics on them."""

    PARAMETER_FIELDS = (
        "placement_R", "placement_p", "axis", "mass", "com", "inertia_com",
        "damping", "armature", "stiffness", "q_rest", "gravity",
    )

    def __init__(self, model, requires_grad: bool = False):
        self.nq, self.nv = model.nq, model.nv
        self.parents = list(model.parents)
        self.joint_types = list(model.joint_types)
        for name, t in zip(model.joint_names, self.joint_types):
            if t not in SUPPORTED:
                raise NotImplementedError(f"tape baseline: joint '{name}' is '{t}'; supported: {SUPPORTED}")
        self.idx_q, self.idx_v = list(model.idx_q), list(model.idx_v)
        self.nbodies = len(self.parents)

        def tensor(x):
            return torch.tensor(np.asarray(x), dtype=DTYPE, requires_grad=requires_grad)

        T = np.asarray(model.joint_placements)
        self.placement_R = [tensor(T[i, :3, :3]) for i in range(self.nbodies)]
        self.placement_p = [tensor(T[i, :3, 3]) for i in range(self.nbodies)]
        axes = np.asarray(model.joint_axes)
        self.axis = [tensor(axes[i]) for i in range(self.nbodies)]
        masses, coms, inertias = model.body_masses, model.body_coms, model.body_inertias
        self.mass = [tensor(masses[i]) for i in range(self.nbodies)]
        self.com = [tensor(coms[i]) for i in range(self.nbodies)]
        self.inertia_com = [tensor(inertias[i]) for i in range(self.nbodies)]
        self.damping = tensor(model.damping)
        self.armature = tensor(model.armature)
        self.stiffness = tensor(model.stiffness)
        self.q_rest = tensor(model.q_rest)
        self.gravity = tensor(model.gravity)
        # Springs are evaluated only where gradyn evaluates them (a joint with a non-zero
        # stiffness), and only scalar joints are supported here.
        stiffness = np.asarray(model.stiffness)
        self.has_spring = []
        for i, t in enumerate(self.joint_types):
            iv = self.idx_v[i]
            nvi = 6 if t == "free" else 1
            spring = bool(np.any(stiffness[iv:iv + nvi] != 0))
            if spring and t == "free":
                raise NotImplementedError("tape baseline: free-joint springs are not supported")
            self.has_spring.append(spring)

    def parameters(self):
        """Every parameter tensor (leaves of the tape when requires_grad=True)."""
        out = []
        for field in self.PARAMETER_FIELDS:
            x = getattr(self, field)
            out.extend(x if isinstance(x, list) else [x])
        return out

    # --- dynamics ----------------------------------------------------------------------------

    def passive_forces(self, q, v):
        """gradyn's passive_forces: -damping v - stiffness (q (-) q_rest) on scalar joints."""
        tau = -self.damping * v
        for i, spring in enumerate(self.has_spring):
            if spring:
                iv, iq = self.idx_v[i], self.idx_q[i]
                d = q[iq] - self.q_rest[iq]
                tau = tau.index_add(0, torch.tensor([iv]), (-self.stiffness[iv] * d).reshape(1))
        return tau

    def _joint_pose(self, i, q):
        """Pose of the child frame in the parent body frame: placement * joint_transform(q)."""
        t, iq = self.joint_types[i], self.idx_q[i]
        Rp, pp = self.placement_R[i], self.placement_p[i]
        if t in ("revolute", "continuous"):
            angle = q[iq]
            K = _skew(self.axis[i])
            Rj = torch.eye(3, dtype=DTYPE) + torch.sin(angle) * K + (1 - torch.cos(angle)) * (K @ K)
            return Rp @ Rj, pp
        if t == "prismatic":
            return Rp, Rp @ (self.axis[i] * q[iq]) + pp
        # free: quaternion (x, y, z, w) after the position, normalised when read (as gradyn does)
        quat = q[iq + 3:iq + 7]
        quat = quat / torch.sqrt(torch.dot(quat, quat))
        Rj = _quat_to_matrix(quat[0], quat[1], quat[2], quat[3])
        return Rp @ Rj, Rp @ q[iq:iq + 3] + pp

    def _world_subspace(self, i, R, p):
        """oS = oMi.act_motion(joint_S), 6 x nv_i."""
        t = self.joint_types[i]
        if t in ("revolute", "continuous"):
            w = R @ self.axis[i]
            return torch.cat((w, _cross(p, w))).reshape(6, 1)
        if t == "prismatic":
            return torch.cat((torch.zeros(3, dtype=DTYPE), R @ self.axis[i])).reshape(6, 1)
        # free: columns 0-2 linear velocity (body frame), 3-5 angular velocity (body frame)
        pxR = _skew(p) @ R
        top = torch.cat((torch.zeros(3, 3, dtype=DTYPE), R), dim=1)
        bottom = torch.cat((R, pxR), dim=1)
        return torch.cat((top, bottom), dim=0)

    def _world_inertia(self, i, R, p):
        """Body i's 6x6 spatial inertia in the world frame, about the world origin."""
        m = self.mass[i]
        c = R @ self.com[i] + p
        cx = _skew(c)
        mcx = m * cx
        top = torch.cat((R @ self.inertia_com[i] @ R.T - mcx @ cx, mcx), dim=1)
        bottom = torch.cat((-mcx, m * torch.eye(3, dtype=DTYPE)), dim=1)
        return torch.cat((top, bottom), dim=0)

    def aba(self, q, v, tau):
        """Forward dynamics by gradyn's world-frame articulated-body algorithm."""
        nb = self.nbodies
        oR, op, oS, ov, oc, oIa, opA = [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb, [None] * nb
        nvs = [6 if t == "free" else 1 for t in self.joint_types]
        # Pass 1: poses, velocities, velocity-product accelerations, bias forces.
        for i in range(nb):
            R, p = self._joint_pose(i, q)
            par = self.parents[i]
            if par >= 0:
                R, p = oR[par] @ R, oR[par] @ p + op[par]
            oR[i], op[i] = R, p
            oS[i] = self._world_subspace(i, R, p)
            iv = self.idx_v[i]
            vj = oS[i] @ v[iv:iv + nvs[i]]
            ov[i] = ov[par] + vj if par >= 0 else vj
            oc[i] = _cross_motion(ov[i], vj)
            oI = self._world_inertia(i, R, p)
            oIa[i] = oI
            opA[i] = _cross_force(ov[i], oI @ ov[i])
        # Pass 2: articulated inertias and bias forces, leaves to root.
        U, Dinv, u = [None] * nb, [None] * nb, [None] * nb
        for i in reversed(range(nb)):
            iv, par = self.idx_v[i], self.parents[i]
            if nvs[i] == 1:
                s = oS[i][:, 0]
                Ui = oIa[i] @ s
                D = torch.dot(s, Ui) + self.armature[iv]
                Dinv[i] = 1 / D
                U[i] = Ui
                u[i] = tau[iv] - torch.dot(s, opA[i])
                if par >= 0:
                    UD = Dinv[i] * Ui
                    Ia = oIa[i] - torch.outer(UD, Ui)
                    oIa[par] = oIa[par] + Ia
                    opA[par] = opA[par] + (opA[i] + Ia @ oc[i] + UD * u[i])
            else:
                Sj = oS[i]
                Ui = oIa[i] @ Sj
                D = Sj.T @ Ui + torch.diag(self.armature[iv:iv + 6])
                Dinv[i] = torch.cholesky_inverse(torch.linalg.cholesky(D))
                U[i] = Ui
                u[i] = tau[iv:iv + 6] - Sj.T @ opA[i]
                if par >= 0:
                    UD = Ui @ Dinv[i]
                    Ia = oIa[i] - UD @ Ui.T
                    oIa[par] = oIa[par] + Ia
                    opA[par] = opA[par] + (opA[i] + Ia @ oc[i] + UD @ u[i])
        # Pass 3: accelerations, root to leaves; gravity as an upward acceleration of the world.
        a_world = torch.cat((torch.zeros(3, dtype=DTYPE), -self.gravity))
        oa = [None] * nb
        ddq = [None] * nb
        for i in range(nb):
            par = self.parents[i]
            a = (oa[par] if par >= 0 else a_world) + oc[i]
            if nvs[i] == 1:
                qdd = Dinv[i] * (u[i] - torch.dot(U[i], a))
                oa[i] = a + oS[i][:, 0] * qdd
                ddq[i] = qdd.reshape(1)
            else:
                qdd = Dinv[i] @ (u[i] - U[i].T @ a)
                oa[i] = a + oS[i] @ qdd
                ddq[i] = qdd
        # Bodies are numbered so that idx_v increases with the body index.
        return torch.cat(ddq)

    def forward_dynamics(self, q, v, tau):
        return self.aba(q, v, tau + self.passive_forces(q, v))

    def integrate(self, q, dv):
        """q (+) dv, joint by joint (gradyn's joint_integrate)."""
        parts = []
        for i, t in enumerate(self.joint_types):
            iq, iv = self.idx_q[i], self.idx_v[i]
            if t in ONE_DOF:
                parts.append(q[iq:iq + 1] + dv[iv:iv + 1])
            else:
                quat = q[iq + 3:iq + 7]
                lin, ang = dv[iv:iv + 3], dv[iv + 3:iv + 6]
                p1 = q[iq:iq + 3] + _quat_rotate(quat, _se3_V(ang) @ lin)
                q1 = _quat_mul(quat, _quat_exp(ang))
                q1 = q1 / torch.linalg.vector_norm(q1)
                parts.extend((p1, q1))
        return torch.cat(parts)

    def step(self, q, v, tau, dt):
        """Semi-implicit Euler: v+ = v + dt a(q, v, tau);  q+ = q (+) dt v+."""
        a = self.forward_dynamics(q, v, tau)
        v_next = v + dt * a
        return self.integrate(q, dt * v_next), v_next

    def rollout(self, q0, v0, taus, dt):
        """T steps (taus: T x nv). Returns the lists of T + 1 states (q, v), initial state first."""
        qs, vs = [q0], [v0]
        q, v = q0, v0
        for t in range(taus.shape[0]):
            q, v = self.step(q, v, taus[t], dt)
            qs.append(q)
            vs.append(v)
        return qs, vs
