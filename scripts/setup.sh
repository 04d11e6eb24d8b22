#!/usr/bin/env bash
# Idempotent set-up on a Debian machine: system packages (only those missing), the virtual
# environment .venv/ with the Python dependencies, and the gradyn Python package built from this
# checkout. Safe to run again: each part is skipped when already done, and the package is
# rebuilt (incrementally, in build/<wheel tag>) only when a source file changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

APT_PACKAGES=(build-essential cmake ninja-build libeigen3-dev libtinyxml2-dev libgtest-dev libgmock-dev
              libbenchmark-dev python3-venv python3-dev ccache libqhull-dev libassimp-dev)
PY_PACKAGES=(numpy scipy pytest matplotlib pin mujoco gymnasium ale-py cma tqdm "nanobind>=2.0" "scikit-build-core>=0.10")
PY_MODULES="numpy, scipy, pytest, matplotlib, pinocchio, mujoco, gymnasium, ale_py, cma, tqdm, nanobind, scikit_build_core"

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  "${PYTHON:-python3}" -m venv .venv
fi
PY=.venv/bin/python

if ! "$PY" -c "import ${PY_MODULES}" 2>/dev/null; then
  echo "setup: installing Python dependencies"
  "$PY" -m pip install --upgrade pip
  "$PY" -m pip install "${PY_PACKAGES[@]}"
fi

# The ML framework bridges (gradyn.torch, gradyn.jax; pyproject extras "torch" and "jax") are
# optional; they are installed here so that their tests run too. Set GRADYN_SKIP_ML_BRIDGES=1 to
# leave them out (their tests then skip). pip's default index: torch is a large download.
if [[ ${GRADYN_SKIP_ML_BRIDGES:-0} != 1 ]]; then
  for module in torch jax; do
    if ! "$PY" -c "import ${module}" 2>/dev/null; then
      echo "setup: installing ${module} (for the gradyn.${module} bridge)"
      "$PY" -m pip install "${module}"
    fi
  done
fi

# Rebuild the package only when something it is built from changed (file names, sizes, times).
stamp_file=build/.python-package.stamp
stamp=$( { "$PY" -c 'import sys; print(sys.version)'
           find CMakeLists.txt pyproject.toml include src python -type f -printf '%p %s %T@\n' | sort; } | sha1sum)
if [[ ! -f $stamp_file || $(cat "$stamp_file") != "$stamp" ]] || ! "$PY" -c "import gradyn" 2>/dev/null; then
  echo "setup: building the gradyn Python package"
  # No build isolation: nanobind and scikit-build-core are already in .venv, and the build
  # folder build/<wheel tag> is reused, so only changed files recompile.
  "$PY" -m pip install --no-build-isolation --no-deps .
  mkdir -p build
  echo "$stamp" > "$stamp_file"
fi
version=$("$PY" -c 'import gradyn; print(gradyn.__version__)')  # fails the set-up if the import fails
echo "setup: done (gradyn $version in .venv)"
