"""Joint friction discovery with a hybrid model and the sparse-group lasso (paper 001, Fig. 10).

The reference: a double pendulum (two 1 m links, 1 kg each, motors on both hinges) whose hinges
have viscous and Coulomb friction,

    tau_friction_i = -b_i v_i - c_i tanh(v_i / 0.05),   b = (0.30, 0.20) N m s, c = (0.20, 0.10) N m,

simulated by gradyn with that torque added at every step. The analytical model knows no friction.
The hybrid model adds one network per hinge (site joint_force, driving that hinge only), each fed
every candidate quantity: both positions, both velocities and both motor torques (the motors'
controls). Nobody tells it that friction depends on the hinge's own velocity alone: the
sparse-group lasso on the networks' first layers (gradyn.group_lasso; paper 001 Eq. 2 with one
group per input) has to find that out.

Training data: one-step transitions (state, torques) -> next state from random states and torques.
Loss: mean squared error of the predicted next velocity divided by dt^2 (an acceleration error,
(rad/s^2)^2) plus both networks' gradyn.group_lasso (the per-input group term and the upper layers'
squared weights) as a torch loss term. Discovery, in three steps: torch.optim.LBFGS on it (paper 001
reports the inputs sparsified after 15 optimisation steps); again with the adaptive group lasso (each
input weighted by the largest group norm over its own, so the inputs the fit leans on are shrunk
less); then proximal gradient steps (torch.optim.SGD on the smooth part, each input's column
soft-thresholded after each step, as SPINN trains), which set the columns the data does not need
exactly to zero where L-BFGS stalls at the kinks. Then gradyn.prune_inputs removes the inputs below
1e-2 of the largest group norm and L-BFGS refits the rest without the group term (the lasso shrinks
the weights it keeps; the refit undoes that bias).
Baseline: a fully learned feed-forward network (torch.nn, the same optimiser and steps) that predicts
the acceleration from the same six inputs.

Figure (examples/hybrid/friction_discovery.png): each input's group norm for both networks, the
learned friction torque against the truth, and test MSE against the number of training samples.

Run:  python examples/hybrid/friction_discovery.py  [--samples 25 50 100 200 400 800 1600] [--steps 15]
      [--seed 0] [--threads N] [--no-plot]
(it writes examples/hybrid/friction_discovery.md with its numbers and prints them)
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np
import torch

import gradyn
import gradyn.torch

HERE = pathlib.Path(__file__).resolve().parent
DT = 0.01
VISCOUS = np.array([0.30, 0.20])
COULOMB = np.array([0.20, 0.10])
SMOOTHING = 0.1  # velocity scale of the Coulomb term's tanh [rad/s]
HINGES = ("hinge1", "hinge2")
TEST_SAMPLES = 2000


def double_pendulum() -> gradyn.Model:
    """Two 1 m links hanging along -z, swinging about y, a motor (gear 1) on each hinge."""
    b = gradyn.ModelBuilder()
    b.add_link("base")
    inertia = (1 / 12, 1 / 12, 1e-3, 0, 0, 0)  # a thin rod of 1 kg, 1 m, about its centre
    b.add_link("link1", mass=1.0, com=(0, 0, -0.5), inertia=inertia)
    b.add_link("link2", mass=1.0, com=(0, 0, -0.5), inertia=inertia)
    b.add_joint("hinge1", "revolute", parent="base", child="link1", axis=(0, 1, 0))
    b.add_joint("hinge2", "revolute", parent="link1", child="link2", xyz=(0, 0, -1.0), axis=(0, 1, 0))
    for hinge in HINGES:
        b.add_actuator(hinge, kind="motor", name=f"{hinge}_motor")
    return b.build()


def friction(v: np.ndarray) -> np.ndarray:
    return -VISCOUS * v - COULOMB * np.tanh(v / SMOOTHING)


def transitions(model, n, rng, threads):
    """n random (q, v, u) and the reference's next state, one batched gradyn step."""
    q = rng.uniform(-1.5, 1.5, size=(n, 2))
    v = rng.normal(0.0, 1.5, size=(n, 2))
    u = rng.uniform(-2.0, 2.0, size=(n, 2))
    q_next, v_next = gradyn.step(model, q, v, friction(v), DT, ctrl=u, threads=threads)
    return q, v, u, q_next, v_next


