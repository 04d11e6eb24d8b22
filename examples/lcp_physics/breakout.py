#!/usr/bin/env python3
"""Paper 000, section 4.3 (Fig. 6): play Atari Breakout with iLQR on a gradyn model of the screen,
its paddle's dynamics fitted from random play.

    .venv/bin/python examples/lcp_physics/breakout.py            # the experiment (several minutes)
    .venv/bin/python examples/lcp_physics/breakout.py --quick    # a smoke run

The game is the Arcade Learning Environment's Breakout (ale-py from PyPI, through Gymnasium:
ALE/Breakout-v5 with every frame shown, frameskip 1, and ALE's default sticky actions: a frame
repeats the previous action with probability 0.25, so games differ from seed to seed). Each frame is
segmented by colour: the paddle is the red run in rows 189-193, the ball the red pixels between
the bricks and the paddle (or above the bricks); the ball's velocity is the difference of its
position over the last two frames (paper 000's recipe).

The gradyn scene, in screen pixels (x right, y up from the bottom of the screen; 1 px = 1 m):
a paddle on a prismatic joint along x driven by a 'general' actuator (force = gain ctrl - damping
v: a first-order lag to a top speed gain / damping), and a ball on two prismatic joints (no
gravity) that bounces elastically (PGS contact, restitution 1) off the side walls and the ceiling,
boxes welded to the world. The paddle's gain and damping are the unknowns: fitted by L-BFGS
(torch.optim, gradients through gradyn.torch.rollout) to the paddle positions of random play,
20-frame windows started from the observed position and velocity, actions mapped to ctrl -1
(LEFT), 0 (NOOP, FIRE), +1 (RIGHT).

Control: gradyn.control.ilqr every frame from the segmented state (horizon 5 frames, as in the
paper), with the paper's cost: (paddle x - ball x)^2 while the ball descends, (paddle x - screen
centre)^2 otherwise (a user-supplied cost object), plus 1e-3 ctrl^2. The first planned ctrl is
played as RIGHT above 1/3, LEFT below -1/3, else NOOP; FIRE serves a new ball when none is on
screen. Reward is the game's score over one game (5 lives), against the frames of random play the
paddle was fitted on (0: the initial guess, a paddle 6x too slow). The paper's reference is a
professional human tester's 31.

Writes breakout.md (numbers, seed, command) and breakout.png beside this file.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent

import gradyn  # noqa: E402
from gradyn import control  # noqa: E402

RED = np.array([200, 72, 72])
PADDLE_ROWS = slice(189, 194)
PLAY_COLUMNS = (8, 152)  # inside the grey side walls
BRICK_TOP_ROW = (57, 63)  # the red brick row: the ball is not looked for there
SCREEN_HEIGHT = 210
PADDLE_Y = SCREEN_HEIGHT - 191.0  # the paddle's centre row, in the scene's y-up coordinates
CENTRE_X = 0.5 * (PLAY_COLUMNS[0] + PLAY_COLUMNS[1])
PADDLE_RANGE = (15.5, 147.5)  # the paddle centre's extremes as segmented (held against the walls)
NOOP, FIRE, RIGHT, LEFT = 0, 1, 2, 3
START_GAIN, START_DAMPING = 1.0, 1.0  # the initial guess: top speed 1 px/frame (the real one is ~6)
WINDOW = 20  # frames per fitted window


# --- the game ---------------------------------------------------------------------------------


def make_env():
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    # Sticky actions (ALE's default, Machado et al. 2018): each frame repeats the previous action
    # with probability 0.25, so games differ from seed to seed.
    return gymnasium.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.25)


def paddle_x(frame):
    """The paddle's centre column, or None when it is not visible."""
    red = np.all(frame[PADDLE_ROWS, PLAY_COLUMNS[0]:PLAY_COLUMNS[1]] == RED, axis=-1).any(axis=0)
    columns = np.flatnonzero(red)
    return None if columns.size == 0 else PLAY_COLUMNS[0] + 0.5 * (columns[0] + columns[-1])


