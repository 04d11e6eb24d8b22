"""The QP-based convex MPC trotting controller of examples/control/laikago_mpc.py (paper 001,
Sec. IV-D), for gradyn's laikago (examples/laikago_contact/laikago_scene.py).

Convex MPC in the style of Di Carlo et al. 2018 ("Dynamic locomotion in the MIT Cheetah 3 through
convex model-predictive control"), as in google-research/motion_imitation's torque stance
controller that paper 001 uses:

* model: the whole robot as one rigid body (mass 25.567 kg; its composite inertia about the centre
  of mass at the stance, from gradyn.crba), state x = [roll, pitch, yaw, CoM position (world),
  angular velocity (world), CoM velocity (world)] (12 numbers; gravity as a constant term), inputs
  the ground reaction forces of the four feet (world, 12 numbers). Yaw-only rotation in the
  kinematics (d rpy/dt = Rz(yaw)^T w) and the world inertia Rz I Rz^T along the reference yaw;
  forward Euler over the MPC step; lever arms r = foot - CoM reference at each horizon step (the
  feet in stance now at their current positions, a foot that lands later at its Raibert foothold).
* QP (sparse: the states and forces of every step are variables, the dynamics equality
  constraints): sum_k (x_k - x_ref,k)^T Q (x_k - x_ref,k) + ALPHA |f_k|^2 over HORIZON steps of
  MPC_DT; per foot and step 0 <= f_z <= F_MAX (0 = 0 when the gait schedule has the foot in swing)
  and the friction pyramid |f_x|, |f_y| <= MU f_z. Solved with OSQP (osqp from PyPI): the matrix
  pattern is set up once, each solve updates only the constraint values that change (the yaw
  blocks and the lever arms), the bounds and the linear cost, warm-started from the previous
  solution. The reference: roll = pitch = 0, yaw rate and horizontal velocity the command (body
  yaw frame), CoM height HEIGHT; its horizontal position follows the current one (no x, y weight),
  as Di Carlo's.
* stance feet: joint torques tau = -J^T f_0 (J: the toe's world Jacobian from gradyn.frame_jacobian,
  its three leg columns; f_0: the QP's first force, the ground's force on the robot).
* swing feet: Cartesian PD, F = KP_SWING (p_des - p) + KD_SWING (v_des - v), tau = J^T F, to a
  trajectory from the nominal lift-off point (the hip's point minus half a stance at the command
  speed) to the Raibert foothold (the hip's point plus half a stance at the current velocity plus
  K_RAIBERT (v - v_cmd)), smoothstep in x, y, a sine arch of SWING_HEIGHT in z. The trajectory is a
  function of the current state, phase and command only (no lift-off memory), so the whole
  controller is a function of the 41-number observation below (and the OSQP warm start).
* gait: a trot (FR with RL, FL with RR), period PERIOD, duty 0.5: phase in [0, 1) of the cycle,
  FR/RL stand for phase < 0.5. Torques are clipped to +-TORQUE_LIMIT.

Observation (41 numbers; paper 001 lists "COM, linear and angular velocity, COM estimated position
(roll, pitch and yaw), foot contact state as well as the desired COM position and velocity" but not
the exact vector, so this is our choice): base height (1), roll and pitch (2; yaw is irrelevant:
the controller works in the yaw frame), base linear velocity (3, body frame) and angular velocity
(3, body frame), the 12 joint angles and 12 joint velocities, the scheduled contact state of the
four feet (4, 0/1), the progress of the current half cycle in [0, 1) (1), the command
(v_x, v_y, yaw rate; 3, body yaw frame).
"""

from __future__ import annotations

import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "laikago_contact"))
import laikago_scene as scene  # noqa: E402

import gradyn  # noqa: E402

LEGS = scene.LEGS  # FR, FL, RR, RL
HORIZON, MPC_DT = 10, 0.03
PERIOD = 0.3  # s, one trot cycle (two half cycles of 0.15 s)
PAIR_A = np.array([1.0, 0.0, 0.0, 1.0])  # FR and RL stand in the first half cycle
MU = 0.6
F_MAX = 400.0  # N, per foot
HEIGHT = 0.43  # m, CoM height reference
# State weights: roll, pitch, yaw, x, y, z, wx, wy, wz, vx, vy, vz
Q_WEIGHTS = np.array([25.0, 25.0, 10.0, 0.0, 0.0, 50.0, 1.0, 1.0, 1.0, 20.0, 20.0, 1.0])
ALPHA = 1e-6
KP_SWING, KD_SWING = 600.0, 20.0
SWING_HEIGHT = 0.08
K_RAIBERT = 0.03
TORQUE_LIMIT = 40.0  # N m
OBS_DIM = 41


