"""A cart-pole controlled from its camera's pixels (paper 002, section 3.4; gradyn issue 19, item 2).

The policy sees only 96 x 32 greyscale frames rendered by gradyn's differentiable ray-cast camera
(``gradyn.torch.render``): the current frame and the two before it. The camera sees the pole as a
band painted on a disc that turns with it on the hinge (cartpole_pixels.xml says why: a thin rod's
outline flickers from pixel to pixel at this resolution, a bilinear texture turns smoothly). The policy
is an encoder (a small convolutional network: the frames -> an estimate of the state) and a controller
(the estimate -> force). First the encoder is pre-trained by regression on frames rendered from random
states, with the true state as labels (the only use of the state by the policy, see PixelPolicy). Then
the encoder is frozen and the controller is trained: its force drives gradyn's physics
(``gradyn.torch.step``), the new state is rendered, and so on; the whole closed loop, controller ->
physics -> renderer -> encoder -> controller, is differentiated end to end (backpropagation through
time) for the paper's loss: the distance from the pole's tip to the upright point, read from the
state, plus small penalties. Adam updates the controller.

Two stages (``--stage``):

* ``balance``: start near upright (|theta| <= 0.25 rad, small velocities), horizon 2 s;
* ``swingup``: start hanging (theta = pi, small noise), horizon 3 s (the paper's episode length),
  its own encoder pre-trained on every angle (it reports sin and cos theta), evaluated for 15 s.

Options for the swing-up (none is in paper 002; by BPTT the swing-up from pixels has not succeeded, see README.md):

* ``--energy W`` (``--energy-final``, ``--train-spin``): an energy-shaping term W ((E - E_upright) / (m g l/2))^2;
  ``--energy-switch C`` weights it per control step by a smooth step in cos theta, about 1 below
  cos theta = C (pump) and 0 above (the tip loss alone catches);
* ``--upright W``: W (1 - cos theta) added (the tip loss is quartic in theta near upright);
* ``--reverse-from D0`` (``--reverse-step``, ``--reverse-success``): a reverse curriculum: training episodes
  start within D of upright, D growing from D0 by a step after each update in which most of the batch
  held upright through the horizon's last third, the horizon growing with D; with ``--reverse-shell`` the
  starts walk back along the swing-up (on the orbit of upright energy, turning toward upright, then
  with a growing energy deficit, up to hanging at rest at D = pi + 2); see ``initial_states``;
* ``--window K``: truncated backpropagation (state detached every K control steps);
  ``--skip-spikes F``: an update whose gradient norm is F times the recent median is not taken;
* ``--init-encoder PATH``: reuse a pre-trained encoder, the controller from zero;
* ``--classical``: no training, no pixels: a feasibility check, a classical controller on the true state
  (energy pumping + LQR) from the swing-up's evaluation starts; prints its balance times.

Training methods for the swing-up (``--method``; the policy, its frozen encoder and the evaluation are the same):

* ``bptt`` (default): the above, backpropagation through whole episodes;
* ``shac``: short-horizon actor-critic (Xu et al. 2022; see ``train_shac``): ``--worlds`` worlds run their
  episodes on, each update one window of ``--shac-steps`` control steps differentiated through renderer,
  encoder and physics, the return after the window bootstrapped by a critic that sees the TRUE state
  (privileged, training only); ``--shac-energy``, ``--noise``, ``--critic-warmup``;
* ``distill``: DAgger, imitation of the ``--classical`` controller (a teacher that sees the TRUE state) on the
  states the pixel policy visits; no gradient through the physics (see ``train_distill``).

After training, the policy is run closed loop from pixels only for ``--eval-seconds`` (default 12 s)
from ``--eval-worlds`` new initial states, and the script measures how long each pole stays balanced
(|theta| < 0.2 rad and |x| < 2.4 m, InvertedPendulum/CartPole rules) until the end of the run.

Writes ``results_<stage>.md`` (numbers, seed, command), ``<stage>.png`` (training curve, pole angle
during the evaluation, frames) and ``policy_<stage>.pt`` beside this file (or into ``--out``), and
regenerates ``README.md`` there from the results files present.

    .venv/bin/python examples/pixels/cartpole_from_pixels.py --stage balance
    .venv/bin/python examples/pixels/cartpole_from_pixels.py --stage swingup
    .venv/bin/python examples/pixels/cartpole_from_pixels.py --classical   # is a swing-up possible at all?
    .venv/bin/python examples/pixels/cartpole_from_pixels.py --quick --out /tmp/pixels   # a smoke run
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import sys
import time

if __name__ == "__main__" and hasattr(os, "sched_setaffinity") and "--all-cores" not in sys.argv:
    # gradyn's batched calls (render, step) share the worlds out on an OpenMP pool over all cores; for
    # 8 tiny worlds on a busy 2-core machine the pool costs far more than it saves (measured: a step
    # of 8 worlds 14 ms on the pool, 0.2 ms on one core). gradyn.torch.render/step take no `threads`,
    # so the script runs on one core (set before gradyn is loaded). --all-cores keeps them all.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import numpy as np
import torch

import gradyn
import gradyn.torch as gt

HERE = pathlib.Path(__file__).resolve().parent
MODEL_FILE = HERE / "cartpole_pixels.xml"
WIDTH, HEIGHT = 96, 32
DT, SUBSTEPS = 0.02, 2          # semi-implicit Euler steps of 0.02 s (CartPole-v1's tau); the policy acts every 0.04 s (25 Hz)
FORCE = 10.0                    # N, the force limit (CartPole-v1's force magnitude)
BALANCED_ANGLE, TRACK = 0.2, 2.4


def load_model():
    return gradyn.load(str(MODEL_FILE))


def camera():
    """Fixed in the world 6 m in front of the track at the cart's height: about 6.8 m x 2.3 m in view
    at the pole (x within +-3.4 m, the pole upright and hanging both in view)."""
    return gradyn.Camera.look_at(eye=(0.0, -6.0, 0.0), target=(0.0, 0.0, 0.0), width=WIDTH, height=HEIGHT, fovy=22.0)


def appearance():
    """Textures, not solid colours: the renderer's gradient w.r.t. q comes from the bilinear texture
    (a solid unlit geom's pixels do not change while it moves, silhouettes aside). The pole is bright
    with darker bands along its length (the capsule's v runs along the axis), the cart mid-grey with
    a ramp along x (a box face's rows run along the cart), the background black; no lighting."""
    # The disc's face carries the pole's picture: u, v over the disc (texel centres), a bright band
    # along the pole's direction with soft (Gaussian) sides, brightest toward the pole's far end.
    n = 16
    c = (np.arange(n) + 0.5) / n - 0.5
    U, V = np.meshgrid(c, c)
    disc = 0.1 + 0.85 * np.exp(-(U / 0.15) ** 2) * (0.6 - 0.8 * V)
    return gradyn.Appearance(textures={"disc": np.repeat(disc[:, :, None], 3, axis=2)},
                             colors={"pole": (0.0, 0.0, 0.0), "cart": (0.0, 0.0, 0.0)},
                             background=(0.0, 0.0, 0.0), lighting=False)


def frames_of(model, q, cam, look):
    """(B, H, W) greyscale frames of configurations q (B, 2), differentiable w.r.t. q."""
    return gt.render(model, q, cam, look).mean(-1)


class PixelPolicy(torch.nn.Module):
    """Three frames (current, previous, the one before) -> force in N, in two parts:

    * ``encoder``: a small convolutional network (3 strided convolutions, 128 hidden units) from the
      current frame and its two changes (f0, f0 - f1, f1 - f2 as 3 channels of 96 x 32) to an estimate
      of the state (x, theta, xdot, thetadot), standardised (``mean``/``scale`` give it in SI units).
      Pre-trained by regression on frames rendered from random states (``pretrain_encoder``): the state
      labels are used there and nowhere else. (A linear map from the same pixels, fitted by ridge
      regression on 3000 samples of this distribution, reached held-out R^2 of only 0.955 for theta,
      0.797 for xdot and 0.127 for thetadot: a frame difference's meaning depends on where the disc is.)
    * ``head``: the controller, the estimate -> 64 -> 64 -> tanh x FORCE, trained end to end through
      the renderer and the physics (the encoder frozen, the gradient passing through it to the pixels).

    At evaluation the policy's only input is pixels. ``encode`` is the per-frame part (here the frame
    itself, flattened), computed once and reused at the next two steps. The head's last layer starts
    at zero (no force at first)."""

    def __init__(self, hidden: int = 64, outputs: int = 4):
        super().__init__()
        self.encoder = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 5, stride=2, padding=2), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 32, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
            torch.nn.Linear(32 * (HEIGHT // 8) * (WIDTH // 8), 128), torch.nn.ReLU(), torch.nn.Linear(128, outputs))
        self.register_buffer("mean", torch.zeros(outputs))
        self.register_buffer("scale", torch.ones(outputs))
        self.head = torch.nn.Sequential(
            torch.nn.Linear(outputs, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
            torch.nn.Linear(hidden, 1))
        torch.nn.init.zeros_(self.head[-1].weight)
        torch.nn.init.zeros_(self.head[-1].bias)

    @staticmethod
    def features(f0, f1, f2):
        """(B, 3, H, W): the current frame and its two changes (x 10)."""
        return torch.stack([f0, 10.0 * (f0 - f1), 10.0 * (f1 - f2)], 1)

    def encode(self, frame):
        """(B, H, W) frame -> (B, H, W) float32."""
        return frame.float()

    def estimate(self, e0, e1, e2):
        """Encodings of the current, previous and earlier frames -> standardised state estimate (B, 4)."""
        return self.encoder(self.features(e0, e1, e2))

    def state(self, e0, e1, e2):
        """The estimate in SI units: (x m, theta rad, xdot m/s, thetadot rad/s)."""
        return self.estimate(e0, e1, e2) * self.scale + self.mean

    def act(self, e0, e1, e2):
        """Encodings of the current, previous and earlier frames -> force (float64)."""
        return FORCE * torch.tanh(self.head(self.estimate(e0, e1, e2))[:, 0]).double()

    def forward(self, f0, f1, f2):
        return self.act(self.encode(f0), self.encode(f1), self.encode(f2))


# The encoder's training states by stage: (x, theta, xdot, thetadot) ranges, and the labels. The swing-up's
# encoder sees every angle and reports (x, sin theta, cos theta, xdot, thetadot) (theta wraps around).
ENCODER_STATES = {"balance": ((2.2, 0.8, 1.5, 2.5), ("x", "theta", "xdot", "thetadot")),
                  "swingup": ((2.2, np.pi, 3.0, 9.0), ("x", "sin theta", "cos theta", "xdot", "thetadot"))}


def labels_of(stage, q, v):
    if stage == "balance":
        return torch.cat([q, v], -1)
    return torch.stack([q[:, 0], torch.sin(q[:, 1]), torch.cos(q[:, 1]), v[:, 0], v[:, 1]], -1)


def encoder_data(model, cam, look, n, rng, stage="balance"):
    """n labelled samples: a random state (x ~ U(-2.2, 2.2) m, theta ~ U(-0.8, 0.8) rad, xdot ~ U(-1.5, 1.5)
    m/s, thetadot ~ U(-2.5, 2.5) rad/s), two control steps under random forces, the three frames rendered
    at the control steps (as the policy sees them) and the state at the last. Returns (features (n, 3, H, W)
    float32, states (n, 4) float64)."""
    r = ENCODER_STATES[stage][0]
    q = torch.tensor(np.stack([rng.uniform(-r[0], r[0], n), rng.uniform(-r[1], r[1], n)], -1))
    v = torch.tensor(np.stack([rng.uniform(-r[2], r[2], n), rng.uniform(-r[3], r[3], n)], -1))
    fs = []
    with torch.no_grad():
        for k in range(3):
            if k:
                tau = torch.tensor(np.stack([rng.uniform(-FORCE, FORCE, n), np.zeros(n)], -1))
                for _ in range(SUBSTEPS):
                    q, v = gt.step(model, q, v, tau, DT)
            fs.append(frames_of(model, q, cam, look).float())
    return PixelPolicy.features(fs[2], fs[1], fs[0]), labels_of(stage, q, v)


def pretrain_encoder(policy, model, cam, look, n, epochs, rng, stage="balance"):
    """Fit the policy's encoder (frames -> standardised state) by regression on n rendered samples
    (Adam, batches of 64, one-cycle learning rate up to 0.002, `epochs` passes); returns the R^2 of each
    state component (x, theta, xdot, thetadot) on n/8 more samples held out."""
    X, Y = encoder_data(model, cam, look, n, rng, stage)
    Xv, Yv = encoder_data(model, cam, look, max(n // 8, 8), rng, stage)
    mean, scale = Y.mean(0), Y.std(0)
    Z, Zv = ((Y - mean) / scale).float(), ((Yv - mean) / scale).float()
    with torch.no_grad():
        policy.mean.copy_(mean.float())
        policy.scale.copy_(scale.float())
    net = policy.encoder
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    bs = min(64, n)
    nb = n // bs
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 2e-3, total_steps=epochs * nb)
    for _ in range(epochs):
        perm = torch.randperm(n)
        for i in range(nb):
            idx = perm[i * bs:(i + 1) * bs]
            loss = ((net(X[idx]) - Z[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    with torch.no_grad():
        r2 = 1 - ((net(Xv) - Zv) ** 2).mean(0) / Zv.var(0)
    return [float(r) for r in r2]


def closed_loop(model, policy, q0, v0, steps, cam, look, keep_frames=False, window=None):
    """Policy from pixels -> gradyn physics -> render, `steps` times. Returns qs, vs (B, steps+1, 2),
    forces (B, steps) and, if asked, the frames (B, steps+1, H, W); differentiable end to end, or, with
    `window` = K, in truncated windows: the state and the frame history are detached every K control
    steps (the loss still covers every step; its gradient reaches back at most K steps)."""
    q, v = q0, v0
    f = frames_of(model, q, cam, look)
    k = policy.encode(f)
    hist = [k, k, k]  # before the first frame: the first frame (at rest, as far as the policy can tell)
    qs, vs, us, fs = [q], [v], [], [f.detach()] if keep_frames else []
    zeros = torch.zeros(q.shape[0], dtype=torch.float64)
    for i in range(steps):
        if window and i and i % window == 0:
            q, v, hist = q.detach(), v.detach(), [h.detach() for h in hist]
        u = policy.act(hist[-1], hist[-2], hist[-3])
        tau = torch.stack([u, zeros], dim=-1)
        for _ in range(SUBSTEPS):
            q, v = gt.step(model, q, v, tau, DT)
        f = frames_of(model, q, cam, look)
        hist = hist[-2:] + [policy.encode(f)]
        qs.append(q), vs.append(v), us.append(u)
        if keep_frames:
            fs.append(f.detach())
    out = torch.stack(qs, 1), torch.stack(vs, 1), torch.stack(us, 1)
    return out + (torch.stack(fs, 1),) if keep_frames else out


def loss_of(qs, vs, us):
    """Paper 002's objective: the squared distance from the pole's tip (x + sin theta, cos theta) to
    the upright point (0, 1), averaged over the horizon, plus penalties on the cart's distance from
    the centre, speed and force."""
    x, th = qs[..., 0], qs[..., 1]
    tip = (x + torch.sin(th)) ** 2 + (torch.cos(th) - 1.0) ** 2
    # (plus 0.1 x^2: a cart that leaves the camera's view leaves the policy blind)
    return (tip.mean() + 0.1 * (x ** 2).mean() + 1e-3 * (vs ** 2).sum(-1).mean() + 1e-4 * (us ** 2).mean(),
            tip.mean())


# The pole (0.1 kg, 1 m, hinged at one end): moment of inertia about the hinge m l^2 / 3 and m g l/2.
POLE_INERTIA, POLE_MGL = 0.1 * 1.0 ** 2 / 3.0, 0.1 * 9.81 * 0.5


def energy_gap(qs, vs):
    """(E - E_upright) / (m g l/2) of the pole about its hinge (in the cart's frame: kinetic
    1/2 I thetadot^2 plus potential m g l/2 cos theta), per episode and control step: -2 hanging at rest,
    0 upright at rest (and on the orbit that swings up to it). Not part of paper 002's loss."""
    th, thd = qs[..., 1], vs[..., 1]
    return 0.5 * POLE_INERTIA * thd ** 2 / POLE_MGL + torch.cos(th) - 1.0


def energy_weight(qs, switch):
    """Per control step, the energy term's weight in [0, 1] (--energy-switch C): about 1 while cos theta < C
    (the pole low: pump), about 0 above (near the top the tip loss alone acts: catch), a smooth step of
    width 0.1 in cos theta. None: 1 everywhere."""
    if switch is None:
        return 1.0
    return 0.5 * (1.0 - torch.tanh((torch.cos(qs[..., 1]) - switch) / 0.1))


def initial_states(stage, n, rng, spread=0.1, spin=0.1, reach=None, shell=False):
    """Balance: near upright. Swing-up: theta = pi + U(-spread, spread), thetadot ~ U(-spin, spin)
    (the evaluation: 0.1 rad, 0.1 rad/s). With `reach` (the reverse curriculum) instead:
    * shell False: theta = +-U(0, reach), a distance from upright up to `reach` on either side, at rest
      (+- spin);
    * shell True: `reach` in [0, pi + 2] walks back along the swing-up: up to pi, the pole starts at
      theta = +-U(0, reach), turning toward upright at the speed that brings it there at rest (the energy
      of upright: the orbit a swing-up ends on); beyond pi, with an energy deficit (E_upright - E) / (m g
      l/2) = delta ~ U(0, reach - pi) (reach = pi + 2: hanging at rest), at a random angle where that is
      possible (1 - cos theta >= delta), turning either way at the speed that gives that energy."""
    if stage == "swingup" and reach is not None:
        x = rng.uniform(-0.2, 0.2, n)
        v = rng.uniform(-0.1, 0.1, (n, 2))
        if shell:
            delta = rng.uniform(0.0, float(np.clip(reach - np.pi, 0.0, 2.0)), n)
            d = rng.uniform(np.arccos(np.clip(1.0 - delta, -1.0, 1.0)), min(reach, np.pi))
            sign = rng.choice([-1.0, 1.0], n)
            turn = -sign if reach <= np.pi else rng.choice([-1.0, 1.0], n)
            th = sign * d
            v[:, 1] = turn * np.sqrt(np.maximum(1.0 - np.cos(d) - delta, 0.0) * 2 * POLE_MGL / POLE_INERTIA)
        else:
            th = rng.choice([-1.0, 1.0], n) * rng.uniform(0.0, reach, n)
            v[:, 1] = rng.uniform(-spin, spin, n)
        return torch.tensor(np.stack([x, th], -1)), torch.tensor(v)
    if stage == "balance":
        q = np.stack([rng.uniform(-0.5, 0.5, n), rng.uniform(-0.25, 0.25, n)], -1)
        v = np.stack([rng.uniform(-0.2, 0.2, n), rng.uniform(-0.3, 0.3, n)], -1)
    else:
        q = np.stack([rng.uniform(-0.2, 0.2, n), np.pi + rng.uniform(-spread, spread, n)], -1)
        v = rng.uniform(-0.1, 0.1, (n, 2))
        v[:, 1] = rng.uniform(-spin, spin, n)
    return torch.tensor(q), torch.tensor(v)


def classical_gain(model):
    """The LQR gain K (1, 4) of the classical controller: the control step linearised at upright (central
    differences), Q = diag(1, 10, 1, 1), R = 0.1, the discrete Riccati equation by fixed-point iteration."""
    def f(s, u):
        q, v = s[:2].copy(), s[2:].copy()
        for _ in range(SUBSTEPS):
            q, v = gradyn.step(model, q, v, np.array([u, 0.0]), DT)
        return np.concatenate([q, v])

    eps = 1e-6
    A = np.stack([(f(eps * e, 0.0) - f(-eps * e, 0.0)) / (2 * eps) for e in np.eye(4)], 1)
    B = ((f(np.zeros(4), eps) - f(np.zeros(4), -eps)) / (2 * eps))[:, None]
    Q, R, P = np.diag([1.0, 10.0, 1.0, 1.0]), np.array([[0.1]]), np.diag([1.0, 10.0, 1.0, 1.0])
    for _ in range(5000):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
    return K


def classical_force(q, v, K, pump=5.0, kx=1.0, kv=2.0, catch=0.5):
    """The classical controller's force (N, within the limit) for true states q, v (B, 2) (numpy): LQR
    within `catch` rad of upright, energy pumping below (force pump x (E_upright - E)/(m g l/2) x thetadot
    cos theta, minus kx x + kv xdot to keep the cart near the centre)."""
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    th, thd = wrap(q[:, 1]), v[:, 1]
    lqr = -(np.stack([q[:, 0], th, v[:, 0], thd], -1) @ K[0])
    gap = 0.5 * POLE_INERTIA * thd ** 2 / POLE_MGL + np.cos(th) - 1.0
    energy = pump * gap * thd * np.cos(th) - kx * q[:, 0] - kv * v[:, 0]
    return np.clip(np.where(np.cos(th) > np.cos(catch), lqr, energy), -FORCE, FORCE)


def classical_swingup(model, q0, v0, seconds, pump=5.0, kx=1.0, kv=2.0, catch=0.5):
    """A feasibility check, not a pixel policy: a classical controller on the true state, at the same
    control rate and force limit (``classical_force``: energy pumping until the pole is within `catch` rad
    of upright, then LQR on the control step linearised at upright). Returns qs (B, steps+1, 2)."""
    K = classical_gain(model)
    steps = int(round(seconds / (DT * SUBSTEPS)))
    out = []
    for q, v in zip(np.asarray(q0, float), np.asarray(v0, float)):
        qs = [q]
        for _ in range(steps):
            u = float(classical_force(q, v, K, pump, kx, kv, catch)[0])
            for _ in range(SUBSTEPS):
                q, v = gradyn.step(model, q, v, np.array([u, 0.0]), DT)
            qs.append(q)
        out.append(np.stack(qs))
    return np.stack(out)


def wrap(theta):
    return (theta + np.pi) % (2 * np.pi) - np.pi


def balance_times(qs: np.ndarray, dt: float):
    """Per world: (seconds balanced until the end of the run, the time balance began), balanced
    meaning |theta| < 0.2 rad and |x| < 2.4 m at every control step from then on (0, None if not
    balanced at the end)."""
    ok = (np.abs(wrap(qs[..., 1])) < BALANCED_ANGLE) & (np.abs(qs[..., 0]) < TRACK)
    out = []
    for row in ok:
        bad = np.flatnonzero(~row)
        start = 0 if bad.size == 0 else bad[-1] + 1
        n = row.size - start
        out.append((n * dt, None if n == 0 else start * dt))
    return out


def train(args, model, cam, look, log=print):
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    names = ENCODER_STATES[args.stage][1]
    policy = PixelPolicy(args.hidden, len(names))
    init_from = None
    t0 = time.time()
    if args.init is not None:
        policy.load_state_dict(torch.load(args.init))
        init_from = str(args.init)
        args.encoder_r2, args.encoder_seconds = None, 0.0
    elif args.init_encoder is not None:
        # The encoder (and its standardisation) only; the controller starts from zero.
        saved = torch.load(args.init_encoder)
        policy.load_state_dict({k: (saved[k] if not k.startswith("head.") else v) for k, v in policy.state_dict().items()})
        init_from = str(args.init_encoder)
        args.encoder_r2, args.encoder_seconds = None, 0.0
    else:
        args.encoder_r2 = pretrain_encoder(policy, model, cam, look, args.encoder_samples, args.encoder_epochs, rng, args.stage)
        args.encoder_seconds = time.time() - t0
        log(f"encoder: held-out R^2 {r2_text(args)} ({args.encoder_seconds:.1f} s)")
    # The encoder stays frozen: the controller (head) learns on its estimate, end to end through the
    # renderer and the physics (the gradient passes through the encoder to the pixels and on to q).
    policy.encoder.requires_grad_(False)
    opt = torch.optim.Adam(policy.head.parameters(), lr=args.lr)
    # Curriculum: the horizon grows linearly from --start-horizon to --horizon over the first 60 % of
    # the updates (a long unstable rollout's gradient is of little use to a policy that cannot yet
    # hold the pole); the learning rate decays as a cosine to a tenth.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * k / max(args.updates, 1))))
    start = min(args.start_horizon, args.horizon)
    # The reverse curriculum (swingup, --reverse-from D0 > 0): training episodes start at most `reach` rad
    # from upright; reach starts at D0 and grows by --reverse-step after each update in which at least
    # --reverse-success of the batch held upright through the horizon's last third, up to pi (hanging;
    # pi + 2 with --reverse-shell).
    top = np.pi + 2.0 if args.reverse_shell else np.pi  # the curriculum's end: hanging at rest
    reach = min(args.reverse_from, top) if args.stage == "swingup" and args.reverse_from > 0 else None
    history = []
    best, best_mean, window = None, np.inf, 10
    t0 = time.time()
    try:
        from tqdm import tqdm
        bar = tqdm(range(args.updates), desc=f"{args.stage} updates", disable=args.quiet, mininterval=5.0)
    except ImportError:  # tqdm is a dependency of the test setup; plain loop otherwise
        bar = range(args.updates)
    for it in bar:
        if reach is None:
            horizon = start + (args.horizon - start) * min(1.0, it / max(0.6 * args.updates, 1))
        else:  # the reverse curriculum: the horizon grows with the reach
            horizon = start + (args.horizon - start) * (reach - args.reverse_from) / max(top - args.reverse_from, 1e-9)
        steps = max(1, int(round(horizon / (DT * SUBSTEPS))))
        q0, v0 = initial_states(args.stage, args.batch, rng, args.train_spread, args.train_spin, reach, args.reverse_shell)
        qs, vs, us = closed_loop(model, policy, q0, v0, steps, cam, look, window=args.window)
        loss, tip = loss_of(qs, vs, us)
        if args.energy > 0:
            # Energy shaping (departs from paper 002's loss): (E - E_upright)^2 of the pole, its weight
            # annealed linearly to --energy-final x --energy over the updates.
            w = args.energy * (1.0 - (1.0 - args.energy_final) * it / max(args.updates - 1, 1))
            loss = loss + w * (energy_weight(qs, args.energy_switch) * energy_gap(qs, vs) ** 2).mean()
        if args.upright > 0:
            # (departs from paper 002's loss) the tip loss is quartic in theta near upright
            # ((cos theta - 1)^2, the cart under the tip makes the rest vanish): a quadratic term
            loss = loss + args.upright * (1.0 - torch.cos(qs[..., 1])).mean()
        opt.zero_grad()
        loss.backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(policy.head.parameters(), args.clip))
        recent_g = [h["grad_norm"] for h in history[-20:]]
        skipped = bool(args.skip_spikes and len(recent_g) >= 5 and gnorm > args.skip_spikes * np.median(recent_g))
        if not skipped:  # (--skip-spikes: an update whose gradient is an outlier is not taken)
            opt.step()
        sched.step()
        final = np.abs(wrap(qs[:, -1, 1].detach().numpy()))
        # held: upright (and on the track) at every control step of the horizon's last third
        tail = qs[:, -max(1, steps // 3):].detach().numpy()
        held = np.all((np.abs(wrap(tail[..., 1])) < BALANCED_ANGLE) & (np.abs(tail[..., 0]) < TRACK), axis=1)
        history.append({"update": it + 1, "horizon": steps * DT * SUBSTEPS, "loss": loss.item(), "tip": tip.item(), "grad_norm": gnorm,
                        "final_upright": float(np.mean(final < BALANCED_ANGLE)), "seconds": time.time() - t0,
                        "reach": reach, "held": float(np.mean(held)), "skipped": skipped})
        # Early stopping on the training loss: keep the weights whose last `window` losses averaged
        # lowest (BPTT through an unstable system sometimes takes a step that undoes much). With the
        # reverse curriculum, only once the whole window started from every angle (the loss of earlier,
        # easier starts is not comparable; if reach never gets to pi, the last weights are kept).
        recent = np.mean([h["loss"] for h in history[-window:]])
        settled = reach is None or (len(history) >= window and history[-window]["reach"] >= top)
        if len(history) >= window and recent < best_mean and settled:
            best_mean = recent
            best = (it + 1, {k: v.detach().clone() for k, v in policy.state_dict().items()})
        if reach is not None and history[-1]["held"] >= args.reverse_success:
            reach = min(top, reach + args.reverse_step)
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(loss=f"{loss.item():.3f}", upright=f"{history[-1]['final_upright']:.2f}")
    kept = len(history)
    if best is not None:
        kept = best[0]
        policy.load_state_dict(best[1])
    return policy, history, init_from, kept


# ---- SHAC: short-horizon actor-critic (Xu et al., ICLR 2022; gradyn.rl.SHAC for gym environments) ----
# The actor is the pixel policy's controller (the encoder frozen, as in `train`); the critic is a small
# network on the TRUE state (privileged: used in training only, never by the policy at evaluation).

def wrap_t(theta):
    """theta wrapped to [-pi, pi) (torch; the gradient is 1 away from the seam)."""
    return theta - 2 * np.pi * torch.floor((theta + np.pi) / (2 * np.pi))


def shac_reward(q, v, u):
    """Per control step (SHAC's cart-pole reward, plus a wall near the track's ends): -(wrapped theta^2
    + 0.1 thetadot^2 + 0.05 x^2 + 0.1 xdot^2 + 10 max(|x| - 1.8, 0)^2 + 0.01 (u / F)^2). The wrapped angle
    makes hanging a maximum of the cost with a gradient of size 2 pi there (the tip loss is flat there)."""
    x, th = q[:, 0], wrap_t(q[:, 1])
    wall = torch.relu(x.abs() - 1.8)
    return -(th ** 2 + 0.1 * v[:, 1] ** 2 + 0.05 * x ** 2 + 0.1 * v[:, 0] ** 2 + 10.0 * wall ** 2 + 0.01 * (u / FORCE) ** 2)


def critic_features(q, v):
    """The critic's input, the true state: (x / 2, sin theta, cos theta, xdot / 3, thetadot / 8), float32."""
    return torch.stack([q[:, 0] / 2.0, torch.sin(q[:, 1]), torch.cos(q[:, 1]), v[:, 0] / 3.0, v[:, 1] / 8.0], -1).float()


class Critic(torch.nn.Module):
    """V(true state): 5 -> 64 -> 64 -> 1 (ELU), its output x 100 (returns run to some -1000)."""

    def __init__(self, hidden=64, scale=100.0):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(5, hidden), torch.nn.ELU(), torch.nn.Linear(hidden, hidden),
                                       torch.nn.ELU(), torch.nn.Linear(hidden, 1))
        self.scale = scale

    def forward(self, features):
        return self.scale * self.net(features)


def check_policy(args, model, policy, cam, look, seconds=15.0):
    """The validation check during SHAC training (not the evaluation): closed loop from pixels, hanging
    starts drawn with seed + 2000 (the evaluation's are seed + 1000), `seconds`; returns the balance times."""
    rng = np.random.default_rng(args.seed + 2000)
    q0, v0 = initial_states("swingup", args.check_worlds, rng)
    steps = int(round(min(seconds, args.check_seconds) / (DT * SUBSTEPS)))
    with torch.no_grad():
        qs, _, _ = closed_loop(model, policy, q0, v0, steps, cam, look)
    return [s for s, _ in balance_times(qs.numpy(), DT * SUBSTEPS)]


class StatePolicy(PixelPolicy):
    """A diagnostic, not a pixel policy (``--state-actor``): the same controller on the TRUE state instead of
    the encoder's estimate. Its "frame" is q itself; the estimate is (x / 2, sin theta, cos theta, xdot / 3,
    thetadot / 8), the velocities from the last two q (as frames give them, one control step apart)."""

    def encode(self, frame):
        return frame

    def estimate(self, e0, e1, e2):
        d = (e0 - e1) / (DT * SUBSTEPS)
        return torch.stack([e0[:, 0] / 2, torch.sin(e0[:, 1]), torch.cos(e0[:, 1]), d[:, 0] / 3, d[:, 1] / 8], -1).float()



class CheckKeeper:
    """The training checks of --method shac and distill: runs check_policy, keeps the weights of the
    best check (most worlds balanced >= 10 s, then the longest median, then the latest) and the first
    update at which every check world balanced, and hands them to args at the end (finish)."""

    def __init__(self):
        self.best, self.best_key = None, None
        self.success_update, self.success_episodes = None, None

    def check(self, args, model, policy, cam, look, it, episodes, rec):
        """Checks the policy after update it (0-based); fills rec's check fields; returns the balance times."""
        held = check_policy(args, model, policy, cam, look)
        n_ok = sum(s >= 10.0 for s in held)
        rec["check"], rec["check_median"] = n_ok, float(np.median(held))
        key = (n_ok, float(np.median(held)), it)
        if self.best_key is None or key >= self.best_key:
            self.best_key = key
            self.best = (it + 1, {k: v.detach().clone() for k, v in policy.state_dict().items()})
        if self.success_update is None and n_ok == args.check_worlds:
            self.success_update, self.success_episodes = it + 1, episodes
        return held

    def finish(self, args, policy, updates):
        """Loads the best checked weights into policy; returns the update they come from."""
        args.success_update, args.success_episodes = self.success_update, self.success_episodes
        args.kept_check = self.best_key
        if self.best is None:
            return updates
        policy.load_state_dict(self.best[1])
        return self.best[0]

def setup_policy(args, model, cam, look, rng, log=print):
    """The swing-up's pixel policy for train_shac / train_distill: from --init, or the encoder from
    --init-encoder (the controller from zero), or the encoder pre-trained here; the encoder frozen."""
    policy = PixelPolicy(args.hidden, len(ENCODER_STATES["swingup"][1]))
    t0 = time.time()
    if args.init is not None:
        policy.load_state_dict(torch.load(args.init))
        args.encoder_r2, args.encoder_seconds = None, 0.0
    elif args.init_encoder is not None:
        saved = torch.load(args.init_encoder)
        policy.load_state_dict({k: (saved[k] if not k.startswith("head.") else v) for k, v in policy.state_dict().items()})
        args.encoder_r2, args.encoder_seconds = None, 0.0
    else:
        args.encoder_r2 = pretrain_encoder(policy, model, cam, look, args.encoder_samples, args.encoder_epochs, rng, "swingup")
        args.encoder_seconds = time.time() - t0
        log(f"encoder: held-out R^2 {r2_text(args)} ({args.encoder_seconds:.1f} s)")
    policy.encoder.requires_grad_(False)
    return policy


def train_shac(args, model, cam, look, log=print):
    """SHAC on the pixel policy. `args.worlds` worlds run their episodes (hanging starts, theta = pi +
    U(-spread, spread), `args.episode_seconds` long, then a new start) continuously; each update is one
    window of `args.shac_steps` control steps, differentiated end to end through renderer, encoder and
    physics, for the actor loss -1/(N H) sum_worlds [sum_t gamma^t r_t + gamma^H V'(s_H)] (V' the target
    critic on the true state; at an episode's end inside the window the sum is closed by V' there). The
    state and frame history are carried to the next window, detached. The critic is then fitted to the
    window's TD(lambda) returns (args.critic_iterations passes of 4 minibatches), the target critic follows
    by Polyak averaging (0.2 old + 0.8 new). Every args.check_every updates the policy is checked from pixels
    on args.check_worlds hanging starts for 15 s (seed + 2000, not the evaluation's); the weights with the
    most worlds balanced >= 10 s (ties: the longer median balance time, then the later) are kept."""
    import copy
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    if args.state_actor:  # the diagnostic: no pixels anywhere, in training or in the check
        global frames_of
        policy, args.encoder_r2, args.encoder_seconds = StatePolicy(args.hidden, 5), None, 0.0
        frames_of = lambda model_, q, cam_, look_: q  # noqa: E731
        policy.encoder.requires_grad_(False)
    else:
        policy = setup_policy(args, model, cam, look, rng, log)
    init_from = None if args.init is None and args.init_encoder is None else str(args.init or args.init_encoder)
    policy.encoder.requires_grad_(False)
    critic = Critic()
    target = copy.deepcopy(critic).requires_grad_(False)
    opt = torch.optim.Adam(policy.head.parameters(), lr=args.lr, betas=(0.7, 0.95))
    copt = torch.optim.Adam(critic.parameters(), lr=args.critic_lr, betas=(0.7, 0.95))
    decay = lambda k: max(0.0, 1.0 - k / max(args.updates, 1))  # noqa: E731 (linear to 0, as SHAC)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: max(0.0, 1.0 - k / max(args.updates - args.critic_warmup, 1)))
    csched = torch.optim.lr_scheduler.LambdaLR(copt, decay)
    N, H, gamma, lam = args.worlds, args.shac_steps, args.gamma, args.lam
    ep_len = max(1, int(round(args.episode_seconds / (DT * SUBSTEPS))))

    def starts(n):
        return initial_states("swingup", n, rng, args.train_spread, args.train_spin)

    def see(q):  # the frame; with --detach-pixels no gradient from it to q (the renderer's and encoder's path cut)
        f = frames_of(model, q, cam, look)
        return f.detach() if args.detach_pixels else f

    q, v = starts(N)
    with torch.no_grad():
        k0 = policy.encode(frames_of(model, q, cam, look))
    hist = [k0, k0, k0]
    # the worlds' episodes start out of step (each at a random point of its first episode's clock)
    steps = rng.integers(0, ep_len, N)
    episodes, ep_return, returns = N, np.zeros(N), []
    history, keeper = [], CheckKeeper()
    zeros = torch.zeros(N, dtype=torch.float64)
    try:
        from tqdm import tqdm
        bar = tqdm(range(args.updates), desc="swingup SHAC windows", disable=args.quiet, mininterval=5.0)
    except ImportError:
        bar = range(args.updates)
    t0 = time.time()
    for it in bar:
        q, v, hist = q.detach(), v.detach(), [h.detach() for h in hist]
        acc = torch.zeros(N, dtype=torch.float64)
        disc = torch.ones(N, dtype=torch.float64)
        feats, rewards, next_feats, dones, offs = [], [], [], [], []
        tips, forces = [], []
        for t in range(H):
            feats.append(critic_features(q, v).detach())
            u = policy.act(hist[-1], hist[-2], hist[-3])
            if args.noise > 0:
                u = (u + FORCE * args.noise * torch.randn(N, dtype=torch.float64)).clamp(-FORCE, FORCE)
            tau = torch.stack([u, zeros], -1)
            for _ in range(SUBSTEPS):
                q, v = gt.step(model, q, v, tau, DT)
            r = shac_reward(q, v, u)
            if args.shac_energy > 0:  # energy shaping (pumping pays at once): - W ((E - E_upright) / (m g l/2))^2
                r = r - args.shac_energy * energy_gap(q, v) ** 2
            acc = acc + disc * r
            disc = disc * gamma
            steps += 1
            with torch.no_grad():
                forces.append(float((u ** 2).mean()))
                tips.append(((q[:, 0] + torch.sin(q[:, 1])) ** 2 + (torch.cos(q[:, 1]) - 1.0) ** 2).mean().item())
            finite = torch.isfinite(q).all(-1) & torch.isfinite(v).all(-1)
            # off: the cart 4 m out (out of the camera's view) or a diverged world: the episode ends there, valued
            # as if that step's reward went on for ever (r / (1 - gamma)), so that leaving is never a way out
            off = ~finite.numpy() | (np.abs(torch.nan_to_num(q[:, 0], nan=1e9).detach().numpy()) > 4.0)
            done = (steps >= ep_len) | off
            nf = critic_features(torch.nan_to_num(q), torch.nan_to_num(v))
            next_feats.append(nf.detach())
            rewards.append(torch.nan_to_num(r.detach(), nan=-100.0))
            dones.append(torch.as_tensor(done))
            offs.append(torch.as_tensor(off))
            ep_return += rewards[-1].numpy()
            if done.any():
                d = torch.as_tensor(done)
                boot = torch.where(offs[-1], rewards[-1] / (1 - gamma), target(nf)[:, 0].double())
                acc = acc + torch.where(d, disc * torch.nan_to_num(boot), torch.zeros_like(acc))
                disc = torch.where(d, torch.ones_like(disc), disc)
                returns.extend(ep_return[done].tolist())
                ep_return[done] = 0.0
                n_new = int(done.sum())
                q_new, v_new = starts(n_new)
                idx = torch.as_tensor(np.flatnonzero(done))
                q = torch.where(d[:, None], torch.zeros_like(q), torch.nan_to_num(q)).index_put((idx,), q_new)
                v = torch.where(d[:, None], torch.zeros_like(v), torch.nan_to_num(v)).index_put((idx,), v_new)
                steps[done] = 0
                episodes += n_new
                e = policy.encode(see(q))
                hist = [torch.where(d.view(-1, *[1] * (e.dim() - 1)), e.detach(), h) for h in hist[-2:]] + [e]
            else:
                hist = hist[-2:] + [policy.encode(see(q))]
        final = critic_features(q, v)
        acc = acc + getattr(args, "bootstrap", 1.0) * disc * target(final)[:, 0].double()
        loss = -acc.sum() / (N * H)
        opt.zero_grad()
        loss.backward()
        grads_ok = all(p.grad is None or torch.isfinite(p.grad).all() for p in policy.head.parameters())
        gnorm = float(torch.nn.utils.clip_grad_norm_(policy.head.parameters(), args.clip)) if grads_ok else float("nan")
        if it >= args.critic_warmup:  # (the first --critic-warmup windows: the critic only)
            if grads_ok:
                opt.step()
            sched.step()
        # the critic: TD(lambda) targets of the window under the target critic
        with torch.no_grad():
            R, D = torch.stack(rewards), torch.stack(dones)
            v_next = torch.where(torch.stack(offs), R / (1 - gamma), torch.stack([target(f)[:, 0].double() for f in next_feats]))
            targets = torch.zeros_like(R)
            following = v_next[-1]
            for t in reversed(range(H)):
                g = R[t] + gamma * (v_next[t] if t == H - 1 else torch.where(D[t], v_next[t], (1 - lam) * v_next[t] + lam * following))
                targets[t] = g
                following = g
        X, Y = torch.cat(feats), targets.reshape(-1).float()
        for _ in range(args.critic_iterations):
            perm = torch.randperm(X.shape[0])
            for chunk in perm.chunk(4):
                vloss = ((critic(X[chunk])[:, 0] - Y[chunk]) ** 2).mean() / critic.scale ** 2
                copt.zero_grad()
                vloss.backward()
                copt.step()
        csched.step()
        with torch.no_grad():
            for p, pt in zip(critic.parameters(), target.parameters()):
                pt.mul_(0.2).add_(0.8 * p)
        th_end = np.abs(wrap(q[:, 1].detach().numpy()))
        rec = {"update": it + 1, "horizon": H * DT * SUBSTEPS, "loss": loss.item(), "tip": float(np.mean(tips)),
               "grad_norm": gnorm, "value_loss": vloss.item(), "force_rms": float(np.sqrt(np.mean(forces))), "final_upright": float(np.mean(th_end < BALANCED_ANGLE)),
               "episodes": episodes, "return": float(np.mean(returns[-N:])) if returns else float("nan"),
               "seconds": time.time() - t0, "check": None}
        if (it + 1) % args.check_every == 0 or it + 1 == args.updates:
            held = keeper.check(args, model, policy, cam, look, it, episodes, rec)
            n_ok = rec["check"]
            log(f"update {it + 1}: episodes {episodes}, mean return {rec['return']:.1f}, check {n_ok}/{args.check_worlds} "
                f"balanced >= 10 s (median {np.median(held):.2f} s), value loss {rec['value_loss']:.3f}, {rec['seconds']:.0f} s")
        history.append(rec)
        if hasattr(bar, "set_postfix"):
            bar.set_postfix(ret=f"{rec['return']:.1f}", upright=f"{rec['final_upright']:.2f}")
    kept = keeper.finish(args, policy, len(history))
    return policy, history, init_from, kept


def train_distill(args, model, cam, look, log=print):
    """DAgger (Ross et al. 2011): the pixel policy's controller learns to imitate a teacher that sees the
    TRUE state, the classical controller (``classical_force``: energy pumping, LQR near upright), on the
    states the pixel policy itself visits. Update k rolls out args.worlds episodes from hanging starts
    (args.episode_seconds long; the executed force is the teacher's with probability 0.5^k per control step,
    else the pixel policy's, plus Gaussian noise of args.noise x 10 N); every control step's encoder estimate
    (from the three frames, as the policy sees them) is stored with the teacher's force at the true state; the
    controller (the encoder frozen) is then fitted to all data so far (args.fit_steps Adam steps on batches of
    512, squared error of the force / 10 N). No gradient passes through the physics or the renderer here.
    Checks and the kept weights as in train_shac."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    policy = setup_policy(args, model, cam, look, rng, log)
    K = classical_gain(model)
    opt = torch.optim.Adam(policy.head.parameters(), lr=args.lr)
    N = args.worlds
    steps = max(1, int(round(args.episode_seconds / (DT * SUBSTEPS))))
    X, Y = [], []
    history, keeper = [], CheckKeeper()
    episodes = 0
    zeros = torch.zeros(N, dtype=torch.float64)
    t0 = time.time()
    for it in range(args.updates):
        beta = 0.5 ** it
        q, v = initial_states("swingup", N, rng, args.train_spread, args.train_spin)
        episodes += N
        with torch.no_grad():
            k = policy.encode(frames_of(model, q, cam, look))
            hist = [k, k, k]
            own = []
            for _ in range(steps):
                est = policy.estimate(hist[-1], hist[-2], hist[-3])
                teacher = torch.as_tensor(classical_force(q.numpy(), v.numpy(), K))
                mine = FORCE * torch.tanh(policy.head(est)[:, 0]).double()
                X.append(est.clone())
                Y.append(teacher.float())
                use = torch.as_tensor(rng.random(N) < beta)
                u = torch.where(use, teacher, mine)
                own.append(float(((mine - teacher) ** 2).mean()))
                if args.noise > 0:
                    u = (u + FORCE * args.noise * torch.as_tensor(rng.standard_normal(N))).clamp(-FORCE, FORCE)
                tau = torch.stack([u, zeros], -1)
                for _ in range(SUBSTEPS):
                    q, v = gt.step(model, q, v, tau, DT)
                hist = hist[-2:] + [policy.encode(frames_of(model, q, cam, look))]
        data_x, data_y = torch.cat(X), torch.cat(Y)
        for _ in range(args.fit_steps):
            idx = torch.randint(0, data_x.shape[0], (min(512, data_x.shape[0]),))
            loss = (((FORCE * torch.tanh(policy.head(data_x[idx])[:, 0]) - data_y[idx]) / FORCE) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        tail = q.numpy()
        rec = {"update": it + 1, "horizon": steps * DT * SUBSTEPS, "loss": loss.item(), "tip": float(np.mean(own)) / FORCE ** 2,
               "final_upright": float(np.mean(np.abs(wrap(tail[:, 1])) < BALANCED_ANGLE)), "episodes": episodes,
               "samples": int(data_x.shape[0]), "beta": beta, "seconds": time.time() - t0, "check": None}
        if (it + 1) % args.check_every == 0 or it + 1 == args.updates:
            held = keeper.check(args, model, policy, cam, look, it, episodes, rec)
            n_ok = rec["check"]
            log(f"update {it + 1}: beta {beta:.3g}, episodes {episodes}, samples {rec['samples']}, fit loss {rec['loss']:.4f}, "
                f"upright at the end {rec['final_upright']:.2f}; check {n_ok}/{args.check_worlds} balanced >= 10 s "
                f"(median {np.median(held):.2f} s), {rec['seconds']:.0f} s")
        history.append(rec)
    kept = keeper.finish(args, policy, len(history))
    return policy, history, None if args.init is None and args.init_encoder is None else str(args.init or args.init_encoder), kept


def evaluate(args, model, policy, cam, look):
    rng = np.random.default_rng(args.seed + 1000)
    q0, v0 = initial_states(args.stage, args.eval_worlds, rng)
    steps = int(round(args.eval_seconds / (DT * SUBSTEPS)))
    with torch.no_grad():
        qs, vs, us, fs = closed_loop(model, policy, q0, v0, steps, cam, look, keep_frames=True)
    return qs.numpy(), us.numpy(), fs.numpy()


def first_update_reaching(history, level):
    for h in history:
        if h["final_upright"] >= level:
            return h["update"]
    return None


def write_figure(path, args, history, qs, fs, times):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 7.5))
    grid = fig.add_gridspec(3, 2, height_ratios=[1.2, 1.2, 0.9])
    ax = fig.add_subplot(grid[0, 0])
    distill = getattr(args, "method", "bptt") == "distill"
    ax.plot([h["update"] for h in history], [h["tip"] for h in history],
            label="(policy force - teacher force)^2 / (10 N)^2, mean over the round" if distill else "tip distance^2 (mean over horizon)")
    ax.plot([h["update"] for h in history], [h["final_upright"] for h in history],
            label="fraction upright at episode end" if distill else "fraction upright at horizon end")
    ax.set_xlabel("update (one batch of episodes)")
    ax.set_ylim(0, max(1.05, min(3.0, max(h["tip"] for h in history) * 1.05)))
    if getattr(args, "method", "bptt") == "distill":
        ax.set_title(f"training (DAgger from the classical teacher, {args.worlds} episodes of {args.episode_seconds:g} s per round)")
        ck = [h for h in history if h["check"] is not None]
        ax.plot([h["update"] for h in ck], [h["check"] / args.check_worlds for h in ck], "o-", ms=3,
                label="check: fraction of worlds balanced >= 10 s")
        ax.set_xlabel("round")
    elif getattr(args, "method", "bptt") == "shac":
        ax.set_title(f"training (SHAC, {args.worlds} worlds x windows of {args.shac_steps * DT * SUBSTEPS:g} s per update)")
        ck = [h for h in history if h["check"] is not None]
        ax.plot([h["update"] for h in ck], [h["check"] / args.check_worlds for h in ck], "o-", ms=3,
                label="check: fraction of worlds balanced >= 10 s")
    else:
        ax.set_title(f"training ({args.stage}, {args.batch} episodes of {min(args.start_horizon, args.horizon):g} -> {args.horizon:g} s per update)")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[0, 1])
    t = np.arange(qs.shape[1]) * DT * SUBSTEPS
    for b in range(qs.shape[0]):
        ax.plot(t, wrap(qs[b, :, 1]), lw=1)
    ax.axhline(BALANCED_ANGLE, color="k", ls=":", lw=0.8)
    ax.axhline(-BALANCED_ANGLE, color="k", ls=":", lw=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("pole angle from upright (rad)")
    ax.set_title(f"evaluation from pixels, {qs.shape[0]} worlds, {t[-1]:g} s")
    ax = fig.add_subplot(grid[1, :])
    for b in range(qs.shape[0]):
        ax.plot(t, qs[b, :, 0], lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cart position (m)")
    n = 6
    idx = np.linspace(0, min(fs.shape[1] - 1, int(3.0 / (DT * SUBSTEPS))), n).astype(int)
    for k, i in enumerate(idx):
        ax = fig.add_subplot(grid[2, :].subgridspec(1, n)[0, k])
        ax.imshow(fs[0, i], cmap="gray", vmin=0, vmax=1)
        ax.set_title(f"t = {i * DT * SUBSTEPS:.2f} s", fontsize=8)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def r2_text(args):
    return ", ".join(f"{n} {r:.3f}" for n, r in zip(ENCODER_STATES[args.stage][1], args.encoder_r2))


def shac_lines(args, history, train_seconds):
    """The SHAC run's lines of results_swingup.md."""
    checks = [h for h in history if h["check"] is not None]
    ep = args.episode_seconds
    return [
        f"- Training: SHAC (short-horizon actor-critic, Xu et al. 2022): {args.worlds} worlds in parallel, each running "
        f"episodes of {ep:g} s from hanging starts (theta = pi + U(-{args.train_spread:.3g}, {args.train_spread:.3g}) rad, "
        f"thetadot ~ U(-{args.train_spin:g}, {args.train_spin:g}) rad/s), out of step; {args.updates} updates, each one "
        f"window of {args.shac_steps} control steps ({args.shac_steps * DT * SUBSTEPS:g} s; control steps of {DT * SUBSTEPS:g} s, "
        f"{SUBSTEPS} physics steps each) of every world, differentiated "
        + ("through the physics only (`--detach-pixels`: the frames detached, no gradient through renderer and encoder to the "
           "state; the force's effect on the rewards and the critic through the physics); " if args.detach_pixels else
           "end to end through renderer, encoder and physics; ")
        + f"the state and the frame history carried to the next window, detached. Actor loss: -1/(N H) sum over worlds of "
        f"sum_t gamma^t r_t + gamma^H V'(s_H) (gamma {args.gamma:g}; at an episode's end inside the window the sum is closed by V' there), "
        f"r = -(wrapped theta^2 + 0.1 thetadot^2 + 0.05 x^2 + 0.1 xdot^2 + 10 max(|x| - 1.8, 0)^2 + 0.01 (F/10 N)^2) per control step "
        f"(SHAC's cart-pole reward plus a wall near the track's ends; not paper 002's loss)"
        + (f", the force with Gaussian noise of {args.noise:g} x 10 N in training" if args.noise > 0 else "")
        + (f"; plus an energy-shaping term -{args.shac_energy:g} ((E - E_upright) / (m g l/2))^2 per control step" if args.shac_energy > 0 else "")
        + f". Adam for the controller (lr {args.lr:g}, betas 0.7, 0.95, linear decay to 0, gradient norm clipped at {args.clip:g})"
        + (f"; the controller is not updated in the first {args.critic_warmup} windows (the critic only)" if args.critic_warmup else "") + ".",
        f"- Critic: V' is the target of a critic 5 -> 64 -> 64 -> 1 on the **true state** (x, sin theta, cos theta, xdot, "
        f"thetadot): privileged information used in training only (the policy never sees it; at evaluation nothing but the "
        f"policy runs). Fitted after each window to the window's TD(lambda) returns (lambda {args.lam:g}), {args.critic_iterations} "
        f"passes of 4 minibatches, Adam lr {args.critic_lr:g} (linear decay); the target follows by Polyak averaging (0.2 old + 0.8 new).",
        f"- {args.updates * args.worlds * args.shac_steps} control steps of training ({args.updates * args.worlds * args.shac_steps * DT * SUBSTEPS:.0f} s "
        f"of simulated time), {history[-1]['episodes']} training episodes begun, {train_seconds:.0f} s wall on this machine "
        f"({train_seconds / max(args.updates, 1):.2f} s per update including the checks, torch on 1 thread).",
        f"- Mean training episode return (the last {args.worlds} episodes ended) at the first and last update: "
        f"{history[0]['return']:.1f} -> {history[-1]['return']:.1f}; tip distance^2 (mean over the window) {history[0]['tip']:.4f} -> "
        f"{history[-1]['tip']:.4f}.",
        f"- Checks (every {args.check_every} updates: from pixels, {args.check_worlds} hanging starts drawn with seed {args.seed + 2000}, "
        f"not the evaluation's, {args.check_seconds:g} s), worlds balanced >= 10 s: "
        + ", ".join(f"{h['check']} (update {h['update']})" for h in checks) + ".",
        f"- Episodes to success (the first check with all {args.check_worlds} worlds balanced >= 10 s): "
        + (f"update {args.success_update}, after {args.success_episodes} training episodes begun "
           f"({args.success_update * args.worlds * args.shac_steps} control steps)." if args.success_update else "not reached."),
    ]


def distill_lines(args, history, train_seconds):
    """The DAgger run's lines of results_swingup.md."""
    checks = [h for h in history if h["check"] is not None]
    return [
        f"- Training: **not end to end through the physics**: DAgger (Ross et al. 2011), imitation of a teacher that sees the "
        f"**true state**, the classical controller of `--classical` (energy pumping, LQR within 0.5 rad of upright, |force| <= "
        f"{FORCE:g} N; privileged: used in training only, never at evaluation). {args.updates} rounds, each "
        f"{args.worlds} episodes of {args.episode_seconds:g} s from hanging starts (theta = pi + U(-{args.train_spread:.3g}, "
        f"{args.train_spread:.3g}) rad) run from pixels, the force applied being the teacher's with probability 0.5^k in round k "
        f"(k = 0, 1, ...) at each control step, else the pixel policy's"
        + (f", plus Gaussian noise of {args.noise:g} x {FORCE:g} N" if args.noise > 0 else "")
        + f"; every control step's encoder estimate (from the three frames, as the policy sees them) is stored with the teacher's "
        f"force at the true state, and the controller is fitted to all data so far ({args.fit_steps} Adam steps, lr {args.lr:g}, "
        f"batches of 512, squared error of force / {FORCE:g} N). The renderer, encoder and physics are run, not differentiated.",
        f"- {history[-1]['episodes']} training episodes, {history[-1]['samples']} samples, {train_seconds:.0f} s wall on this machine "
        f"(including the encoder's pre-training and the checks; torch on 1 thread). Fit loss first -> last round "
        f"{history[0]['loss']:.4f} -> {history[-1]['loss']:.4f}.",
        f"- Checks (after every {args.check_every} rounds: from pixels, {args.check_worlds} hanging starts drawn with seed {args.seed + 2000}, "
        f"not the evaluation's, {args.check_seconds:g} s), worlds balanced >= 10 s: "
        + ", ".join(f"{h['check']} (round {h['update']})" for h in checks) + ".",
        f"- Episodes to success (the first check with all {args.check_worlds} worlds balanced >= 10 s): "
        + (f"round {args.success_update}, after {args.success_episodes} training episodes." if args.success_update else "not reached."),
    ]


def write_results(out_dir, args, policy, history, init_from, qs, times, train_seconds, eval_seconds, kept):
    rng_ = ENCODER_STATES[args.stage][0]
    nweights = sum(p.numel() for p in policy.parameters())
    dur = (qs.shape[1] - 1) * DT * SUBSTEPS
    held = [s for s, _ in times]
    starts = [s for _, s in times]
    full = sum(1 for s in held if s >= 10.0)
    cmd = " ".join([".venv/bin/python", "examples/pixels/" + pathlib.Path(__file__).name]
                   + [shlex.quote(str(a)) for a in args.argv])
    top = np.pi + 2.0 if args.reverse_shell else np.pi
    unfinished = history[-1].get("reach") is not None and not any(h["reach"] >= top for h in history[:-9])
    why_kept = ("the last update: the reverse curriculum did not reach its end" if unfinished
                else "the lowest mean loss over 10 consecutive updates")
    if args.method in ("shac", "distill"):
        why_kept = (f"the most worlds balanced >= 10 s in the training checks, then the longest median balance time, then "
                    f"the latest: {args.kept_check[0]} of {args.check_worlds}, median {args.kept_check[1]:.2f} s")
    lines = [f"## Stage `{args.stage}`", "",
             f"Written by `{cmd}` (seed {args.seed}).", "",
             f"- Start: {'near upright: x ~ U(-0.5, 0.5) m, theta ~ U(-0.25, 0.25) rad, small velocities' if args.stage == 'balance' else f'hanging: theta = pi + U(-0.1, 0.1) rad, x ~ U(-0.2, 0.2) m, at rest (+-0.1) (training episodes: ' + ('the reverse curriculum below)' if args.reverse_from > 0 else f'theta = pi + U(-{args.train_spread:.3g}, {args.train_spread:.3g}))')}.",
             f"- Policy: 3 frames of {WIDTH} x {HEIGHT} grey pixels (the current frame and its two changes) -> a "
             f"convolutional encoder (3 strided convolutions, 128 units) -> an estimate of ({', '.join(ENCODER_STATES[args.stage][1])}) -> controller {args.hidden} -> {args.hidden} -> force "
             f"(tanh x {FORCE:g} N); {nweights} weights"
             + (f", the encoder taken from `{pathlib.Path(init_from).name}` (pre-trained there), the controller from zero." if init_from and args.init_encoder is not None else
                f", initialised from `{pathlib.Path(init_from).name}`." if init_from else
                f". The encoder was pre-trained (regression on the true state, Adam, {args.encoder_epochs} passes) on {args.encoder_samples} "
                f"frame triples rendered by gradyn from random states (x ~ U(-{rng_[0]:g}, {rng_[0]:g}) m, theta ~ U(-{rng_[1]:.3g}, {rng_[1]:.3g}) rad, "
                f"xdot ~ U(-{rng_[2]:g}, {rng_[2]:g}) m/s, thetadot ~ U(-{rng_[3]:g}, {rng_[3]:g}) rad/s, random forces), {args.encoder_seconds:.0f} s; "
                f"held-out R^2 {r2_text(args)}. The state labels are used there only; then the encoder is frozen and "
                + ("the controller (its last layer zero at first) is fitted on the encoder's output (below)." if args.method == "distill" else
                   "the controller (its last layer zero at first) is trained on the encoder's output, end to end through "
                   "renderer, encoder and physics.")),
             *(shac_lines(args, history, train_seconds) if args.method == "shac" else
               distill_lines(args, history, train_seconds) if args.method == "distill" else [
             f"- Training: {args.updates} updates of Adam (lr {args.lr:g}, cosine decay to a tenth, gradient norm clipped at "
             f"{args.clip:g}), each on {args.batch} episodes, the horizon growing from {min(args.start_horizon, args.horizon):g} s "
             f"to {args.horizon:g} s over the first 60 % of the updates (control steps of {DT * SUBSTEPS:g} s, "
             f"{SUBSTEPS} physics steps each), differentiated through renderer and physics: "
             f"{args.updates * args.batch} episodes in all, {train_seconds:.0f} s wall on this machine "
             f"({train_seconds / max(args.updates, 1):.2f} s per update, torch on 1 thread).",
             *([f"- Loss: paper 002's loss (above) plus an energy-shaping term (not in paper 002): "
                f"w x mean over the horizon of ((E - E_upright) / (m g l/2))^2, E the pole's energy about its hinge "
                f"(1/2 I thetadot^2 + m g l/2 cos theta), w annealed linearly from {args.energy:g} to {args.energy * args.energy_final:g}; "
                f"training episodes start with thetadot ~ U(-{args.train_spin:g}, {args.train_spin:g}) rad/s."]
               if args.energy > 0 else []),
             *([f"- Energy term switched by height: its weight per control step times 1/2 (1 - tanh((cos theta - {args.energy_switch:g}) / 0.1)) "
                f"(pump below cos theta = {args.energy_switch:g}, the tip loss alone above)."] if args.energy > 0 and args.energy_switch is not None else []),
             *([f"- Plus {args.upright:g} x (1 - cos theta), averaged over the horizon (not in paper 002: the tip loss is quartic "
                f"in theta near upright)."] if args.upright > 0 else []),
             *([f"- Truncated backpropagation: state and frame history detached every {args.window} control steps."] if args.window else []),
             *([f"- Reverse curriculum ({'along the swing-up: starts on the orbit of upright energy, turning toward upright, up to D rad from upright; beyond D = pi with an energy deficit up to D - pi; D = pi + 2 is hanging at rest' if args.reverse_shell else 'training starts at theta = +-U(0, D), at rest'}): "
                f"D from {args.reverse_from:g}, + {args.reverse_step:g} after each update in which at least {args.reverse_success:g} of the batch held "
                f"upright through the horizon's last third, the horizon growing with D; D reached {history[-1]['reach']:.2f} "
                f"(of {(np.pi + 2) if args.reverse_shell else np.pi:.2f}) after {len(history)} updates."] if history[-1].get("reach") is not None else []),
             f"- Loss, first -> last update: {history[0]['loss']:.4f} -> {history[-1]['loss']:.4f} "
             f"(tip distance^2 {history[0]['tip']:.4f} -> {history[-1]['tip']:.4f}); best {min(h['loss'] for h in history):.4f}.",
             f"- First update at which at least half / all of the batch ended the horizon upright (|theta| < 0.2): "
             f"{first_update_reaching(history, 0.5) or 'not reached'} / {first_update_reaching(history, 1.0) or 'not reached'} "
             f"(x {args.batch} episodes)."]), "",
             f"Evaluation: the weights after {'round' if args.method == 'distill' else 'update'} {kept} ({why_kept}), closed loop from pixels only, {dur:g} s, {len(held)} new initial states "
             f"(seed {args.seed + 1000}), {eval_seconds:.1f} s wall. Balanced: |theta| < 0.2 rad and |x| < 2.4 m at every "
             f"control step until the end.", "",
             "| world | balanced from (s) | balance time until the end (s) |", "|---|---|---|"]
    for b, (s, st) in enumerate(times):
        lines.append(f"| {b} | {'never' if st is None else f'{st:.2f}'} | {s:.2f} |")
    lines += ["", f"**{full} of {len(held)} worlds balance for >= 10 s** (median balance time {np.median(held):.2f} s"
              + (f"; balance reached after {np.median([s for s in starts if s is not None]):.2f} s median" if any(s is not None for s in starts) else "")
              + ").", "", f"![{args.stage}]({args.stage}.png)", ""]
    (out_dir / f"results_{args.stage}.md").write_text("\n".join(lines))
    write_readme(out_dir)


# The energy-shaping runs' printed numbers (see write_readme; filled in by hand from the script's output).
ENERGY_TRIES = (
    "`--energy 1 --train-spread 0.3 --updates 400`: loss 7.9262 -> 48.6003 (best 4.7384 at update 80), 0 of 8 "
    "worlds balance; the kept policy pumps the pole up within 1-2 s but does not catch it, the pole spins and the "
    "cart runs off; `--energy 1 --train-spread 3.14159 --updates 400`: loss 5.0526 -> 2.6642, 0 of 8 (hardly pumps); "
    "`--energy 1 --energy-final 0.1 --lr 0.0005 --train-spread 0.3 --updates 450`: loss 7.9262 -> 3.3912, 0 of 8 "
    "(the pole reaches upright after about 1 s, is not caught, then spins); the previous run's first policy "
    "(update 80) trained on with `--energy 0.5 --energy-final 0.1 --lr 0.0005 --train-spread 0.3 --updates 400 --init`: "
    "loss 4.1920 -> 41.2644, 0 of 8; the third run's policy trained on with `--energy 0.3 --energy-final 0.1 --lr 0.0005 "
    "--train-spread 3.14159 --updates 300 --init`: loss 4.6666 -> 2.1709, 0 of 8; `--energy 1 --energy-final 0 --lr 0.0005 "
    "--train-spread 0.3 --horizon 4 --start-horizon 4 --updates 300`: loss 7.9378 -> 4.9093, 0 of 8. So the energy term does what the tip loss alone did not (the pole leaves "
    "hanging and reaches the top); catching and holding it from pixels has not been learnt yet.")


# The feasibility check's and the reverse-curriculum runs' printed numbers (filled in by hand from the
# script's output, see write_readme).
SWITCH_TRIES = (
    "`--stage swingup --energy 1 --energy-final 1 --energy-switch 0.8 --upright 1 --train-spread 0.3 --train-spin 1 "
    "--start-horizon 3 --updates 300`: loss 9.9149 -> 48.1740 (best 6.1388), 0 of 8 worlds balance; the kept policy "
    "(update 93) pumps the pole to the top in about 1 s and does not catch it, the pole spins and the cart runs off")
CLASSICAL_CHECK = (
    "`--classical` printed: classical swing-up (true state, energy pumping + LQR, |force| <= 10 N), 8 worlds from "
    "hanging (seed 1000), 15 s: balance times 13.00, 13.08, 13.08, 12.92, 13.00, 12.92, 13.08, 12.96 s; 8/8 >= 10 s; "
    "balanced from 2.04, 1.96, 1.96, 2.12, 2.04, 2.12, 1.96, 2.08 s; max |x| 2.17 m")
REVERSE_TRIES = (
    "`--stage swingup --reverse-shell --reverse-from 0.25 --reverse-success 0.9 --upright 1 --window 25 --batch 32 "
    "--start-horizon 1.5 --updates 400`: loss 0.1545 -> 0.0382, D reached 0.25 (of pi + 2 = 5.14: it never advanced, "
    "no batch held 90 % upright), 0 of 8 worlds balance; the same with `--reverse-success 0.7 --updates 500`: "
    "loss 0.1545 -> 0.0406, D reached 0.50, 0 of 8")


BPTT_RUN = (
    "`--stage swingup --train-spread 3.14159 --start-horizon 3 --updates 400` (seed 0; 8 episodes of 3 s per update, "
    "training episodes starting at any angle, 286 s): loss 3.0524 -> 2.3372 (best 1.5636), 0 of 8 worlds balance")
SHAC_DIAGNOSTICS = (
    "SHAC with this reward is not what fails: the settings of the 300-update run with the controller acting on the true "
    "state (`--state-actor`, a diagnostic with no pixels anywhere; it prints its checks and writes nothing) printed, seed 0: "
    "mean return -1409.0 (update 25) -> -231.0, checks 8 of 8 from update 250 on; `--seed 1`: -1215.0 -> -243.6, "
    "8 of 8 at update 200 and from 250 on (7 at 225); `--seed 2`: -1348.6 -> -318.5, 7 of 8 at update 275, 8 at 300 "
    "(40 s each). From the encoder's estimate (pixels) the return rises more slowly and no check passed within 300, "
    "500 or 1000 updates.")
DISTILL_TEXT = (
    "What does swing the pole up and hold it from pixels is imitation (`--method distill`, the section below): DAgger "
    "(Ross et al. 2011) with the `--classical` controller as the teacher, which sees **the true state** (privileged, "
    "used in training only): the pixel policy runs its own episodes (the teacher's force applied at a share of the "
    "control steps that halves each round), every control step's encoder estimate is stored with the teacher's force "
    "at the true state, and the controller is fitted to all of them by regression. The renderer, encoder and physics "
    "are run, not differentiated, so this result shows a controller that acts from pixels alone, not one learnt through "
    "gradyn's gradients; the encoder is pre-trained on the true state as in the other stages. "
    "The swing-up section below is that run.")
# The SHAC runs' printed numbers (filled in by hand from the script's output and results files; see write_readme).
SHAC_TEXT = (
    "Short-horizon actor-critic (`--method shac`, SHAC, Xu et al. 2022, as `gradyn.rl.SHAC` but written for the pixel "
    "policy in `train_shac`): 64 worlds run their episodes (6 s from hanging, then a new start) without stopping; each "
    "update is one window of 32 control steps (1.28 s) of every world, differentiated through renderer, encoder and "
    "physics, and the return after the window is bootstrapped by a critic; states and frame histories carry over from "
    "window to window, detached; the critic is fitted to TD(lambda) returns. **The critic sees the true state** "
    "(x, sin theta, cos theta, xdot, thetadot): privileged information, used in training only; the policy acts from "
    "pixels alone, and nothing but the policy runs at evaluation. The reward is SHAC's cart-pole reward (wrapped "
    "theta^2, 0.1 thetadot^2, 0.05 x^2, 0.1 xdot^2, negated) plus a wall near the track's ends and, with "
    "`--shac-energy W`, an energy-shaping term; `--noise` adds exploration noise to the force in training, "
    "`--critic-warmup K` trains the critic alone for the first K windows. Runs from scratch printed (seed 0; their "
    "results files replaced by the section below or written elsewhere; checks every 25 updates on 8 hanging starts "
    "drawn with seed 2000 (every 50 in the 1000-update run), **0 of 8 balanced in every check of every run**): "
    "`--stage swingup --method shac --updates 500 --lr 0.01 --noise 0.2 --critic-warmup 20 --train-spread 3.14159 "
    "--shac-energy 1 --check-every 25` (the encoder pre-trained in the run, 838 s): mean training episode return "
    "-1340.0 (update 25) -> -960.2 (update 250) -> -1216.0 (update 500), 0 of 8 worlds balance at evaluation; "
    "the same with `--updates 300` and `--init-encoder` (the same encoder, pre-trained in an earlier run), 482 s: "
    "-1319.1 -> -702.1, 0 of 8 (one world 0.40 s at the end); with `--updates 150 --lr 0.002` (an earlier revision, "
    "its learning rate decaying during the critic's warm-up too): -1395.2 -> -990.7, 0 of 8; with `--updates 300 "
    "--detach-pixels` (the actor's gradient through the physics only, the frames detached; the encoder pre-trained in "
    "the run, 270 s): -1338.4 -> -932.7, 0 of 8; the same with `--updates 1000 --check-every 50` (736 s): -1398.8 "
    "(update 50) -> -647.3 (update 950) -> -692.4 (update 1000), 0 of 8. "
    "SHAC started from a DAgger policy (16 rounds as in the section below, with the encoder of an earlier run) with `--init --updates 120 --lr 5e-4 "
    "--noise 0.05 --critic-warmup 30 --check-every 15` (training starts hanging) moved the controller away from "
    "the teacher's solution: checks 8, 8 (updates 15 and 30, the critic's warm-up: the controller unchanged), then "
    "5, 5, 4, 4, 5, 6 of 8; mean return -349.4 -> -548.5. " + SHAC_DIAGNOSTICS)


def write_readme(out_dir):
    head = ["# A cart-pole controlled from its camera's pixels (paper 002, section 3.4)", "",
            "`cartpole_from_pixels.py` trains a policy whose only input is the camera: the current and two previous "
            f"{WIDTH} x {HEIGHT} greyscale frames rendered by gradyn's differentiable ray-cast camera (`gradyn.torch.render`). "
            "The policy is an encoder (a small convolutional network: frames -> an estimate of x, theta, xdot, thetadot) "
            "followed by a controller (two dense layers -> force). It is trained in two steps: "
            "(1) the encoder is pre-trained by supervised regression on frame triples that gradyn renders from random "
            "states, **using the true state as labels**: this is the only place the state is given to the policy; "
            "(2) the encoder is frozen and the controller is trained on its output, the closed loop "
            "policy -> `gradyn.torch.step` -> render -> policy differentiated end to end, through the renderer, the "
            "encoder and the physics, for paper 002's loss (the squared distance of the pole's tip from the upright "
            "point, read from the state, plus penalties on the cart's distance from the centre, speed and force). "
            "At evaluation the policy sees pixels only. "
            "The model is `cartpole_pixels.xml`: the classic cart-pole's masses (cart 1 kg, pole 0.1 kg and 1 m, force "
            f"limit {FORCE:g} N), and a thin 1 g disc on the hinge that turns with the pole. The camera sees the pole as a "
            "soft bright band painted on the disc's face, brightest toward the pole's far end; cart and rod are drawn in "
            "the background's colour (a thin rod's outline jumps from pixel to pixel as it turns at this resolution; the "
            "disc's bilinear texture turns smoothly and carries the renderer's gradient to q).", "",
            "History. The first attempts drew the rod itself and learnt to spin the pole. The next one trained a "
            "keypoint encoder (two convolutions -> spatial soft-argmax, plus 4 x 4 pooled frames) and its controller "
            "together from scratch, end to end through renderer and physics, with the same loss and schedule: "
            "0 of 8 evaluation worlds balanced for 10 s (loss 1.1483 -> 0.9305 over 200 updates), although the same "
            "recipe with the true state as input learnt in 55 updates and a linear fit showed the frames contain the "
            "state. Pre-training the encoder on the state (below) fixed it. A linear encoder was not enough: fitted "
            "by ridge regression on 3000 samples, an earlier version of this script printed held-out R^2 x 1.000, "
            "theta 0.955, xdot 0.797, thetadot 0.127, and its controller balanced 0 of 8 worlds.", "",
            "The balance stage holds (below). The swing-up trained the same way (`--method bptt`, the default: "
            "backpropagation through whole episodes) does not: from hanging the pole stays hanging "
            "(hanging at rest is a stationary point of the loss, and the controller learns to catch the pole from "
            "part of the way up, not to pump). Runs of this script printed: " + BPTT_RUN + "; with `--out` elsewhere, "
            "`--stage swingup` (training episodes start hanging, 300 updates, horizon 1 -> 3 s): loss "
            "4.0226 -> 3.3774, 0 of 8 worlds balance; `--stage swingup --train-spread 3.14159` (training episodes "
            "start at any angle, 300 updates, horizon 1 -> 3 s): loss 3.1020 -> 2.5925, 0 of 8; the same with "
            "`--start-horizon 3 --updates 250 --batch 16 --lr 0.003`: loss 2.3781 -> 2.2737, 0 of 8.", "",
            "Energy shaping (a departure from paper 002's loss, `--energy W`: W x ((E - E_upright) / (m g l/2))^2 "
            "of the pole about its hinge added to the loss, W annealed linearly to `--energy-final` x W; "
            "`--train-spin S`: training episodes start with thetadot ~ U(-S, S)). All with `--stage swingup "
            "--start-horizon 3 --train-spin 1` and `--out` elsewhere, printed: "
            + ENERGY_TRIES + "", "",
            "Is the swing-up possible at all with this cart-pole, force limit and track? Yes: " + CLASSICAL_CHECK + ". "
            "So the Proof line is not ruled out by the physics; what fails is learning it through pixels by BPTT. "
            "Reverse curricula (`--reverse-from D0`: training episodes start within D of upright, D growing after each "
            "update in which enough of the batch held upright through the horizon's last third, the horizon growing "
            "with D; by angle at rest, or `--reverse-shell`: walking back along the swing-up, first on the orbit of "
            "upright energy turning toward upright, then with a growing energy deficit, up to hanging at rest). "
            "By angle at rest, D cannot pass about atan(F / ((M + m) g)) = 0.75 rad without the policy changing its "
            "kind (a pole at rest farther down cannot be held by pushing, only caught after a swing), which is why the "
            "runs below walk back along the swing-up instead. With `--out` elsewhere, printed: " + REVERSE_TRIES + ". "
            "And the energy term switched off near the top (`--energy-switch`, the tip loss alone catching): "
            + SWITCH_TRIES + ".", "",
            SHAC_TEXT, "", DISTILL_TEXT, "",
            "Everything below was written by the script (the sections by stage, each with its command and seed); "
            "timings are on the 2-core development machine, shared with other jobs.", ""]
    body = []
    for stage in ("balance", "swingup"):
        p = out_dir / f"results_{stage}.md"
        if p.exists():
            body.append(p.read_text())
        else:
            body.append(f"## Stage `{stage}`\n\nNot run for this page (no `results_{stage}.md`).\n")
    (out_dir / "README.md").write_text("\n".join(head + body))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=("balance", "swingup"), default="balance")
    ap.add_argument("--updates", type=int, default=None, help="Adam updates (default: 150 balance, 300 swingup)")
    ap.add_argument("--batch", type=int, default=8, help="episodes per update")
    ap.add_argument("--horizon", type=float, default=None, help="episode length in s (default: 2 balance, 3 swingup)")
    ap.add_argument("--start-horizon", type=float, default=1.0, help="the curriculum's first horizon in s")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's first learning rate (cosine decay to a tenth)")
    ap.add_argument("--clip", type=float, default=1.0, help="gradient norm clip")
    ap.add_argument("--hidden", type=int, default=64, help="width of the controller's two hidden layers")
    ap.add_argument("--encoder-samples", type=int, default=12000, help="rendered samples for the encoder's pre-training")
    ap.add_argument("--encoder-epochs", type=int, default=15, help="passes over them")
    ap.add_argument("--init", type=pathlib.Path, default=None,
                    help="start from these weights (default: pre-train the encoder, the controller from zero)")
    ap.add_argument("--init-encoder", type=pathlib.Path, default=None,
                    help="take the encoder (pre-trained, with its standardisation) from these weights, the controller from "
                         "zero (default: pre-train the encoder)")
    ap.add_argument("--eval-seconds", type=float, default=None, help="default 12 s balance, 15 s swingup")
    ap.add_argument("--eval-worlds", type=int, default=8)
    ap.add_argument("--train-spread", type=float, default=0.1,
                    help="swingup: training episodes start at theta = pi + U(-s, s) (the evaluation always at s = 0.1; "
                         "hanging at rest is a stationary point of the loss, where its gradient vanishes)")
    ap.add_argument("--train-spin", type=float, default=0.1,
                    help="swingup: training episodes start with thetadot ~ U(-s, s) rad/s (the evaluation always 0.1)")
    ap.add_argument("--energy", type=float, default=0.0,
                    help="weight of an energy-shaping term ((E - E_upright)/(m g l/2))^2 added to the loss (0: paper 002's loss only)")
    ap.add_argument("--energy-final", type=float, default=0.5, help="the energy weight's last value, as a fraction of --energy")
    ap.add_argument("--energy-switch", type=float, default=None,
                    help="weight the energy term per control step by a smooth step in cos theta: about 1 below cos theta = C "
                         "(pump), about 0 above (the tip loss alone catches); default: weight 1 everywhere")
    ap.add_argument("--reverse-from", type=float, default=0.0,
                    help="swingup: a reverse curriculum (replaces --train-spread in training): episodes start at theta = +-U(0, D), "
                         "a distance from upright up to D; D starts at this value (rad) and grows by --reverse-step after each "
                         "update in which at least --reverse-success of the batch held upright, up to pi (hanging); the horizon "
                         "grows with D from --start-horizon to --horizon (0: off)")
    ap.add_argument("--reverse-shell", action="store_true",
                    help="the reverse curriculum along the swing-up: D up to pi is the largest distance from upright, the pole "
                         "turning toward upright with the energy of upright; D in (pi, pi + 2] adds an energy deficit up to "
                         "D - pi (pi + 2: hanging at rest, the curriculum's end); see initial_states")
    ap.add_argument("--reverse-step", type=float, default=0.05, help="the reverse curriculum's step in D (rad)")
    ap.add_argument("--reverse-success", type=float, default=0.75,
                    help="the fraction of the batch that must be upright (and on the track) at every control step of the "
                         "horizon's last third for D to grow")
    ap.add_argument("--upright", type=float, default=0.0,
                    help="weight of a term W x (1 - cos theta), averaged over the horizon, added to the loss (0: none)")
    ap.add_argument("--skip-spikes", type=float, default=0.0,
                    help="skip an update whose gradient norm (before clipping) exceeds this many times the median of the last "
                         "20 updates' (0: take every update)")
    ap.add_argument("--window", type=int, default=None,
                    help="truncated backpropagation: detach the state every this many control steps (default: through the whole horizon)")
    ap.add_argument("--classical", action="store_true",
                    help="no training, no pixels: check that a swing-up is possible within the force limit, with a classical "
                         "controller on the true state (energy pumping, LQR catch) from the swing-up's evaluation starts; prints")
    ap.add_argument("--method", choices=("bptt", "shac", "distill"), default="bptt",
                    help="swingup: bptt (default: backpropagation through whole episodes, as above) or shac (short-horizon "
                         "actor-critic: many worlds, short windows through renderer and physics, a critic on the true state "
                         "bootstrapping the return at the window's end; see train_shac)")
    ap.add_argument("--fit-steps", type=int, default=1000, help="distill: Adam steps fitting the controller after each rollout")
    ap.add_argument("--worlds", type=int, default=64, help="shac: worlds run in parallel")
    ap.add_argument("--shac-steps", type=int, default=32, help="shac: control steps per window (0.04 s each)")
    ap.add_argument("--gamma", type=float, default=0.99, help="shac: discount per control step")
    ap.add_argument("--lam", type=float, default=0.95, help="shac: TD(lambda) of the critic's targets")
    ap.add_argument("--critic-lr", type=float, default=1e-3, help="shac: the critic's Adam learning rate (linear decay to 0)")
    ap.add_argument("--critic-iterations", type=int, default=16, help="shac: passes over each window's data for the critic")
    ap.add_argument("--episode-seconds", type=float, default=6.0, help="shac: training episode length (then a new hanging start)")
    ap.add_argument("--state-actor", action="store_true",
                    help="shac, a diagnostic: the controller acts on the TRUE state (no pixels, no encoder); prints its checks "
                         "and writes nothing")
    ap.add_argument("--detach-pixels", action="store_true",
                    help="shac: the actor's gradient does not pass through the frames (renderer and encoder): through the physics "
                         "from the force to the rewards and the critic only")
    ap.add_argument("--critic-warmup", type=int, default=0, help="shac: windows at the start in which only the critic learns")
    ap.add_argument("--shac-energy", type=float, default=0.0,
                    help="shac: W, a term -W ((E - E_upright) / (m g l/2))^2 of the pole added to the reward per control step (0: none)")
    ap.add_argument("--noise", type=float, default=0.0, help="shac: Gaussian exploration noise on the force, as a fraction of the limit")
    ap.add_argument("--check-every", type=int, default=20, help="shac: check the policy from pixels every this many updates")
    ap.add_argument("--check-worlds", type=int, default=8, help="shac: hanging starts of the check (seed + 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=pathlib.Path, default=HERE, help="folder for the results (default: beside this file)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 3 updates of 2 episodes of 0.1 s, 0.2 s evaluation")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--all-cores", action="store_true", help="do not pin the process to one core (see the top of the file)")
    args = ap.parse_args(argv)
    args.argv = sys.argv[1:] if argv is None else list(argv)
    if args.quick:
        args.updates, args.batch, args.horizon, args.start_horizon = 3, 2, 0.1, 0.1
        args.eval_seconds, args.eval_worlds, args.hidden, args.encoder_samples, args.encoder_epochs = 0.2, 2, 8, 64, 1
        args.worlds, args.shac_steps, args.critic_iterations, args.check_every, args.check_worlds = 3, 3, 1, 2, 2
        args.episode_seconds = 0.2
    args.check_seconds = 0.2 if args.quick else 15.0
    if args.method != "bptt" and args.stage != "swingup":
        ap.error(f"--method {args.method} is for --stage swingup")
    if args.eval_seconds is None:
        args.eval_seconds = 12.0 if args.stage == "balance" else 15.0
    if args.updates is None:
        args.updates = 200 if args.stage == "balance" else 300
    if args.horizon is None:
        args.horizon = 1.5 if args.stage == "balance" else 3.0
    for name in ("updates", "batch", "eval_worlds", "worlds", "shac_steps", "critic_iterations", "check_every", "check_worlds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("horizon", "start_horizon", "eval_seconds", "lr", "clip"):
        if not getattr(args, name) > 0:
            ap.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.init is not None and not args.init.exists():
        ap.error(f"--init: no such file {args.init}; train the balance stage first or leave --init out")
    if args.init_encoder is not None and not args.init_encoder.exists():
        ap.error(f"--init-encoder: no such file {args.init_encoder}")
    if args.reverse_from > 0 and not (args.reverse_step > 0 and 0 < args.reverse_success <= 1):
        ap.error("--reverse-step must be positive and --reverse-success in (0, 1]")
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)

    model, cam, look = load_model(), camera(), appearance()
    if args.classical:
        q0, v0 = initial_states("swingup", args.eval_worlds, np.random.default_rng(args.seed + 1000))
        qs = classical_swingup(model, q0.numpy(), v0.numpy(), 1.0 if args.quick else 15.0)
        times = balance_times(qs, DT * SUBSTEPS)
        print(f"classical swing-up (true state, energy pumping + LQR, |force| <= {FORCE:g} N), {len(times)} worlds from hanging "
              f"(seed {args.seed + 1000}), {(qs.shape[1] - 1) * DT * SUBSTEPS:g} s: balance times "
              f"{', '.join(f'{s:.2f}' for s, _ in times)} s; {sum(s >= 10 for s, _ in times)}/{len(times)} >= 10 s; balanced from "
              f"{', '.join('never' if st is None else f'{st:.2f}' for _, st in times)} s; max |x| {np.abs(qs[..., 0]).max():.2f} m")
        return None, qs, times
    if args.state_actor:
        if args.method != "shac":
            ap.error("--state-actor is a diagnostic of --method shac")
        global frames_of
        keep = frames_of
        try:
            t0 = time.time()
            policy, history, _, kept = train_shac(args, model, cam, look)
        finally:
            frames_of = keep
        checks = [h for h in history if h["check"] is not None]
        print(f"SHAC with the controller on the true state (a diagnostic, no pixels), {args.updates} windows in {time.time() - t0:.0f} s: "
              f"mean episode return {checks[0]['return']:.1f} (update {checks[0]['update']}) -> {history[-1]['return']:.1f}; "
              f"checks ({args.check_worlds} hanging starts, seed {args.seed + 2000}, {args.check_seconds:g} s), worlds balanced >= 10 s: "
              + ", ".join(f"{h['check']} (update {h['update']})" for h in checks))
        return history, None, None
    t0 = time.time()
    policy, history, init_from, kept = {"shac": train_shac, "distill": train_distill, "bptt": train}[args.method](args, model, cam, look)
    train_seconds = time.time() - t0
    t0 = time.time()
    qs, us, fs = evaluate(args, model, policy, cam, look)
    eval_seconds = time.time() - t0
    times = balance_times(qs, DT * SUBSTEPS)
    torch.save(policy.state_dict(), args.out / f"policy_{args.stage}.pt")
    write_figure(args.out / f"{args.stage}.png", args, history, qs, fs, times)
    write_results(args.out, args, policy, history, init_from, qs, times, train_seconds, eval_seconds, kept)
    held = [s for s, _ in times]
    if args.method == "distill":
        print(f"{args.stage} (DAgger from the classical teacher on the true state): {args.updates} rounds x {args.worlds} episodes "
              f"in {train_seconds:.1f} s; first check with all {args.check_worlds} worlds balanced: "
              + (f"round {args.success_update}, after {args.success_episodes} episodes" if args.success_update else "not reached"))
    if args.method == "shac":
        print(f"{args.stage} (SHAC): {args.updates} windows x {args.worlds} worlds x {args.shac_steps} steps in {train_seconds:.1f} s; "
              f"{history[-1]['episodes']} training episodes; first check with all {args.check_worlds} worlds balanced: "
              + (f"update {args.success_update}, after {args.success_episodes} episodes" if args.success_update else "not reached"))
    print(f"{args.stage}: " + (f"{args.updates} updates x {args.batch} episodes" if args.method == "bptt" else f"--method {args.method}")
          + f" in {train_seconds:.1f} s; loss {history[0]['loss']:.4f} -> {history[-1]['loss']:.4f}; evaluation {qs.shape[1] - 1} steps: "
          f"balance times {', '.join(f'{s:.2f}' for s in held)} s; {sum(s >= 10 for s in held)}/{len(held)} >= 10 s")
    print(f"wrote {args.out / 'README.md'}, {args.out / f'results_{args.stage}.md'}, {args.out / f'{args.stage}.png'}")
    return history, qs, times


if __name__ == "__main__":
    main()
