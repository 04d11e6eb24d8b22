"""Command line: quick looks at a model file, ``python -m gradyn info|simulate|view|bench MODEL``.

* ``info MODEL``: bodies, joints (type, q/v offsets, limits), actuators, geoms, total mass, nq, nv,
  nu, the parameter count, the contact model and the loader's warnings.
* ``simulate MODEL``: a rollout from the model's reference configuration q0 at rest with zero
  controls; prints the final state, the energy change and the status flags; ``--out`` saves the
  trajectory (``.npz``), ``--record`` writes it as a viewer file (``gradyn.viewer.record``).
* ``view MODEL``: ``gradyn.viewer.show`` on a short simulated trajectory (``--steps 0``: the pose q0).
* ``bench MODEL``: steps per second of ``rollout`` and ``rollout_vjp``, one world and a batch.

Errors in what was passed (a missing or malformed file, a bad option) print one line on stderr
and exit with status 2; ``main`` returns the exit status instead of raising.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from . import _core

__all__ = ["main"]

_CONTACT_MODELS = ("none", "penalty", "pgs", "ipm")
# A rollout is cut into calls of at most this many steps, so the progress bar can move; each call
# starts from a fresh workspace, so a PGS warm start restarts at every chunk.
_CHUNK_STEPS = 1000


class CliError(Exception):
    """A problem with what the user passed: printed as one line, exit status 2."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# ---------------------------------------------------------------------------------------------
# argument types


def _number_type(convert, accept, expected: str):
    """An argparse type: `convert` (int or float) the text, then keep it only if `accept(value)`;
    otherwise an error saying what was expected and what was given."""
    kind = "a whole number" if convert is int else "a number"

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value

    return parse


_positive_int = _number_type(int, lambda x: x > 0, "a number above 0")
_non_negative_int = _number_type(int, lambda x: x >= 0, "0 or more")
_positive_float = _number_type(float, lambda x: math.isfinite(x) and x > 0, "a finite number above 0")
_finite_float = _number_type(float, math.isfinite, "a finite number")


# ---------------------------------------------------------------------------------------------
# loading


