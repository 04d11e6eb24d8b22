#!/usr/bin/env bash
# Idempotent set-up on a Debian machine: system packages (only those missing), the virtual
# environment .venv/ with the Python dependencies, and the gradyn Python package built from this
# checkout. Safe to run again: each part is skipped when already done, and the package is
# rebuilt (incrementally, in build/<wheel tag>) only when a source file changed.
#
#   bash scripts/setup.sh demo   what the main demo uses: the build tools, numpy, matplotlib, tqdm
#                                and the viewer's library (no torch, JAX, MuJoCo or Pinocchio)
#   bash scripts/setup.sh [test] everything the test suite, the examples and the benchmarks use
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile=${1:-test}
case $profile in
  demo|test) ;;
  *) echo "setup: unknown profile '$profile': use 'demo' or 'test'" >&2; exit 2 ;;
esac

# To build the package: compiler, CMake, Ninja, the C++ libraries it links, Python headers.
APT_PACKAGES=(build-essential cmake ninja-build libeigen3-dev libtinyxml2-dev python3-venv python3-dev ccache
              libqhull-dev libassimp-dev)
PY_PACKAGES=(numpy matplotlib tqdm meshcat "nanobind>=2.0" "scikit-build-core>=0.10")
PY_MODULES="numpy, matplotlib, tqdm, meshcat, nanobind, scikit_build_core"
if [[ $profile == test ]]; then
  # The C++ tests and benchmarks; a browser for the viewer's test; clang with its sanitizer
  # runtimes, LLVM's OpenMP and its coverage tools for the sanitizer builds (scripts/sanitize.sh).
  APT_PACKAGES+=(libgtest-dev libgmock-dev libbenchmark-dev chromium chromium-driver
                 clang-14 libclang-rt-14-dev libomp-14-dev llvm-14)
  # Oracles (Pinocchio, MuJoCo) and Pinocchio's robot collection (example-robot-data: real URDFs,
  # tests/python/test_robot_collection.py); the examples' libraries; the browser driver of the
  # viewer's test; the docs build; Ray for the distributed populations; OSQP for the MPC example.
  PY_PACKAGES+=(pytest scipy pin example-robot-data mujoco gymnasium ale-py cma selenium sphinx myst-parser
                sphinx-argparse ray osqp)
  PY_MODULES+=", pytest, scipy, pinocchio, mujoco, gymnasium, ale_py, cma, selenium, sphinx, myst_parser, sphinxarg, ray, osqp"
fi

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
# example-robot-data holds files only (no module to import): asked of pip itself.
if [[ $profile == test ]] && ! "$PY" -m pip show example-robot-data >/dev/null 2>&1; then
  echo "setup: installing example-robot-data (real robot files for the tests)"
  "$PY" -m pip install example-robot-data
fi

# The ML framework bridges (gradyn.torch, gradyn.jax; pyproject extras "torch" and "jax") are
# optional; they are installed here so that their tests run too. Set GRADYN_SKIP_ML_BRIDGES=1 to
# leave them out (their tests then skip). pip's default index: torch is a large download.
if [[ $profile == test && ${GRADYN_SKIP_ML_BRIDGES:-0} != 1 ]]; then
  for module in torch jax; do
    if ! "$PY" -c "import ${module}" 2>/dev/null; then
      echo "setup: installing ${module} (for the gradyn.${module} bridge)"
      "$PY" -m pip install "${module}"
    fi
  done
  if ! "$PY" -c "import stable_baselines3" 2>/dev/null; then
    echo "setup: installing stable-baselines3 (examples/gym/train_sb3.py and its smoke test; needs torch)"
    "$PY" -m pip install stable-baselines3
  fi
fi

# Rebuild the package only when something it is built from changed (file names, sizes, times), or
# when the test profile needs the forward-mode AD reference (gradcheck) that a lean demo build left
# out. The demo profile builds lean (CMake GRADYN_AD_REFERENCE=OFF: about a quarter less compile time) unless
# a full build is already there; the test profile always builds the full package.
stamp_file=build/.python-package.stamp
built_ad=$( [[ -f $stamp_file ]] && sed -n 2p "$stamp_file" || true)
if [[ $profile == test || $built_ad == ON ]]; then ad=ON; else ad=OFF; fi
stamp=$( { "$PY" -c 'import sys; print(sys.version)'
           find CMakeLists.txt pyproject.toml include src python -type f -printf '%p %s %T@\n' | sort; } | sha1sum)
if [[ ! -f $stamp_file || $(sed -n 1p "$stamp_file") != "$stamp" || $built_ad != "$ad" ]] ||
   ! "$PY" -c "import gradyn" 2>/dev/null; then
  echo "setup: building the gradyn Python package (forward-mode AD reference: $ad)"
  # No build isolation: nanobind and scikit-build-core are already in .venv, and the build
  # folder build/<wheel tag> is reused, so only changed files recompile.
  "$PY" -m pip install --no-build-isolation --no-deps -C "cmake.define.GRADYN_AD_REFERENCE=$ad" .
  mkdir -p build
  printf '%s\n%s\n' "$stamp" "$ad" > "$stamp_file"
fi
version=$("$PY" -c 'import gradyn; print(gradyn.__version__)')  # fails the set-up if the import fails
echo "setup: done (gradyn $version in .venv)"
