"""Which library sources the sanitizer run executed (scripts/sanitize.sh).

The AddressSanitizer build is also compiled for clang's source coverage. After its tests ran, this
merges their profiles and checks that every source file of the library (src/, the CUDA backend
aside: it is not compiled there) had lines executed under the sanitizers, so that no file escapes
them; it prints each file's line coverage, lowest first, and exits 1 naming any file that ran no
line at all.

    python3 scripts/sanitizer_coverage.py BUILD_DIR PROFILE_DIR [--llvm-suffix -14]
"""

import argparse
import glob
import json
import os
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", help="the sanitizer build folder (holds tests/gradyn_tests)")
    parser.add_argument("profiles", help="the folder the tests wrote their .profraw files into")
    parser.add_argument("--llvm-suffix", default="-14", help="suffix of llvm-profdata and llvm-cov (default -14)")
    args = parser.parse_args()

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    raw = sorted(glob.glob(os.path.join(args.profiles, "*.profraw")))
    if not raw:
        print(f"sanitizer coverage: no profiles in {args.profiles}: did the tests run?", file=sys.stderr)
        return 1
    merged = os.path.join(args.profiles, "merged.profdata")
    # Many small profiles: pass them through a file list rather than the command line.
    listing = os.path.join(args.profiles, "profiles.txt")
    with open(listing, "w") as f:
        f.write("\n".join(raw) + "\n")
    subprocess.run([f"llvm-profdata{args.llvm_suffix}", "merge", "-sparse", "-f", listing, "-o", merged], check=True)
    binary = os.path.join(args.build, "tests", "gradyn_tests")
    export = subprocess.run(
        [f"llvm-cov{args.llvm_suffix}", "export", "-summary-only", f"-instr-profile={merged}", binary],
        check=True, capture_output=True, text=True).stdout
    covered = {}
    for entry in json.loads(export)["data"][0]["files"]:
        lines = entry["summary"]["lines"]
        covered[os.path.realpath(entry["filename"])] = (lines["covered"], lines["count"])

    sources = sorted(
        os.path.realpath(p) for p in glob.glob(os.path.join(root, "src", "**", "*.cpp"), recursive=True)
        if f"{os.sep}cuda{os.sep}" not in p)
    rows, unexecuted = [], []
    for path in sources:
        done, count = covered.get(path, (0, 0))
        rows.append((done / count if count else 0.0, done, count, os.path.relpath(path, root)))
        if done == 0:
            unexecuted.append(os.path.relpath(path, root))
    rows.sort()
    total_done = sum(r[1] for r in rows)
    total = sum(r[2] for r in rows)
    print(f"sanitizer coverage: {len(sources)} library sources, {total_done}/{total} lines executed "
          f"({100.0 * total_done / max(total, 1):.1f}%) under ASan+UBSan; lowest:")
    for fraction, done, count, name in rows[:8]:
        print(f"  {100.0 * fraction:5.1f}%  {done:5d}/{count:<5d} {name}")
    if unexecuted:
        print("sanitizer coverage: no line of these sources ran under the sanitizers: " + ", ".join(unexecuted),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
