"""gradyn.control: iLQR against the discrete LQR solution, box-constrained QPs against brute force,
a pendulum swing-up within its control limits, MPC, and what bad input and divergence do."""

import itertools

import numpy as np
import pytest

import gradyn
from gradyn import control


def sliders(mass=(2.0, 0.5), damping=0.0, ctrlrange=None):
    """Two prismatic joints in series (x, then y) without gravity: semi-implicit Euler is linear."""
    b = gradyn.ModelBuilder()
    b.set_gravity((0.0, 0.0, 0.0))
    b.add_link("base")
    b.add_link("carriage", mass=mass[0], inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
    b.add_link("slide", mass=mass[1], inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
    b.add_joint("x", "prismatic", parent="base", child="carriage", axis=(1, 0, 0),
                damping=damping)
    b.add_joint("y", "prismatic", parent="carriage", child="slide", axis=(0, 1, 0),
                damping=damping)
    b.add_actuator("x", ctrlrange=ctrlrange)
    b.add_actuator("y", gear=2.0, ctrlrange=ctrlrange)
    return b.build()


def pendulum(limit=2.0):
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("pole", mass=1.0, com=(0, 0, -0.5), inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="pole", axis=(0, 1, 0), damping=0.05)
    b.add_actuator("hinge", ctrlrange=(-limit, limit))
    return b.build()


def discrete_lqr(A, B, Q, R, Q_final, T):
    """Backward Riccati recursion: gains K_t with u_t = -K_t x_t."""
    P = Q_final
    gains = []
    for _ in range(T):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
        gains.append(K)
    return gains[::-1]


def test_ilqr_on_a_linear_system_equals_discrete_lqr():
    model = sliders(damping=0.3)
    dt, T = 0.05, 40
    dynamics = control.GradynDynamics(model, dt)
    Q = np.diag([3.0, 1.0, 0.2, 0.1])
    R = np.array([[0.5, 0.1], [0.1, 0.2]])
    Q_final = np.diag([50.0, 20.0, 5.0, 5.0])
    cost = control.QuadraticCost(dynamics, Q=Q, R=R, Q_final=Q_final, q_goal=[0.0, 0.0])
    q0, v0 = np.array([1.0, -0.5]), np.array([0.3, 0.2])

    A, B = dynamics.jacobians(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)))
    A, B = A[0], B[0]
    # The system is linear: the step is x+ = A x + B u everywhere.
    x = np.concatenate([q0, v0])
    q1, v1, _ = dynamics.step(q0[None], v0[None], np.array([[0.7, -0.4]]))
    np.testing.assert_allclose(np.concatenate([q1[0], v1[0]]), A @ x + B @ [0.7, -0.4],
                               rtol=0, atol=1e-14)

    gains = discrete_lqr(A, B, Q, R, Q_final, T)
    u_lqr = np.empty((T, 2))
    for t in range(T):
        u_lqr[t] = -gains[t] @ x
        x = A @ x + B @ u_lqr[t]

    result = control.ilqr(dynamics, cost, q0, v0, np.zeros((T, 2)))
    assert result.converged, result.reason
    np.testing.assert_allclose(result.u, u_lqr, rtol=0, atol=1e-9)
    for t in range(T):
        np.testing.assert_allclose(result.K[t], -gains[t], rtol=0, atol=1e-9)
    assert result.iterations[0].step == 1.0  # one full Newton step solves an LQ problem


def brute_force_box_qp(H, g, lower, upper):
    """Enumerate which controls sit at which bound; keep the best feasible stationary point."""
    n = len(g)
    best, best_value = None, np.inf
    for pattern in itertools.product((None, "lower", "upper"), repeat=n):
        x = np.zeros(n)
        fixed = np.array([p is not None for p in pattern])
        for i, p in enumerate(pattern):
            if p is not None:
                x[i] = lower[i] if p == "lower" else upper[i]
        free = ~fixed
        if free.any():
            rhs = g[free] + H[np.ix_(free, fixed)] @ x[fixed]
            x[free] = np.linalg.solve(H[np.ix_(free, free)], -rhs)
        if np.all(x >= lower - 1e-12) and np.all(x <= upper + 1e-12):
            value = g @ x + 0.5 * x @ H @ x
            if value < best_value:
                best, best_value = x, value
    return best


