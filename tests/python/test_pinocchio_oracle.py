"""gradyn against Pinocchio on the shipped URDF models: ABA, RNEA, CRBA (100 random states each),
link poses, frame Jacobians, centre of mass, kinetic energy, and armature handling.

Pinocchio parses the same URDF files independently (urdfdom), so this checks the URDF loader
(placements, axes, inertias, merged fixed joints) together with the dynamics. Joints are matched
by name; the coordinate conventions differ only for continuous joints, which Pinocchio stores as
(cos, sin) and gradyn as the angle, and in the free-flyer's name ("root_joint" vs "root").
Neither library applies URDF damping in these algorithms, and URDF has no armature.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
import gradyn  # noqa: E402

MODELS = Path(__file__).resolve().parents[2] / "models"
N_STATES = 100
TOLERANCE = 1e-9

CASES = [
    ("grid/iiwa.urdf", False),
    ("grid/hyq.urdf", False),
    ("simple_humanoid.urdf", False),
    ("simple_humanoid.urdf", True),
    ("laikago/laikago_toes_zup.urdf", True),
] + [(f"pendulums/pendulum{n}.urdf", False) for n in range(1, 8)]

PIN_FREE_FLYER = "root_joint"
GRADYN_FREE_FLYER = "root"


def case_id(case):
    path, floating = case
    return Path(path).stem + ("-floating" if floating else "")


class Pair:
    """A model loaded by both libraries and the joint-by-joint map between their coordinates."""

    def __init__(self, path, floating_base):
        self.path = MODELS / path
        self.label = case_id((path, floating_base))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing visual meshes do not matter here
            self.model = gradyn.load(self.path, floating_base=floating_base)
        if floating_base:
            self.pmodel = pin.buildModelFromUrdf(str(self.path), pin.JointModelFreeFlyer())
        else:
            self.pmodel = pin.buildModelFromUrdf(str(self.path))
        self.pdata = self.pmodel.createData()
        # Pinocchio joint 0 is the universe; every other one must be a gradyn joint.
        pin_joints = {}
        for j in range(1, self.pmodel.njoints):
            name = self.pmodel.names[j]
            pin_joints[GRADYN_FREE_FLYER if name == PIN_FREE_FLYER else name] = self.pmodel.joints[j]
        assert sorted(pin_joints) == sorted(self.model.joint_names)
        assert self.model.nv == self.pmodel.nv
        self.joints = []  # (name, type, gradyn idx_q, gradyn idx_v, pin joint)
        for name in self.model.joint_names:
            self.joints.append((name, self.model.joint_type(name), self.model.joint_idx_q(name),
                                self.model.joint_idx_v(name), pin_joints[name]))
        # The velocity permutation gradyn index -> Pinocchio index.
        self.v_perm = np.empty(self.model.nv, dtype=int)
        for name, _, _, iv, pj in self.joints:
            nv = self.model.joint_nv(name)
            assert nv == pj.nv, f"{name}: gradyn nv {nv}, Pinocchio nv {pj.nv}"
            self.v_perm[iv:iv + nv] = np.arange(pj.idx_v, pj.idx_v + nv)

    def random_q(self, rng):
        q = np.empty(self.model.nq)
        for name, jtype, iq, _, _ in self.joints:
            if jtype == "free":
                q[iq:iq + 3] = rng.uniform(-2.0, 2.0, 3)
                quat = rng.normal(size=4)
                q[iq + 3:iq + 7] = quat / np.linalg.norm(quat)
            elif jtype == "spherical":
                quat = rng.normal(size=4)
                q[iq:iq + 4] = quat / np.linalg.norm(quat)
            else:
                assert jtype in ("revolute", "continuous", "prismatic"), f"{name}: {jtype}"
                q[iq] = rng.uniform(-np.pi, np.pi)
        return q

    def to_pin_q(self, q):
        pq = np.empty(self.pmodel.nq)
        for name, jtype, iq, _, pj in self.joints:
            if jtype == "continuous":
                assert pj.nq == 2, f"{name}: Pinocchio stores a continuous joint as (cos, sin)"
                pq[pj.idx_q:pj.idx_q + 2] = np.cos(q[iq]), np.sin(q[iq])
            else:
                nq = self.model.joint_nq(name)
                assert nq == pj.nq, f"{name}: gradyn nq {nq}, Pinocchio nq {pj.nq}"
                pq[pj.idx_q:pj.idx_q + nq] = q[iq:iq + nq]  # free: [x y z qx qy qz qw] in both
        return pq

    def to_pin_v(self, v):
        pv = np.empty(self.pmodel.nv)
        pv[self.v_perm] = v
        return pv

    def from_pin_v(self, pv):
        return np.asarray(pv)[self.v_perm]

    def from_pin_matrix(self, pM):
        return np.asarray(pM)[np.ix_(self.v_perm, self.v_perm)]


def relative_error(actual, reference):
    return np.max(np.abs(actual - reference)) / (1.0 + np.max(np.abs(reference)))


@pytest.fixture(scope="module", params=CASES, ids=case_id)
def pair(request):
    return Pair(*request.param)


def states(pair, seed):
    rng = np.random.default_rng(seed)
    nv = pair.model.nv
    for _ in range(N_STATES):
        yield pair.random_q(rng), rng.normal(scale=2.0, size=nv), rng.normal(scale=10.0, size=nv)


def check_worst(label, pair, errors):
    worst = max(errors)
    print(f"{label} {pair.label}: worst relative error {worst:.3e}")
    assert worst <= TOLERANCE, f"{label} on {pair.label}: worst relative error {worst:.3e} > {TOLERANCE}"


def test_joint_map(pair):
    """The maps are bijections and the q conversion is consistent with Pinocchio's neutral."""
    assert sorted(pair.v_perm) == list(range(pair.model.nv))
    pq0 = pair.to_pin_q(pair.model.neutral())
    assert np.allclose(pq0, pin.neutral(pair.pmodel))


