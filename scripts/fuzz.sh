#!/usr/bin/env bash
# libFuzzer runs of the loaders (issue 21).
#
#   bash scripts/fuzz.sh [target] [seconds] [extra libFuzzer flags...]
#
# target: urdf | mjcf | mesh | args | all (default all, one after another); seconds per target
# (default 60). Builds tests/fuzz/ with clang into build/fuzz (-fsanitize=fuzzer,address,undefined,
# no CUDA, no tests, no Python; only the loader sources) and runs each target on one core. The
# working corpus grows in build/fuzz/corpus/<target> (seeded from models/, tests/data and
# tests/fuzz/regressions); crashes, hangs (-timeout), leaks and out-of-memory inputs land in
# build/fuzz/artifacts/<target>/, the log in build/fuzz/logs/<target>.log. Once a finding is fixed,
# copy its input to tests/fuzz/regressions/<target>/: gradyn_tests (tests/io/test_fuzz_regressions.cpp,
# FuzzRegressions.*) and pytest (tests/python/test_fuzz_regressions.py) replay those files without
# libFuzzer, so CI (scripts/test.sh) runs them. A run keeps going after a finding (-fork=1
# -ignore_crashes; FUZZ_KEEP_GOING=0 stops at the first) and prints executions and corpus size.
#
# 'args' fuzzes the Python-facing argument conversion of step/rollout with atheris (libFuzzer in
# Python) against the gradyn installed in .venv (scripts/setup.sh); atheris is installed into
# build/fuzz/pydeps (pip --target), not into .venv.
# Run it niced on a shared machine: nice -n 19 bash scripts/fuzz.sh urdf 1800
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
TARGET=${1:-all}
SECONDS_PER_TARGET=${2:-60}
shift $(( $# < 2 ? $# : 2 ))
EXTRA=("$@")
BUILD=$ROOT/build/fuzz
CXX=${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}

build() {
  if [[ ! -f $BUILD/build.ninja ]]; then
    cmake -S tests/fuzz -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$BUILD" -j "${FUZZ_JOBS:-2}" --target fuzz_urdf fuzz_mjcf fuzz_mesh
}

# Seeds: the model files and test data of the target's format (meshes: a leading byte picks the
# extension, see fuzz_mesh.cpp), and every kept regression input.
seed() {
  local t=$1 dir=$BUILD/corpus/$1
  mkdir -p "$dir"
  case $t in
    urdf) find models tests/data /work/shared/models -name '*.urdf' -size -64k 2>/dev/null |
            while read -r f; do cp "$f" "$dir/seed_$(echo "$f" | md5sum | cut -c1-12).urdf"; done ;;
    mjcf) find models tests/data -name '*.xml' -size -64k |
            while read -r f; do cp "$f" "$dir/seed_$(echo "$f" | md5sum | cut -c1-12).xml"; done ;;
    mesh) find tests/data /work/shared/models models \( -iname '*.stl' -o -iname '*.obj' -o -iname '*.dae' \) -size -48k 2>/dev/null |
            while read -r f; do
              case ${f,,} in *.stl) b='\x00' ;; *.obj) b='\x01' ;; *) b='\x02' ;; esac
              { printf "$b"; cat "$f"; } >"$dir/seed_$(echo "$f" | md5sum | cut -c1-12)"
            done ;;
    args) printf 'seed' >"$dir/seed_0" ;;
  esac
  if [[ -d tests/fuzz/regressions/$t ]]; then cp tests/fuzz/regressions/"$t"/* "$dir"/ 2>/dev/null || true; fi
}

# Leaks inside Open Asset Import's error paths are known and not gradyn's (see the file).
export LSAN_OPTIONS="suppressions=$ROOT/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

run() {
  local t=$1 secs=$2
  seed "$t"
  mkdir -p "$BUILD/artifacts/$t" "$BUILD/logs"
  local common=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
                -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t/")
  # Keep going after a finding (one job at a time, in a child process): a long run is not cut short
  # by its first crash. FUZZ_KEEP_GOING=0 stops at the first finding instead.
  if [[ ${FUZZ_KEEP_GOING:-1} == 1 && $t != args ]]; then
    common+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  echo "== fuzz $t for ${secs}s (log: build/fuzz/logs/$t.log)"
  local rc=0
  case $t in
    urdf|mjcf)
      "$BUILD/fuzz_$t" "${common[@]}" -max_len=65536 -dict=tests/fuzz/dicts/$t.dict "${EXTRA[@]}" \
        "$BUILD/corpus/$t" >"$BUILD/logs/$t.log" 2>&1 || rc=$? ;;
    mesh)
      # -detect_leaks=0: assimp leaks on most rejected files (suppressed, see tests/fuzz/lsan.supp),
      # and libFuzzer then runs a full leak scan after every such input (15x slower). gradyn's own
      # leaks on these paths are checked by replaying the kept inputs under ASan (gradyn_tests).
      "$BUILD/fuzz_mesh" "${common[@]}" -max_len=49152 -detect_leaks=0 "${EXTRA[@]}" "$BUILD/corpus/$t" >"$BUILD/logs/$t.log" 2>&1 || rc=$? ;;
    args)
      PYTHONPATH="$BUILD/pydeps${PYTHONPATH:+:$PYTHONPATH}" "$ROOT/.venv/bin/python" tests/fuzz/fuzz_args.py "${common[@]}" -max_len=4096 "${EXTRA[@]}" \
        "$BUILD/corpus/$t" >"$BUILD/logs/$t.log" 2>&1 || rc=$? ;;
    *) echo "unknown target '$t' (urdf, mjcf, mesh, args or all)" >&2; exit 2 ;;
  esac
  grep -E '^stat::|^#[0-9]+ +DONE|^#[0-9]+: cov' "$BUILD/logs/$t.log" | tail -6 || true
  echo "corpus: $(ls "$BUILD/corpus/$t" | wc -l) files; findings: $(ls "$BUILD/artifacts/$t" | wc -l) in build/fuzz/artifacts/$t (exit $rc)"
  return 0
}

case $TARGET in
  args) ;;
  *) build ;;
esac
if [[ $TARGET == args || $TARGET == all ]] && [[ ! -d $BUILD/pydeps/atheris ]]; then
  "$ROOT/.venv/bin/python" -m pip install -q --target "$BUILD/pydeps" atheris
fi
if [[ $TARGET == all ]]; then
  for t in urdf mjcf mesh args; do run "$t" "$SECONDS_PER_TARGET"; done
else
  run "$TARGET" "$SECONDS_PER_TARGET"
fi
