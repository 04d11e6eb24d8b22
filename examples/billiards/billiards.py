#!/usr/bin/env python3
"""Paper 000, section 4.2 (Fig. 2-4): visual prediction of billiard balls with gradyn as the physics
layer of an encoder -> physics -> decoder network, against a 2x100 MLP in place of the physics.

    .venv/bin/python examples/billiards/billiards.py            # the experiment (see README.md for its time)
    .venv/bin/python examples/billiards/billiards.py --quick    # a few-second smoke run

Data (rendered by gradyn itself): 1 or 3 balls (spheres, radius 0.25 m, mass 1) on two slide joints
each (x, y) in a 2 m x 2 m box of four walls (boxes welded to the world), no gravity (the balls move
in the plane; the table is not simulated), PGS contact with restitution 1 and no friction, so balls
bounce elastically off the walls and each other. Random non-overlapping positions, random directions,
speeds uniform in [0.5, 1.5] m/s. The truth is simulated at dt = 0.01 s, 10 steps per frame (10
frames per second). Frames: a top camera (gradyn.render, pinhole, 10 m above the table), solid
unlit colours, rendered at twice the resolution and averaged 2x2 (anti-aliased), 32x32 RGB by
default. One sample: frames t-2, t-1, t as input, frame t+10 (1 s later) as the target, and the true
states phi = (positions, velocities) at t and t+10 as labels.

Model (Fig. 2): encoder -> phi_t = (x, y of every ball, vx, vy of every ball) -> physics ->
phi_{t+10} -> decoder -> the frame at t+10.
* Encoder: a small CNN reads each frame's ball positions (the frame plus two pixel-coordinate
  channels, three stride-2 convolutions, a linear layer); the velocities are the positions' finite
  difference plus a learned correction (paper 000 fed its encoder optical flow for the velocities).
* Physics: gradyn.torch.rollout of the same scene over the 10 frames, 2 steps per frame by default
  (dt = 0.05 s, coarser than the data's 0.01 s: an approximate engine, as the paper's was; a bounce
  near the end of the horizon can land on the other side of it, which flips a velocity. Its error on
  the true states is printed and written to the README; --layer-substeps sets the steps per frame).
* Decoder: learned, as in the paper: a fixed layer turns each ball's position into a Gaussian heatmap
  (sigma 0.15 m) and a small CNN paints the balls from it, over a learned image of the table. Not
  gradyn's own differentiable renderer: it would draw the balls exactly, but it holds fixed which
  geom each pixel sees, so a ball drawn in the wrong place gets no gradient pulling it towards the
  right one (silhouette edges give none, and these balls are solid colours); the heatmap's gradient
  reaches a few sigma, and a learned decoder keeps the comparison with the baseline equal.

Losses (paper 000, Eq. 4-6): a labelled sample feeds the true phi_{t+10} to the decoder and adds
MSE(encoder, phi_t) + MSE(physics(phi_t), phi_{t+10}) + MSE(image); an unlabelled one feeds
decoder(physics(encoder(x))) and has the image loss only, whose gradient reaches the encoder through
gradyn's rollout adjoint. The physics model trains on all samples with 100, 25, 10 or 2 % of them
labelled; the baseline (the same encoder and decoder, a 2x100 MLP in place of physics) trains on the
labelled samples only, as in the paper; a second baseline, the same MLP trained exactly like the
physics model (unlabelled samples too, their image loss through the MLP), isolates what the physics
layer adds from what the extra unlabelled training steps add. Validation loss: image MSE of decoder(dynamics(encoder(x)))
on held-out samples, plotted against the labelled samples used so far (Fig. 4's axis).

Writes README.md (numbers, seed, command), billiards_loss.png (Fig. 4) and billiards_frames.png
(Fig. 3) into --out (default: beside this file).
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

import gradyn  # noqa: E402

RADIUS = 0.25  # ball radius, m
HALF = 1.0  # the walls' inner faces are at x, y = +-HALF
VIEW = 1.25  # the camera sees x, y in [-VIEW, VIEW] at the table's height
HEIGHT = 10.0  # camera height above the table, m
DT_FRAME = 0.1  # s between frames
SUBSTEPS = 10  # simulation steps per frame for the data (dt = 0.01 s)
HORIZON = 10  # frames ahead
SPEED = (0.5, 1.5)  # m/s
COLORS = [(0.95, 0.2, 0.15), (0.2, 0.85, 0.25), (0.25, 0.4, 1.0)]
WALL_COLOR = (0.8, 0.8, 0.8)
BACKGROUND = (0.05, 0.05, 0.05)
FRACTIONS = (1.0, 0.25, 0.1, 0.02)
# physics: gradyn layer, every sample (the labelled fraction with labels); mlp: the paper's baseline, a
# 2x100 MLP in place of physics trained on the labelled samples only; mlp_all: the same MLP trained like
# the physics model (unlabelled samples through the MLP too), which isolates what the physics adds.
KINDS = ("physics", "mlp", "mlp_all")
NAMES = {"physics": "gradyn physics", "mlp": "MLP 2x100 (labelled only)", "mlp_all": "MLP 2x100 (all samples)"}


# --- the scene and the data ---------------------------------------------------------------------


def scene(balls: int):
    """The box and `balls` balls on slide joints (q = x1, y1, x2, y2, ...), no gravity, PGS contact,
    restitution 1, no friction."""
    if balls not in (1, 2, 3):
        raise ValueError(f"balls: expected 1, 2 or 3 (one colour each), got {balls!r}")
    w = 0.1  # wall half-thickness
    walls = "".join(
        f'<geom name="{n}" type="box" pos="{x} {y} 0" size="{sx} {sy} 0.3"/>\n'
        for n, x, y, sx, sy in (("wall_left", -HALF - w, 0, w, HALF + 2 * w), ("wall_right", HALF + w, 0, w, HALF + 2 * w),
                                ("wall_bottom", 0, -HALF - w, HALF + 2 * w, w), ("wall_top", 0, HALF + w, HALF + 2 * w, w)))
    bodies = "".join(f"""
    <body name="ball{i}" pos="0 0 0">
      <joint name="ball{i}_x" type="slide" axis="1 0 0"/>
      <joint name="ball{i}_y" type="slide" axis="0 1 0"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.025 0.025 0.025"/>
      <geom name="ball{i}" type="sphere" size="{RADIUS}"/>
    </body>""" for i in range(balls))
    xml = f"""<mujoco model="billiards{balls}">
  <option gravity="0 0 0"/>
  <default><geom friction="0 0 0"/></default>
  <worldbody>
{walls}{bodies}
  </worldbody>
