#!/usr/bin/env python3
"""Which translation units a header change rebuilds.

    python3 scripts/header_fanout.py BUILD_DIR HEADER [HEADER ...]

For every translation unit in BUILD_DIR/compile_commands.json (a configured CMake build: the library,
the tests, and the Python extension when GRADYN_BUILD_PYTHON is on), runs the compiler's dependency
scan (-MM: preprocessing only, nothing is compiled) and prints those that include any HEADER, directly
or not, then their count out of the total. Headers are matched by path suffix, so
'contact/pgs.hpp' names include/gradyn/contact/pgs.hpp. On 2-core machines every unit a common header
pulls in costs minutes of rebuild: docs/architecture.md lists what each workspace header should reach.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def dependency_scan(entry):
    """The headers one translation unit includes, by the compiler's -MM scan."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if args and os.path.basename(args[0]) == "ccache":
        args = args[1:]
    scan, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        scan.append(a)
    out = subprocess.run(scan + ["-M", "-MF", "/dev/stdout"], cwd=entry["directory"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(f"dependency scan of {entry['file']} failed:\n{out.stderr}")
    return entry["file"], {os.path.normpath(p) for p in out.stdout.replace("\\\n", " ").split()[1:]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("headers", nargs="+")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    path = os.path.join(args.build_dir, "compile_commands.json")
    if not os.path.exists(path):
        sys.exit(f"header_fanout: {path} not found: configure the build first (cmake --preset release)")
    entries = json.load(open(path))
    with ThreadPoolExecutor(args.jobs) as pool:
        scans = list(pool.map(dependency_scan, entries))
    suffixes = [os.path.normpath(h) for h in args.headers]
    hits = sorted(f for f, deps in scans if any(d.endswith(os.sep + s) or d == s for d in deps for s in suffixes))
    root = os.path.commonpath([e["file"] for e in entries])
    for f in hits:
        print(os.path.relpath(f, root))
    print(f"{len(hits)} of {len(entries)} translation units include {', '.join(args.headers)}")


if __name__ == "__main__":
    main()
