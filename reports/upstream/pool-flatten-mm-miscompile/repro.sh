#!/usr/bin/env bash
# Reproduces a miscompile: wrong values through torch-to-linalg and the RefBackend
#
#   bash repro.sh
#   TORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh
#   PYTHON=/path/to/venv/bin/python bash repro.sh
#
# Lowers reduced.mlir with torch-to-linalg (torch-mlir-opt), runs it on the harness's RefBackend
# (the torch-mlir wheel's MLIR Python bindings and ExecutionEngine) on inputs.npz, and compares
# the results with the reference evaluator (reduced.mlir run op by op in eager PyTorch; its
# values are in expected.npz). Exit status: 1 exactly when the numbers are
# wrong (numerics-mismatch); 0 when they are right, and also when the check cannot run (the
# lowering fails, no harness): that is not this bug.
#
# Needs: torch-mlir-harness importable by $PYTHON (default python3), with torch 2.13.0+cpu and
# torch-mlir 20261001 (the wheel's bindings run the RefBackend); $TORCH_MLIR_OPT, when set,
# runs the pipeline to linalg.
set -u
cd "$(dirname "$0")" || exit 0
PY="${PYTHON:-python3}"

if ! "$PY" -c 'import harness.execute.check' >/dev/null 2>&1; then
  echo "repro.sh: NOT REPRODUCED: $PY cannot import torch-mlir-harness; run: PYTHON=/path/to/venv/bin/python bash repro.sh"
  exit 0
fi
OPT_ARGS=()
if [ -n "${TORCH_MLIR_OPT:-}" ]; then OPT_ARGS=(--opt "$TORCH_MLIR_OPT"); fi
WORK=$(mktemp -d) || exit 0
trap 'rm -rf "$WORK"' EXIT

CMD=("$PY" -m harness check reduced.mlir --pipeline torch-to-linalg --inputs inputs.npz --out "$WORK" --json "${OPT_ARGS[@]}")
echo "repro.sh: running:$(printf ' %q' "${CMD[@]}")" >&2
"${CMD[@]}" >"$WORK/check.json" 2>"$WORK/stderr"
status=$?
cat "$WORK/stderr" >&2

verdict=$("$PY" - "$WORK/check.json" expected.npz <<'PYEOF'
import glob, json, os, sys
import numpy as np
try:
    record = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("error the check printed no result")
    sys.exit(0)
outcome = record["outcome"]
worst = max((o["max_abs_diff"] for o in (record.get("numerics") or {}).get("outputs", [])
             if isinstance(o["max_abs_diff"], (int, float))), default=0.0)
note = ""
found = glob.glob(os.path.join(record.get("work_dir", ""), "expected.npz"))
if found:
    with np.load(found[0]) as now, np.load(sys.argv[2]) as then:
        if any(not np.array_equal(now[k], then[k], equal_nan=True) for k in then.files if k in now.files):
            note = "; the reference's values differ from expected.npz (another torch?)"
if outcome == "numerics-mismatch":
    print(f"mismatch max abs diff {worst:.3g}{note}")
elif outcome == "verified":
    print(f"verified the values match the reference (max abs diff {worst:.3g}){note}")
else:
    print(f"error the check {outcome} at {record.get('failed_stage')}: {record.get('error', '')[:300]}")
PYEOF
)
kind=${verdict%% *}
why=${verdict#* }
if [ "$kind" = mismatch ]; then
  echo "repro.sh: REPRODUCED: wrong numbers: $why"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"
exit 0