class Hybrid:
    """The frictionless model plus one joint_force network per hinge, trained through gradyn.torch."""

    def __init__(self, model, hidden, activation, seed):
        inputs = model.network_inputs()  # hinge1.q, hinge2.q, hinge1.v, hinge2.v, the two motor controls
        h = model
        for k, hinge in enumerate(HINGES):
            h = h.with_network(f"{hinge}_residual", inputs=inputs, outputs=[hinge], hidden=[hidden],
                               activation=activation, seed=seed + k, zero_last_layer=False)
        self._attach(h)

    @classmethod
    def around(cls, hybrid_model):
        """The trainable view of a hybrid model that already has its networks."""
        self = cls.__new__(cls)
        self._attach(hybrid_model)
        return self

    def _attach(self, h):
        self.model = h
        self.inputs = h.networks[0]["inputs"]
        self.base = torch.tensor(h.params)
        self.names = [info["name"] for info in h.networks]
        self.slices = [slice(i["param_offset"], i["param_offset"] + i["param_count"]) for i in h.networks]
        self.weights = [torch.nn.Parameter(torch.tensor(h.params[s])) for s in self.slices]
        self.widths = h.networks[0]["widths"]

    def params(self):
        p = self.base.clone()
        for s, w in zip(self.slices, self.weights):
            p[s] = w
        return p

    def accelerations(self, q, v, u, threads):
        n = q.shape[0]
        P = self.params().unsqueeze(0).expand(n, -1).contiguous()
        _, v_next = gradyn.torch.step(self.model, q, v, torch.zeros_like(v), DT, params=P, ctrl=u)
        return (v_next - v) / DT


