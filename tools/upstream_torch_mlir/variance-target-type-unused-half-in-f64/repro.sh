#!/usr/bin/env bash
# Reproduces: an f16 variance computed in f64 (arith.extf f16 to f64)
#
#   bash repro.sh
#
# With torch-mlir-opt on PATH: lowers input.mlir (an f16 var_mean) to linalg-on-tensors and looks
# for the f16 -> f64 upcast; without it, runs repro.py (torch, numpy and torch-mlir's Python
# bindings). Exit status: 1 when the bug reproduces, 0 when it does not, 2 when it cannot tell.
set -u
cd "$(dirname "$0")" || exit 2
if ! command -v torch-mlir-opt >/dev/null; then
  echo "repro.sh: torch-mlir-opt not on PATH; running repro.py"
  exec "${PYTHON:-python3}" repro.py
fi
out=$(torch-mlir-opt --torchdynamo-export-to-torch-backend-pipeline \
  --torch-backend-to-linalg-on-tensors-backend-pipeline input.mlir) \
  || { echo "repro.sh: CANNOT TELL: torch-mlir-opt failed"; exit 2; }
if grep -qF -- "f16 to f64" <<<"$out"; then
  grep -F -- "f16 to f64" <<<"$out"
  echo "repro.sh: REPRODUCED: the f16 variance is computed in f64"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: no f16 -> f64 upcast"
exit 0
