"""examples/pixels/cartpole_from_pixels.py: the pieces (camera sees the pole, pixels carry a gradient
to q, the closed loop is differentiable end to end, the encoder's pre-training, the balance-time
measure) and a --quick run."""

import importlib.util
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradyn  # noqa: E402
import gradyn.torch as gt  # noqa: E402

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "pixels" / "cartpole_from_pixels.py"


@pytest.fixture(scope="module")
def ex():
    spec = importlib.util.spec_from_file_location("cartpole_from_pixels", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.set_num_threads(1)
    return mod


@pytest.fixture(scope="module")
def scene(ex):
    return ex.load_model(), ex.camera(), ex.appearance()


def test_model_is_the_classic_cartpole(ex, scene):
    model, _, _ = scene
    assert model.nq == 2 and model.nv == 2
    # Hanging at rest stays hanging; a pole tilted toward +x falls toward +x and pushes the cart to -x.
    q, v = gradyn.step(model, np.array([0.0, np.pi]), np.zeros(2), np.zeros(2), 0.01)
    assert abs(q[1] - np.pi) < 1e-9 and abs(q[0]) < 1e-9
    q, v = np.array([0.0, 0.1]), np.zeros(2)
    for _ in range(20):
        q, v = gradyn.step(model, q, v, np.zeros(2), 0.01)
    assert v[1] > 0 and v[0] < 0


def test_camera_sees_pole_where_it_is(ex, scene):
    model, cam, look = scene
    img, ids = gradyn.render(model, np.array([0.0, 0.0]), cam, look, return_ids=True)
    assert img.shape == (ex.HEIGHT, ex.WIDTH, 3)
    disc = list(model.geom_names).index("disc")
    rows, cols = np.nonzero(ids == disc)
    assert rows.size > 50, "the hinge's disc should cover some tens of pixels"
    assert abs(cols.mean() - (ex.WIDTH - 1) / 2) < 1.5 and abs(rows.mean() - (ex.HEIGHT - 1) / 2) < 1.5
    grey = img.mean(-1)

    def band(q):  # the brightest disc pixels: the painted pole, as (mean row, mean column)
        g = gradyn.render(model, np.array(q), cam, look).mean(-1)
        r, c = np.nonzero(g > 0.6 * g.max())
        return r.mean(), c.mean()

    # Upright: the band above the hinge; hanging: below; tilted toward +x: to the right of the hinge.
    r0, c0 = band([0.0, 0.0])
    assert r0 < rows.mean() - 1 and abs(c0 - cols.mean()) < 1.5
    assert band([0.0, np.pi])[0] > rows.mean() + 1
    assert band([0.0, 0.6])[1] > cols.mean() + 1
    # Everything else is background: the picture is the disc.
    assert np.all(grey[ids != disc] == 0.0)
    # The disc moves with x.
    _, ids3 = gradyn.render(model, np.array([1.0, 0.0]), cam, look, return_ids=True)
    assert np.nonzero(ids3 == disc)[1].mean() > cols.mean() + 10


def test_pixels_carry_a_gradient_to_the_pole_angle(ex, scene):
    model, cam, look = scene
    q = torch.tensor([[0.1, 0.3]], dtype=torch.float64, requires_grad=True)
    f = ex.frames_of(model, q, cam, look)
    w = torch.linspace(0, 1, f.numel(), dtype=torch.float64).reshape(f.shape)
    (f * w).sum().backward()
    g = q.grad[0].numpy()
    assert np.all(np.abs(g) > 1e-3), f"both x and theta should move the textured pixels, got {g}"
    # Against central differences (the step small enough that no silhouette moves).
    for i in range(2):
        e = np.zeros(2)
        e[i] = 1e-6
        fp = gradyn.render(model, q.detach().numpy()[0] + e, cam, look).mean(-1)
        fm = gradyn.render(model, q.detach().numpy()[0] - e, cam, look).mean(-1)
        fd = float(((fp - fm) / 2e-6 * w[0].numpy()).sum())
        assert g[i] == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_closed_loop_is_differentiable_end_to_end(ex, scene):
    model, cam, look = scene
    torch.manual_seed(0)
    policy = ex.PixelPolicy(4)
    torch.nn.init.normal_(policy.head[-1].weight, std=1.0)
    q0 = torch.tensor([[0.0, 0.1], [0.2, -0.1]], dtype=torch.float64)
    v0 = torch.zeros(2, 2, dtype=torch.float64)
    qs, vs, us = ex.closed_loop(model, policy, q0, v0, 8, cam, look)
    assert qs.shape == (2, 9, 2) and us.shape == (2, 8)
    assert torch.all(us.abs() <= ex.FORCE)
    loss, _ = ex.loss_of(qs, vs, us)
    loss.backward()
    conv = policy.encoder[0].weight.grad
    assert conv is not None and float(conv.abs().sum()) > 0, "the first convolution gets no gradient"
    # The renderer's share: with the pixels' gradient to q cut, the first layer's gradient changes.
    g_full = conv.clone()
    policy.zero_grad()
    orig = ex.frames_of
    try:
        ex.frames_of = lambda m, q, c, l: orig(m, q.detach(), c, l)
        qs, vs, us = ex.closed_loop(model, policy, q0, v0, 8, cam, look)
        ex.loss_of(qs, vs, us)[0].backward()
    finally:
        ex.frames_of = orig
    change = float((g_full - policy.encoder[0].weight.grad).abs().max() / g_full.abs().max())
    assert change > 1e-5, f"no gradient flows through the renderer (relative change {change:.2e} when cut)"


def test_encoder_pretraining_learns_the_cart_position(ex, scene):
    """A few seconds of the encoder's supervised pre-training (the full run uses 12000 samples and 15
    passes; here 512 and 4): the cart's position is read from the pixels, and the policy's `state`
    gives the estimate in SI units."""
    model, cam, look = scene
    torch.manual_seed(0)
    policy = ex.PixelPolicy(8)
    r2 = ex.pretrain_encoder(policy, model, cam, look, 512, 4, np.random.default_rng(0))
    assert len(r2) == 4 and r2[0] > 0.7, f"held-out R^2 of x {r2[0]:.3f}"
    q = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)
    e = policy.encode(ex.frames_of(model, q, cam, look))
    with torch.no_grad():
        x = policy.state(e, e, e)[:, 0]
    assert x[0] > 0.2 and x[1] < -0.2, f"estimated x {x.tolist()} for x = 1, -1"


