#!/usr/bin/env bash
# Reproduces: element type 'f64' is not legal
#
#   bash repro.sh
#
# With torch-mlir-opt and iree-compile on PATH: lowers input.mlir to TOSA with torch-mlir-opt and
# compiles it with iree-compile (whose TOSA input runs MLIR's tosa-validate); without them, runs
# repro.py (torch, numpy and torch-mlir's Python bindings). Exit status: 1 when the bug
# reproduces, 0 when it does not, 2 when it cannot tell.
set -u
cd "$(dirname "$0")" || exit 2
if ! command -v torch-mlir-opt >/dev/null || ! command -v iree-compile >/dev/null; then
  echo "repro.sh: torch-mlir-opt or iree-compile not on PATH; running repro.py"
  exec "${PYTHON:-python3}" repro.py
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
torch-mlir-opt --torchdynamo-export-to-torch-backend-pipeline --torch-backend-to-tosa-backend-pipeline \
  --mlir-print-op-generic input.mlir -o "$tmp/tosa.mlir" || { echo "repro.sh: CANNOT TELL: torch-mlir-opt failed"; exit 2; }
if iree-compile --iree-input-type=tosa --iree-hal-target-device=local \
    --iree-hal-local-target-device-backends=llvm-cpu "$tmp/tosa.mlir" -o "$tmp/out.vmfb" 2>"$tmp/err"; then
  echo "repro.sh: NOT REPRODUCED: iree-compile accepts the TOSA"
  exit 0
fi
cat "$tmp/err" >&2
if grep -qF -- "element type 'f64' is not legal" "$tmp/err"; then
  echo "repro.sh: REPRODUCED: iree-compile says: element type 'f64' is not legal"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: iree-compile fails otherwise"
exit 0
