#!/usr/bin/env bash
# Set up (scripts/setup.sh), build and run the C++ tests, then the Python tests, then the C++ tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer and the threaded ones under
# ThreadSanitizer (scripts/sanitize.sh: two more clang builds, about 20 minutes on 2 cores when
# cold). Exits non-zero if a build or any test fails.
#
# GRADYN_SKIP_SANITIZERS=1 leaves the sanitizer part out (for quick local runs; CI never sets it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh

cmake --preset release
cmake --build build/release -j2

status=0
ctest --test-dir build/release --output-on-failure -j2 || status=1
.venv/bin/python -m pytest tests/python -q || status=1
if [[ ${GRADYN_SKIP_SANITIZERS:-0} == 1 ]]; then
  echo "test: the sanitizer builds are skipped (GRADYN_SKIP_SANITIZERS=1)"
else
  bash scripts/sanitize.sh all || status=1
fi
if ((status)); then echo "test: FAILED"; else echo "test: all passed"; fi
exit "$status"