def test_balance_times(ex):
    dt = 0.02
    qs = np.zeros((3, 6, 2))
    qs[1, :2, 1] = 0.5           # balanced from step 2 on
    qs[2, -1, 0] = 3.0           # off the track at the end
    qs[0, :, 1] = 2 * np.pi      # upright, one turn around
    t = ex.balance_times(qs, dt)
    assert t[0] == (pytest.approx(6 * dt), 0.0)
    assert t[1][0] == pytest.approx(4 * dt) and t[1][1] == pytest.approx(2 * dt)
    assert t[2] == (0.0, None)


def test_quick_run_writes_results(ex, tmp_path):
    history, qs, times = ex.main(["--quick", "--quiet", "--out", str(tmp_path)])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) for h in history)
    assert qs.shape == (2, 6, 2) and len(times) == 2
    readme = (tmp_path / "README.md").read_text()
    assert "--quick" in readme and "seed 0" in readme and "balance time" in readme
    assert "held-out R^2" in readme and "true state as labels" in readme
    assert (tmp_path / "balance.png").stat().st_size > 1000
    assert (tmp_path / "policy_balance.pt").exists()


def test_energy_gap(ex):
    """The swing-up's energy-shaping term: -2 hanging at rest, 0 upright at rest, and the gradient at a
    hanging pole that moves is not zero (paper 002's tip loss alone is flat there)."""
    qs = torch.tensor([[0.0, np.pi], [0.3, 0.0], [0.0, np.pi]], dtype=torch.float64)
    vs = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]], dtype=torch.float64, requires_grad=True)
    e = ex.energy_gap(qs, vs)
    assert e[0].item() == pytest.approx(-2.0) and e[1].item() == pytest.approx(0.0)
    (e[2] + 2.0).backward()
    assert vs.grad[2, 1].item() == pytest.approx(ex.POLE_INERTIA / ex.POLE_MGL) and vs.grad[2, 1].item() > 0