def ball_xy(frame):
    """The ball's centre (x, y up), or None: red pixels outside the paddle rows and the red bricks."""
    red = np.all(frame[:PADDLE_ROWS.start, PLAY_COLUMNS[0]:PLAY_COLUMNS[1]] == RED, axis=-1)
    red[BRICK_TOP_ROW[0]:BRICK_TOP_ROW[1]] = False
    red[:32] = False  # the score and lives
    rows, columns = np.nonzero(red)
    if rows.size == 0 or rows.size > 16:  # none, or a brick row (not a 2x4 ball)
        return None
    return np.array([PLAY_COLUMNS[0] + columns.mean() + 0.5, SCREEN_HEIGHT - rows.mean() - 0.5])


def play_random(frames, rng):
    """Random play: per frame (paddle x or None, the action's ctrl in {-1, 0, 1})."""
    env = make_env()
    env.reset(seed=int(rng.integers(2**31)))
    record = []
    obs, _, _, _, _ = env.step(FIRE)
    action = NOOP
    for _ in range(frames):
        if rng.random() < 0.1:  # hold each random action for a while, as a player would
            action = int(rng.choice([NOOP, RIGHT, LEFT]))
        if ball_xy(obs) is None and rng.random() < 0.05:
            action = FIRE
        x = paddle_x(obs)
        obs, _, terminated, truncated, _ = env.step(action)
        record.append((x, {RIGHT: 1.0, LEFT: -1.0}.get(action, 0.0)))
        if terminated or truncated:
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
    env.close()
    return record


# --- the gradyn scene ---------------------------------------------------------------------------


def scene(gain=START_GAIN, damping=START_DAMPING):
    """Paddle (prismatic x), ball (prismatic x, y), walls; contact 'pgs' with elastic walls."""
    left, right = PLAY_COLUMNS
    top = SCREEN_HEIGHT - 32.0
    xml = f"""
<mujoco model="breakout">
  <option gravity="0 0 0"/>
  <default><geom friction="0 0 0"/></default>
  <worldbody>
    <geom name="left_wall" type="box" pos="{left - 5} 0 100" size="5 5 150"/>
    <geom name="right_wall" type="box" pos="{right + 5} 0 100" size="5 5 150"/>
    <geom name="ceiling" type="box" pos="{0.5 * (left + right)} 0 {top + 5}" size="100 5 5"/>
    <body name="paddle" pos="0 0 {PADDLE_Y}">
      <joint name="paddle_x" type="slide" axis="1 0 0" limited="true"
             range="{PADDLE_RANGE[0]} {PADDLE_RANGE[1]}"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
    </body>
    <body name="ball" pos="0 0 0">
      <joint name="ball_x" type="slide" axis="1 0 0"/>
      <joint name="ball_y" type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <geom name="ball" type="sphere" size="1"/>
    </body>
  </worldbody>
  <actuator>
    <general name="paddle" joint="paddle_x" gainprm="{gain}" biastype="affine" biasprm="0 0 {-damping}"
             ctrlrange="-1 1" ctrllimited="true"/>
  </actuator>
</mujoco>"""
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "breakout.xml"
        path.write_text(xml)
        model = gradyn.load(str(path), contact="pgs")
    # MJCF has no restitution; the ball's is set in the flat parameters (a pair bounces with the
    # larger of its two geoms').
    p = model.params
    p[model.param_names.index("ball.restitution")] = 1.0
    return model.with_params(p).with_contact(restitution_threshold=0.0)