def yaw_matrix(yaw):
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def quat_matrix(qxyzw):
    x, y, z, w = qxyzw / np.linalg.norm(qxyzw)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rpy(R):
    """Roll, pitch, yaw (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    return np.array([np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(np.clip(R[2, 0], -1.0, 1.0)),
                     np.arctan2(R[1, 0], R[0, 0])])


def skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


def contact_schedule(phase):
    """Scheduled stance (1) or swing (0) of FR, FL, RR, RL at gait phase(s) in [0, 1)."""
    first = (np.asarray(phase) % 1.0) < 0.5
    return np.where(np.asarray(first)[..., None], PAIR_A, 1.0 - PAIR_A)


class Robot:
    """gradyn's laikago with PGS contact and what the controllers need of it."""

    def __init__(self, contact="pgs"):
        self.model = scene.load_gradyn(contact)
        m = self.model
        self.legs_v = scene.leg_dofs(m)  # v indices of the 12 leg joints (6..17)
        self.legs_q = np.array([m.joint_idx_q(n) for n in m.joint_names if n != "root"])
        self.toe_frames = [f"toe{leg}" for leg in LEGS]
        self.q_stance = scene.stance(m)
        self.mass = gradyn.total_mass(m)
        # Composite inertia about the CoM in the base frame, at the stance.
        M = gradyn.crba(m, self.q_stance)
        c = gradyn.center_of_mass(m, self.q_stance) - self.q_stance[:3]  # base frame = world here
        I_base = M[3:6, 3:6]
        self.inertia = I_base - self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        # The "hip points" of the Raibert heuristic: the stance's toes in the base frame (x, y).
        self.hip_points = np.array([gradyn.frame_pose(m, self.q_stance, f)[:3, 3] - self.q_stance[:3]
                                    for f in self.toe_frames])
        self.hip_points[:, 2] = 0.0


def measure(robot, q, v):
    """Everything the controllers read from (q, v), as a dict (world frame unless said)."""
    m = robot.model
    R = quat_matrix(q[3:7])
    v_body, w_body = v[:3], v[3:6]
    com = gradyn.center_of_mass(m, q)
    c_body = R.T @ (com - q[:3])
    com_vel = R @ (v_body + np.cross(w_body, c_body))
    feet = np.empty((4, 3))
    feet_vel = np.empty((4, 3))
    jac = np.empty((4, 3, 3))
    for i, frame in enumerate(robot.toe_frames):
        J = gradyn.frame_jacobian(m, q, frame)[3:]  # linear rows, world axes
        feet[i] = gradyn.frame_pose(m, q, frame)[:3, 3]
        feet_vel[i] = J @ v
        jac[i] = J[:, robot.legs_v[3 * i:3 * i + 3]]
    return {"R": R, "rpy": rpy(R), "com": com, "com_vel": com_vel, "w": R @ w_body, "feet": feet,
            "feet_vel": feet_vel, "jac": jac, "base": q[:3]}


def observation(robot, q, v, phase, command):
    """The 41-number observation (see the module docstring)."""
    R = quat_matrix(q[3:7])
    angles = rpy(R)
    half = (phase % 0.5) * 2.0
    return np.concatenate([[q[2]], angles[:2], v[:6], q[robot.legs_q], v[robot.legs_v],
                           contact_schedule(phase), [half], command])