@pytest.mark.parametrize("seed", range(20))
def test_box_qp_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 3
    M = rng.normal(size=(n, n))
    H = M @ M.T + 0.1 * np.eye(n)
    g = rng.normal(size=n) * 3
    lower = -rng.uniform(0.1, 1.0, size=n)
    upper = rng.uniform(0.1, 1.0, size=n)
    x, free, ok = control.box_qp(H, g, lower, upper)
    assert ok
    expected = brute_force_box_qp(H, g, lower, upper)
    np.testing.assert_allclose(x, expected, atol=1e-8)
    assert np.all(x >= lower) and np.all(x <= upper)
    # The free set is where the bounds are not active, and the gradient vanishes there; a
    # control held at a bound has the gradient pushing outwards.
    grad = g + H @ x
    np.testing.assert_allclose(grad[free], 0.0, atol=1e-7)
    held = ~free
    assert np.all((x[held] == lower[held]) & (grad[held] >= 0) | (x[held] == upper[held]) & (grad[held] <= 0))
    # A warm start anywhere in the box reaches the same minimiser.
    x_warm, _, _ = control.box_qp(H, g, lower, upper, x0=rng.uniform(lower, upper))
    np.testing.assert_allclose(x_warm, expected, atol=1e-8)


def test_box_qp_unbounded_and_one_sided():
    H = np.array([[2.0, 0.5], [0.5, 1.0]])
    g = np.array([1.0, -2.0])
    x, free, _ = control.box_qp(H, g, np.full(2, -np.inf), np.full(2, np.inf))
    np.testing.assert_allclose(x, np.linalg.solve(H, -g), atol=1e-14)
    assert free.all()
    x, free, _ = control.box_qp(H, g, np.array([-np.inf, -np.inf]), np.array([np.inf, 1.0]))
    assert x[1] == 1.0 and list(free) == [True, False]
    np.testing.assert_allclose(x[0], -(g[0] + H[0, 1] * 1.0) / H[0, 0], atol=1e-12)
    # A Hessian that is not positive definite is reported instead of raising.
    _, _, ok = control.box_qp(-np.eye(2), g, np.full(2, -np.inf), np.full(2, np.inf))
    assert not ok
    with pytest.raises(ValueError, match=r"H: expected shape \(2, 2\), got \(3, 3\)"):
        control.box_qp(np.eye(3), g, np.zeros(2), np.ones(2))


def test_controls_stay_within_the_actuator_limits():
    model = sliders(ctrlrange=(-0.2, 0.3))
    dynamics = control.GradynDynamics(model, 0.05)
    np.testing.assert_array_equal(dynamics.u_min, [-0.2, -0.2])
    np.testing.assert_array_equal(dynamics.u_max, [0.3, 0.3])
    cost = control.QuadraticCost(dynamics, Q=[1, 1, 0.1, 0.1], R=1e-3, q_goal=[0.0, 0.0])
    # The initial guess outside the limits is projected on them.
    result = control.ilqr(dynamics, cost, [2.0, -2.0], [0.0, 0.0], np.full((30, 2), 5.0))
    assert result.converged, result.reason
    assert result.u.min() >= -0.2 and result.u.max() <= 0.3
    # Far from the goal with little control authority: the limits are active.
    assert np.isclose(result.u[0, 0], -0.2) and np.isclose(result.u[0, 1], 0.3)
    # Without the limits the same plan pushes much harder, for a lower cost.
    free = control.GradynDynamics(sliders(), 0.05)
    unlimited = control.ilqr(free, control.QuadraticCost(free, Q=[1, 1, 0.1, 0.1], R=1e-3),
                             [2.0, -2.0], [0.0, 0.0], np.zeros((30, 2)))
    assert np.abs(unlimited.u).max() > 1.0
    assert unlimited.cost < result.cost
    # Narrower limits than the ctrlrange are planned with; wider ones are refused (the step clamps).
    narrow = control.GradynDynamics(model, 0.05, u_min=[-0.1, -0.2], u_max=[0.1, 0.3])
    assert control.ilqr(narrow, cost, [2.0, -2.0], [0.0, 0.0], np.zeros((30, 2))).u.max() <= 0.3
    with pytest.raises(ValueError, match=r"actuator 'x' are wider than its ctrlrange \(-0.2, 0.3\)"):
        control.GradynDynamics(model, 0.05, u_min=[-1.0, -0.2], u_max=[0.3, 0.3])