</mujoco>"""
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "billiards.xml"
        path.write_text(xml)
        model = gradyn.load(str(path), contact="pgs")
    # MJCF has no restitution; a pair bounces with the larger of its two geoms' (set on the balls).
    p = model.params
    for i in range(balls):
        p[model.param_names.index(f"ball{i}.restitution")] = 1.0
    return model.with_params(p).with_contact(restitution_threshold=0.0)


def camera(size: int):
    fovy = 2 * math.degrees(math.atan(VIEW / HEIGHT))
    return gradyn.Camera.look_at(eye=(0, 0, HEIGHT), target=(0, 0, 0), up=(0, 1, 0), width=size, height=size,
                                 fovy=fovy)


def appearance(model):
    colors = {n: WALL_COLOR for n in model.geom_names if n.startswith("wall")}
    colors.update({f"ball{i}": COLORS[i] for i in range(len(model.geom_names) - 4)})
    return gradyn.Appearance(colors=colors, background=BACKGROUND, lighting=False)


def render(model, qs, size: int):
    """Frames (N, 3, size, size) float32 of configurations qs (N, nq): rendered at 2x and averaged."""
    images = gradyn.render(model, np.asarray(qs, dtype=np.float64), camera(2 * size), appearance(model), threads=1)
    images = images.reshape(len(qs), size, 2, size, 2, 3).mean(axis=(2, 4))
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2), dtype=np.float32)


def pixel_of(x, y, size: int):
    """(column, row) of the pixel centre nearest the table point (x, y) (row 0 at the top)."""
    scale = size / (2 * VIEW)
    return int(round((x + VIEW) * scale - 0.5)), int(round((VIEW - y) * scale - 0.5))


def random_starts(balls: int, count: int, rng):
    """Non-overlapping positions inside the box and velocities of random direction and speed."""
    lim = HALF - RADIUS - 0.02
    q = np.empty((count, 2 * balls))
    for k in range(count):
        while True:
            p = rng.uniform(-lim, lim, size=(balls, 2))
            if balls == 1 or min(np.linalg.norm(p[i] - p[j]) for i in range(balls) for j in range(i)) > 2 * RADIUS + 0.05:
                break
        q[k] = p.ravel()
    angle = rng.uniform(0, 2 * np.pi, size=(count, balls))
    speed = rng.uniform(*SPEED, size=(count, balls))
    v = np.stack([speed * np.cos(angle), speed * np.sin(angle)], axis=-1).reshape(count, 2 * balls)
    return q, v


def simulate(model, q0, v0, frames: int):
    """States at every frame: qs, vs of shape (count, frames + 1, n) (dt 0.01 s, SUBSTEPS per frame)."""
    count = len(q0)
    taus = np.zeros((count, frames * SUBSTEPS, model.nv))
    qs, vs = gradyn.rollout(model, q0, v0, taus, DT_FRAME / SUBSTEPS, threads=1)
    return qs[:, ::SUBSTEPS], vs[:, ::SUBSTEPS]


def make_data(balls: int, count: int, size: int, seed: int):
    """`count` samples: x (count, 9, size, size) frames t-2, t-1, t; y (count, 3, size, size) frame
    t+HORIZON; phi, phi_next (count, 4 balls) the true states (q, v) at t and t+HORIZON."""
    model = scene(balls)
    rng = np.random.default_rng(seed)
    q0, v0 = random_starts(balls, count, rng)
    qs, vs = simulate(model, q0, v0, 2 + HORIZON)
    frames = render(model, qs[:, [0, 1, 2, 2 + HORIZON]].reshape(count * 4, -1), size).reshape(count, 4, 3, size, size)
    return {"x": frames[:, :3].reshape(count, 9, size, size), "y": frames[:, 3],
            "phi": np.concatenate([qs[:, 2], vs[:, 2]], axis=1).astype(np.float32),
            "phi_next": np.concatenate([qs[:, 2 + HORIZON], vs[:, 2 + HORIZON]], axis=1).astype(np.float32)}


# --- the networks ---------------------------------------------------------------------------------


def networks(balls: int, size: int):
    import torch
    from torch import nn

    def coords(n, like):
        r = torch.linspace(-1, 1, n, dtype=like.dtype)
        yy, xx = torch.meshgrid(-r, r, indexing="ij")
        return torch.stack([xx, yy])  # (2, n, n): x right, y up

    class Encoder(nn.Module):
        """3 frames -> phi (4 * balls). One small CNN (the frame plus two pixel-coordinate channels,
        three stride-2 convolutions, a linear layer) reads each frame's ball positions; the
        velocities are their finite difference over the last two frame intervals plus a learned
        correction from the three frames' features (zero at the start). Paper 000 gives its encoder
        velocity through optical-flow input; the difference plays that part here."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(5, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, 32, 3, 2, 1), nn.ReLU(),
                                      nn.Conv2d(32, 32, 3, 2, 1), nn.ReLU(), nn.Flatten(),
                                      nn.Linear(32 * (size // 8) ** 2, 128), nn.ReLU())
            self.position = nn.Linear(128, 2 * balls)
            self.correction = nn.Linear(3 * 128, 2 * balls)
            nn.init.zeros_(self.correction.weight)
            nn.init.zeros_(self.correction.bias)

        def forward(self, x):
            b = x.shape[0]
            frames = x.reshape(b * 3, 3, size, size)
            c = coords(size, x).expand(b * 3, 2, size, size)
            h = self.conv(torch.cat([frames, c], 1))
            p = self.position(h).reshape(b, 3, 2 * balls)
            v = (p[:, 2] - p[:, 0]) / (2 * DT_FRAME) + self.correction(h.reshape(b, -1))
            return torch.cat([p[:, 2], v], 1)

    class Decoder(nn.Module):
        """phi -> image (3, size, size). A fixed layer turns each ball's position into a Gaussian
        heatmap on the pixel grid (sigma 0.15 m, the keypoint decoders of Jakab et al. 2018), a
        small CNN (a 3x3 and two 1x1 convolutions) paints the balls from the heatmaps, and a learned
        image adds the table and the walls. (The velocities, half of phi, do not show in a frame.)"""

        def __init__(self, hidden=32, sigma=0.15):
            super().__init__()
            self.sigma = sigma
            self.net = nn.Sequential(nn.Conv2d(balls, hidden, 3, 1, 1), nn.ReLU(), nn.Conv2d(hidden, hidden, 1),
                                     nn.ReLU(), nn.Conv2d(hidden, 3, 1))
            self.background = nn.Parameter(torch.zeros(3, size, size))

        def forward(self, phi):
            grid = coords(size, phi) * VIEW * (size - 1) / size  # table x, y of the pixel centres
            pos = phi[:, :2 * balls].reshape(-1, balls, 2, 1, 1)
            heat = torch.exp(-(grid[None, None] - pos).square().sum(2) / (2 * self.sigma ** 2))
            return self.net(heat) + self.background

    class MLP(nn.Module):
        """The baseline's dynamics: phi -> phi_{t+10}, two hidden layers of 100."""

        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4 * balls, 100), nn.ReLU(), nn.Linear(100, 100), nn.ReLU(),
                                     nn.Linear(100, 4 * balls))

        def forward(self, phi):
            return self.net(phi)

    return Encoder, Decoder, MLP