def test_quick_swingup_run(ex, tmp_path):
    """The swing-up stage's encoder reports (x, sin theta, cos theta, xdot, thetadot); with the energy term."""
    history, qs, times = ex.main(["--quick", "--quiet", "--stage", "swingup", "--energy", "1", "--train-spin", "1",
                                  "--out", str(tmp_path)])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) for h in history)
    assert np.all(np.abs(np.abs(qs[:, 0, 1]) - np.pi) < 0.11), "swing-up evaluations start hanging"
    text = (tmp_path / "results_swingup.md").read_text()
    assert "sin theta" in text and "cos theta" in text and "held-out R^2" in text
    assert "energy-shaping term (not in paper 002)" in text


def test_bad_arguments_are_explained(ex, tmp_path):
    with pytest.raises(SystemExit):
        ex.main(["--updates", "0", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):
        ex.main(["--init", str(tmp_path / "missing.pt"), "--out", str(tmp_path)])


def test_classical_swingup_is_possible(ex, scene):
    """The swing-up is possible within the force limit: a classical controller on the true state (energy
    pumping, LQR catch) brings the hanging pole up and holds it, the cart on the track (the --classical check)."""
    model, _, _ = scene
    q0, v0 = ex.initial_states("swingup", 2, np.random.default_rng(1000))
    qs = ex.classical_swingup(model, q0.numpy(), v0.numpy(), 6.0)
    times = ex.balance_times(qs, ex.DT * ex.SUBSTEPS)
    assert all(s >= 3.0 for s, _ in times), times
    assert np.abs(qs[..., 0]).max() < ex.TRACK
    # Without the pump the pole stays hanging: the check measures the controller, not the start.
    qs = ex.classical_swingup(model, q0.numpy(), v0.numpy(), 6.0, pump=0.0)
    assert all(s == 0.0 for s, _ in ex.balance_times(qs, ex.DT * ex.SUBSTEPS))


def test_reverse_curriculum_starts(ex):
    """--reverse-from: by angle, at rest within D of upright; --reverse-shell: up to pi on the orbit of
    upright energy turning toward upright, beyond with an energy deficit up to D - pi (pi + 2: hanging)."""
    rng = np.random.default_rng(0)
    q, v = ex.initial_states("swingup", 200, rng, spin=0.1, reach=0.5)
    assert np.all(np.abs(q[:, 1].numpy()) <= 0.5) and np.all(np.abs(v[:, 1].numpy()) <= 0.1)
    q, v = ex.initial_states("swingup", 200, rng, reach=2.0, shell=True)
    gap = ex.energy_gap(q, v).numpy()
    assert np.all(np.abs(q[:, 1].numpy()) <= 2.0) and np.allclose(gap, 0.0, atol=1e-9)
    assert np.all(q[:, 1].numpy() * v[:, 1].numpy() <= 0), "on the first part, the pole turns toward upright"
    q, v = ex.initial_states("swingup", 400, rng, reach=np.pi + 1.0, shell=True)
    gap = ex.energy_gap(q, v).numpy()
    assert gap.min() >= -1.0 - 1e-9 and gap.min() < -0.8 and gap.max() <= 1e-9
    q, v = ex.initial_states("swingup", 50, rng, reach=np.pi + 2.0, shell=True)
    assert np.all(ex.energy_gap(q, v).numpy() >= -2.0 - 1e-9)


def test_energy_weight_switches_near_the_top(ex):
    qs = torch.tensor([[0.0, np.pi], [0.0, 0.0]], dtype=torch.float64)
    w = ex.energy_weight(qs, 0.5)
    assert w[0].item() > 0.999 and w[1].item() < 1e-3
    assert ex.energy_weight(qs, None) == 1.0


def test_quick_reverse_curriculum_run(ex, tmp_path):
    history, qs, times = ex.main(["--quick", "--quiet", "--stage", "swingup", "--reverse-shell", "--reverse-from", "0.25",
                                  "--upright", "1", "--window", "1", "--skip-spikes", "5", "--energy", "1",
                                  "--energy-switch", "0.5", "--out", str(tmp_path)])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) for h in history)
    assert all(h["reach"] is not None for h in history)
    text = (tmp_path / "results_swingup.md").read_text()
    assert "Reverse curriculum (along the swing-up" in text and "Truncated backpropagation" in text
    assert "(1 - cos theta)" in text and "switched by height" in text


