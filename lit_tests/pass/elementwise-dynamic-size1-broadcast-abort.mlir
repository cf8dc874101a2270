// torch.aten.logaddexp of two !torch.vtensor<[?,?,?],f32>, called with shapes 3x2x4 and 3x1x4:
// a dimension that is dynamic in the types but 1 at run time, so it broadcasts. torch-mlir
// does not support that (TorchToLinalg's createElementwiseLinalgGeneric, lib/Conversion/
// TorchToLinalg/Utils.cpp, "We prohibit the size-1 dynamic broadcasting scenario"): every
// elementwise op of the decomposition (sub, maximum, add, where) iterates both operands over
// the full dimension and guards it with `cf.assert ..., "mismatched size for broadcast"`. The
// compiled code aborts when the sizes differ. No torch-mlir-opt run fails: the lowering is
// accepted and the abort happens when the module runs.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// ElementwiseLogAddExpBroadcastModule_basic and ElementwiseLogAddExp2BroadcastModule_basic kill
// their worker with SIGABRT, "mismatched size for broadcast". Both annotate their arguments
// [-1, -1, -1]; the importer keeps those dynamic sizes as upstream's C++ importer did. The FX
// path passes because upstream's FX e2e config exports with the test's concrete inputs, so the
// size-1 dimension is static there and lowers to a broadcast. The non-broadcasting tests
// (ElementwiseLogAddExp{,2}Module_basic) pass on both paths.
// Upstream fix: dynamic size-1 broadcasting in TorchToLinalg's elementwise lowering (a
// select on the size, or an expand of the operand) instead of the assert. Known upstream:
// llvm/torch-mlir#2149 (open, "Broadcast op support for dynamic dimension sizes"); #2882, a
// fix of the check, was closed with the view that a dimension cannot be dynamically 1.
//
// Now: the lowering asserts equal sizes, and `harness check` (torch-to-linalg, then the
// RefBackend, on the inputs above) sees the code die by SIGABRT. When upstream broadcasts
// dynamic sizes, the CHECK line fails and `harness check` verifies: then make this a test that
// the sizes broadcast.

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} -o %t.torch.mlir
// RUN: torch-mlir-opt %t.torch.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// RUN: %PYTHON -c "import numpy as np; np.savez('%t.npz', np.ones((3, 2, 4), 'f4'), np.ones((3, 1, 4), 'f4'))"
// RUN: not %PYTHON -m harness check %t.torch.mlir --pipeline torch-to-linalg --inputs %t.npz --out %t.d --no-progress | FileCheck %s --check-prefix=RUNS

// LINALG-LABEL: func.func @logaddexp_dynamic
// LINALG:       cf.assert %{{.*}}, "mismatched size for broadcast"

// RUNS:      fails at execution: @logaddexp_dynamic
// RUNS:      the code died by SIGABRT: mismatched size for broadcast

func.func @logaddexp_dynamic(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %0 = torch.aten.logaddexp %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %0 : !torch.vtensor<[?,?,?],f32>
}