class GradynPhysics:
    """phi_t -> phi_{t+HORIZON}: gradyn.torch.rollout of the scene over HORIZON frames, `substeps`
    steps of DT_FRAME / substeps per frame (differentiable: the rollout's adjoint carries the image
    loss back to the encoder)."""

    def __init__(self, model, substeps: int = 2):
        if not isinstance(substeps, int) or substeps < 1:
            raise ValueError(f"substeps: expected a positive whole number of steps per frame, got {substeps!r}")
        self.model, self.substeps = model, substeps

    def __call__(self, phi):
        import torch

        import gradyn.torch as gt

        n = self.model.nq
        q0, v0 = phi[:, :n].double(), phi[:, n:].double()
        taus = torch.zeros(phi.shape[0], HORIZON * self.substeps, self.model.nv, dtype=torch.float64)
        qs, vs = gt.rollout(self.model, q0, v0, taus, DT_FRAME / self.substeps)
        return torch.cat([qs[:, -1], vs[:, -1]], 1).to(phi.dtype)

    def parameters(self):
        return []


def labelled_mask(count: int, fraction: float, seed: int):
    """Which of `count` training samples carry labels: round(fraction * count) of them (at least
    one), chosen at random (the same for both models at a seed)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction: expected a labelled fraction in (0, 1], got {fraction!r}")
    k = max(1, int(round(fraction * count)))
    mask = np.zeros(count, dtype=bool)
    mask[np.random.default_rng(seed + 7).permutation(count)[:k]] = True
    return mask


def train(kind: str, fraction: float, data: dict, val: dict, balls: int, size: int, seed: int, epochs: int,
          batch: int, lr: float, layer_substeps: int = 2, image_weight: float = 1.0, evals_per_epoch: int = 4,
          progress=None):
    """Train the physics model (kind 'physics': all samples, the labelled fraction with labels) or
    the baselines ('mlp': the labelled samples only; 'mlp_all': like the physics model). Returns the
    curve [(labelled samples used, validation image MSE, validation encoder state MSE, validation MSE
    of the predicted positions at t+10, seconds)] and the trained networks."""
    import torch

    torch.manual_seed(seed)
    Encoder, Decoder, MLP = networks(balls, size)
    enc, dec = Encoder(), Decoder()
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    dyn = GradynPhysics(scene(balls), layer_substeps) if kind == "physics" else MLP()
    opt = torch.optim.Adam([{"params": list(enc.parameters()) + list(dyn.parameters())},
                            {"params": list(dec.parameters()), "lr": 2.5 * lr}], lr=lr)
    x, y = torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
    phi, phi_next = torch.from_numpy(data["phi"]), torch.from_numpy(data["phi_next"])
    mask = torch.from_numpy(labelled_mask(len(x), fraction, seed))
    pool = torch.nonzero(mask).flatten() if kind == "mlp" else torch.arange(len(x))
    gen = torch.Generator().manual_seed(seed)
    steps_per_epoch = max(1, math.ceil(len(pool) / batch))
    # The learning rate decays to zero over the run (cosine), for the encoder's final precision.
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)
    eval_at = {int(round(steps_per_epoch * (k + 1) / evals_per_epoch)) - 1 for k in range(evals_per_epoch)}
    curve, used, started = [], 0, time.perf_counter()

    def evaluate():
        with torch.no_grad():
            vx, vy = torch.from_numpy(val["x"]), torch.from_numpy(val["y"])
            est = enc(vx)
            image = dec(dyn(est))
            state = (est - torch.from_numpy(val["phi"])).square().mean().item()
            future = (dyn(est) - torch.from_numpy(val["phi_next"]))[:, :2 * balls].square().mean().item()
            return (image - vy).square().mean().item(), state, future

    for epoch in range(epochs):
        order = pool[torch.randperm(len(pool), generator=gen)]
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            lab = mask[idx]
            est = enc(x[idx])
            pred = dyn(torch.where(lab[:, None], phi[idx], est))  # labelled: the true phi_t (Eq. 4)
            shown = torch.where(lab[:, None], phi_next[idx], pred)  # labelled: the decoder sees the truth
            per_sample = image_weight * (dec(shown) - y[idx]).square().mean(dim=(1, 2, 3))
            state = ((est - phi[idx]).square().mean(1) + (pred - phi_next[idx]).square().mean(1)) * lab
            loss = (per_sample + state).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            used += int(lab.sum())
            if s in eval_at:
                curve.append((used, *evaluate(), time.perf_counter() - started))
            if progress is not None:
                progress.update(1)
    return curve, (enc, dyn, dec)


def physics_error(model, val, substeps: int):
    """MSE of the gradyn layer's prediction from the true phi_t against the true phi_{t+10} (the
    approximate engine's own error), of its positions alone, and of the identity (the state not
    moving) for scale."""
    import torch

    with torch.no_grad():
        pred = GradynPhysics(model, substeps)(torch.from_numpy(val["phi"]).double()).numpy()
    n = model.nq
    return (float(np.mean((pred - val["phi_next"]) ** 2)), float(np.mean((pred - val["phi_next"])[:, :n] ** 2)),
            float(np.mean((val["phi"] - val["phi_next"]) ** 2)))


def at(curve, used):
    """Validation loss of a curve at `used` labelled samples (linear in log samples between evaluations;
    None outside the curve)."""
    xs = np.array([c[0] for c in curve], dtype=float)
    ys = np.array([c[1] for c in curve])
    if len(xs) == 0 or used < xs[0] or used > xs[-1]:
        return None
    return float(np.interp(np.log(used), np.log(np.maximum(xs, 1)), ys))


# --- the experiment -------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--balls", type=int, nargs="+", default=[1, 3], help="ball counts (default: 1 3)")
    ap.add_argument("--fractions", type=float, nargs="+", default=list(FRACTIONS), help="labelled fractions")
    ap.add_argument("--train", type=int, default=2000, help="training samples per ball count")
    ap.add_argument("--val", type=int, default=300, help="validation samples per ball count")
    ap.add_argument("--size", type=int, default=32, help="frame width and height in pixels (a multiple of 8)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--image-weight", type=float, default=1.0, help="weight of the image loss (paper: 1)")
    ap.add_argument("--layer-substeps", type=int, default=2,
                    help="gradyn layer steps per frame (the data: 10 of 0.01 s); 10 frames = 10 x this many steps")
    ap.add_argument("--quick", action="store_true", help="a few-second smoke run (tiny data, one epoch)")
    ap.add_argument("--out", default=None, help="folder for README.md and the figures (default: beside this file)")
    args = ap.parse_args(argv)
    if args.quick:
        args.train, args.val, args.epochs, args.size, args.batch = 60, 20, 1, 16, 20
        args.fractions = [1.0, 0.1]
    if args.size % 8 or args.size < 8:
        ap.error(f"--size: expected a multiple of 8 (the encoder halves it three times), got {args.size}")
    if any(not 0 < f <= 1 for f in args.fractions):
        ap.error(f"--fractions: expected labelled fractions in (0, 1], got {args.fractions}")
    if min(args.train, args.val, args.epochs, args.batch, args.layer_substeps) < 1:
        ap.error("--train, --val, --epochs, --batch and --layer-substeps must be at least 1")
    for b in args.balls:
        if b not in (1, 2, 3):
            ap.error(f"--balls: expected 1, 2 or 3, got {b}")
    import torch
    from tqdm import tqdm

    torch.set_num_threads(1)
    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = {"args": vars(args), "runs": [], "physics_error": {}, "data_s": {}, "mean_frame_mse": {}}
    examples = {}  # (balls, kind) -> networks trained with shown_fraction labelled, for Fig. 3
    shown_fraction = args.shown_fraction = 0.1 if 0.1 in args.fractions else args.fractions[-1]
    for balls in args.balls:
        t0 = time.perf_counter()
        data = make_data(balls, args.train, args.size, seed=1000 * balls)
        val = make_data(balls, args.val, args.size, seed=1000 * balls + 1)
        results["data_s"][balls] = time.perf_counter() - t0
        err, err_pos, still = physics_error(scene(balls), val, args.layer_substeps)
        results["physics_error"][balls] = {"gradyn_layer": err, "positions": err_pos, "no_motion": still}
        # Reference: predicting every target frame by the mean training target (the table, the balls smeared).
        results["mean_frame_mse"][balls] = float(np.mean((val["y"] - data["y"].mean(0)) ** 2))
        print(f"{balls} ball(s): validation image MSE of the mean training frame (a prediction that ignores the "
              f"input): {results['mean_frame_mse'][balls]:.5f}", flush=True)
        print(f"{balls} ball(s): {args.train} training and {args.val} validation samples rendered in "
              f"{results['data_s'][balls]:.1f} s; gradyn layer ({10 * args.layer_substeps} steps of {DT_FRAME / args.layer_substeps:g} s) on the true states: state MSE "
              f"{err:.2e}, positions alone {err_pos:.2e} (a state that does not move: {still:.2e})", flush=True)
        for seed in args.seeds:
            for fraction in args.fractions:
                for kind in KINDS:
                    n_pool = int(labelled_mask(args.train, fraction, seed).sum()) if kind == "mlp" else args.train
                    total = args.epochs * max(1, math.ceil(n_pool / args.batch))
                    with tqdm(total=total, desc=f"{balls} ball(s) {kind} {fraction:.0%} seed {seed}",
                              disable=args.quick, leave=False) as bar:
                        curve, nets = train(kind, fraction, data, val, balls, args.size, seed, args.epochs,
                                            args.batch, args.lr, args.layer_substeps, args.image_weight,
                                            progress=bar)
                    last = curve[-1]
                    print(f"{balls} ball(s) {kind:7s} {fraction:6.0%} labelled, seed {seed}: {last[0]} labelled samples "
                          f"used, validation image MSE {last[1]:.5f}, encoder state MSE {last[2]:.4f}, predicted "
                          f"positions at t+10 MSE {last[3]:.4f} ({last[4]:.0f} s)", flush=True)
                    results["runs"].append({"balls": balls, "kind": kind, "fraction": fraction, "seed": seed,
                                            "curve": curve})
                    if seed == args.seeds[0] and fraction == shown_fraction:
                        examples[(balls, kind)] = (nets, val)
    results["seconds"] = time.perf_counter() - started
    comparisons = compare(results, args)
    for line in comparisons:
        print(line)
    write_results(results, comparisons, examples, args, out_dir)
    print(f"wrote {out_dir / 'README.md'}")
    return 0


def compare(results, args):
    """Lines comparing, per ball count and seed, the physics model with 10 % labels against the MLP
    baselines at the same labelled samples."""
    lines = []
    for balls in args.balls:
        for seed in args.seeds:
            runs = {(r["kind"], r["fraction"]): r["curve"] for r in results["runs"]
                    if r["balls"] == balls and r["seed"] == seed}
            for fraction in args.fractions:
                if ("physics", fraction) not in runs:
                    continue
                phys = runs[("physics", fraction)][-1]
                same = runs[("mlp", fraction)][-1]
                verdict = "below" if phys[1] < same[1] else "NOT below"
                line = (f"{balls} ball(s), seed {seed}, {fraction:.0%} labelled: physics {phys[1]:.5f} vs MLP "
                        f"(labelled only) {same[1]:.5f} at {phys[0]} labelled samples: physics {verdict} the baseline")
                alike = runs.get(("mlp_all", fraction))
                if alike is not None:
                    alike = alike[-1]
                    verdict = "below" if phys[1] < alike[1] else "NOT below"
                    line += (f"; vs MLP (all samples) {alike[1]:.5f}: physics {verdict}; predicted positions at "
                             f"t+10 MSE physics {phys[3]:.4f}, MLP (all samples) {alike[3]:.4f}")
                full = runs.get(("mlp", 1.0))
                if full is not None and fraction != 1.0:
                    v = at(full, phys[0])
                    if v is not None:
                        line += f"; the MLP with 100 % labels at {phys[0]} labelled samples: {v:.5f}"
                lines.append(line)
    return lines


def write_results(results, comparisons, examples, args, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    colors = {1.0: "C0", 0.25: "C1", 0.1: "C2", 0.02: "C3"}
    fig, axes = plt.subplots(1, len(args.balls), figsize=(6 * len(args.balls), 4.2), squeeze=False)
    for ax, balls in zip(axes[0], args.balls):
        for r in results["runs"]:
            if r["balls"] != balls:
                continue
            xs = [max(c[0], 1) for c in r["curve"]]
            ys = [c[1] for c in r["curve"]]
            first = r["seed"] == args.seeds[0]
            style = {"physics": ("-", "o"), "mlp": ("--", "x"), "mlp_all": (":", "s")}[r["kind"]]
            ax.loglog(xs, ys, style[0], marker=style[1], ms=3, color=colors.get(r["fraction"], "k"),
                      alpha=1.0 if first else 0.4, label=f"{NAMES[r['kind']]} {r['fraction']:.0%}" if first else None)
        ax.axhline(results["mean_frame_mse"][balls], color="gray", ls=":", lw=1, label="mean frame (ignores input)")
        ax.set_xlabel("labelled samples used in training")
        ax.set_ylabel("validation loss (image MSE)")
        ax.set_title(f"{balls} ball{'s' if balls > 1 else ''}")
        ax.legend(fontsize=7)
    fig.suptitle("Billiards: validation loss against labelled samples (paper 000, Fig. 4 shape)")
    fig.tight_layout()
    fig.savefig(out_dir / "billiards_loss.png", dpi=110)
    plt.close(fig)

    # Fig. 3: input frames, the true frame 10 ahead, the predictions of both models.
    if examples:
        fig, axes = plt.subplots(len(args.balls), 4 + len(KINDS), figsize=(14, 2.4 * len(args.balls)), squeeze=False)

        def show(ax, img, title):
            ax.imshow(np.clip(img.transpose(1, 2, 0), 0, 1))
            ax.set_title(title, fontsize=8)
            ax.axis("off")

        for row, balls in zip(axes, args.balls):
            val = examples[(balls, "physics")][1]
            for k, name in enumerate(("input t-2", "input t-1", "input t")):
                show(row[k], val["x"][0, 3 * k:3 * k + 3], name)
            show(row[3], val["y"][0], "true t+10")
            for j, kind in enumerate(KINDS):
                enc, dyn, dec = examples[(balls, kind)][0]
                with torch.no_grad():
                    img = dec(dyn(enc(torch.from_numpy(val["x"][:1]))))[0].numpy()
                show(row[4 + j], img, f"{NAMES[kind]}\n{args.shown_fraction:.0%} labelled")
        fig.tight_layout()
        fig.savefig(out_dir / "billiards_frames.png", dpi=110)
        plt.close(fig)

    command = "`nice -n 10 .venv/bin/python examples/billiards/billiards.py" + (" --quick" if args.quick else "")
    defaults = {"train": 2000, "val": 300, "epochs": 6, "batch": 50, "lr": 2e-3, "size": 32, "seeds": [0],
                "balls": [1, 3], "fractions": list(FRACTIONS), "layer_substeps": 2, "image_weight": 1.0}
    if not args.quick:
        for k, d in defaults.items():
            v = getattr(args, k)
            if v != d:
                command += f" --{k.replace('_', '-')} " + (" ".join(str(e) for e in v) if isinstance(v, list) else str(v))
    if args.out:
        command += f" --out {args.out}"
    command += "`"
    lines = [
        "# Billiards: visual prediction with gradyn as the physics layer (paper 000, section 4.2, Fig. 2-4)\n",
        "Everything below the line is written by `billiards.py` (its docstring describes the data, the "
        "networks and the losses); it quotes no number the script did not print.\n",
        "---\n",
        f"Written by {command} (seeds {', '.join(map(str, args.seeds))}; {results['seconds']:.0f} s on this "
        f"machine, 1 torch thread). Data: {args.train} training and {args.val} validation samples per ball "
        f"count, {args.size}x{args.size} RGB frames, 3 input frames, target {HORIZON} frames ({HORIZON * DT_FRAME:g} s) ahead; "
        f"{args.epochs} epochs, batch {args.batch}, Adam lr {args.lr} (decoder 2.5x) with cosine decay to 0 over "
        f"each run; labelled fractions "
        f"{', '.join(f'{f:.0%}' for f in args.fractions)}. The physics model trains on every sample (the "
        "labelled fraction with labels), the paper's MLP baseline on the labelled samples only, so at a "
        "fraction both have used the same labelled samples after the same epochs; the second MLP baseline "
        "trains on every sample like the physics model (the same steps, the same labels).\n",
        f"The gradyn layer alone, from the true states ({10 * args.layer_substeps} steps of "
        f"{DT_FRAME / args.layer_substeps:g} s against the data's {HORIZON * SUBSTEPS} steps of "
        f"{DT_FRAME / SUBSTEPS:g} s), validation state MSE: " + ", ".join(
            f"{b} ball(s) {e['gradyn_layer']:.2e}, positions alone {e['positions']:.2e} (a state that does not "
            f"move: {e['no_motion']:.2e})"
            for b, e in results["physics_error"].items()) + ". For scale, the validation image MSE of the "
        "mean training frame (a prediction that ignores the input): " + ", ".join(
            f"{b} ball(s) {e:.5f}" for b, e in results["mean_frame_mse"].items()) + ".\n",
        "| balls | model | labelled | seed | labelled samples used | validation image MSE | encoder state MSE | "
        "predicted positions at t+10 MSE | train s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["runs"]:
        c = r["curve"][-1]
        lines.append(f"| {r['balls']} | {NAMES[r['kind']]} | {r['fraction']:.0%} | {r['seed']} | {c[0]} | "
                     f"{c[1]:.5f} | {c[2]:.4f} | {c[3]:.4f} | {c[4]:.0f} |")
    lines += ["", "Comparison at equal labelled samples (final validation image MSE; the last clause "
              "interpolates the 100 %-labelled baseline's curve in log samples):", ""]
    lines += [f"- {c}" for c in comparisons]
    lines += ["", "![validation loss against labelled samples](billiards_loss.png)", "",
              "![input frames, truth and predictions](billiards_frames.png)", ""]
    (out_dir / "README.md").write_text("\n".join(lines) + "\n")
    (out_dir / "results.json").write_text(json.dumps(results, default=float) + "\n")


if __name__ == "__main__":
    sys.exit(main())
