#!/usr/bin/env python3
"""The differentiable camera's speed: frames per second of gradyn.render and gradyn.render_vjp at
64x64 and 288x96 (paper 002's cart-pole frames), one world and a batch, and the backward/forward
time ratio (issue 19's goal: <= 3).

    .venv/bin/python bench/render_fps.py            # bench/results/render_fps.md and .json
    .venv/bin/python bench/render_fps.py --quick    # a smoke run

Scene: a cart-pole in front of a wall: a floor plane, a wall box, a rail capsule, a cart box on a
slider, a pole capsule on a hinge and a sphere at its tip (6 geoms), every geom textured (random
32x32 textures, the floor tiled), lit. The camera looks at it from the front. Timed: wall-clock
medians of --repeats calls through the Python API (argument packing included), the batch's worlds
on all cores. forward = render; backward = render_vjp (it recomputes the forward pass itself, so
backward / forward counts that too).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import tempfile
import time

import numpy as np

import gradyn

HERE = pathlib.Path(__file__).resolve().parent

SCENE = """<mujoco model="cartpole_camera">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <geom name="wall" type="box" size="3 0.05 1.2" pos="0 0.6 1.2"/>
    <geom name="rail" type="capsule" size="0.02 1.5" pos="0 0 0.6" euler="0 90 0"/>
    <body name="cart" pos="0 0 0.6"><joint name="slider" type="slide" axis="1 0 0"/>
      <geom name="cart" type="box" size="0.2 0.12 0.08"/>
      <body name="pole"><joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom name="pole" type="capsule" size="0.03 0.4" pos="0 -0.15 0.4"/>
        <geom name="tip" type="sphere" size="0.07" pos="0 -0.15 0.8"/></body></body>
  </worldbody>
</mujoco>
"""


def scene():
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "scene.xml"
        path.write_text(SCENE)
        model = gradyn.load(str(path))
    rng = np.random.default_rng(0)
    look = gradyn.Appearance(textures={n: rng.uniform(0.1, 0.9, (32, 32, 3)) for n in model.geom_names},
                             tiles={"floor": 0.5}, background=(0.5, 0.7, 0.9), light_dir=(0.3, 0.6, -1.0))
    return model, look


def median_wall(f, repeats):
    f()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        f()
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def commit():
    root = HERE.parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--short", "--", "src", "include", "python"],
                           capture_output=True, text=True).stdout.strip()
    return head + (" (the tree also held uncommitted changes in src/, include/ or python/)" if dirty else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: one repeat, batch 4")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.quick:
        args.batch, args.repeats = 4, 1
    model, look = scene()
    rng = np.random.default_rng(1)
    rows = []
    for width, height in [(64, 64), (288, 96)]:
        cam = gradyn.Camera.look_at(eye=(0.0, -3.2, 1.0), target=(0.0, 0.0, 0.8), width=width, height=height,
                                    fovy=35.0 if height == 64 else 25.0)
        for B in (1, args.batch):
            q = np.tile(model.q0, (B, 1)) if B > 1 else model.q0.copy()
            q = q + 0.3 * rng.uniform(-1, 1, q.shape)
            image = gradyn.render(model, q, cam, look)
            bar = rng.normal(size=image.shape)
            t_fwd = median_wall(lambda: gradyn.render(model, q, cam, look), args.repeats)
            t_bwd = median_wall(lambda: gradyn.render_vjp(model, q, cam, bar, look), args.repeats)
            row = {"width": width, "height": height, "worlds": B, "forward_s": t_fwd, "backward_s": t_bwd,
                   "forward_fps": B / t_fwd, "backward_fps": B / t_bwd, "ratio": t_bwd / t_fwd}
            rows.append(row)
            print(f"{width}x{height} B={B:3d}: forward {row['forward_fps']:8.1f} frames/s, backward "
                  f"{row['backward_fps']:8.1f} frames/s, backward/forward {row['ratio']:.2f}", flush=True)
    info = {"commit": commit(), "cores": os.cpu_count(), "cpu": platform.processor() or "?",
            "load_average_at_start": os.getloadavg(), "quick": args.quick, "repeats": args.repeats}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    out = pathlib.Path(args.out) if args.out else (pathlib.Path(tempfile.gettempdir()) / "render_fps_quick"
                                                   if args.quick else HERE / "results" / "render_fps")
    out.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=2))
    load = info["load_average_at_start"]
    busy = load[0] > 0.5 * info["cores"]  # other work held the cores when the run began
    loads = ", ".join(f"{x:.1f}" for x in load)
    condition = "busy: other work ran beside it, read the ratios rather than the absolute numbers" if busy else "quiet"
    lines = [
        "# Differentiable camera: frames per second and backward/forward ratio\n",
        f"Generated by `.venv/bin/python bench/render_fps.py{' --quick' if args.quick else ''}` (one run). "
        f"Machine: {info['cpu']}, {info['cores']} cores, load average at start {loads} ({condition}). "
        f"gradyn at {info['commit']}.\n",
        "Cart-pole scene, 6 geoms (plane, box wall, capsule rail, box cart, capsule pole, sphere tip), all "
        "textured (32x32, bilinear) and lit; the batch's worlds on all cores; wall-clock medians of "
        f"{args.repeats} calls through the Python API. backward = render_vjp (which re-renders: it includes a "
        "forward pass). Goal: backward / forward <= 3."
        + (" On a busy box a one-world call (about a millisecond) mostly runs within one scheduler slice while a "
           "batch call (tens of milliseconds) shares the cores with the other load, so the batch rows' frames per "
           "second understate what free cores give." if busy else "") + "\n",
        "| image | worlds | forward frames/s | backward frames/s | backward / forward |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['width']}x{r['height']} | {r['worlds']} | {r['forward_fps']:.1f} | "
                     f"{r['backward_fps']:.1f} | {r['ratio']:.2f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
