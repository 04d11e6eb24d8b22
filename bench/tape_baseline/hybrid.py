"""A hybrid model (analytical dynamics + networks inside them) stepped in PyTorch, batched over
worlds, so that torch.autograd differentiates a rollout by recording a tape: the "PyTorch tape"
column of bench/hybrid_gradient_cost.py (paper 001, Fig. 5).

The same algorithm as gradyn's step, operation for operation, as torch_sim.TorchModel (beside it)
is, with what that one lacks and the hybrid swimmer needs:

* actuators as gradyn applies them (src/dynamics/actuation.cpp, detail/actuator_law.hpp): per
  actuator, u = ctrl clamped to its ctrlrange, f = (gain0 + gain1 L + gain2 V) u + (bias0 + bias1 L
  + bias2 V) with L = gear q, V = gear v, f clamped to its forcerange, tau[dof] += gear f (motor,
  position, velocity and general actuators; servos raise NotImplementedError);
* networks at the joint_force and body_wrench sites as gradyn evaluates them
  (src/dynamics/network_forces.cpp, detail/network_inputs.hpp, nn/dense.hpp): each layer
  z = W x + b with W row-major in the flat weights, then b; the hidden activation on every layer but
  the last, the output activation on the last. A body_wrench network reads its body's origin
  ("pos.*", world), rotation ("rot[i,j]") and spatial velocity in its own frame ("vel.ang.*",
  "vel.lin.*": R^T w and R^T (v0 + w x p)), as well as joint positions, velocities and controls; its
  outputs [torque; force] act at the body's origin, in the body's axes (or the world's), as the
  world spatial force F = [n + p x f; f]; F reaches the joints as J^T F (a reverse sweep summing
  subtrees, then oS_i . F_subtree, as detail/body_forces.hpp does) and adds to tau with the
  actuators' forces, before the passive forces and the world-frame ABA;
* a leading batch dimension: B worlds step together (one tape of batched tensor operations, what a
  PyTorch user would write, rather than B tapes of 6-vectors).

The step is semi-implicit Euler: v+ = v + dt a;  q+ = q + dt v+ (1-DoF joints: revolute, continuous,
prismatic; a free joint raises NotImplementedError here, see torch_sim.py for it unbatched).

The networks' weights are read from a flat torch tensor laid out as model.params (each network at
its param_offset), so a tape leaf of that shape gets the gradient of the same entries that
gradyn.rollout_vjp's params_bar holds for the networks; the rest of the model (inertias, placements,
actuator gains, ...) is read from the gradyn.Model as constants.

A body_wrench network's body and frame come from its entry in model.networks ("body", "frame").
"""

from __future__ import annotations

import numpy as np
import torch

DTYPE = torch.float64
ONE_DOF = ("revolute", "continuous", "prismatic")
WRENCH_COMPONENTS = {"torque.x": 0, "torque.y": 1, "torque.z": 2, "force.x": 3, "force.y": 4, "force.z": 5}
XYZ = {"x": 0, "y": 1, "z": 2}


def _t(x):
    return torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=DTYPE)


def _skew_np(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], dtype=np.float64)


def _cross(a, b):
    """Batched 3-vector cross product (B, 3)."""
    return torch.linalg.cross(a, b, dim=-1)


def _mv(M, x):
    """Batched (or shared) matrix times batched vector: (B|, n, m) @ (B, m) -> (B, n)."""
    return (M @ x.unsqueeze(-1)).squeeze(-1)


def _dot(a, b):
    return (a * b).sum(-1)


def _cross_motion(v, m):
    w, vl = v[:, :3], v[:, 3:]
    return torch.cat((_cross(w, m[:, :3]), _cross(w, m[:, 3:]) + _cross(vl, m[:, :3])), dim=1)


def _cross_force(v, f):
    w, vl = v[:, :3], v[:, 3:]
    return torch.cat((_cross(w, f[:, :3]) + _cross(vl, f[:, 3:]), _cross(w, f[:, 3:])), dim=1)


