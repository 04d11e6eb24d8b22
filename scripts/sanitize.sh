#!/usr/bin/env bash
# The C++ tests under the sanitizers (issue 21); scripts/test.sh (the README's test command, CI)
# runs "all" after the regular tests.
#
#   bash scripts/sanitize.sh [asan|tsan|all|asan-coverage]      (default all = asan + tsan)
#
# asan           AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer) over the whole C++
#                test suite but two tests (ASAN_EXCLUDED below says why): CMake preset "asan"
#                (clang, -O1, every library source and every test) in build/asan. Any report fails
#                the run: UBSan does not recover, LeakSanitizer runs at exit. Leaks inside Open Asset
#                Import's and libomp's own code are suppressed (tests/fuzz/lsan.supp says why).
# tsan           ThreadSanitizer over the threaded tests: preset "tsan" (clang, -O1, the library
#                without the forward-mode AD reference, and only tests/sim/test_batch.cpp and
#                test_threaded_worlds.cpp) in build/tsan. Those tests run batches on for_each_world's
#                OpenMP pool (LLVM's libomp, whose Archer tool tells TSan about OpenMP's barriers and
#                tasks, so that only real races are reported) and one Model from several std::threads.
# asan-coverage  The asan run built with clang's source coverage as well (preset "asan-coverage",
#                build/asan-coverage): scripts/sanitizer_coverage.py then prints each library source's
#                line coverage under the sanitizers and fails if any file ran no line. Not part of
#                "all" (the instrumentation makes the build a third longer); run it when tests or
#                sources are added or removed.
#
# Each part configures and builds incrementally (ccache when present). The compilers come from
# scripts/setup.sh (clang-14, LLVM's OpenMP, the sanitizer runtimes and LLVM's coverage tools).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
PART=${1:-all}
case $PART in
  asan|tsan|all|asan-coverage) ;;
  *) echo "sanitize: unknown part '$PART': use asan, tsan, all or asan-coverage" >&2; exit 2 ;;
esac
JOBS=${SANITIZE_JOBS:-2}

# Left out of the ASan run, each for a reason that is not about memory or undefined behaviour:
# - the bitwise reference hashes (ReferenceTrajectories) are those of the GCC release build; clang
#   rounds some expressions differently, which the test file says may differ across compilers;
# - the thousand-step forward-mode AD rollouts (Gradcheck.ThousandStepRollouts...) take over
#   5 minutes each under ASan; their code runs in the shorter gradient tests.
ASAN_EXCLUDED='ReferenceTrajectories\.BitwiseUnchanged|Gradcheck\.ThousandStepRolloutsOnShippedRobots'

# run_asan PRESET: build the preset and run the C++ tests under ASan + UBSan; with coverage (the
# asan-coverage preset), also check that every library source ran.
run_asan() {
  local preset=$1 build=$ROOT/build/$1
  echo "sanitize: AddressSanitizer + UndefinedBehaviorSanitizer over the C++ test suite (build/$preset)"
  cmake --preset "$preset" >/dev/null
  cmake --build "$build" -j "$JOBS"
  local profiles=$build/profiles
  rm -rf "$profiles" && mkdir -p "$profiles"
  local tests_status=0
  ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" \
  LSAN_OPTIONS="suppressions=$ROOT/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
  LLVM_PROFILE_FILE="$profiles/tests-%2m.profraw" \
    ctest --test-dir "$build" --output-on-failure -j "$JOBS" -E "$ASAN_EXCLUDED" || tests_status=1
  if [[ $preset == asan-coverage ]]; then
    python3 scripts/sanitizer_coverage.py "$build" "$profiles" || tests_status=1
  fi
  return "$tests_status"
}

run_tsan() {
  echo "sanitize: ThreadSanitizer over the threaded tests (build/tsan)"
  cmake --preset tsan >/dev/null
  cmake --build build/tsan -j "$JOBS"
  local archer
  archer=$(find /usr/lib/llvm-14/lib /usr/lib -maxdepth 2 -name 'libarcher.so' -print -quit 2>/dev/null || true)
  if [[ -z $archer ]]; then
    echo "sanitize: LLVM's libarcher.so (package libomp-14-dev) is missing: run bash scripts/setup.sh" >&2
    return 1
  fi
  # halt_on_error: the first race fails the test; Archer needs TSan's ignore_noninstrumented_modules.
  OMP_TOOL_LIBRARIES="$archer" \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    ctest --test-dir build/tsan --output-on-failure -j 1
}

status=0
if [[ $PART == asan || $PART == all ]]; then run_asan asan || status=1; fi
if [[ $PART == asan-coverage ]]; then run_asan asan-coverage || status=1; fi
if [[ $PART == tsan || $PART == all ]]; then run_tsan || status=1; fi
if ((status)); then echo "sanitize: FAILED"; else echo "sanitize: clean"; fi
exit "$status"