def lbfgs(parameters, loss_fn, steps, iterations):
    """torch.optim.LBFGS with a strong-Wolfe line search: `steps` calls of `iterations` iterations."""
    opt = torch.optim.LBFGS(parameters, lr=1.0, max_iter=iterations, history_size=50,
                            line_search_fn="strong_wolfe", tolerance_grad=1e-12, tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    for _ in range(steps):
        opt.step(closure)


def test_mse(predict, test):
    tq, tv, tu, _, tv_next = (torch.tensor(x) for x in test)
    with torch.no_grad():
        return float((predict(tq, tv, tu) - (tv_next - tv) / DT).square().mean())


def train_hybrid(model, data, test, args):
    """Discovery (MSE + sparse-group lasso), then the inputs below 1e-2 of the largest group norm
    pruned (gradyn.prune_inputs) and the rest refitted without the group term."""
    net = Hybrid(model, args.hidden, args.activation, args.seed)
    q, v, u, _, v_next = (torch.tensor(x) for x in data)
    target = (v_next - v) / DT

    def loss(group):  # group: name -> the group weight(s) of that network
        def fn():
            p = net.params()
            mse = (net.accelerations(q, v, u, args.threads) - target).square().mean()
            return mse + sum(gradyn.group_lasso(net.model, name, p, group=group[name], l2=args.l2) for name in net.names)
        return fn

    # 1. the group lasso
    lbfgs(net.weights, loss({name: args.group for name in net.names}), args.steps, args.iterations)
    # 2. the adaptive group lasso: each input weighted by (largest norm / its norm) after step 1, so the
    #    inputs the first fit leaned on are shrunk less (less bias for the others to make up for)
    p = net.params().detach().numpy()
    adaptive = {}
    for name in net.names:
        norms = np.array(list(gradyn.input_group_norms(net.model, name, p).values()))
        adaptive[name] = args.group * norms.max() / np.maximum(norms, 1e-12 * norms.max())
    lbfgs(net.weights, loss(adaptive), args.steps, args.iterations)
    # 3. L-BFGS stalls at the group term's kinks, a few thousandths from zero: proximal gradient steps
    #    (torch.optim.SGD on the smooth part, then each input's column soft-thresholded, as SPINN
    #    trains) set the columns the data does not pull away from zero exactly to zero
    smooth = loss({name: 0.0 for name in net.names})
    sgd = torch.optim.SGD(net.weights, lr=args.prox_lr)
    rows, cols = net.widths[1], net.widths[0]
    for _ in range(args.prox_steps):
        sgd.zero_grad()
        smooth().backward()
        sgd.step()
        with torch.no_grad():
            for name, w in zip(net.names, net.weights):
                W1 = w[: rows * cols].view(rows, cols)
                threshold = torch.tensor(args.prox_lr * math.sqrt(rows) * adaptive[name])
                W1 *= torch.clamp(1 - threshold / torch.clamp(W1.norm(dim=0), min=1e-300), min=0.0)
    p = net.params().detach().numpy()
    norms = {name: gradyn.input_group_norms(net.model, name, p) for name in net.names}
    pruned, removed = net.model.with_params(p), {}
    for name in net.names:
        pruned, removed[name] = gradyn.prune_inputs(pruned, name, threshold=1e-2)
    refit = Hybrid.around(pruned)
    q_, v_, u_ = q, v, u

    def refit_loss():
        p = refit.params()
        mse = (refit.accelerations(q_, v_, u_, args.threads) - target).square().mean()
        return mse + sum(gradyn.group_lasso(refit.model, name, p, l2=args.l2) for name in refit.names)

    lbfgs(refit.weights, refit_loss, args.steps, args.iterations)
    return {"norms": norms, "removed": removed, "net": refit,
            "discovery_mse": test_mse(lambda a, b, c: net.accelerations(a, b, c, args.threads), test),
            "mse": test_mse(lambda a, b, c: refit.accelerations(a, b, c, args.threads), test)}


def train_mlp(data, test, args):
    """A fully learned model: (q, v, u) -> acceleration, two tanh hidden layers, the same optimiser."""
    torch.manual_seed(args.seed)
    q, v, u, _, v_next = (torch.tensor(x) for x in data)
    x, target = torch.cat([q, v, u], dim=1), (v_next - v) / DT
    width = 2 * args.hidden
    mlp = torch.nn.Sequential(torch.nn.Linear(6, width), torch.nn.Tanh(), torch.nn.Linear(width, width),
                              torch.nn.Tanh(), torch.nn.Linear(width, 2)).double()
    lbfgs(list(mlp.parameters()), lambda: (mlp(x) - target).square().mean(), args.steps, args.iterations)
    return test_mse(lambda a, b, c: mlp(torch.cat([a, b, c], dim=1)), test)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, nargs="+", default=[25, 50, 100, 200, 400, 800, 1600])
    ap.add_argument("--steps", type=int, default=15, help="L-BFGS steps per phase (paper 001: 15)")
    ap.add_argument("--iterations", type=int, default=100, help="L-BFGS iterations per step")
    ap.add_argument("--prox-steps", type=int, default=400, help="proximal gradient steps after the L-BFGS")
    ap.add_argument("--prox-lr", type=float, default=3e-4)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--activation", default="tanh", help="of the hybrid networks' hidden layer")
    ap.add_argument("--group", type=float, default=0.01, help="weight of the per-input group term")
    ap.add_argument("--l2", type=float, default=1e-5, help="weight of the upper layers' squared weights")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--no-readme", action="store_true", help="do not write friction_discovery.md (smoke runs)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)  # gradyn's own threads run the worlds
    torch.manual_seed(args.seed)

    rng = np.random.default_rng(args.seed)
    model = double_pendulum()
    test = transitions(model, TEST_SAMPLES, rng, args.threads)
    pool = transitions(model, max(args.samples), rng, args.threads)
    plain = gradyn.step(model, test[0], test[1], np.zeros((TEST_SAMPLES, 2)), DT, ctrl=test[2], threads=args.threads)[1]
    plain_mse = float(np.mean(((plain - test[4]) / DT) ** 2))

    rows, last = [], None
    start = time.perf_counter()
    for n in sorted(args.samples):
        data = tuple(x[:n] for x in pool)
        result = train_hybrid(model, data, test, args)
        mlp_mse = train_mlp(data, test, args)
        rows.append((n, result["mse"], mlp_mse))
        print(f"{n:5d} samples: test MSE hybrid {result['mse']:.3e} (before the refit {result['discovery_mse']:.3e}), "
              f"fully learned {mlp_mse:.3e}  [(rad/s^2)^2]; inputs kept: " +
              "; ".join(f"{name} {', '.join(i for i in result['norms'][name] if i not in result['removed'][name])}"
                        for name in result["norms"]), flush=True)
        last = result
    elapsed = time.perf_counter() - start

    # what the lasso found, on the most samples
    ratios = []
    for name, hinge in zip(last["norms"], HINGES):
        norms = last["norms"][name]
        right = norms[f"{hinge}.v"]
        wrong = max(value for key, value in norms.items() if key != f"{hinge}.v")
        ratios.append(wrong / right)
        print(f"{name}: group norms " + ", ".join(f"{key} {value:.1e}" for key, value in norms.items()) +
              f"; largest wrong / right = {wrong / right:.1e}; pruned: {', '.join(last['removed'][name]) or 'none'}")
    print(f"analytical model alone (no friction): test MSE {plain_mse:.3e}")
    print(f"discovery: worst wrong-input group norm / right-input group norm = {max(ratios):.1e}")
    print(f"trained {len(rows)} hybrid and {len(rows)} fully learned models in {elapsed:.1f} s")

    command = "python examples/hybrid/friction_discovery.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if not args.no_readme:
        write_readme(args, rows, last, ratios, plain_mse, elapsed, command.strip())
    if not args.no_plot:
        plot(rows, last, plain_mse)


def learned_friction(net, hinge_index, speeds):
    """The residual torque the trained networks put on each hinge when only `hinge_index` moves, at
    speeds `speeds` (q = 0, no motor torque): tau = M (a_hybrid - a_plain)."""
    n = len(speeds)
    q, v, u = np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 2))
    v[:, hinge_index] = speeds
    free = double_pendulum()
    hybrid = net.model.with_params(net.params().detach().numpy())
    a_hybrid = (gradyn.step(hybrid, q, v, np.zeros((n, 2)), DT, ctrl=u)[1] - v) / DT
    a_plain = (gradyn.step(free, q, v, np.zeros((n, 2)), DT, ctrl=u)[1] - v) / DT
    return (a_hybrid - a_plain) @ gradyn.crba(free, q[0]).T


