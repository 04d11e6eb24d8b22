#!/usr/bin/env python3
"""Instructions per call of gradyn's and Pinocchio's aba, rnea and crba, counted by valgrind.

    .venv/bin/python bench/count_instructions.py               # build (as compare_pinocchio.py), count, report
    .venv/bin/python bench/compare_pinocchio.py --no-build --filter crba   # the timings these complement
    .venv/bin/python bench/count_instructions.py --no-build --algorithms crba --calls 1000

Wall-clock times on a shared 2-core machine drift by up to 2x between runs (bench/README.md), so a
kernel change of a few percent is hard to see in them. Instruction counts are exact and repeatable:
this script runs the benchmark binary of compare_pinocchio.py (same compiler, same flags for both
libraries, the same robots and states) under `valgrind --tool=callgrind` with
`--count-calls=ALGORITHM/MODEL/ENGINE/N`, once with N calls and once with 2N, and reports
(count(2N) - count(N)) / N: the loading, the cross-check and valgrind's own start cancel. Fewer
instructions is not always less time (memory stalls and dependency chains are not counted), so the
timings of compare_pinocchio.py stay the measure the issues' goals are stated in.
Writes bench/results/instruction_counts.md (and .json) naming the commit it measured.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_pinocchio  # noqa: E402  (the build, the binary and the source state are shared)

MODELS = ["iiwa", "hyq", "simple_humanoid", "laikago"]
ENGINES = ["gradyn", "pinocchio"]


def collected(spec: str, calls: int) -> int:
    """Instructions valgrind counted for a whole run of the binary with `calls` calls of spec."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          str(compare_pinocchio.BINARY), f"--count-calls={spec}/{calls}"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{compare_pinocchio.BINARY} --count-calls={spec}/{calls} failed under valgrind "
                 f"(exit {out.returncode}):\n{out.stderr[-2000:]}")
    match = re.search(r"Collected : (\d+)", out.stderr)
    if not match:
        sys.exit(f"valgrind printed no instruction count for {spec}:\n{out.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="interpreter with `pin` (default: this one)")
    parser.add_argument("--no-build", action="store_true", help="reuse the existing benchmark binary")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--calls", type=int, default=2000, help="N: the runs make N and 2N calls")
    parser.add_argument("--algorithms", default="aba,rnea,crba", help="comma-separated subset of aba,rnea,crba")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    args = parser.parse_args()
    algorithms = [a for a in args.algorithms.split(",") if a]
    models = [m for m in args.models.split(",") if m]
    for name, chosen, allowed in [("--algorithms", algorithms, ["aba", "rnea", "crba"]), ("--models", models, MODELS)]:
        unknown = sorted(set(chosen) - set(allowed))
        if unknown:
            sys.exit(f"{name}: unknown {', '.join(unknown)} (expected a subset of {', '.join(allowed)})")
    if args.calls < 1:
        sys.exit(f"--calls must be at least 1, got {args.calls}")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: sudo apt-get install -y valgrind")

    if not args.no_build:
        compare_pinocchio.build(args.python, args.jobs, prebuilt=False)
    elif not compare_pinocchio.BINARY.exists():
        sys.exit(f"--no-build: {compare_pinocchio.BINARY} does not exist; run without --no-build first")
    source = (compare_pinocchio.SOURCE_STATE.read_text() if compare_pinocchio.SOURCE_STATE.exists()
              else "unknown source state (binary built outside compare_pinocchio.py)")

    rows = []
    for algorithm in algorithms:
        for model in models:
            row = {"algorithm": algorithm, "model": model}
            for engine in ENGINES:
                spec = f"{algorithm}/{model}/{engine}"
                once, twice = collected(spec, args.calls), collected(spec, 2 * args.calls)
                row[engine] = (twice - once) / args.calls
            row["ratio"] = row["gradyn"] / row["pinocchio"]
            print(f"{algorithm:5s} {model:16s} gradyn {row['gradyn']:9.0f}  pinocchio {row['pinocchio']:9.0f}  "
                  f"ratio {row['ratio']:.2f}", flush=True)
            rows.append(row)

    results = compare_pinocchio.RESULTS
    results.mkdir(parents=True, exist_ok=True)
    command = "bench/count_instructions.py " + " ".join(sys.argv[1:])
    (results / "instruction_counts.json").write_text(json.dumps(
        {"source": source, "command": command.strip(), "calls": args.calls, "rows": rows}, indent=1) + "\n")
    lines = [
        "# gradyn vs Pinocchio: instructions per call (valgrind)",
        "",
        f"Generated by `{command.strip()}` on {datetime.datetime.now():%Y-%m-%d %H:%M}. "
        f"Source: {source}",
        "",
        "The benchmark binary of `bench/compare_pinocchio.py` (both libraries compiled with the same compiler and "
        "flags, `-O3 -DNDEBUG`, no `-march=native`; the same robots and 64 random states, cycled) run under "
        f"`valgrind --tool=callgrind` with {args.calls} and {2 * args.calls} calls of one algorithm: the difference "
        f"over {args.calls}. Exact and repeatable, unlike this machine's timings; fewer instructions is not always "
        "less time (memory stalls and dependency chains are not counted), so `pinocchio_comparison.md` stays the "
        "measure of speed. Ratio < 1: gradyn runs fewer instructions.",
        "",
        "| algorithm | model | gradyn instructions | Pinocchio instructions | gradyn / Pinocchio |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [f"| {r['algorithm']} | {r['model']} | {r['gradyn']:.0f} | {r['pinocchio']:.0f} | {r['ratio']:.2f} |"
              for r in rows]
    (results / "instruction_counts.md").write_text("\n".join(lines) + "\n")
    print(f"written: {results / 'instruction_counts.md'} and {results / 'instruction_counts.json'}")


if __name__ == "__main__":
    main()