class ConvexMPC:
    """The convex MPC QP (OSQP, sparse, pattern set up once, warm-started)."""

    def __init__(self, robot, horizon=HORIZON, dt=MPC_DT):
        import osqp

        self.robot, self.N, self.dt = robot, horizon, dt
        N = horizon
        nx, nf = 12 * N, 12 * N
        self.nx, self.nf = nx, nf
        n = nx + nf
        # Cost: 1/2 z^T P z + q^T z with P = blockdiag(Q, ..., ALPHA I, ...) (constant).
        P = sp.diags(np.concatenate([np.tile(Q_WEIGHTS, N), np.full(nf, 2 * ALPHA)])).tocsc()
        # Constraints: dynamics rows (12 N), then force rows (5 per foot per step: 20 N).
        # Pattern: every entry that may be non-zero, set to 1 here, values filled per solve.
        rows, cols = [], []

        def block(r0, c0, nr, nc):
            rr, cc = np.meshgrid(np.arange(nr), np.arange(nc), indexing="ij")
            rows.append((r0 + rr).ravel())
            cols.append((c0 + cc).ravel())

        X = lambda k: 12 * k  # noqa: E731  column of x_{k+1} (k = 0..N-1)
        F = lambda k: nx + 12 * k  # noqa: E731  column of f_k
        for k in range(N):
            r = 12 * k
            # +x_{k+1}
            rows.append(r + np.arange(12)); cols.append(X(k) + np.arange(12))
            if k > 0:  # -A_k x_k: -I, -dt Rz^T (rpy <- w), -dt I (p <- pdot)
                rows.append(r + np.arange(12)); cols.append(X(k - 1) + np.arange(12))
                block(r + 0, X(k - 1) + 6, 3, 3)
                rows.append(r + 3 + np.arange(3)); cols.append(X(k - 1) + 9 + np.arange(3))
            for i in range(4):  # -B_k f_k: w rows <- f_i (3x3), pdot rows <- f_i (diagonal)
                block(r + 6, F(k) + 3 * i, 3, 3)
                rows.append(r + 9 + np.arange(3)); cols.append(F(k) + 3 * i + np.arange(3))
        n_eq = 12 * N
        fr, fc, fv = [], [], []
        row = n_eq
        for k in range(N):
            for i in range(4):
                c = F(k) + 3 * i
                fr += [row, row, row + 1, row + 1, row + 2, row + 2, row + 3, row + 3, row + 4]
                fc += [c, c + 2, c, c + 2, c + 1, c + 2, c + 1, c + 2, c + 2]
                fv += [1.0, -MU, 1.0, MU, 1.0, -MU, 1.0, MU, 1.0]
                row += 5
        n_rows = row
        r_all = np.concatenate(rows + [np.array(fr)])
        c_all = np.concatenate(cols + [np.array(fc)])
        key = r_all * n + c_all
        key, first = np.unique(key, return_index=True)
        r_all, c_all = r_all[first], c_all[first]
        A = sp.csc_matrix((np.arange(1, r_all.size + 1, dtype=float), (r_all, c_all)), shape=(n_rows, n))
        A.sort_indices()
        # position in A.data of entry (r, c): A.data holds 1..nnz tags in the original order.
        tag_to_pos = np.empty(r_all.size, dtype=np.int64)
        tag_to_pos[A.data.astype(np.int64) - 1] = np.arange(A.data.size)
        self._lookup = dict(zip(zip(r_all.tolist(), c_all.tolist()), tag_to_pos.tolist()))
        self.A = A
        data = np.zeros(A.data.size)

        def pos(r, c):
            return self._lookup[(r, c)]

        # Index arrays for the values set each solve.
        self.idx_identity = np.array([pos(12 * k + j, X(k) + j) for k in range(N) for j in range(12)])
        self.idx_minus_identity = np.array([pos(12 * k + j, X(k - 1) + j) for k in range(1, N) for j in range(12)])
        self.idx_p_pdot = np.array([pos(12 * k + 3 + j, X(k - 1) + 9 + j) for k in range(1, N) for j in range(3)])
        self.idx_rpy_w = np.array([[[pos(12 * k + a, X(k - 1) + 6 + b) for b in range(3)] for a in range(3)]
                                   for k in range(1, N)])  # (N-1, 3, 3)
        self.idx_w_f = np.array([[[[pos(12 * k + 6 + a, F(k) + 3 * i + b) for b in range(3)] for a in range(3)]
                                  for i in range(4)] for k in range(N)])  # (N, 4, 3, 3)
        self.idx_pdot_f = np.array([[[pos(12 * k + 9 + a, F(k) + 3 * i + a) for a in range(3)]
                                     for i in range(4)] for k in range(N)])  # (N, 4, 3)
        self.idx_friction = np.array([pos(r, c) for r, c in zip(fr, fc)])
        data[self.idx_identity] = 1.0
        data[self.idx_minus_identity] = -1.0
        data[self.idx_p_pdot] = -dt
        data[self.idx_friction] = np.array(fv)
        self.data = data
        self.n_eq, self.n_rows = n_eq, n_rows
        self.l = np.zeros(n_rows)
        self.u = np.zeros(n_rows)
        # force rows: [fx - mu fz <= 0, fx + mu fz >= 0, same y, 0 <= fz <= F_MAX contact]
        lf = np.tile([-np.inf, 0.0, -np.inf, 0.0, 0.0], 4 * N)
        uf = np.tile([0.0, np.inf, 0.0, np.inf, F_MAX], 4 * N)
        self.l[n_eq:], self.u[n_eq:] = lf, uf
        self.fz_rows = n_eq + 4 + 5 * np.arange(4 * N)
        self.solver = osqp.OSQP()
        self.solver.setup(P, np.zeros(n), sp.csc_matrix((data, A.indices, A.indptr), shape=A.shape),
                          self.l, self.u, verbose=False, warm_starting=True, polishing=False,
                          eps_abs=1e-4, eps_rel=1e-4, max_iter=4000, adaptive_rho=True)
        self.Q = Q_WEIGHTS
        self.inv_inertia_body = np.linalg.inv(robot.inertia)
        self.last_status = None
        self.last_iterations = 0
        self.solve_times = []  # wall time of each OSQP update + solve [s]

    def solve(self, state, feet, contacts, x_ref):
        """state: (12,), feet: (N, 4, 3) foot positions per horizon step, contacts: (N, 4) 0/1,
        x_ref: (N, 12) the reference of x_1..x_N. Returns the forces (N, 4, 3) and OSQP's status."""
        N, dt, m = self.N, self.dt, self.robot.mass
        yaw = x_ref[:, 2]
        c, s = np.cos(yaw), np.sin(yaw)
        # Rz^T per step, (N, 3, 3)
        RzT = np.zeros((N, 3, 3))
        RzT[:, 0, 0], RzT[:, 0, 1], RzT[:, 1, 0], RzT[:, 1, 1], RzT[:, 2, 2] = c, s, -s, c, 1.0
        Rz = np.transpose(RzT, (0, 2, 1))
        inv_I = Rz @ self.inv_inertia_body @ RzT  # world inverse inertia along the reference yaw
        data = self.data
        # A_k for k >= 1 uses the yaw of x_k (reference): x_{k+1} = A_k x_k + ...; step 0's goes to the bound.
        data[self.idx_rpy_w] = -dt * RzT[:-1]
        r = feet - x_ref[:, None, 3:6]  # (N, 4, 3) lever arms, foot - CoM reference
        # skew(r) batched
        S = np.zeros((N, 4, 3, 3))
        S[..., 0, 1], S[..., 0, 2] = -r[..., 2], r[..., 1]
        S[..., 1, 0], S[..., 1, 2] = r[..., 2], -r[..., 0]
        S[..., 2, 0], S[..., 2, 1] = -r[..., 1], r[..., 0]
        Bw = inv_I[:, None] @ S  # (N, 4, 3, 3)
        data[self.idx_w_f] = -dt * Bw
        data[self.idx_pdot_f] = -dt / m
        # x_1 - B_0 f_0 = A_0 x_0 + g dt; x_{k+1} - A_k x_k - B_k f_k = g dt
        A0x = state.copy()
        A0x[0:3] += dt * (Rz[0].T @ state[6:9])  # yaw of x_0 ~ the reference's first
        A0x[3:6] += dt * state[9:12]
        rhs = np.zeros(self.n_eq)
        rhs[0:12] = A0x
        rhs[11::12] += -9.81 * dt
        self.l[:self.n_eq] = rhs
        self.u[:self.n_eq] = rhs
        self.u[self.fz_rows] = F_MAX * contacts.ravel()
        qvec = np.zeros(self.nx + self.nf)
        qvec[:self.nx] = -(self.Q[None, :] * x_ref).ravel()
        t0 = time.perf_counter()
        self.solver.update(q=qvec, l=self.l, u=self.u, Ax=data)
        res = self.solver.solve()
        self.solve_times.append(time.perf_counter() - t0)
        self.last_status = res.info.status
        self.last_iterations = res.info.iter
        x = res.x
        if x is None or not np.all(np.isfinite(x)):
            return np.zeros((N, 4, 3)), res.info.status
        return x[self.nx:].reshape(N, 4, 3), res.info.status


