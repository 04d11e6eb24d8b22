"""Real robot files that nobody here wrote load as Pinocchio loads them, with the same dynamics.

Every URDF of the `example-robot-data` package (Pinocchio's robot collection: arms, quadrupeds,
humanoids, hands, a quadrotor; a test dependency, scripts/setup.sh) is loaded by gradyn and by
Pinocchio, with a fixed and with a floating base, and ABA, RNEA and CRBA are compared at random
states (relative error 1e-9, as in test_pinocchio_oracle.py). Their meshes are mostly missing from
the package: gradyn warns about those, and the comparison needs only the inertials. Files whose
inertia tensors no rigid body has are refused by default (the message names the options), load with
inertia='repair', and with inertia='accept' equal Pinocchio, which takes them as written.

Also here: Pinocchio's baxter_simple.urdf (tests/data/urdf, see its header), whose left_gripper
and right_gripper are welded point masses (mass 1e-4, zero rotational inertia).
"""

import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
import gradyn  # noqa: E402

N_STATES = 5
TOLERANCE = 1e-9
DATA = Path(__file__).resolve().parents[1] / "data" / "urdf"


def _collection():
    for key in ("purelib", "platlib"):
        robots = Path(sysconfig.get_paths()[key]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    return None


ROBOTS = _collection()
FILES = sorted(p.relative_to(ROBOTS).as_posix() for p in ROBOTS.rglob("*.urdf")) if ROBOTS else []

# Files with inertia tensors no rigid body has: (the link the strict error names, a word of the reason).
IMPOSSIBLE = {
    "alex_description/urdf/alex_psyonic_hands.urdf": ("LeftPsyonicAbilityBaseLink", "triangle inequality"),
    "allegro_hand_description/urdf/allegro_left_hand.urdf": ("link_11.0", "triangle inequality"),
    "allegro_hand_description/urdf/allegro_right_hand.urdf": ("link_3.0", "triangle inequality"),
    # a dummy base link with one moment (0, 0, 3e-6): no body turns about one axis only
    "anymal_b_simple_description/robots/anymal-kinova.urdf": ("base", "triangle inequality"),
    "anymal_b_simple_description/robots/anymal.urdf": ("base", "triangle inequality"),
    "anymal_c_simple_description/urdf/anymal.urdf": ("depth_camera_front_camera", "triangle inequality"),
    "b1_description/urdf/b1-z1.urdf": ("base", "triangle inequality"),
    "b1_description/urdf/b1.urdf": ("base", "triangle inequality"),
    "bolt_description/robots/bolt.urdf": ("FL_FOOT", "without mass"),
    "go1_description/urdf/go1.urdf": ("base", "triangle inequality"),
    "hyq_description/robots/hyq_no_sensors.urdf": ("base_link", "triangle inequality"),
    "pr2_description/urdf/pr2.urdf": ("sensor_mount_link", "triangle inequality"),
    "romeo_description/urdf/romeo_laas_small.urdf": ("LShoulderYaw_link", "triangle inequality"),
    "romeo_description/urdf/romeo_small.urdf": ("RShoulderYawLink", "triangle inequality"),
    "tiago_description/robots/tiago.urdf": ("base_antenna_left_link", "negative"),
    "tiago_description/robots/tiago_dual.urdf": ("base_antenna_left_link", "negative"),
    "tiago_description/robots/tiago_no_hand.urdf": ("base_antenna_left_link", "negative"),
}
# Files neither library loads as a robot: (a word of gradyn's reason).
NOT_ROBOTS = {
    # a xacro fragment (a <robot> of xacro macros without a name or links): Pinocchio's urdfdom refuses
    # it too ("No name given for the robot")
    "ur_description/urdf/ur3.urdf": "no links",
}

# Files with a joint that moves nothing (no mass, no inertia, no armature below it): gradyn refuses
# them under every policy, naming the joint; Pinocchio loads them, and its ABA is not finite there.
MASSLESS_JOINT = {
    "romeo_description/urdf/romeo.urdf": "LHand",
    "romeo_description/urdf/romeo_laas_small.urdf": "l_gripper_joint",  # with inertia='accept'
}

needs_collection = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


def load_quietly(path, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gradyn.load(path, **kwargs)
    return model, [str(w.message) for w in caught]


class Pair:
    """A file loaded by gradyn and Pinocchio, and the joint-by-joint map between their coordinates
    (as in test_pinocchio_oracle.py: continuous joints are (cos, sin) in Pinocchio, its free flyer
    is 'root_joint' where gradyn's is 'root')."""

    def __init__(self, path, floating_base, inertia="strict"):
        self.model, self.warnings = load_quietly(path, floating_base=floating_base, inertia=inertia)
        self.pmodel = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base
                       else pin.buildModelFromUrdf(str(path)))
        self.pdata = self.pmodel.createData()
        pin_joints = {("root" if self.pmodel.names[j] == "root_joint" else self.pmodel.names[j]): self.pmodel.joints[j]
                      for j in range(1, self.pmodel.njoints)}
        assert sorted(pin_joints) == sorted(self.model.joint_names)
        self.joints = [(n, self.model.joint_type(n), self.model.joint_idx_q(n), self.model.joint_idx_v(n), pin_joints[n])
                       for n in self.model.joint_names]
        self.v_perm = np.empty(self.model.nv, dtype=int)
        for name, _, _, iv, pj in self.joints:
            assert self.model.joint_nv(name) == pj.nv, name
            self.v_perm[iv:iv + pj.nv] = np.arange(pj.idx_v, pj.idx_v + pj.nv)

    def random_q(self, rng):
        q = np.empty(self.model.nq)
        for name, jtype, iq, _, _ in self.joints:
            if jtype == "free":
                q[iq:iq + 3] = rng.uniform(-1, 1, 3)
                quat = rng.normal(size=4)
                q[iq + 3:iq + 7] = quat / np.linalg.norm(quat)
            elif jtype == "spherical":
                quat = rng.normal(size=4)
                q[iq:iq + 4] = quat / np.linalg.norm(quat)
            elif jtype == "planar":
                q[iq:iq + 3] = rng.uniform(-1, 1, 3)
            else:
                q[iq] = rng.uniform(-np.pi, np.pi)
        return q

    def to_pin_q(self, q):
        pq = np.empty(self.pmodel.nq)
        for name, jtype, iq, _, pj in self.joints:
            if jtype == "continuous":
                pq[pj.idx_q:pj.idx_q + 2] = np.cos(q[iq]), np.sin(q[iq])
            elif jtype == "planar":  # Pinocchio: (x, y, cos, sin)
                pq[pj.idx_q:pj.idx_q + 4] = q[iq], q[iq + 1], np.cos(q[iq + 2]), np.sin(q[iq + 2])
            else:
                nq = self.model.joint_nq(name)
                assert nq == pj.nq, name
                pq[pj.idx_q:pj.idx_q + nq] = q[iq:iq + nq]
        return pq

    def to_pin_v(self, v):
        pv = np.empty(self.pmodel.nv)
        pv[self.v_perm] = v
        return pv

    def compare(self, seed=0):
        """Worst relative errors of ABA, RNEA and CRBA against Pinocchio over N_STATES random states."""
        rng = np.random.default_rng(seed)
        worst = {"aba": 0.0, "rnea": 0.0, "crba": 0.0}

        def err(actual, reference):
            return np.max(np.abs(actual - reference)) / (1.0 + np.max(np.abs(reference)))

        for _ in range(N_STATES):
            q = self.random_q(rng)
            v, u = rng.normal(size=self.model.nv), rng.normal(scale=5.0, size=self.model.nv)
            pq, pv, pu = self.to_pin_q(q), self.to_pin_v(v), self.to_pin_v(u)
            worst["aba"] = max(worst["aba"], err(gradyn.aba(self.model, q, v, u),
                                                 np.asarray(pin.aba(self.pmodel, self.pdata, pq, pv, pu))[self.v_perm]))
            worst["rnea"] = max(worst["rnea"], err(gradyn.rnea(self.model, q, v, u),
                                                   np.asarray(pin.rnea(self.pmodel, self.pdata, pq, pv, pu))[self.v_perm]))
            pM = np.triu(pin.crba(self.pmodel, self.pdata, pq))
            pM = pM + np.triu(pM, 1).T
            worst["crba"] = max(worst["crba"], err(gradyn.crba(self.model, q), pM[np.ix_(self.v_perm, self.v_perm)]))
        return worst


def check_against_pinocchio(pair, label):
    if pair.model.nv == 0:
        return
    worst = pair.compare()
    print(f"{label}: " + ", ".join(f"{k} {e:.1e}" for k, e in worst.items()))
    for name, e in worst.items():
        assert e <= TOLERANCE, f"{name} on {label}: relative error {e:.3e} > {TOLERANCE}"


@needs_collection
def test_the_collection_is_there():
    """The package holds the robots this test is about (a change of version that drops them fails here)."""
    assert len(FILES) >= 60
    for name in list(IMPOSSIBLE) + list(NOT_ROBOTS) + list(MASSLESS_JOINT) + ["baxter_description/urdf/baxter.urdf"]:
        assert name in FILES, name


@needs_collection
@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", FILES)
def test_collection_equals_pinocchio(name, floating_base):
    path = ROBOTS / name
    if name in NOT_ROBOTS:
        with pytest.raises(gradyn.ModelError, match=NOT_ROBOTS[name]) as err:
            gradyn.load(path, floating_base=floating_base)
        assert path.name in str(err.value)
        with pytest.raises(Exception):
            pin.buildModelFromUrdf(str(path))
        return
    policy = "accept" if name in IMPOSSIBLE else "strict"
    if name in MASSLESS_JOINT:
        with pytest.raises(gradyn.ModelError) as err:
            gradyn.load(path, floating_base=floating_base, inertia=policy)
        for word in (path.name, f"<joint name='{MASSLESS_JOINT[name]}'>", "moves only massless links"):
            assert word in str(err.value)
        pmodel = pin.buildModelFromUrdf(str(path))
        zero = np.zeros(pmodel.nv)
        assert not np.isfinite(pin.aba(pmodel, pmodel.createData(), pin.neutral(pmodel), zero, zero)).all()
        return
    pair = Pair(path, floating_base, inertia=policy)
    check_against_pinocchio(pair, f"{name} ({'floating' if floating_base else 'fixed'}, inertia={policy})")


@needs_collection
@pytest.mark.parametrize("name", sorted(IMPOSSIBLE))
def test_impossible_inertias_are_refused_repaired_or_accepted(name):
    path = ROBOTS / name
    link, reason = IMPOSSIBLE[name]
    with pytest.raises(gradyn.ModelError) as err:
        gradyn.load(path)
    message = str(err.value)
    for word in (path.name, f"<link name='{link}'>", reason, "inertia='repair'", "inertia='accept'"):
        assert word in message, f"{word!r} not in: {message}"
    line = int(message.split(path.name + ":")[1].split(":")[0])
    assert "<inertia" in path.read_text().splitlines()[line - 1], f"line {line} is not an <inertia>: {message}"

    if name in MASSLESS_JOINT:  # once its tensors pass, a joint that moves nothing is refused
        for policy in ("repair", "accept"):
            with pytest.raises(gradyn.ModelError, match="moves only massless links"):
                gradyn.load(path, inertia=policy)
        return
    repaired, said = load_quietly(path, inertia="repair")
    assert any("repaired (inertia='repair')" in w and link in w for w in said), said
    accepted, said = load_quietly(path, inertia="accept")
    assert any("kept as written (inertia='accept')" in w and link in w for w in said), said
    # the repair moves no mass, and leaves a positive-definite mass matrix
    assert repaired.body_masses == pytest.approx(accepted.body_masses, rel=1e-12)
    assert np.linalg.eigvalsh(gradyn.crba(repaired, repaired.neutral())).min() > 0


def test_baxter_simple_equals_pinocchio():
    """Pinocchio's baxter_simple.urdf: its grippers' tips are welded point masses (zero rotational
    inertia), which merge into the hands; ABA, RNEA and CRBA equal Pinocchio's to 1e-9."""
    path = DATA / "baxter_simple.urdf"
    text = path.read_text()
    assert '<link name="left_gripper">' in text and 'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0.0"' in text
    for floating_base in (False, True):
        pair = Pair(path, floating_base)
        assert "left_gripper" in pair.model.frame_names and pair.model.nv == (25 if floating_base else 19)
        check_against_pinocchio(pair, f"baxter_simple ({'floating' if floating_base else 'fixed'})")
    # what it has and gradyn does not simulate is said, once per kind
    said = " | ".join(pair.warnings)
    for word in ("<transmission>", "<gazebo>", "not found"):
        assert word in said, f"{word!r} not in: {said}"
    # its grippers' <mimic>s are joint couplings now (each right finger mirrors the left one)
    assert "<mimic" not in said
    couplings = {c["joint1"]: c for c in pair.model.joint_couplings}
    assert couplings["l_gripper_r_finger_joint"]["joint2"] == "l_gripper_l_finger_joint"
    assert couplings["r_gripper_r_finger_joint"]["polycoef"][:2] == (0.0, -1.0)