def _batched_skew(c):
    """(B, 3) -> (B, 3, 3), skew(c) @ x = c x x."""
    z = torch.zeros_like(c[:, 0])
    return torch.stack((torch.stack((z, -c[:, 2], c[:, 1]), 1),
                        torch.stack((c[:, 2], z, -c[:, 0]), 1),
                        torch.stack((-c[:, 1], c[:, 0], z), 1)), 1)


def _activation(name):
    if name == "identity":
        return lambda z: z
    if name == "tanh":
        return torch.tanh
    if name == "relu":
        return lambda z: torch.where(z > 0, z, torch.zeros_like(z))
    if name == "elu":
        return lambda z: torch.where(z > 0, z, torch.exp(torch.clamp(z, max=0)) - 1)
    if name == "softplus":  # max(z, 0) + log(1 + e^-|z|), as gradyn
        return lambda z: torch.clamp(z, min=0) + torch.log1p(torch.exp(-torch.abs(z)))
    if name == "sigmoid":
        return torch.sigmoid
    raise NotImplementedError(f"tape baseline: activation '{name}'")


class TorchHybrid:
    """A gradyn.Model (1-DoF joints, actuators, joint_force and body_wrench networks) stepped in
    PyTorch over a batch of worlds."""

    def __init__(self, model):
        self.nq, self.nv, self.nu = model.nq, model.nv, model.nu
        self.parents = list(model.parents)
        self.types = list(model.joint_types)
        self.nb = len(self.parents)
        for name, t in zip(model.joint_names, self.types):
            if t not in ONE_DOF:
                raise NotImplementedError(f"tape baseline (batched): joint '{name}' is '{t}'; supported: {ONE_DOF}")
        self.idx_q, self.idx_v = list(model.idx_q), list(model.idx_v)
        assert self.idx_v == sorted(self.idx_v), "bodies are numbered so that idx_v increases"
        T = np.asarray(model.joint_placements)
        axes = np.asarray(model.joint_axes)
        self.Rp = [_t(T[i, :3, :3]) for i in range(self.nb)]
        self.pp = [_t(T[i, :3, 3]) for i in range(self.nb)]
        self.axis = [_t(axes[i]) for i in range(self.nb)]
        self.K = [_t(_skew_np(axes[i])) for i in range(self.nb)]
        self.KK = [_t(_skew_np(axes[i]) @ _skew_np(axes[i])) for i in range(self.nb)]
        self.eye3 = torch.eye(3, dtype=DTYPE)
        self.mass = [_t(m) for m in np.asarray(model.body_masses)]
        self.com = [_t(c) for c in np.asarray(model.body_coms)]
        self.inertia_com = [_t(I) for I in np.asarray(model.body_inertias)]
        self.armature = _t(model.armature)
        self.damping = _t(model.damping)
        self.stiffness = np.asarray(model.stiffness, dtype=np.float64)
        self.q_rest = _t(model.q_rest)
        self.gravity = _t(model.gravity)
        self.springs = [i for i in range(self.nb) if self.stiffness[self.idx_v[i]] != 0]
        self.stiffness_t = _t(self.stiffness)
        joint_of = {n: i for i, n in enumerate(model.joint_names)}

        self.actuators = []
        for a in model.actuators:
            if a["kind"] == "servo":
                raise NotImplementedError(f"tape baseline: servo actuator '{a['name']}'")
            j = joint_of[a["joint"]]
            self.actuators.append(dict(iq=self.idx_q[j], iv=self.idx_v[j], gear=float(a["gear"]),
                                       gain=tuple(map(float, a["gain"])), bias=tuple(map(float, a["bias"])),
                                       ctrlrange=a["ctrlrange"], forcerange=a["forcerange"]))
        actuator_of = {n: k for k, n in enumerate(model.actuator_names)}

        body_of = {n: i for i, n in enumerate(model.body_names)}
        self.networks = []
        for net in model.networks:
            site = net["site"]
            if site not in ("joint_force", "body_wrench"):
                raise NotImplementedError(f"tape baseline: network '{net['name']}' at site '{site}'")
            body = None
            if site == "body_wrench":
                body = body_of[net["body"]]
            inputs = []
            for name in net["inputs"]:
                if name.startswith("pos."):
                    inputs.append(("pos", XYZ[name[4:]]))
                elif name.startswith("rot["):
                    i, j = (int(c) for c in name[4:-1].split(","))
                    inputs.append(("rot", 3 * i + j))
                elif name.startswith("vel.ang."):
                    inputs.append(("ang", XYZ[name[8:]]))
                elif name.startswith("vel.lin."):
                    inputs.append(("lin", XYZ[name[8:]]))
                elif name.endswith(".q") and name[:-2] in joint_of:
                    inputs.append(("q", self.idx_q[joint_of[name[:-2]]]))
                elif name.endswith(".v") and name[:-2] in joint_of:
                    inputs.append(("v", self.idx_v[joint_of[name[:-2]]]))
                elif name.endswith(".ctrl") and name[:-5] in actuator_of:
                    inputs.append(("ctrl", actuator_of[name[:-5]]))
                else:
                    raise NotImplementedError(f"tape baseline: network input '{name}'")
            if site == "body_wrench":
                outputs = [WRENCH_COMPONENTS[o] for o in net["outputs"]]
            else:
                outputs = [self.idx_v[joint_of[o]] for o in net["outputs"]]
            widths = list(net["widths"])
            layers, at = [], int(net["param_offset"])
            for l in range(len(widths) - 1):
                n_in, n_out = widths[l], widths[l + 1]
                layers.append((at, n_in, n_out, at + n_in * n_out))
                at += (n_in + 1) * n_out
            assert at == net["param_offset"] + net["param_count"], "weights layout"
            acts = [_activation(net["activation"])] * (len(layers) - 1) + [_activation(net["output_activation"])]
            self.networks.append(dict(name=net["name"], site=site, body=body, inputs=inputs, outputs=outputs,
                                      layers=layers, acts=acts, world_frame=net.get("frame") == "world",
                                      uses_body=any(k in ("pos", "rot", "ang", "lin") for k, _ in inputs)))
        self.has_wrench = any(n["site"] == "body_wrench" for n in self.networks)

    # --- pieces of the step ----------------------------------------------------------------------

    def actuation(self, q, v, ctrl):
        """Per-DoF forces of the actuators, (B, nv)."""
        tau = torch.zeros(q.shape[0], self.nv, dtype=DTYPE)
        for k, a in enumerate(self.actuators):
            u = ctrl[:, k]
            if a["ctrlrange"] is not None:
                u = torch.clamp(u, a["ctrlrange"][0], a["ctrlrange"][1])
            L, V = a["gear"] * q[:, a["iq"]], a["gear"] * v[:, a["iv"]]
            g, b = a["gain"], a["bias"]
            gain = g[0] + g[1] * L + g[2] * V if (g[1] or g[2]) else g[0]
            bias = b[0] + b[1] * L + b[2] * V if (b[1] or b[2]) else b[0]
            f = gain * u + bias
            if a["forcerange"] is not None:
                f = torch.clamp(f, a["forcerange"][0], a["forcerange"][1])
            tau = tau.index_add(1, torch.tensor([a["iv"]]), (a["gear"] * f).unsqueeze(1))
        return tau

    @staticmethod
    def dense(net, params, x):
        """gradyn's dense_forward: x (B, in) -> (B, out), weights read from the flat params."""
        for (w0, n_in, n_out, b0), act in zip(net["layers"], net["acts"]):
            W = params[w0:w0 + n_in * n_out].reshape(n_out, n_in)
            x = act(torch.addmm(params[b0:b0 + n_out], x, W.T))
        return x

    def _kinematics(self, q, v):
        """World poses (oR, op), motion subspaces oS (B, 6) and velocities ov of every body."""
        B = q.shape[0]
        oR, op, oS, ov, vj_all = [], [], [], [], []
        for i in range(self.nb):
            t, iq, iv, par = self.types[i], self.idx_q[i], self.idx_v[i], self.parents[i]
            Rp, pp = self.Rp[i], self.pp[i]
            if t == "prismatic":
                R = Rp.expand(B, 3, 3)
                p = q[:, iq:iq + 1] * _mv(Rp, self.axis[i].expand(B, 3)) + pp  # Rp (axis q) + pp
            else:
                angle = q[:, iq].reshape(B, 1, 1)
                Rj = self.eye3 + torch.sin(angle) * self.K[i] + (1 - torch.cos(angle)) * self.KK[i]
                R, p = Rp @ Rj, pp.expand(B, 3)
            if par >= 0:
                R, p = oR[par] @ R, _mv(oR[par], p) + op[par]
            if t == "prismatic":
                S = torch.cat((torch.zeros(B, 3, dtype=DTYPE), _mv(R, self.axis[i].expand(B, 3))), dim=1)
            else:
                w = _mv(R, self.axis[i].expand(B, 3))
                S = torch.cat((w, _cross(p, w)), dim=1)
            vj = S * v[:, iv:iv + 1]
            oR.append(R), op.append(p), oS.append(S), vj_all.append(vj)
            ov.append(ov[par] + vj if par >= 0 else vj)
        return oR, op, oS, ov, vj_all

    def network_forces(self, q, v, ctrl, params, kin):
        """The networks' generalized forces (B, nv): joint_force outputs and J^T F of the wrenches."""
        oR, op, oS, ov, _ = kin
        B = q.shape[0]
        tau = torch.zeros(B, self.nv, dtype=DTYPE)
        force = [None] * self.nb
        for net in self.networks:
            st = None
            if net["uses_body"] or net["site"] == "body_wrench":
                b = net["body"]
                R, p, w = oR[b], op[b], ov[b][:, :3]
                u = ov[b][:, 3:] + _cross(w, p)
                RT = R.transpose(1, 2)
                st = dict(R=R, p=p, ang=_mv(RT, w), lin=_mv(RT, u))
            cols = []
            for kind, k in net["inputs"]:
                if kind == "pos":
                    cols.append(st["p"][:, k])
                elif kind == "rot":
                    cols.append(st["R"][:, k // 3, k % 3])
                elif kind == "ang":
                    cols.append(st["ang"][:, k])
                elif kind == "lin":
                    cols.append(st["lin"][:, k])
                elif kind == "q":
                    cols.append(q[:, k])
                elif kind == "v":
                    cols.append(v[:, k])
                else:
                    cols.append(ctrl[:, k])
            y = self.dense(net, params, torch.stack(cols, dim=1))
            if net["site"] == "joint_force":
                tau = tau.index_add(1, torch.tensor(net["outputs"]), y)
                continue
            wrench = torch.zeros(B, 6, dtype=DTYPE).index_add(1, torch.tensor(net["outputs"]), y)
            n, f = wrench[:, :3], wrench[:, 3:]
            if not net["world_frame"]:
                n, f = _mv(st["R"], n), _mv(st["R"], f)
            F = torch.cat((n + _cross(st["p"], f), f), dim=1)
            b = net["body"]
            force[b] = F if force[b] is None else force[b] + F
        if self.has_wrench:  # tau += J^T F: subtree sums, leaves to root
            cols = [None] * self.nv
            for i in reversed(range(self.nb)):
                F, par = force[i], self.parents[i]
                if F is None:
                    continue
                cols[self.idx_v[i]] = _dot(oS[i], F)
                if par >= 0:
                    force[par] = F if force[par] is None else force[par] + F
            zero = torch.zeros(B, dtype=DTYPE)
            tau = tau + torch.stack([c if c is not None else zero for c in cols], dim=1)
        return tau

    def passive_forces(self, q, v):
        tau = -self.damping * v
        for i in self.springs:
            iv, iq = self.idx_v[i], self.idx_q[i]
            d = q[:, iq] - self.q_rest[iq]
            tau = tau.index_add(1, torch.tensor([iv]), (-self.stiffness_t[iv] * d).unsqueeze(1))
        return tau

    def aba(self, kin, tau):
        """gradyn's world-frame articulated-body algorithm (torch_sim.TorchModel.aba, batched)."""
        oR, op, oS, ov, vjs = kin
        B = tau.shape[0]
        nb = self.nb
        oc, oIa, opA = [None] * nb, [None] * nb, [None] * nb
        eye = self.eye3.expand(B, 3, 3)
        for i in range(nb):
            oc[i] = _cross_motion(ov[i], vjs[i])
            R, p, m = oR[i], op[i], self.mass[i]
            c = _mv(R, self.com[i].expand(B, 3)) + p
            cx = _batched_skew(c)
            mcx = m * cx
            top = torch.cat((R @ self.inertia_com[i] @ R.transpose(1, 2) - mcx @ cx, mcx), dim=2)
            bottom = torch.cat((-mcx, m * eye), dim=2)
            oI = torch.cat((top, bottom), dim=1)
            oIa[i] = oI
            opA[i] = _cross_force(ov[i], _mv(oI, ov[i]))
        U, Dinv, u = [None] * nb, [None] * nb, [None] * nb
        for i in reversed(range(nb)):
            iv, par, s = self.idx_v[i], self.parents[i], oS[i]
            Ui = _mv(oIa[i], s)
            D = _dot(s, Ui) + self.armature[iv]
            Dinv[i] = 1 / D
            U[i] = Ui
            u[i] = tau[:, iv] - _dot(s, opA[i])
            if par >= 0:
                UD = Dinv[i].unsqueeze(1) * Ui
                Ia = oIa[i] - UD.unsqueeze(2) * Ui.unsqueeze(1)
                oIa[par] = oIa[par] + Ia
                opA[par] = opA[par] + (opA[i] + _mv(Ia, oc[i]) + UD * u[i].unsqueeze(1))
        a_world = torch.cat((torch.zeros(3, dtype=DTYPE), -self.gravity)).expand(B, 6)
        oa, ddq = [None] * nb, [None] * nb
        for i in range(nb):
            par = self.parents[i]
            a = (oa[par] if par >= 0 else a_world) + oc[i]
            qdd = Dinv[i] * (u[i] - _dot(U[i], a))
            oa[i] = a + oS[i] * qdd.unsqueeze(1)
            ddq[i] = qdd
        return torch.stack(ddq, dim=1)  # idx_v increases with the body index (1-DoF joints)

    def step(self, q, v, ctrl, params, dt):
        """One semi-implicit Euler step of B worlds: q, v (B, nq|nv), ctrl (B, nu)."""
        kin = self._kinematics(q, v)
        tau = self.actuation(q, v, ctrl)
        if self.networks:
            tau = tau + self.network_forces(q, v, ctrl, params, kin)
        a = self.aba(kin, tau + self.passive_forces(q, v))
        v_next = v + dt * a
        dq = dt * v_next
        if self.idx_q == list(range(self.nq)) and self.idx_v == list(range(self.nv)):
            return q + dq, v_next
        q_next = q.clone()
        q_next[:, self.idx_q] = q[:, self.idx_q] + dq[:, self.idx_v]
        return q_next, v_next

    def rollout(self, q0, v0, ctrls, dt, params):
        """ctrls (B, T, nu); params: a flat tensor laid out as model.params (the networks' weights at
        their param_offset). Returns qs (B, T + 1, nq), vs (B, T + 1, nv), initial state first."""
        qs, vs = [q0], [v0]
        q, v = q0, v0
        for t in range(ctrls.shape[1]):
            q, v = self.step(q, v, ctrls[:, t], params, dt)
            qs.append(q)
            vs.append(v)
        return torch.stack(qs, dim=1), torch.stack(vs, dim=1)