class MPCController:
    """Trotting controller: convex MPC for the stance feet, Cartesian PD for the swing feet."""

    def __init__(self, robot):
        self.robot = robot
        self.mpc = ConvexMPC(robot)

    def swing_targets(self, meas, phase, command):
        """Desired position and velocity (world) of each foot at this phase (used for swing feet),
        and the Raibert footholds (world, z = toe radius)."""
        robot = self.robot
        yaw = meas["rpy"][2]
        Rz = yaw_matrix(yaw)
        v_cmd = Rz @ np.array([command[0], command[1], 0.0])
        v = meas["com_vel"].copy()
        v[2] = 0.0
        t_stance = PERIOD / 2
        hips = meas["base"] + (meas["R"] @ robot.hip_points.T).T
        hips[:, 2] = 0.0
        # yaw rate's contribution to the hip points' velocity
        hip_vel = v[None, :] + np.cross(np.array([0.0, 0.0, command[2]]), hips - np.array([*meas["base"][:2], 0.0]))
        hip_vel_cmd = v_cmd[None, :] + np.cross(np.array([0.0, 0.0, command[2]]),
                                                 hips - np.array([*meas["base"][:2], 0.0]))
        foothold = hips + hip_vel * t_stance / 2 + K_RAIBERT * (hip_vel - hip_vel_cmd)
        liftoff = hips - hip_vel_cmd * t_stance / 2
        foothold[:, 2] = scene.TOE_RADIUS
        liftoff[:, 2] = scene.TOE_RADIUS
        s = (phase % 0.5) * 2.0
        t_swing = PERIOD / 2
        b = 3 * s * s - 2 * s ** 3
        db = (6 * s - 6 * s * s) / t_swing
        p_des = liftoff + (foothold - liftoff) * b
        v_des = hip_vel_cmd + (foothold - liftoff) * db
        p_des[:, 2] = scene.TOE_RADIUS + SWING_HEIGHT * np.sin(np.pi * s)
        v_des[:, 2] = SWING_HEIGHT * np.pi / t_swing * np.cos(np.pi * s)
        return p_des, v_des, foothold

    def torques(self, q, v, phase, command):
        """The 12 leg joint torques (clipped), and the QP's status."""
        robot = self.robot
        meas = measure(robot, q, v)
        N, dt = self.mpc.N, self.mpc.dt
        contacts_now = contact_schedule(phase)
        p_des, v_des, foothold = self.swing_targets(meas, phase, command)
        # The horizon: contact schedule, feet (current ones for feet in stance now and until they
        # lift, the foothold for a foot that lands within the horizon), reference.
        t = dt * np.arange(1, N + 1)
        phases = (phase + dt * np.arange(N) / PERIOD) % 1.0
        contacts = contact_schedule(phases)  # (N, 4)
        yaw = meas["rpy"][2]
        Rz = yaw_matrix(yaw)
        v_cmd = Rz @ np.array([command[0], command[1], 0.0])
        feet = np.repeat(meas["feet"][None], N, axis=0)
        t_now = dt * np.arange(N)
        for i in range(4):
            # a foot that lands within the horizon: at its Raibert foothold, carried along at the
            # commanded velocity to the time it lands (the footholds are the hips' now)
            touch = np.diff(np.concatenate([[contacts_now[i]], contacts[:, i]])) > 0
            landed = np.cumsum(touch) > 0
            if landed.any():
                t_touch = np.maximum.accumulate(np.where(touch, t_now, 0.0))
                feet[landed, i] = foothold[i] + v_cmd * t_touch[landed, None]
        feet[:, :, 2] = 0.0
        x0 = np.concatenate([meas["rpy"], meas["com"], meas["w"], meas["com_vel"]])
        x_ref = np.zeros((N, 12))
        x_ref[:, 2] = yaw + command[2] * t
        x_ref[:, 3] = meas["com"][0] + v_cmd[0] * t
        x_ref[:, 4] = meas["com"][1] + v_cmd[1] * t
        x_ref[:, 5] = HEIGHT
        x_ref[:, 8] = command[2]
        x_ref[:, 9] = v_cmd[0]
        x_ref[:, 10] = v_cmd[1]
        forces, status = self.mpc.solve(x0, feet, contacts, x_ref)
        f0 = forces[0]
        tau = np.zeros(12)
        for i in range(4):
            J = meas["jac"][i]
            if contacts_now[i] > 0:
                tau[3 * i:3 * i + 3] = -J.T @ f0[i]
            else:
                F = KP_SWING * (p_des[i] - meas["feet"][i]) + KD_SWING * (v_des[i] - meas["feet_vel"][i])
                tau[3 * i:3 * i + 3] = J.T @ F
        return np.clip(tau, -TORQUE_LIMIT, TORQUE_LIMIT), status