def test_pendulum_swing_up_within_torque_limits():
    model = pendulum(limit=2.0)  # m g l = 4.9 N m: it has to pump energy to get up
    dynamics = control.GradynDynamics(model, 0.05)
    cost = control.QuadraticCost(dynamics, q_goal=[np.pi], Q=[0.0, 0.0], R=[0.01],
                                 Q_final=[100.0, 10.0])
    result = control.ilqr(dynamics, cost, [0.0], [0.0], np.zeros((100, 1)), max_iterations=200)
    assert result.converged, result.reason
    assert abs(result.q[-1, 0] - np.pi) < 0.01 and abs(result.v[-1, 0]) < 0.05
    assert result.cost < 0.5  # the documented swing-up cost (0.358 at the time of writing)
    assert np.abs(result.u).max() <= 2.0
    # The cost never increases from one iteration to the next.
    costs = [r.cost for r in result.iterations]
    assert all(b <= a for a, b in zip(costs, costs[1:]))


def test_mpc_stabilises_the_pendulum_upright():
    model = pendulum(limit=5.0)
    dynamics = control.GradynDynamics(model, 0.02)
    cost = control.QuadraticCost(dynamics, q_goal=[np.pi], Q=[10.0, 0.1], R=[0.01])
    mpc = control.MPC(dynamics, cost, horizon=25, iterations=3)
    qs, vs, us = control.run_mpc(mpc, [np.pi - 0.4], [0.5], 150)
    assert abs(qs[-1, 0] - np.pi) < 1e-2 and abs(vs[-1, 0]) < 1e-2
    assert np.abs(us).max() <= 5.0
    assert mpc.last is not None and mpc.plan.shape == (25, 1)


def test_floating_base_plans_use_the_tangent_space():
    # A free body pushed by generalised forces towards a goal pose: errors live in the tangent.
    b = gradyn.ModelBuilder()
    b.set_gravity((0.0, 0.0, 0.0))
    b.add_link("base")
    b.add_link("body", mass=1.0, inertia=(0.1, 0.2, 0.3, 0, 0, 0))
    b.add_joint("free", "free", parent="base", child="body")
    model = b.build()
    dynamics = control.GradynDynamics(model, 0.05)
    assert dynamics.controls == "tau" and dynamics.nu == 6
    goal = model.neutral()
    q0 = gradyn.integrate(model, goal, [0.3, -0.2, 0.1, 0.2, -0.1, 0.3])
    cost = control.QuadraticCost(dynamics, q_goal=goal, Q=np.r_[np.ones(6), 0.1 * np.ones(6)],
                                 R=1e-2, Q_final=100.0)
    result = control.ilqr(dynamics, cost, q0, np.zeros(6), np.zeros((40, 6)))
    assert result.converged, result.reason
    assert np.linalg.norm(gradyn.difference(model, goal, result.q[-1])) < 1e-2


def test_bad_shapes_name_expected_and_actual():
    model = sliders()
    dynamics = control.GradynDynamics(model, 0.05)
    with pytest.raises(ValueError, match=r"Q: expected shape \(4, 4\) or \(4,\).*got \(3, 3\)"):
        control.QuadraticCost(dynamics, Q=np.eye(3), R=1.0)
    with pytest.raises(ValueError, match=r"R: expected shape \(2, 2\) or \(2,\).*got \(3,\)"):
        control.QuadraticCost(dynamics, Q=1.0, R=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"q_goal: expected shape \(2,\), got \(3,\)"):
        control.QuadraticCost(dynamics, Q=1.0, R=1.0, q_goal=[0, 0, 0])
    cost = control.QuadraticCost(dynamics, Q=1.0, R=1.0)
    with pytest.raises(ValueError, match=r"u_init: expected shape \(T, 2\).*got \(10, 3\)"):
        control.ilqr(dynamics, cost, [0, 0], [0, 0], np.zeros((10, 3)))
    with pytest.raises(ValueError, match=r"q0: expected shape \(2,\), got \(1,\)"):
        control.ilqr(dynamics, cost, [0], [0, 0], np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"horizon: expected at least 1 step, got 0"):
        control.MPC(dynamics, cost, horizon=0)
    with pytest.raises(ValueError, match="no actuators"):
        control.GradynDynamics(_no_actuators(), 0.05, controls="ctrl")
    with pytest.raises(ValueError, match=r"u_min\[0\] = 1.0 is above u_max\[0\] = 0.0"):
        control.GradynDynamics(model, 0.05, u_min=[1.0, 0.0], u_max=[0.0, 1.0])


