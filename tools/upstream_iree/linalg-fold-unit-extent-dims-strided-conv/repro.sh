#!/usr/bin/env bash
# Reproduces: linalg-fold-unit-extent-dims rewrites a strided convolution's window index
# (oh * 2 + kh, with oh of size 1) into the bare dimension kh on a 4-wide input the 3-wide kernel
# loop does not cover, and the verifier rejects the result:
#   'linalg.generic' op inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3
#
#   bash repro.sh
#
# With IREE's tools on PATH (pip install iree-base-compiler==3.13.0):
#   1. iree-opt runs the one upstream MLIR pass on input.mlir (a linalg.generic, upstream dialects
#      only): iree-opt --pass-pipeline='builtin.module(func.func(linalg-fold-unit-extent-dims))'
#      is what mlir-opt would run;
#   2. iree-compile (llvm-cpu) compiles conv.mlir (the same convolution as linalg.conv_2d_nchw_fchw)
#      and is said to fail the same way in IREE's iree-dispatch-creation-fold-unit-extent-dims.
# Without them, runs repro.py (the same pass through the torch-mlir wheel's MLIR Python bindings).
# Exit status: 1 when the bug reproduces (step 1 fails with the message); 0 when it does not;
# 2 when it cannot tell. Step 2 is reported, and does not decide the status.
set -u
cd "$(dirname "$0")" || exit 2
EXPECTED="inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3"
if ! command -v iree-opt >/dev/null || ! command -v iree-compile >/dev/null; then
  echo "repro.sh: iree-opt or iree-compile not on PATH; running repro.py"
  exec "${PYTHON:-python3}" repro.py
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

if iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
    --iree-llvmcpu-target-cpu=generic --mlir-print-ir-after-failure --mlir-elide-elementsattrs-if-larger=16 \
    conv.mlir -o "$tmp/conv.vmfb" 2>"$tmp/compile.err"; then
  echo "repro.sh: iree-compile: conv.mlir compiles (IREE no longer meets it)"
elif grep -qF -- "$EXPECTED" "$tmp/compile.err" \
    && grep -qF -- "Failed: iree-dispatch-creation-fold-unit-extent-dims" "$tmp/compile.err"; then
  echo "repro.sh: iree-compile: conv.mlir fails the same way, in iree-dispatch-creation-fold-unit-extent-dims"
else
  echo "repro.sh: iree-compile: conv.mlir fails otherwise:"
  head -n 3 "$tmp/compile.err"
fi

CMD=(iree-opt '--pass-pipeline=builtin.module(func.func(linalg-fold-unit-extent-dims))' input.mlir -o "$tmp/after.mlir")
echo "repro.sh: running:$(printf ' %q' "${CMD[@]}")" >&2
"${CMD[@]}" 2>"$tmp/err"
status=$?
cat "$tmp/err" >&2
if [ "$status" -ne 0 ] && grep -qF -- "$EXPECTED" "$tmp/err"; then
  echo "repro.sh: REPRODUCED: linalg-fold-unit-extent-dims gives IR the verifier rejects: $EXPECTED"
  exit 1
fi
if [ "$status" -eq 0 ]; then
  echo "repro.sh: NOT REPRODUCED: linalg-fold-unit-extent-dims succeeds on input.mlir"
else
  echo "repro.sh: NOT REPRODUCED: iree-opt fails otherwise (exit status $status)"
fi
exit 0