def test_aba(pair):
    errors = []
    for q, v, tau in states(pair, seed=1):
        a = gradyn.aba(pair.model, q, v, tau)
        pa = pin.aba(pair.pmodel, pair.pdata, pair.to_pin_q(q), pair.to_pin_v(v), pair.to_pin_v(tau))
        errors.append(relative_error(a, pair.from_pin_v(pa)))
    check_worst("aba", pair, errors)


def test_rnea(pair):
    errors = []
    for q, v, a in states(pair, seed=2):
        tau = gradyn.rnea(pair.model, q, v, a)
        ptau = pin.rnea(pair.pmodel, pair.pdata, pair.to_pin_q(q), pair.to_pin_v(v), pair.to_pin_v(a))
        errors.append(relative_error(tau, pair.from_pin_v(ptau)))
    check_worst("rnea", pair, errors)


def test_crba(pair):
    errors = []
    for q, _, _ in states(pair, seed=3):
        M = gradyn.crba(pair.model, q)
        # Symmetric up to rounding (a free joint's 6x6 block S^T Ic S is not bit-symmetric).
        assert relative_error(M.T, M) <= 1e-14, "gradyn.crba must return a symmetric matrix"
        pM = np.triu(pin.crba(pair.pmodel, pair.pdata, pair.to_pin_q(q)))
        pM = pM + np.triu(pM, 1).T
        errors.append(relative_error(M, pair.from_pin_matrix(pM)))
    check_worst("crba", pair, errors)


def test_total_mass(pair):
    """Pinocchio keeps the welded root link's inertia on the universe; gradyn drops it from the bodies."""
    pmass = sum(pair.pmodel.inertias[j].mass for j in range(1, pair.pmodel.njoints))
    assert gradyn.total_mass(pair.model) == pytest.approx(pmass, rel=1e-12)


def test_link_poses(pair):
    """Every link both libraries know is at the same place (checks placements and merged fixed joints)."""
    pin_links = {f.name: i for i, f in enumerate(pair.pmodel.frames) if f.type == pin.FrameType.BODY}
    common = [(i, pin_links[name]) for i, name in enumerate(pair.model.frame_names) if name in pin_links]
    assert len(common) >= pair.model.nbodies
    rng = np.random.default_rng(4)
    worst = 0.0
    for _ in range(20):
        q = pair.random_q(rng)
        poses = gradyn.forward_kinematics(pair.model, q)["frame_poses"]
        pin.framesForwardKinematics(pair.pmodel, pair.pdata, pair.to_pin_q(q))
        for mine, theirs in common:
            worst = max(worst, relative_error(poses[mine], pair.pdata.oMf[theirs].homogeneous))
    check_worst("link poses", pair, [worst])


