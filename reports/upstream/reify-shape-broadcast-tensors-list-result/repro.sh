#!/usr/bin/env bash
# Reproduces: verifier-error: 'torch.shape.calculate.yield.shapes' op operand #0 must be variadic of Int list type (int[]) of Torch IntType values, but got '!torch.list<list<int>>'
#
#   bash repro.sh
#   TORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh
#
# Runs torch-mlir-opt on reduced.mlir (input.mlir when there is no reduced.mlir) in this folder. The
# wheel's bin/torch-mlir-opt is a Python wrapper that turns signal N into exit status 256-N;
# both that and a shell's 128+N count as the signal.
# Exit status: 1 exactly when the bug reproduces (the failure); 0 when it does not,
# so it can serve as the interestingness test of a reducer; 2 when it cannot
# tell (no torch-mlir-opt found, or one that cannot run it: point TORCH_MLIR_OPT at one).
# The program: $TORCH_MLIR_OPT if set; else the one the report was made with (RECORDED below, if
# any) if it exists here ('~' is $HOME, '<site-packages>' is looked up with python3 or python
# on PATH); else torch-mlir-opt on PATH.
set -u
cd "$(dirname "$0")" || exit 2

RECORDED='<site-packages>/torch_mlir/_mlir_libs/torch-mlir-opt'

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
  command -v torch-mlir-opt
}

if ! PROGRAM=$(find_program); then
  if [ -n "${TORCH_MLIR_OPT:-}" ]; then
    echo "repro.sh: CANNOT RUN: TORCH_MLIR_OPT=${TORCH_MLIR_OPT} is no program;" \
      "run: TORCH_MLIR_OPT=/path/to/torch-mlir-opt bash repro.sh"
  else
    echo "repro.sh: CANNOT RUN: no torch-mlir-opt found; run: TORCH_MLIR_OPT=/path/to/torch-mlir-opt bash repro.sh"
  fi
  exit 2
fi

if [ -f reduced.mlir ]; then INPUT=reduced.mlir; else INPUT=input.mlir; fi
ERR=$(mktemp) || exit 2
trap 'rm -f "$ERR"' EXIT
ulimit -c 0 2>/dev/null

CMD=("$PROGRAM" '-pass-pipeline=builtin.module(torch-function-to-torch-backend-pipeline)' "$INPUT" -o /dev/null -mlir-disable-threading)
echo "repro.sh: running:$(printf ' %q' "${CMD[@]}")" >&2
"${CMD[@]}" 2>"$ERR"
status=$?
cat "$ERR" >&2

reproduced=0
why=""
if [ "$status" -ne 0 ] && grep -qF -- 'error: '"'"'torch.shape.calculate.yield.shapes'"'"' op operand #0 must be variadic of Int list type (int[]) of Torch IntType values, but got '"'"'!torch.list<list<int>>'"'"'' "$ERR"; then
  reproduced=1; why='stderr has: error: '"'"'torch.shape.calculate.yield.shapes'"'"' op operand #0 must be variadic of Int list type (int[]) of Torch IntType values, but got '"'"'!torch.list<list<int>>'"'"''
else
  why='stderr lacks: error: '"'"'torch.shape.calculate.yield.shapes'"'"' op operand #0 must be variadic of Int list type (int[]) of Torch IntType values, but got '"'"'!torch.list<list<int>>'"'"''
fi
if [ "$reproduced" = 1 ]; then
  echo "repro.sh: REPRODUCED: $why"
  exit 1
fi
echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"
exit 0
