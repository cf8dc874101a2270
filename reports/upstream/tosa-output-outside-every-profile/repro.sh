#!/usr/bin/env bash
# Reproduces: verifier-error: 'tosa.const' op is not profile-aligned: element type 'f64' is not legal
#
#   bash repro.sh
#   TORCH_MLIR_OPT=/path/to/your/harness-bindings-opt bash repro.sh
#
# Runs harness-bindings-opt on reduced.mlir (input.mlir when there is no reduced.mlir) in this folder. The
# wheel's bin/torch-mlir-opt is a Python wrapper that turns signal N into exit status 256-N;
# both that and a shell's 128+N count as the signal.
# Here the program is the bindings tool: torch-mlir-opt's command line over the torch-mlir
# wheel's MLIR Python bindings (python -m harness.execute.bindings_tool, from torch-mlir-harness;
# its console script is harness-bindings-opt), which register the upstream MLIR passes
# torch-mlir-opt does not. A torch-mlir-opt given as TORCH_MLIR_OPT rejects this pipeline.
# Without it, repro.py runs the same pipeline through torch_mlir.passmanager.
# Exit status: 1 exactly when the bug reproduces (the failure); 0 when it does not,
# so it can serve as the interestingness test of a reducer; 2 when it cannot
# tell (no harness-bindings-opt found, or one that cannot run it: point TORCH_MLIR_OPT at one).
# The program: $TORCH_MLIR_OPT if set; else the one the report was made with (RECORDED below, if
# any) if it exists here ('~' is $HOME, '<site-packages>' is looked up with python3 or python
# on PATH); else harness-bindings-opt on PATH.
set -u
cd "$(dirname "$0")" || exit 2

RECORDED='~/.cache/torch-mlir-harness/bindings-opt-f24127089d12/bindings-opt'

find_program() {
  if [ -n "${TORCH_MLIR_OPT:-}" ]; then
    command -v -- "$TORCH_MLIR_OPT"
    return
  fi
  local candidate="$RECORDED" rest py site
  case "$candidate" in
    '~/'*) candidate="$HOME/${candidate#'~/'}" ;;
    '<site-packages>/'*)
      rest="${candidate#'<site-packages>/'}"
      for py in python3 python; do
        site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null) \
          || continue
        if [ -x "$site/$rest" ]; then candidate="$site/$rest"; break; fi
      done ;;
  esac
  if [ -n "$candidate" ] && [ -f "$candidate" ] && [ -x "$candidate" ]; then
    printf '%s\n' "$candidate"
    return 0
  fi
  command -v harness-bindings-opt
}

if ! PROGRAM=$(find_program); then
  if [ -z "${TORCH_MLIR_OPT:-}" ] && [ -f repro.py ]; then
    python="${PYTHON:-python3}"
    echo "repro.sh: no harness-bindings-opt found; running repro.py (torch_mlir.passmanager)" \
      "with $python"
    exec "$python" repro.py
  fi
  if [ -n "${TORCH_MLIR_OPT:-}" ]; then
    echo "repro.sh: CANNOT RUN: TORCH_MLIR_OPT=${TORCH_MLIR_OPT} is no program;" \
      "run: TORCH_MLIR_OPT=/path/to/harness-bindings-opt bash repro.sh"
  else
    echo "repro.sh: CANNOT RUN: no harness-bindings-opt found; run: TORCH_MLIR_OPT=/path/to/harness-bindings-opt bash repro.sh"
  fi
  exit 2
fi

if [ -f reduced.mlir ]; then INPUT=reduced.mlir; else INPUT=input.mlir; fi
ERR=$(mktemp) || exit 2
trap 'rm -f "$ERR"' EXIT
ulimit -c 0 2>/dev/null

CMD=("$PROGRAM" '-pass-pipeline=builtin.module(torchdynamo-export-to-torch-backend-pipeline,torch-backend-to-tosa-backend-pipeline,tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp extensions=int64},tosa-validate{strict-op-spec-alignment})' "$INPUT" -o /dev/null -mlir-disable-threading)
echo "repro.sh: running:$(printf ' %q' "${CMD[@]}")" >&2
"${CMD[@]}" 2>"$ERR"
status=$?
cat "$ERR" >&2

reproduced=0
why=""
if [ "$status" -ne 0 ] && grep -qF -- 'error: '"'"'tosa.const'"'"' op is not profile-aligned: element type '"'"'f64'"'"' is not legal' "$ERR"; then
  reproduced=1; why='stderr has: error: '"'"'tosa.const'"'"' op is not profile-aligned: element type '"'"'f64'"'"' is not legal'
else
  why='stderr lacks: error: '"'"'tosa.const'"'"' op is not profile-aligned: element type '"'"'f64'"'"' is not legal'
fi
if [ "$reproduced" = 1 ]; then
  echo "repro.sh: REPRODUCED: $why"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"
exit 0