def write_readme(args, rows, last, ratios, plain_mse, elapsed, command):
    inputs = list(next(iter(last["norms"].values())))
    lines = [
        "# Joint friction discovery (paper 001, Fig. 10)",
        "",
        f"Generated by `{command}` (seed {args.seed}; the script writes this file and `friction_discovery.png`).",
        "",
        f"Reference: a double pendulum with viscous b = {VISCOUS.tolist()} N m s and Coulomb c = {COULOMB.tolist()} N m "
        f"hinge friction (tanh smoothing {SMOOTHING} rad/s), dt = {DT}; random states and motor torques; "
        f"{TEST_SAMPLES} test transitions. Hybrid: the frictionless model plus one network per hinge "
        f"({args.hidden} {args.activation} units) fed all six candidate inputs; discovery with the group weight "
        f"{args.group} and upper-layer l2 {args.l2}, then the inputs below 1e-2 of the largest group norm pruned and "
        f"the rest refitted. Fully learned: a 6-{2 * args.hidden}-{2 * args.hidden}-2 tanh network. Both trained by "
        f"torch.optim.LBFGS ({args.steps} steps of {args.iterations} iterations per phase) on the one-step "
        f"acceleration error.",
        "",
        "| training samples | test MSE, hybrid | test MSE, fully learned | fully learned / hybrid |",
        "|---|---|---|---|",
    ]
    for n, h, m in rows:
        lines.append(f"| {n} | {h:.2e} | {m:.2e} | {m / h:.0f}x |")
    worse = [n for n, h, _ in rows if h >= plain_mse]
    lines += ["", f"The analytical model alone (no friction): test MSE {plain_mse:.2e} (rad/s^2)^2. " +
              (f"With {', '.join(map(str, worse))} samples the hybrid model is worse than that (its networks "
               f"overfit what little data there is, with every input still in); with more it is better." if worse else
               "The hybrid model is better than that at every training-set size."), "",
              f"First-layer group norms after the discovery phase on {rows[-1][0]} samples (one group per input):",
              "", "| network | " + " | ".join(inputs) + " | largest wrong / right |", "|---" * (len(inputs) + 2) + "|"]
    for (name, values), ratio in zip(last["norms"].items(), ratios):
        lines.append(f"| {name} | " + " | ".join(f"{values[k]:.1e}" for k in inputs) + f" | {ratio:.1e} |")
    pruned = "; ".join(f"{name}: {', '.join(removed) or 'none'}" for name, removed in last["removed"].items())
    lines += ["", f"Worst wrong-input / right-input group norm: {max(ratios):.1e}. Pruned: {pruned}.",
              f"Training time of all {2 * len(rows)} models: {elapsed:.0f} s on this machine (2 cores).", "",
              "![group norms, learned friction, test error](friction_discovery.png)", ""]
    (HERE / "friction_discovery.md").write_text("\n".join(lines))


def plot(rows, last, plain_mse):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    inputs = list(next(iter(last["norms"].values())))
    width = 0.38
    x = np.arange(len(inputs))
    for k, (name, values) in enumerate(last["norms"].items()):
        ax.bar(x + (k - 0.5) * width, [max(values[i], 1e-14) for i in inputs], width, label=name)
    ax.set_yscale("log")
    ax.set_xticks(x, inputs, rotation=30, ha="right")
    ax.set_ylabel("first-layer group norm (0 drawn at 1e-14)")
    ax.set_title(f"what the lasso kept ({rows[-1][0]} samples)")
    ax.legend()
    ax = axes[1]
    speeds = np.linspace(-3, 3, 241)
    for k, hinge in enumerate(HINGES):
        ax.plot(speeds, -VISCOUS[k] * speeds - COULOMB[k] * np.tanh(speeds / SMOOTHING), "k--", lw=1)
        ax.plot(speeds, learned_friction(last["net"], k, speeds)[:, k], label=f"{hinge}: learned")
    ax.set_xlabel("hinge velocity [rad/s]")
    ax.set_ylabel("residual torque [N m]")
    ax.set_title("learned friction (dashed: the truth)")
    ax.legend()
    ax = axes[2]
    n, h, m = (np.array(c) for c in zip(*rows))
    ax.loglog(n, h, "o-", label="hybrid (gradyn + networks)")
    ax.loglog(n, m, "s-", label="fully learned")
    ax.axhline(plain_mse, color="gray", ls=":", label="analytical model alone")
    ax.set_xlabel("training samples")
    ax.set_ylabel("test MSE of the acceleration [(rad/s^2)^2]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "friction_discovery.png", dpi=110)


if __name__ == "__main__":
    main()
