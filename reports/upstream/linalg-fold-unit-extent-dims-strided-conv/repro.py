#!/usr/bin/env python3
"""Reproduces: linalg-fold-unit-extent-dims turns a strided convolution's window index into a bare
loop dimension and the verifier rejects its output ("inferred input/output operand #1 has shape's
dimension #2 to be 4, but found 3").

    python3 repro.py

Needs only MLIR's Python bindings as the torch-mlir wheel ships them (torch_mlir.ir,
torch_mlir.passmanager): no other file. It verifies the embedded input, runs the one upstream pass
below on it with the pass manager's verifier off, and verifies the pass's output.

Exit status: 1 exactly when the bug shows (the input verifies, the output does not, with the
message below); 0 when it does not; 2 when it cannot tell (no torch_mlir, or an input that does
not verify).
"""

import sys

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 2
PIPELINE = "builtin.module(func.func(linalg-fold-unit-extent-dims))"
EXPECTED = "inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3"

# input.mlir of the bundle (verbatim, so its lines may be long)
# ruff: noqa: E501
IR = r'''#input = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#filter = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#output = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
// A stride-2 3x3 convolution whose output is 1x1: it reads rows and columns 0..2 of the 4x4
// input (row and column 3 are never read), as PyTorch's conv2d(stride=2) does on a 4x4 input.
func.func @strided_conv_1x1_output(%input: tensor<1x2x4x4xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.generic {indexing_maps = [#input, #filter, #output], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%input, %filter : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %1 = arith.mulf %in, %w : f32
    %2 = arith.addf %acc, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}
'''


def main() -> int:
    try:
        from torch_mlir import ir, passmanager
    except ImportError as error:
        print(f"repro.py: CANNOT RUN: no MLIR Python bindings (torch_mlir): {error}")
        return CANNOT_RUN
    with ir.Context():
        module = ir.Module.parse(IR)
        try:
            module.operation.verify()
        except ir.MLIRError as error:
            print(f"repro.py: CANNOT RUN: the input does not verify: {error}")
            return CANNOT_RUN
        pm = passmanager.PassManager.parse(PIPELINE)
        pm.enable_verifier(False)
        try:
            pm.run(module.operation)
        except ir.MLIRError as error:
            print(f"repro.py: NOT REPRODUCED: the pass itself failed: {str(error)[:300]}")
            return NOT_REPRODUCED
        try:
            module.operation.verify()
        except ir.MLIRError as error:
            said = str(error)
            print(said, file=sys.stderr)
            if EXPECTED in said:
                print(f"repro.py: REPRODUCED: {PIPELINE} gives IR the verifier rejects: {EXPECTED}")
                return REPRODUCED
            print(f"repro.py: NOT REPRODUCED: the output fails to verify otherwise: {said[:300]}")
            return NOT_REPRODUCED
    print(f"repro.py: NOT REPRODUCED: the output of {PIPELINE} verifies")
    return NOT_REPRODUCED


if __name__ == "__main__":
    sys.exit(main())
