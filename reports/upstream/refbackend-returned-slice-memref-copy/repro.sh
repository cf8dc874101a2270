#!/usr/bin/env bash
# Reproduces a failure at run time: the ExecutionEngine cannot resolve symbols: memrefCopy
#
#   bash repro.sh
#   TORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh
#   PYTHON=/path/to/venv/bin/python bash repro.sh
#
# Lowers reduced.mlir with torch-to-linalg (torch-mlir-opt), lowers that to LLVM and runs it on the
# harness's RefBackend (the torch-mlir wheel's MLIR Python bindings and ExecutionEngine) on
# inputs.npz (python -m harness check). Exit status: 1 exactly when the code
# fails at execution the same way (the ExecutionEngine cannot resolve symbols: memrefCopy); 0 when it runs, and also when the check cannot
# run or fails otherwise (the lowering fails, no harness): that is not this bug.
#
# Needs: torch-mlir-harness importable by $PYTHON (default python3), with torch 2.13.0+cpu and
# torch-mlir 20261001; $TORCH_MLIR_OPT, when set, runs the pipeline to linalg.
set -u
cd "$(dirname "$0")" || exit 0
PY="${PYTHON:-python3}"

if ! "$PY" -c 'import harness.execute.failure' >/dev/null 2>&1; then
  echo "repro.sh: NOT REPRODUCED: $PY cannot import torch-mlir-harness; run: PYTHON=/path/to/venv/bin/python bash repro.sh"
  exit 0
fi
OPT_ARGS=()
if [ -n "${TORCH_MLIR_OPT:-}" ]; then OPT_ARGS=(--opt "$TORCH_MLIR_OPT"); fi
WORK=$(mktemp -d) || exit 0
trap 'rm -rf "$WORK"' EXIT
EXPECTED='{"kind": "missing-symbols", "signal": "", "message": "", "symbols": ["memrefCopy"], "text": "the ExecutionEngine cannot resolve symbols: memrefCopy"}'

CMD=("$PY" -m harness check reduced.mlir --pipeline torch-to-linalg --inputs inputs.npz --out "$WORK" --json "${OPT_ARGS[@]}")
echo "repro.sh: running:$(printf ' %q' "${CMD[@]}")" >&2
"${CMD[@]}" >"$WORK/check.json" 2>"$WORK/stderr"
status=$?
cat "$WORK/stderr" >&2

verdict=$("$PY" - "$WORK/check.json" "$EXPECTED" <<'PYEOF'
import json, sys
from harness.execute.failure import RuntimeFailure, of_check_json
try:
    record = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("error the check printed no result")
    sys.exit(0)
expected = RuntimeFailure.from_json(json.loads(sys.argv[2]))
found = of_check_json(record)
if found == expected:
    print(f"same {found}")
elif found is not None:
    print(f"other it fails at execution another way: {found}")
elif record["outcome"] == "fails":
    print(f"error the check fails at {record.get('failed_stage')}: {record.get('error', '')[:300]}")
else:
    print(f"runs the code runs to the end ({record['outcome']})")
PYEOF
)
kind=${verdict%% *}
why=${verdict#* }
if [ "$kind" = same ]; then
  echo "repro.sh: REPRODUCED: $why"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"
exit 0
