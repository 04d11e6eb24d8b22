#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh demo
.venv/bin/python examples/demo.py "$@"
