#!/usr/bin/env bash
# Reproduces: the code dies by SIGABRT: mismatched size for broadcast at run time
#
#   bash repro.sh
#   PYTHON=/path/to/venv/bin/python bash repro.sh
#
# Runs repro.py, which needs only torch 2.13.0+cpu, numpy and torch-mlir 20261001 (its MLIR
# Python bindings and ExecutionEngine): it embeds the IR, the arguments and eager PyTorch's
# values. Exit status: 1 exactly when the bug shows (the run dies); 0 when it does
# not; 2 when it cannot tell (no Python, or one without torch-mlir).
set -u
cd "$(dirname "$0")" || exit 2
PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "repro.sh: CANNOT RUN: no $PY on PATH; run: PYTHON=/path/to/venv/bin/python bash repro.sh"
  exit 2
fi
exec "$PY" repro.py