def _no_actuators():
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("pole", mass=1.0, com=(0, 0, -0.5), inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="pole", axis=(0, 1, 0))
    return b.build()


class DivergesAboveAControl:
    """A gradyn pendulum that blows up (NaN state) whenever |u| exceeds a threshold: the planner
    must keep the best trajectory and say why it stopped, not raise."""

    def __init__(self, threshold):
        self.inner = control.GradynDynamics(pendulum(limit=10.0), 0.05)
        self.threshold = threshold
        for name in ("nq", "nv", "nu", "u_min", "u_max", "difference", "jacobians"):
            setattr(self, name, getattr(self.inner, name))

    def step(self, q, v, u):
        q, v, status = self.inner.step(q, v, u)
        bad = np.abs(u).max(axis=1) > self.threshold
        q, v = q.copy(), v.copy()
        q[bad] = np.nan
        v[bad] = np.nan
        return q, v, np.where(bad, np.uint32(gradyn.Status.NON_FINITE), status)

    def rollout(self, q0, v0, us):
        qs, vs = [np.asarray(q0, float)], [np.asarray(v0, float)]
        status = []
        for u in us:
            q, v, s = self.step(qs[-1][None], vs[-1][None], u[None])
            qs.append(q[0]), vs.append(v[0]), status.append(s[0])
        return np.array(qs), np.array(vs), np.array(status, dtype=np.uint32)


def test_a_diverging_planner_returns_the_best_trajectory_and_says_why():
    # Every control but zero diverges: no candidate step survives, however small.
    dynamics = DivergesAboveAControl(threshold=0.0)
    cost = control.QuadraticCost(dynamics, q_goal=[np.pi], Q=[0.0, 0.0], R=[1e-3],
                                 Q_final=[100.0, 1.0])
    start = control.ilqr(dynamics, cost, [0.0], [0.0], np.zeros((40, 1)), max_iterations=0)
    assert start.reason == "reached max_iterations=0"
    result = control.ilqr(dynamics, cost, [0.0], [0.0], np.zeros((40, 1)), max_iterations=300)
    assert not result.converged
    assert "no step reduced the cost" in result.reason
    assert result.cost == start.cost and np.all(result.u == 0) and np.all(np.isfinite(result.q))
    assert all(r.step == 0 for r in result.iterations)
    # Where small controls are safe, the plan improves and stays finite.
    dynamics = DivergesAboveAControl(threshold=0.5)
    result = control.ilqr(dynamics, cost, [0.0], [0.0], np.zeros((40, 1)), max_iterations=300)
    assert np.isfinite(result.cost) and result.cost < start.cost
    assert np.all(np.isfinite(result.q)) and np.abs(result.u).max() <= 0.5
    # Controls that diverge from the start are reported, not raised.
    diverging = control.ilqr(dynamics, cost, [0.0], [0.0], np.ones((40, 1)))
    assert not diverging.converged and "initial controls diverge" in diverging.reason


def test_the_readme_snippet_runs():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    section = text[text.index("## Planning and control"):]
    start = section.index("```python") + len("```python")
    snippet = section[start:section.index("```", start)]
    scope = {}
    exec(compile(snippet, "README.md (planning and control)", "exec"), scope)
    result = scope["result"]
    assert result.converged and abs(result.q[-1, 0] - np.pi) < 0.01
    assert abs(scope["u"][0]) <= 2.0