PIN_REFERENCES = {
    "local": pin.ReferenceFrame.LOCAL,
    "world": pin.ReferenceFrame.WORLD,
    "local_world_aligned": pin.ReferenceFrame.LOCAL_WORLD_ALIGNED,
}


def test_frame_jacobians(pair):
    """Link Jacobians in all three references (Pinocchio's rows are [linear; angular], gradyn's the reverse)."""
    pin_links = {f.name: i for i, f in enumerate(pair.pmodel.frames) if f.type == pin.FrameType.BODY}
    common = [name for name in pair.model.frame_names if name in pin_links]
    rng = np.random.default_rng(5)
    errors = []
    for _ in range(10):
        q = pair.random_q(rng)
        pin.computeJointJacobians(pair.pmodel, pair.pdata, pair.to_pin_q(q))
        pin.updateFramePlacements(pair.pmodel, pair.pdata)
        for name in common:
            for reference, pin_reference in PIN_REFERENCES.items():
                J = gradyn.frame_jacobian(pair.model, q, name, reference)
                pJ = pin.getFrameJacobian(pair.pmodel, pair.pdata, pin_links[name], pin_reference)
                pJ = np.asarray(pJ).reshape(6, pair.model.nv)  # nv = 1 comes back as shape (6,)
                pJ = np.vstack([pJ[3:], pJ[:3]])[:, pair.v_perm]
                errors.append(relative_error(J, pJ))
    check_worst("frame jacobians", pair, errors)


def test_center_of_mass_and_kinetic_energy(pair):
    """Centre of mass of the moving bodies (Pinocchio's universe keeps the welded root link) and 1/2 v^T M v."""
    rng = np.random.default_rng(6)
    errors = []
    for _ in range(20):
        q, v = pair.random_q(rng), rng.normal(size=pair.model.nv)
        pin.forwardKinematics(pair.pmodel, pair.pdata, pair.to_pin_q(q), pair.to_pin_v(v))
        inertias = [(pair.pmodel.inertias[j], pair.pdata.oMi[j]) for j in range(1, pair.pmodel.njoints)]
        mass = sum(inertia.mass for inertia, _ in inertias)
        com = sum(inertia.mass * (pose.act(inertia.lever)) for inertia, pose in inertias) / mass
        errors.append(relative_error(gradyn.center_of_mass(pair.model, q), com))
        energy = pin.computeKineticEnergy(pair.pmodel, pair.pdata, pair.to_pin_q(q), pair.to_pin_v(v))
        errors.append(relative_error(gradyn.kinetic_energy(pair.model, q, v), energy))
    check_worst("com and kinetic energy", pair, errors)


def test_armature(pair):
    """Rotor inertia, set in both libraries, enters M, ABA and RNEA the same way."""
    rng = np.random.default_rng(7)
    armature = rng.uniform(0.01, 0.5, pair.model.nv)
    model = pair.model.with_armature(armature)
    pmodel = pair.pmodel.copy()
    pmodel.armature = pair.to_pin_v(armature)
    pdata = pmodel.createData()
    errors = []
    for q, v, tau in list(states(pair, seed=8))[:20]:
        pq, pv, ptau = pair.to_pin_q(q), pair.to_pin_v(v), pair.to_pin_v(tau)
        pa, ptau_back = pin.aba(pmodel, pdata, pq, pv, ptau), pin.rnea(pmodel, pdata, pq, pv, ptau)
        errors.append(relative_error(gradyn.aba(model, q, v, tau), pair.from_pin_v(pa)))
        errors.append(relative_error(gradyn.rnea(model, q, v, tau), pair.from_pin_v(ptau_back)))
        pM = np.triu(pin.crba(pmodel, pdata, pq))
        errors.append(relative_error(gradyn.crba(model, q), pair.from_pin_matrix(pM + np.triu(pM, 1).T)))
    check_worst("armature", pair, errors)