def fit_paddle(record, iterations=100):
    """L-BFGS on the paddle positions of WINDOW-frame windows of random play. Returns
    (gain, damping, frames used)."""
    import torch

    import gradyn.torch as gt

    xs = [r[0] for r in record]
    ctrls = np.array([r[1] for r in record])
    starts = []
    for s in range(1, len(record) - WINDOW, WINDOW // 2):
        window = xs[s - 1:s + WINDOW + 1]
        if any(x is None for x in window):
            continue
        w = np.array(window)
        if w.min() <= PADDLE_RANGE[0] + 1 or w.max() >= PADDLE_RANGE[1] - 1:  # stopped by a wall
            continue
        starts.append(s)
    if not starts:
        return START_GAIN, START_DAMPING, len(record)
    model = scene()
    names = model.param_names
    gain_i, damping_i = names.index("paddle.gain[0]"), names.index("paddle.bias[2]")
    p0 = torch.tensor(model.params)
    index = torch.tensor([gain_i, damping_i])
    q0 = torch.tensor([[xs[s], 0.0, 0.0] for s in starts])
    v0 = torch.tensor([[xs[s] - xs[s - 1], 0.0, 0.0] for s in starts])
    u = torch.tensor(np.stack([ctrls[s:s + WINDOW, None] for s in starts]))
    target = torch.tensor(np.array([xs[s:s + WINDOW + 1] for s in starts]))
    log_values = torch.tensor(np.log([START_GAIN, START_DAMPING]), requires_grad=True)
    optimizer = torch.optim.LBFGS([log_values], max_iter=iterations, line_search_fn="strong_wolfe")
    contact_free = model.with_contact("none")  # the paddle alone: no geoms touch it

    def closure():
        optimizer.zero_grad()
        gain, damping = torch.exp(log_values)
        p = p0.index_put((index,), torch.stack([gain, -damping]))
        qs, _ = gt.rollout(contact_free, q0, v0, None, 1.0, params=p, ctrls=u)
        loss = ((qs[:, :, 0] - target) ** 2).mean()
        loss.backward()
        return loss

    optimizer.step(closure)
    gain, damping = np.exp(log_values.detach().numpy())
    return float(gain), float(damping), len(record)


# --- control ----------------------------------------------------------------------------------


class BreakoutCost:
    """Paper 000's cost (a user-supplied gradyn.control cost): sum over the horizon of
    (paddle x - ball x)^2 while the ball descends, (paddle x - centre)^2 otherwise, plus r ctrl^2.
    Tangent state [paddle_x, ball_x, ball_y, their velocities]."""

    def __init__(self, r=1e-3):
        self.r = r

    def _target(self, q, v):
        descending = v[..., 2] < 0
        return np.where(descending, q[..., 1], CENTRE_X), descending

    def evaluate(self, qs, vs, us):
        target, _ = self._target(qs, vs)
        return np.sum((qs[..., 0] - target) ** 2, axis=-1) + self.r * np.sum(us[..., 0] ** 2, axis=-1)

    def derivatives(self, qs, vs, us):
        T = us.shape[0]
        target, descending = self._target(qs, vs)
        error = qs[:, 0] - target
        lx = np.zeros((T + 1, 6))
        lxx = np.zeros((T + 1, 6, 6))
        lx[:, 0] = 2 * error
        lxx[:, 0, 0] = 2
        lx[:, 1] = np.where(descending, -2 * error, 0.0)
        lxx[:, 1, 1] = np.where(descending, 2, 0)
        lxx[:, 0, 1] = lxx[:, 1, 0] = np.where(descending, -2, 0)
        lu = 2 * self.r * us
        luu = np.full((T, 1, 1), 2 * self.r)
        lux = np.zeros((T, 1, 6))
        return lx, lu, lxx, luu, lux


def play(model, seed, max_frames, horizon=5):
    """One game (5 lives) under iLQR-MPC; returns (score, frames played)."""
    dynamics = control.GradynDynamics(model, dt=1.0, threads=1)
    cost = BreakoutCost()
    mpc = control.MPC(dynamics, cost, horizon=horizon, iterations=3)
    env = make_env()
    obs, _ = env.reset(seed=seed)
    score, previous_ball, previous_paddle = 0.0, None, None
    for frame in range(max_frames):
        ball, x = ball_xy(obs), paddle_x(obs)
        if x is None:
            x = previous_paddle if previous_paddle is not None else CENTRE_X
        if ball is None:
            action = FIRE
        else:
            ball_v = np.zeros(2) if previous_ball is None else ball - previous_ball
            paddle_v = 0.0 if previous_paddle is None else x - previous_paddle
            # A segmented position a hair outside the model's range would start the plan inside
            # a joint limit: clamp it.
            q = np.array([np.clip(x, *PADDLE_RANGE), ball[0], ball[1]])
            v = np.array([paddle_v, ball_v[0], ball_v[1]])
            u = mpc(q, v)[0]
            action = RIGHT if u > 1 / 3 else LEFT if u < -1 / 3 else NOOP
        previous_ball, previous_paddle = ball, x
        obs, reward, terminated, truncated, _ = env.step(action)
        score += reward
        if terminated or truncated:
            break
    env.close()
    return score, frame + 1


# --- the experiment -----------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: two budgets, a short game")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--games", type=int, default=5, help="games per budget")
    ap.add_argument("--max-frames", type=int, default=30000, help="frames per game at most")
    ap.add_argument("--out", default=None, help="folder for breakout.md/.png (default: beside this file)")
    args = ap.parse_args()
    budgets = [0, 100, 300, 1000, 3000, 10000]
    if args.quick:
        budgets, args.games, args.max_frames = [0, 1000], 1, 1500
    out_dir = pathlib.Path(args.out) if args.out else HERE
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    record = play_random(max(budgets), rng) if max(budgets) > 0 else []
    rows = []
    started_all = time.perf_counter()
    for frames in budgets:
        started = time.perf_counter()
        if frames == 0:
            gain, damping = START_GAIN, START_DAMPING
        else:
            gain, damping, _ = fit_paddle(record[:frames])
        fit_s = time.perf_counter() - started
        model = scene(gain, damping)
        results = [play(model, args.seed + 1000 + g, args.max_frames) for g in range(args.games)]
        scores = [r[0] for r in results]
        rows.append({"frames": frames, "gain": gain, "damping": damping, "top_speed": gain / damping,
                     "scores": scores, "played_frames": [r[1] for r in results], "fit_s": fit_s,
                     "play_s": time.perf_counter() - started - fit_s})
        print(f"{frames:6d} frames of random play: paddle gain {gain:.3f}, damping {damping:.3f} "
              f"(top speed {gain / damping:.2f} px/frame); scores {scores}", flush=True)
    write_results(rows, args, out_dir, time.perf_counter() - started_all)
    print(f"wrote {out_dir / 'breakout.md'}")


def write_results(rows, args, out_dir, seconds):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [max(r["frames"], 30) for r in rows]  # 0 frames drawn at the left edge of the log axis
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogx(x, [np.mean(r["scores"]) for r in rows], "o-", label="gradyn model + iLQR (mean)")
    ax.fill_between(x, [min(r["scores"]) for r in rows], [max(r["scores"]) for r in rows], alpha=0.2)
    ax.axhline(31, color="gray", ls="--", lw=0.8, label="human tester (31)")
    ax.set_xlabel("frames of random play the paddle was fitted on (leftmost: none)")
    ax.set_ylabel(f"game score (mean, min-max of {args.games})")
    ax.legend()
    ax.set_title("Breakout (ALE): reward against experience")
    fig.tight_layout()
    fig.savefig(out_dir / "breakout.png", dpi=120)
    command = "`.venv/bin/python examples/lcp_physics/breakout.py" + (" --quick" if args.quick else "") + \
        (f" --seed {args.seed}" if args.seed != 0 else "") + "`"
    lines = [
        "# Breakout: a gradyn model of the screen, its paddle fitted from random play, played by iLQR "
        "(paper 000, Fig. 6)\n",
        f"Written by {command} (seed {args.seed}; {seconds:.0f} s on this machine). ALE Breakout-v5, "
        f"frameskip 1, sticky actions 0.25; {args.games} games per row (at most {args.max_frames} frames "
        "each); iLQR horizon 5 frames, paper 000's cost. The paper's reference: a human tester's 31.\n",
        "| frames of random play | fitted gain, damping (top speed px/frame) | fit s | scores | mean |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['frames']} | {r['gain']:.3f}, {r['damping']:.3f} ({r['top_speed']:.2f}) | "
                     f"{r['fit_s']:.1f} | {', '.join(f'{s:.0f}' for s in r['scores'])} | "
                     f"{np.mean(r['scores']):.1f} |")
    first = next((r["frames"] for r in rows if np.mean(r["scores"]) > 31), None)
    lines += ["", "Fewest frames of random play after which the mean score exceeds 31: "
              f"{first if first is not None else 'none of the budgets tried'}.", "",
              "![breakout](breakout.png)"]
    (out_dir / "breakout.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
