#!/usr/bin/env bash
# Set up (scripts/setup.sh), build and run the C++ tests, then the Python tests.
# Exits non-zero if the build or any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh

cmake --preset release
cmake --build build/release -j2

status=0
ctest --test-dir build/release --output-on-failure -j2 || status=1
.venv/bin/python -m pytest tests/python -q || status=1
if ((status)); then echo "test: FAILED"; else echo "test: all passed"; fi
exit "$status"
