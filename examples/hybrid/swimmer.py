"""A swimmer in water: drag networks inside gradyn against an LSTM (paper 001, Fig. 8-9).

Ground truth: MuJoCo's swimmer (models/mujoco/swimmer.xml: three capsule links, two
motors of gear 150) in water at 25 degC (paper 001, Table II: density 997 kg/m^3, viscosity
0.00089 Pa s) under MuJoCo's own fluid model, with its joint limits off (gradyn's analytical part
has none without a contact model); smooth random controls (two sinusoids per motor, random
frequencies and phases). dt = 0.01, the file's.

Hybrid: gradyn's swimmer, which moves as in vacuum (gradyn has no fluid), plus one body_wrench
network per link in the link's own frame, fed the link's velocity in its own frame (vel.ang.z,
vel.lin.x, vel.lin.y) and driving its planar wrench (torque.z, force.x, force.y). Trained
end-to-end on the first 200 steps of 10 trajectories, cut into 25-step windows each rolled out
from its true first state (multiple shooting; gradyn.torch.rollout, one batched call; the loss is
the mean squared state error), by torch.optim.LBFGS.

Baseline: an LSTM (torch.nn.LSTM) of about as many parameters that maps (state, control) to the
next state change, trained on the same 10 x 200 steps (teacher forcing), then run on its own
predictions.

Test: 5 held-out trajectories, each predicted for 900 steps from its initial state and controls.
Figure (examples/hybrid/swimmer.png): prediction error against the horizon, and one held-out
trajectory. Numbers: examples/hybrid/swimmer.md (written by this script, with the command and seed).

Run:  python examples/hybrid/swimmer.py  [--seed 0] [--hidden 16] [--steps 30] [--window 25] [--no-plot] [--no-readme]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys
import time
import warnings

import numpy as np
import torch

import gradyn
import gradyn.torch

HERE = pathlib.Path(__file__).resolve().parent
SWIMMER = HERE.parents[1] / "models" / "mujoco" / "swimmer.xml"
WATER = {"density": 997.0, "viscosity": 0.00089}  # paper 001, Table II, water at 25 degC
LINKS = ("torso", "mid", "back")
TRAIN, TEST, TRAIN_STEPS, TEST_STEPS = 10, 5, 200, 900


def mujoco_water_model():
    import mujoco

    text = SWIMMER.read_text()
    text = re.sub(r'density="[^"]*" timestep', f'density="{WATER["density"]}" timestep', text)
    text = re.sub(r'viscosity="[^"]*"', f'viscosity="{WATER["viscosity"]}"', text)
    m = mujoco.MjModel.from_xml_string(text)
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    return m


def controls(rng, n, steps, nu, dt):
    t = np.arange(steps) * dt
    freq = rng.uniform(0.3, 1.5, size=(n, 2, nu))
    phase = rng.uniform(0, 2 * np.pi, size=(n, 2, nu))
    u = np.zeros((n, steps, nu))
    for k in range(2):
        u += 0.5 * np.sin(2 * np.pi * freq[:, k][:, None, :] * t[None, :, None] + phase[:, k][:, None, :])
    return np.clip(u, -1, 1)


def ground_truth(rng, n, steps):
    import mujoco

    m = mujoco_water_model()
    d = mujoco.MjData(m)
    u = controls(rng, n, steps, m.nu, m.opt.timestep)
    q0 = np.zeros((n, m.nq))
    q0[:, 2:] = rng.uniform(-0.5, 0.5, size=(n, 3))  # heading and both hinges
    qs, vs = np.empty((n, steps + 1, m.nq)), np.empty((n, steps + 1, m.nv))
    for b in range(n):
        mujoco.mj_resetData(m, d)
        d.qpos[:] = q0[b]
        qs[b, 0], vs[b, 0] = d.qpos, d.qvel
        for t in range(steps):
            d.ctrl[:] = u[b, t]
            mujoco.mj_step(m, d)
            qs[b, t + 1], vs[b, t + 1] = d.qpos, d.qvel
    return qs, vs, u, m.opt.timestep


class Hybrid:
    def __init__(self, hidden, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its fluid, which gradyn does not simulate: the networks learn it
            self.plain = gradyn.load(str(SWIMMER))
        h = self.plain
        for k, link in enumerate(LINKS):
            h = h.with_network(f"drag_{link}", site="body_wrench", body=link, frame="body",
                               inputs=["vel.ang.z", "vel.lin.x", "vel.lin.y"],
                               outputs=["torque.z", "force.x", "force.y"], hidden=[hidden, hidden],
                               activation="tanh", seed=seed + k)
        self.model = h
        start = h.networks[0]["param_offset"]
        self.base = torch.tensor(h.params[:start])
        self.weights = torch.nn.Parameter(torch.tensor(h.params[start:]))

    def params(self):
        return torch.cat([self.base, self.weights])

    def rollout(self, q0, v0, ctrls, dt):
        return gradyn.torch.rollout(self.model, q0, v0, torch.zeros(ctrls.shape[:-1] + (self.model.nv,),
                                    dtype=torch.float64), dt, params=self.params(), ctrls=ctrls)


class Lstm(torch.nn.Module):
    def __init__(self, nx, nu, hidden):
        super().__init__()
        self.lstm = torch.nn.LSTM(nx + nu, hidden, batch_first=True)
        self.out = torch.nn.Linear(hidden, nx)

    def forward(self, x, u, state=None):
        y, state = self.lstm(torch.cat([x, u], dim=-1), state)
        return self.out(y), state


def train_lstm(xs, us, hidden, epochs, seed):
    torch.manual_seed(seed)
    nx, nu = xs.shape[-1], us.shape[-1]
    net = Lstm(nx, nu, hidden).double()
    x = torch.tensor(xs[:, :-1])
    dx = torch.tensor(xs[:, 1:] - xs[:, :-1])
    mean, std = x.mean((0, 1)), x.std((0, 1)) + 1e-6
    dmean, dstd = dx.mean((0, 1)), dx.std((0, 1)) + 1e-6
    u = torch.tensor(us)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs, eta_min=1e-4)
    for _ in range(epochs):
        opt.zero_grad()
        pred, _ = net((x - mean) / std, u)
        ((pred - (dx - dmean) / dstd) ** 2).mean().backward()
        opt.step()
        schedule.step()
    n_params = sum(p.numel() for p in net.parameters())

    def predict(x0, u):
        with torch.no_grad():
            xs = [torch.tensor(x0)]
            state = None
            uu = torch.tensor(u)
            for t in range(u.shape[1]):
                d, state = net(((xs[-1] - mean) / std)[:, None], uu[:, t:t + 1], state)
                xs.append(xs[-1] + d[:, 0] * dstd + dmean)
            return torch.stack(xs, 1).numpy()

    return predict, n_params


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=16, help="units of each drag network's two hidden layers")
    ap.add_argument("--steps", type=int, default=30, help="L-BFGS steps (of 20 iterations each)")
    ap.add_argument("--window", type=int, default=25, help="training rollouts' length (divides 200)")
    ap.add_argument("--lstm-hidden", type=int, default=15)
    ap.add_argument("--lstm-epochs", type=int, default=1500)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    qs, vs, us, dt = ground_truth(rng, TRAIN + TEST, TEST_STEPS)
    train = slice(0, TRAIN)
    test = slice(TRAIN, TRAIN + TEST)

    start = time.perf_counter()
    hybrid = Hybrid(args.hidden, args.seed)
    # the first 200 steps of each training trajectory cut into windows of --window steps, each rolled
    # out from its true first state (multiple shooting: long rollouts make a rugged loss)
    W = args.window
    starts = range(0, TRAIN_STEPS, W)
    q_ref = torch.tensor(np.concatenate([qs[train, s:s + W + 1] for s in starts]))
    v_ref = torch.tensor(np.concatenate([vs[train, s:s + W + 1] for s in starts]))
    u_train = torch.tensor(np.concatenate([us[train, s:s + W] for s in starts]))
    opt = torch.optim.LBFGS([hybrid.weights], lr=1, max_iter=20, history_size=50, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        q, v = hybrid.rollout(q_ref[:, 0], v_ref[:, 0], u_train, dt)
        loss = ((q - q_ref) ** 2).mean() + ((v - v_ref) ** 2).mean()
        loss.backward()
        return loss

    losses = []
    for k in range(args.steps):
        losses.append(float(opt.step(closure).detach()))
        print(f"L-BFGS step {k + 1}: training loss {losses[-1]:.4e}", flush=True)
    hybrid_seconds = time.perf_counter() - start

    start = time.perf_counter()
    xs = np.concatenate([qs, vs], axis=-1)
    lstm_predict, lstm_params = train_lstm(xs[train, :TRAIN_STEPS + 1], us[train, :TRAIN_STEPS], args.lstm_hidden,
                                           args.lstm_epochs, args.seed)
    lstm_seconds = time.perf_counter() - start

    # 900-step predictions of the held-out trajectories
    nq = qs.shape[-1]
    trained = hybrid.model.with_params(hybrid.params().detach().numpy())
    zeros = np.zeros((TEST, TEST_STEPS, nq))
    hq, hv = gradyn.rollout(trained, qs[test, 0], vs[test, 0], zeros, dt, ctrls=us[test])
    pq, pv = gradyn.rollout(hybrid.plain, qs[test, 0], vs[test, 0], zeros, dt, ctrls=us[test])
    lx = lstm_predict(xs[test, 0], us[test])
    truth = xs[test]
    err = {"hybrid": np.concatenate([hq, hv], -1), "LSTM": lx, "analytical model alone (vacuum)": np.concatenate([pq, pv], -1)}
    curves = {k: np.sqrt(((x - truth) ** 2).mean(axis=(0, 2))) for k, x in err.items()}
    hybrid_params = hybrid.weights.numel()
    for k, c in curves.items():
        print(f"{k}: RMS state error over steps 1-{TEST_STEPS} {c[1:].mean():.4f}, at step {TEST_STEPS} {c[-1]:.4f}")
    print(f"parameters: hybrid networks {hybrid_params}, LSTM {lstm_params}; training {hybrid_seconds:.0f} s "
          f"(hybrid), {lstm_seconds:.0f} s (LSTM)")

    command = "python examples/hybrid/swimmer.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if not args.no_readme:
        write_readme(args, curves, hybrid_params, lstm_params, losses, hybrid_seconds, lstm_seconds, command.strip())
    if not args.no_plot:
        plot(curves, truth, err, dt)


def write_readme(args, curves, hybrid_params, lstm_params, losses, hybrid_seconds, lstm_seconds, command):
    L = ["# A swimmer in water: drag networks inside gradyn against an LSTM (paper 001, Fig. 8-9)", "",
         f"Generated by `{command}` (seed {args.seed}; the script writes this file and `swimmer.png`).", "",
         f"Ground truth: MuJoCo's swimmer in water at 25 degC (density {WATER['density']}, viscosity "
         f"{WATER['viscosity']}), joint limits off, smooth random controls, dt 0.01. Trained on the first "
         f"{TRAIN_STEPS} steps of {TRAIN} trajectories; tested on {TEST} held-out trajectories predicted for "
         f"{TEST_STEPS} steps from their initial states. Hybrid: gradyn's swimmer (vacuum) plus a body_wrench "
         f"network per link ({args.hidden}x{args.hidden} tanh), {args.steps} L-BFGS steps through {args.window}-step "
         f"windows of the training steps, each from its true first state "
         f"(final training loss {losses[-1]:.3e}). LSTM: hidden size {args.lstm_hidden}, {args.lstm_epochs} Adam "
         f"epochs (teacher forcing).", "",
         "| model | parameters | RMS state error, steps 1-900 | at step 900 | training time |", "|---|---|---|---|---|"]
    params = {"hybrid": hybrid_params, "LSTM": lstm_params, "analytical model alone (vacuum)": 0}
    seconds = {"hybrid": f"{hybrid_seconds:.0f} s", "LSTM": f"{lstm_seconds:.0f} s", "analytical model alone (vacuum)": "-"}
    for k, c in curves.items():
        L.append(f"| {k} | {params[k]} | {c[1:].mean():.4f} | {c[-1]:.4f} | {seconds[k]} |")
    L += ["", "![prediction error against the horizon](swimmer.png)", ""]
    (HERE / "swimmer.md").write_text("\n".join(L))


def plot(curves, truth, err, dt):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    t = np.arange(TEST_STEPS + 1) * dt
    for k, c in curves.items():
        axes[0].semilogy(t[1:], c[1:], label=k)
    axes[0].axvline(TRAIN_STEPS * dt, color="k", lw=0.8)
    axes[0].set_ylim(bottom=1e-4)  # all start from the true state (errors of 1e-15 at the first steps)
    axes[0].set_xlabel("time [s] (training data: left of the bar)")
    axes[0].set_ylabel("RMS state error, 5 held-out trajectories")
    axes[0].legend()
    for k, x in err.items():
        axes[1].plot(t, x[0, :, 3], label=k)
    axes[1].plot(t, truth[0, :, 3], "k--", label="MuJoCo in water")
    axes[1].axvline(TRAIN_STEPS * dt, color="k", lw=0.8)
    axes[1].set_xlabel("time [s]")
    axes[1].set_ylabel("rot2 [rad], one held-out trajectory")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "swimmer.png", dpi=110)


if __name__ == "__main__":
    main()