def _load(args) -> tuple[_core.Model, list[str]]:
    """The model the arguments name, and the loader's warnings (as text)."""
    path = Path(args.model)
    if not path.exists():
        raise CliError(f"{path}: no such file (expected a .urdf, .xml or .mjcf model file)")
    if path.is_dir():
        raise CliError(f"{path}: is a directory (expected a .urdf, .xml or .mjcf model file)")
    contact = getattr(args, "contact", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = _core.load(str(path), floating_base=args.floating_base,
                               contact=None if contact in (None, "none") else contact)
        except _core.ModelError as error:  # already names the file, line and element
            raise CliError(_one_line(error)) from None
    if getattr(args, "ground", None) is not None:
        model = model.with_ground_plane(height=args.ground)
    return model, [_one_line(w.message) for w in caught]


def _report_warnings(command: str, loader_warnings: list[str], path: str) -> None:
    if loader_warnings:
        print(f"gradyn {command}: the loader gave {len(loader_warnings)} warning(s), e.g. {loader_warnings[0]} "
              f"(python -m gradyn info {path} lists them)", file=sys.stderr)


def _add_model_arguments(parser: argparse.ArgumentParser, contact: bool = True) -> None:
    parser.add_argument("model", metavar="MODEL", help="a URDF (.urdf) or MJCF (.xml, .mjcf) file")
    parser.add_argument("--floating-base", action="store_true",
                        help="URDF only: a free joint between the world and the root link")
    if contact:
        parser.add_argument("--contact", choices=_CONTACT_MODELS, default="none",
                            help="contact model (default: none, no contact forces)")
        parser.add_argument("--ground", type=_finite_float, metavar="HEIGHT", default=None,
                            help="add a ground plane z = HEIGHT (URDF files have none; it needs --contact)")


# ---------------------------------------------------------------------------------------------
# small formatting helpers


def _table(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    fmt = lambda row: indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()
    return [fmt(header)] + [fmt(row) for row in rows]


def _number(x: float) -> str:
    return f"{x:.6g}"


def _vector(x) -> str:
    return np.array2string(np.asarray(x), precision=4, suppress_small=True, max_line_width=100,
                           separator=", ")


def _range(pair) -> str:
    return "-" if pair is None else f"[{_number(pair[0])}, {_number(pair[1])}]"


def _progress(total: int, description: str):
    """A tqdm bar on a terminal (stderr), nothing when the output is a file or pipe."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="step", disable=None, leave=False, file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# info


def _info(args) -> int:
    model, loader_warnings = _load(args)
    lines = [
        f"model       {model.name} ({args.model})",
        f"dimensions  nq {model.nq}, nv {model.nv}, nu {model.nu}",
        f"total mass  {_number(_core.total_mass(model))} kg",
        f"parameters  {len(model.param_names)} (model.param_names)",
        f"gravity     ({', '.join(_number(g) for g in model.gravity)})",
    ]
    free = [name for name, kind in zip(model.joint_names, model.joint_types) if kind == "free"]
    lines.append("base        " + (f"free joint(s) {', '.join(free)}" if free else
                                   "fixed to the world" + (" (--floating-base adds a free joint)"
                                                           if args.model.lower().endswith(".urdf") else "")))
    contact = model.contact_model or "none"
    note = "" if model.contact_model else " (no contact forces; --contact penalty|pgs|ipm chooses one)"
    lines.append(f"contact     {contact}{note}")
    lines.append(f"frames      {model.nframes}")

    lines.append(f"bodies ({model.nbodies}):")
    if model.nbodies:
        rows = []
        for b, name in enumerate(model.body_names):
            parent = model.parents[b]
            rows.append([name, "world" if parent < 0 else model.body_names[parent],
                         _number(model.body_masses[b])])
        lines += _table(["name", "parent", "mass [kg]"], rows)

    lines.append(f"joints ({len(model.joint_names)}):")
    if model.joint_names:
        rows = []
        lower, upper = model.lower_limit, model.upper_limit
        for j, name in enumerate(model.joint_names):
            iq, nq = model.idx_q[j], model.joint_nq(name)
            limits = "-"
            if nq == 1 and (math.isfinite(lower[iq]) or math.isfinite(upper[iq])):
                limits = _range((lower[iq], upper[iq]))
            rows.append([name, model.joint_types[j], f"{iq}:{iq + nq}",
                         f"{model.idx_v[j]}:{model.idx_v[j] + model.joint_nv(name)}", limits])
        lines += _table(["name", "type", "q", "v", "limits"], rows)

    frictional = int(np.count_nonzero(model.frictionloss))
    if frictional or model.joint_couplings or model.body_connections:
        note = "enforced by pgs, ipm and penalty" if model.contact_model else \
            "not enforced without a contact model: --contact pgs|ipm enforces them"
        lines.append(f"constraints ({note}):")
        rows = [["dry friction", f"{frictional} DoF(s)", "model.frictionloss"]] if frictional else []
        rows += [["tendon coupling" if c["tendons"] else "coupling", c["name"],
                  f"{c['joint1']} <- {c['joint2'] or 'its reference'}"] for c in model.joint_couplings]
        rows += [["weld" if c["weld"] else "connection", c["name"], f"{c['body1']} - {c['body2'] or 'world'}"]
                 for c in model.body_connections]
        lines += _table(["kind", "name", "what"], rows)

    if model.tendons:
        lines.append(f"fixed tendons ({len(model.tendons)}; range held as joint limits are, by pgs, ipm and "
                     "penalty):")
        rows = [[t["name"], " + ".join(f"{_number(c)} {j}" for j, c in zip(t["joints"], t["coefs"])),
                 _range(t["range"]) if any(math.isfinite(x) for x in t["range"]) else "-",
                 _number(t["stiffness"]), _number(t["damping"])] for t in model.tendons]
        lines += _table(["name", "length", "range", "stiffness", "damping"], rows)

    lines.append(f"actuators ({model.nu}):")
    if model.nu:
        rows = [[a["name"], a["kind"], a["joint"], _number(a["gear"]), _range(a["ctrlrange"]),
                 _range(a["forcerange"])] for a in model.actuators]
        lines += _table(["name", "kind", "joint", "gear", "ctrlrange", "forcerange"], rows)

    lines.append(f"geoms ({len(model.geoms)}):")
    if model.geoms:
        rows = []
        for g in model.geoms:
            size = ", ".join(_number(s) for s in np.trim_zeros(np.asarray(g["size"]), "b")) or "-"
            rows.append([g["name"], g["type"], g["body"] or "world", size, _number(g["friction"])])
        lines += _table(["name", "type", "body", "size", "friction"], rows)

    if model.networks:
        lines.append(f"networks ({len(model.networks)}):")
        lines += _table(["name", "site", "inputs", "outputs", "widths", "weights"],
                        [[n["name"], n["site"], len(n["inputs"]), len(n["outputs"]), n["widths"], n["param_count"]]
                         for n in model.networks])

    lines.append(f"loader warnings ({len(loader_warnings)})" + (":" if loader_warnings else ""))
    lines += ["  " + w for w in loader_warnings]
    print("\n".join(lines))
    return 0


# ---------------------------------------------------------------------------------------------
# simulate and view


def _rollout(model, steps: int, dt: float, integrator: str, description: str):
    """Rollout from (q0, 0) with zero controls, in chunks so that the progress bar moves."""
    q, v = model.q0, np.zeros(model.nv)
    qs, vs, status = [q[None]], [v[None]], []
    with _progress(steps, description) as bar:
        done = 0
        while done < steps:
            n = min(_CHUNK_STEPS, steps - done)
            q_chunk, v_chunk, s_chunk = _core.rollout(model, q, v, np.zeros((n, model.nv)), dt, integrator=integrator,
                                                      return_status=True)
            qs.append(q_chunk[1:])
            vs.append(v_chunk[1:])
            status.append(s_chunk)
            q, v = q_chunk[-1], v_chunk[-1]
            done += n
            bar.update(n)
    return np.concatenate(qs), np.concatenate(vs), np.concatenate(status)


def _status_lines(status: np.ndarray) -> list[str]:
    if not status.any():
        return ["status      every step OK"]
    lines = []
    for flag in _core.Status:
        if flag.value == 0:
            continue
        hit = np.flatnonzero(status & flag.value)
        if hit.size:
            lines.append(f"status      {flag.name}: {hit.size} of {status.size} steps (first at step {hit[0]})")
    return lines


def _energy(model, q, v) -> float:
    return _core.kinetic_energy(model, q, v) + _core.potential_energy(model, q)


def _viewer():
    try:
        from . import viewer
    except ImportError as error:
        raise CliError(f"gradyn.viewer is not available ({_one_line(error)})") from None
    return viewer


def _writable(path: str, suffix_hint: str) -> Path:
    target = Path(path)
    if target.is_dir():
        raise CliError(f"{target}: is a directory (expected a file name ending in {suffix_hint})")
    if not target.parent.exists():
        raise CliError(f"{target}: the folder {target.parent} does not exist")
    return target


def _simulate(args) -> int:
    out = _writable(args.out, ".npz") if args.out else None
    record = _writable(args.record, ".html") if args.record else None
    viewer = _viewer() if record else None
    model, loader_warnings = _load(args)
    _report_warnings("simulate", loader_warnings, args.model)

    start = time.perf_counter()
    qs, vs, status = _rollout(model, args.steps, args.dt, args.integrator, "simulate")
    seconds = time.perf_counter() - start

    lines = [
        f"simulated   {args.steps} steps of {_number(args.dt)} s ({_number(args.steps * args.dt)} s of "
        f"{model.name}, {args.integrator}, contact {model.contact_model or 'none'}) in {seconds:.3g} s "
        f"({args.steps / seconds:,.0f} steps/s)",
        f"final q     {_vector(qs[-1])}",
        f"final v     {_vector(vs[-1])}",
    ]
    if np.all(np.isfinite(qs[-1])) and np.all(np.isfinite(vs[-1])):
        e0, e1 = _energy(model, qs[0], vs[0]), _energy(model, qs[-1], vs[-1])
        line = f"energy      {_number(e0)} J -> {_number(e1)} J"
        if model.contact_model:
            line += " (contact does work: no drift reported)"
        else:
            # the start is at rest (and potential energy has an arbitrary zero), so the drift is
            # measured against the largest kinetic energy reached, on at most 1000 sampled states
            sample = np.unique(np.linspace(0, args.steps, min(args.steps + 1, 1000)).astype(int))
            scale = max(_core.kinetic_energy(model, qs[t], vs[t]) for t in sample)
            line += f", drift {_number(e1 - e0)} J"
            if scale > 0:
                line += f" ({_number((e1 - e0) / scale)} of the largest kinetic energy, {_number(scale)} J)"
            if np.any(model.damping > 0):
                line += "; the joints' damping dissipates energy"
        lines.append(line)
    else:
        lines.append("energy      not computed: the state diverged (NaN or inf)")
    lines += _status_lines(status)

    if out is not None:
        np.savez(out, qs=qs, vs=vs, status=status, t=np.arange(args.steps + 1) * args.dt, dt=args.dt,
                 joint_names=np.array(model.joint_names), model=str(args.model))
        lines.append(f"saved       {out} (qs, vs, status, t, dt, joint_names, model)")
    if record is not None:
        viewer.record(model, qs, str(record), dt=args.dt)  # plays in real time
        lines.append(f"recorded    {record}")
    print("\n".join(lines))
    return 0


def _view(args) -> int:
    viewer = _viewer()
    model, loader_warnings = _load(args)
    _report_warnings("view", loader_warnings, args.model)
    if args.steps == 0:
        qs = model.q0[None]
    else:
        qs, _, status = _rollout(model, args.steps, args.dt, "euler", "simulate")
        for line in _status_lines(status):
            print(line)
    # block: the server lives until Ctrl-C (show prints its URL); the page also opens in a browser
    viewer.show(model, qs, dt=args.dt, open_browser=not args.no_browser, block=True)
    return 0


# ---------------------------------------------------------------------------------------------
# bench


def _best_time(function, repeat: int, bar) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
        bar.update(1)
    return best


def _bench(args) -> int:
    from tqdm.auto import tqdm

    model, loader_warnings = _load(args)
    _report_warnings("bench", loader_warnings, args.model)
    T, B, dt = args.steps, args.batch, args.dt
    q0, v0 = model.q0, np.zeros(model.nv)
    taus = np.zeros((T, model.nv))
    qb0, vb0, tausb = np.tile(q0, (B, 1)), np.tile(v0, (B, 1)), np.zeros((B, T, model.nv))
    threads = args.threads or os.cpu_count() or 1

    qs, vs = _core.rollout(model, q0, v0, taus, dt)  # also warms up caches and the thread pool
    qsb, vsb = _core.rollout(model, qb0, vb0, tausb, dt, threads=threads)
    # the gradient of the final state's sum: every step's adjoint is exercised
    qs_bar, vs_bar = np.zeros_like(qs), np.zeros_like(vs)
    qs_bar[-1], vs_bar[-1] = 1.0, 1.0
    qsb_bar, vsb_bar = np.zeros_like(qsb), np.zeros_like(vsb)
    qsb_bar[:, -1], vsb_bar[:, -1] = 1.0, 1.0

    cases = [
        ("rollout", 1, lambda: _core.rollout(model, q0, v0, taus, dt, threads=1)),
        ("rollout_vjp", 1, lambda: _core.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, qs=qs, vs=vs,
                                                     threads=1)),
        ("rollout", B, lambda: _core.rollout(model, qb0, vb0, tausb, dt, threads=threads)),
        ("rollout_vjp", B, lambda: _core.rollout_vjp(model, qb0, vb0, tausb, dt, qsb_bar, vsb_bar, qs=qsb, vs=vsb,
                                                     threads=threads)),
    ]
    rows = []
    with tqdm(total=len(cases) * args.repeat, desc="bench", unit="run", disable=None, leave=False,
              file=sys.stderr) as bar:
        for name, worlds, function in cases:
            seconds = _best_time(function, args.repeat, bar)
            rows.append([name, str(worlds), "1" if worlds == 1 else str(threads),
                         f"{worlds * T / seconds:,.0f}", f"{seconds * 1e6 / (worlds * T):.3g}"])
    print(f"{model.name} ({args.model}): nq {model.nq}, nv {model.nv}, nu {model.nu}, "
          f"contact {model.contact_model or 'none'}; {T} steps of {_number(dt)} s, best of {args.repeat}")
    print("\n".join(_table(["function", "worlds", "threads", "world-steps/s", "us/world-step"], rows, indent="")))
    print("rollout_vjp: the adjoint of the final state's sum, from the forward pass's states (qs=, vs=)")
    return 0


# ---------------------------------------------------------------------------------------------
# entry point


def build_parser(prog: str = "python -m gradyn") -> argparse.ArgumentParser:
    """The argparse parser of the command line (also read by the docs' command line page)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Quick looks at a robot model with gradyn: info, simulate, view, bench.",
        epilog="Each command takes a model file; 'python -m gradyn COMMAND --help' for its options.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    info = commands.add_parser("info", help="bodies, joints, actuators, geoms, mass, parameters",
                               description="Print what a model file holds: bodies (parent, mass), joints (type, "
                                           "q/v offsets, limits), actuators, geoms, total mass, nq/nv/nu, the "
                                           "parameter count, the contact model and the loader's warnings.")
    _add_model_arguments(info)
    info.set_defaults(run=_info)

    simulate = commands.add_parser(
        "simulate", help="roll out from q0 at rest with zero controls and summarise",
        description="Roll out from the model's reference configuration q0 at rest, with zero controls and "
                    "no generalised forces, and print the final state, the energy change (drift, without "
                    f"contact) and the status flags. Long rollouts run in calls of {_CHUNK_STEPS} steps for "
                    "the progress bar (a PGS warm start restarts at each).")
    _add_model_arguments(simulate)
    simulate.add_argument("--steps", type=_positive_int, default=1000, help="number of steps (default 1000)")
    simulate.add_argument("--dt", type=_positive_float, default=1e-3, help="time step in s (default 0.001)")
    simulate.add_argument("--integrator", choices=("euler", "rk4"), default="euler",
                          help="semi-implicit Euler (default) or RK4 (not with pgs/ipm contact)")
    simulate.add_argument("--out", metavar="FILE.npz",
                          help="save qs, vs, status, t, dt, joint_names and the model path with numpy.savez")
    simulate.add_argument("--record", metavar="FILE.html", help="write the trajectory with gradyn.viewer.record")
    simulate.set_defaults(run=_simulate)

    view = commands.add_parser("view", help="show the model (or a short rollout) with gradyn.viewer",
                               description="Show a short rollout from q0 at rest with zero controls, or the "
                                           "pose q0 alone (--steps 0), with gradyn.viewer.show: a MeshCat "
                                           "server on localhost whose page opens in the browser; it runs "
                                           "until Ctrl-C. Needs the meshcat package.")
    _add_model_arguments(view)
    view.add_argument("--steps", type=_non_negative_int, default=1000,
                      help="steps to simulate (default 1000; 0: the pose q0 only)")
    view.add_argument("--dt", type=_positive_float, default=1e-3, help="time step in s (default 0.001)")
    view.add_argument("--no-browser", action="store_true", help="print the viewer's URL without opening a browser")
    view.set_defaults(run=_view)

    bench = commands.add_parser(
        "bench", help="steps per second of rollout and rollout_vjp, one world and a batch",
        description="Time rollout and rollout_vjp (the adjoint of the final state's sum, from the stored "
                    "states) from q0 at rest with zero forces: one world on one thread, and a batch of worlds "
                    "on all cores. Prints world-steps per second, best of --repeat runs.")
    _add_model_arguments(bench)
    bench.add_argument("--steps", type=_positive_int, default=1000, help="steps per rollout (default 1000)")
    bench.add_argument("--dt", type=_positive_float, default=1e-3, help="time step in s (default 0.001)")
    bench.add_argument("--batch", type=_positive_int, default=32, help="worlds in the batch (default 32)")
    bench.add_argument("--threads", type=_positive_int, default=None,
                       help="threads for the batch (default: all cores)")
    bench.add_argument("--repeat", type=_positive_int, default=3, help="runs per measurement (default 3)")
    bench.set_defaults(run=_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line on `argv` (default: sys.argv[1:]); returns the exit status."""
    # run as python -m gradyn, or as an installed console script (named after its file)
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = build_parser("python -m gradyn" if script in ("", "__main__.py", "-c") else script)
    args = parser.parse_args(argv)  # bad options: usage and a message on stderr, exit status 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args)
    except CliError as error:
        print(f"gradyn {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ValueError as error:  # an argument the core refused (e.g. rk4 with pgs contact)
        print(f"gradyn {args.command}: error: {_one_line(error)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. head, which stopped reading: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush stays quiet
        return 0
    except KeyboardInterrupt:
        print(f"gradyn {args.command}: interrupted", file=sys.stderr)
        return 130
