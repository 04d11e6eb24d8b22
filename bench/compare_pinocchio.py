#!/usr/bin/env python3
"""Time gradyn against Pinocchio (the `pin` pip wheel) on the same robots and states, in one run.

    .venv/bin/python bench/compare_pinocchio.py            # configure, build, run, report
    .venv/bin/python bench/compare_pinocchio.py --no-build --repetitions 3 --filter aba

Steps: fetch the urdfdom headers the wheel lacks (pip download, once), configure the `bench`
CMake preset with GRADYN_BENCH_PINOCCHIO=ON, build the benchmark binary, run it with JSON
output (the binary first checks that both libraries give the same aba/rnea/crba results on
every state, and aborts otherwise), then print the medians per algorithm and model and write
them to bench/results/pinocchio_comparison.md (and the raw JSON next to it).
Run it with the Python of the environment that has `pin` installed (it is used to find the wheel).
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "bench"
URDFDOM_DIR = BUILD / "urdfdom_headers"
URDFDOM_INCLUDE = URDFDOM_DIR / "cmeel.prefix" / "include" / "urdfdom_headers"
BINARY = BUILD / "bench" / "gradyn_bench_dynamics"
RESULTS = ROOT / "bench" / "results"
SOURCE_STATE = BUILD / "gradyn_source_state.txt"  # git state of src/ and include/ at the last build


def source_state() -> str:
    # The commit alone: what the binary is compiled from is src/ and include/, checked below (an
    # edited results file must not mark the measured source dirty).
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--short", "--", "src", "include"],
                           capture_output=True, text=True).stdout.rstrip()
    return f"gradyn {git or '?'}" + (" with uncommitted changes in src/ or include/:\n\n```\n" + dirty + "\n```\n"
                                      if dirty else " (src/ and include/ as committed)")


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kwargs)


def ensure_urdfdom_headers(python: str) -> None:
    if (URDFDOM_INCLUDE / "urdf_model" / "model.h").exists():
        return
    URDFDOM_DIR.mkdir(parents=True, exist_ok=True)
    run([python, "-m", "pip", "download", "--no-deps", "cmeel-urdfdom-headers==3.0.0", "-d", URDFDOM_DIR])
    wheels = sorted(URDFDOM_DIR.glob("cmeel_urdfdom_headers-*.whl"))
    if not wheels:
        sys.exit(f"pip download left no cmeel_urdfdom_headers wheel in {URDFDOM_DIR}")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        wheel.extractall(URDFDOM_DIR)


def build(python: str, jobs: int, prebuilt: bool) -> None:
    try:
        subprocess.run([python, "-c", "import cmeel, pinocchio"], check=True, capture_output=True)
    except subprocess.CalledProcessError:
        sys.exit(f"{python} cannot import pinocchio/cmeel: run this script with the venv that has `pin`")
    ensure_urdfdom_headers(python)
    run(["cmake", "--preset", "bench", "-DGRADYN_BENCH_PINOCCHIO=ON", f"-DGRADYN_BENCH_PYTHON={python}",
         f"-DGRADYN_BENCH_PINOCCHIO_PREBUILT={'ON' if prebuilt else 'OFF'}",
         f"-DGRADYN_URDFDOM_HEADERS_DIR={URDFDOM_INCLUDE}"], cwd=ROOT)
    state = source_state()  # taken before the build: what the binary is compiled from
    run(["cmake", "--build", BUILD, "-j", str(jobs), "--target", "gradyn_bench_dynamics"], cwd=ROOT)
    SOURCE_STATE.write_text(state)


def run_benchmarks(repetitions: int, min_time: float, filter_regex: str) -> tuple[dict, str]:
    raw = RESULTS / "pinocchio_comparison.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    cmd = [BINARY, "--benchmark_format=json", f"--benchmark_out={raw}", "--benchmark_out_format=json",
           f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}",
           "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true",
           f"--benchmark_filter={filter_regex}"]
    proc = run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    return json.loads(raw.read_text()), proc.stderr


def medians(report: dict) -> dict[tuple[str, str, str], float]:
    """(algorithm, model, engine) -> median CPU time per call in ns."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    out = {}
    for b in report["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        algorithm, model, engine = b["run_name"].split("/")
        out[(algorithm, model, engine)] = b["cpu_time"] * scale[b["time_unit"]]
    return out


def table(times: dict) -> str:
    rows = ["| algorithm | model | gradyn ns | Pinocchio ns | gradyn / Pinocchio |",
            "|---|---|---:|---:|---:|"]
    keys = sorted({(a, m) for a, m, _ in times}, key=lambda k: (["aba", "rnea", "crba"].index(k[0]), k[1]))
    for algorithm, model in keys:
        g = times.get((algorithm, model, "gradyn"))
        p = times.get((algorithm, model, "pinocchio"))
        ratio = f"{g / p:.2f}" if g and p else "-"
        rows.append(f"| {algorithm} | {model} | {g:.0f} | {p:.0f} | {ratio} |" if g and p else
                    f"| {algorithm} | {model} | {g or '-'} | {p or '-'} | {ratio} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="interpreter with `pin` (default: this one)")
    parser.add_argument("--no-build", action="store_true", help="reuse the existing benchmark binary")
    parser.add_argument("--prebuilt", action="store_true",
                        help="time the wheel's prebuilt Pinocchio instantiations instead of compiling them here")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per repetition")
    parser.add_argument("--filter", default=".", help="benchmark name regex, e.g. 'aba/'")
    args = parser.parse_args()

    if not args.no_build:
        build(args.python, args.jobs, args.prebuilt)
    report, check_log = run_benchmarks(args.repetitions, args.min_time, args.filter)
    times = medians(report)
    result = table(times)
    print()
    print(result)

    ctx = report.get("context", {})
    checks = "\n".join(line for line in check_log.splitlines() if line.startswith("[pinocchio check]"))
    pin_version = subprocess.run([args.python, "-c", "import pinocchio; print(pinocchio.__version__)"],
                                 capture_output=True, text=True).stdout.strip()
    source = SOURCE_STATE.read_text() if SOURCE_STATE.exists() else "unknown (binary not built by this script)"
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    md = f"""# gradyn vs Pinocchio: per-call time (median of {args.repetitions} repetitions, CPU time)

Generated by `bench/compare_pinocchio.py` on {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.
Machine: {cpu}, {ctx.get('num_cpus', '?')} CPUs, load average at start {ctx.get('load_avg', '?')}.
Pinocchio {pin_version} (`pin` wheel), {'prebuilt wheel instantiations' if args.prebuilt else 'algorithms compiled in the benchmark with the same compiler and flags as gradyn'};
both sides `-O3 -DNDEBUG`, no `-march=native`. 64 random states per model, cycled.
Ratio < 1: gradyn faster. Source: {source}

{result}

Cross-check before timing (gradyn vs Pinocchio on all 64 states, max relative error):

```
{checks}
```
"""
    (RESULTS / "pinocchio_comparison.md").write_text(md)
    # The raw Google Benchmark report names the source it measured too.
    report.setdefault("context", {})["gradyn_source"] = source
    (RESULTS / "pinocchio_comparison.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten: {RESULTS / 'pinocchio_comparison.md'} and {RESULTS / 'pinocchio_comparison.json'}")


if __name__ == "__main__":
    main()
