#!/usr/bin/env bash
# The whole test suite: the lit suite through the CMake check target (when cmake is present,
# else lit directly), then pytest. Run from anywhere; uses the project's .venv when it exists.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ -x .venv/bin/python ]; then py="$root/.venv/bin/python"; else py="$(command -v python3)"; fi
bindir="$(dirname "$py")"
export PATH="$bindir:$PATH"

echo "== lit suite =="
if command -v cmake >/dev/null 2>&1 && [ -f CMakeLists.txt ]; then
  build="$(mktemp -d "${TMPDIR:-/tmp}/harness-build-XXXXXX")"
  trap 'rm -rf "$build"' EXIT
  cmake -S . -B "$build" -DPython3_EXECUTABLE="$py" >/dev/null
  cmake --build "$build" --target check-torch-mlir-harness
else
  "$bindir/lit" -sv lit_tests/
fi

echo "== pytest =="
"$py" -m pytest -q tests/