def test_quick_shac_run(ex, tmp_path):
    """--method shac: windows through renderer and physics, a critic on the true state, episodes carried across
    windows (0.2 s episodes in 3-step windows: some end inside a window); the results say what the critic sees."""
    history, qs, times = ex.main(["--quick", "--quiet", "--stage", "swingup", "--method", "shac", "--shac-energy", "1",
                                  "--noise", "0.1", "--critic-warmup", "1", "--out", str(tmp_path)])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) and np.isfinite(h["value_loss"]) for h in history)
    assert history[-1]["episodes"] > 3, "episodes should end and restart inside the windows"
    assert [h["check"] is not None for h in history] == [False, True, True]
    assert np.all(np.abs(np.abs(qs[:, 0, 1]) - np.pi) < 0.11), "swing-up evaluations start hanging"
    text = (tmp_path / "results_swingup.md").read_text()
    assert "SHAC" in text and "true state" in text and "Episodes to success" in text and "energy-shaping" in text


def test_shac_reward_pushes_away_from_hanging(ex):
    """The wrapped angle: theta and theta + 2 pi score alike, and hanging is not a stationary point."""
    q = torch.tensor([[0.0, 0.3], [0.0, 0.3 + 2 * np.pi], [0.0, np.pi - 0.05]], dtype=torch.float64, requires_grad=True)
    v, u = torch.zeros(3, 2, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    r = ex.shac_reward(q, v, u)
    assert r[0].item() == pytest.approx(r[1].item()) and r[0].item() == pytest.approx(-0.09)
    r[2].backward()
    assert q.grad[2, 1].item() == pytest.approx(-2 * (np.pi - 0.05)), "the reward grows as the pole leaves hanging"


def test_quick_distill_run(ex, tmp_path):
    """--method distill: DAgger from the classical teacher (true state) onto the pixel policy; the results say
    that the teacher sees the true state and that the physics is not differentiated."""
    history, qs, times = ex.main(["--quick", "--quiet", "--stage", "swingup", "--method", "distill", "--out", str(tmp_path)])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) for h in history)
    assert [h["beta"] for h in history] == [1.0, 0.5, 0.25]
    assert history[-1]["samples"] == 3 * 3 * 5, "3 rounds of 3 episodes of 5 control steps"
    text = (tmp_path / "results_swingup.md").read_text()
    assert "DAgger" in text and "**true state**" in text and "not end to end through the physics" in text


def test_classical_force_is_the_classical_controller(ex, scene):
    """classical_force (the DAgger teacher) is the --classical controller: LQR near upright, pumping below, clipped."""
    model, _, _ = scene
    K = ex.classical_gain(model)
    assert K.shape == (1, 4)
    q = np.array([[0.0, 0.1], [0.0, np.pi], [0.0, np.pi - 0.2]])
    v = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    u = ex.classical_force(q, v, K)
    assert u[0] == pytest.approx(-float(K[0] @ np.array([0.0, 0.1, 0.0, 0.0])))
    assert u[1] == 0.0 and u[2] != 0.0 and np.all(np.abs(u) <= ex.FORCE)


def test_methods_other_than_bptt_are_for_the_swingup(ex, tmp_path):
    with pytest.raises(SystemExit):
        ex.main(["--method", "shac", "--stage", "balance", "--out", str(tmp_path)])


def test_quick_shac_variants(ex, tmp_path):
    """--detach-pixels (the actor's gradient through the physics only) writes its results and says so;
    --state-actor (the diagnostic on the true state) prints its checks, writes nothing and leaves the renderer in place."""
    history, _, _ = ex.main(["--quick", "--quiet", "--stage", "swingup", "--method", "shac", "--detach-pixels",
                             "--out", str(tmp_path / "detached")])
    assert len(history) == 3 and all(np.isfinite(h["loss"]) for h in history)
    assert "through the physics only" in (tmp_path / "detached" / "results_swingup.md").read_text()
    frames_of = ex.frames_of
    history, qs, times = ex.main(["--quick", "--quiet", "--stage", "swingup", "--method", "shac", "--state-actor",
                                  "--out", str(tmp_path / "state")])
    assert len(history) == 3 and qs is None and times is None
    assert not (tmp_path / "state" / "results_swingup.md").exists()
    assert ex.frames_of is frames_of
