#!/usr/bin/env bash
# Reproduces: the code dies by SIGSEGV at run time
#
#   bash repro.sh
#   PYTHON=/path/to/your/python3 bash repro.sh
#
# Runs repro.py with a Python that has torch 2.13.0+cpu, numpy and torch-mlir 20261001 (its
# MLIR Python bindings and ExecutionEngine): it embeds the IR, the arguments and eager
# PyTorch's values, and judges the run itself.
# Exit status: 1 exactly when the bug reproduces (the run dies); 0 when it does not,
# so it can serve as the interestingness test of a reducer; 2 when it cannot
# tell (no python3 found, or one that cannot run it: point PYTHON at one).
# The program: $PYTHON if set; else the one the report was made with (RECORDED below, if
# any) if it exists here ('~' is $HOME, '<site-packages>' is looked up with python3 or python
# on PATH); else python3 on PATH.
set -u
cd "$(dirname "$0")" || exit 2

RECORDED=''

find_program() {
  if [ -n "${PYTHON:-}" ]; then
    command -v -- "$PYTHON"
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
  command -v python3
}

if ! PROGRAM=$(find_program); then
  if [ -n "${PYTHON:-}" ]; then
    echo "repro.sh: CANNOT RUN: PYTHON=${PYTHON} is no program;" \
      "run: PYTHON=/path/to/python3 bash repro.sh"
  else
    echo "repro.sh: CANNOT RUN: no python3 found; run: PYTHON=/path/to/python3 bash repro.sh"
  fi
  exit 2
fi

exec "$PROGRAM" repro.py
