// The harness fix `bitwise-and-or` on the 1-op reproducer of and-tensor-no-lowering.mlir:
// `harness fix` finds the blocker, renames the op, checks the numbers before and after in the
// reference evaluator, lowers, and runs the result on the RefBackend against the input's
// reference (random bool inputs, seed 0).

// RUN: %PYTHON -m harness fix %s -o %t.fixed.mlir --pipeline torch-to-linalg --out %t.d | FileCheck %s --check-prefix=FIX
// FIX:      applied: bitwise-and-or (torch-ir) for torch.aten.__and__.Tensor (torch-to-linalg)
// FIX-NEXT:   changed: aten.__and__.Tensor -> aten.bitwise_and.Tensor
// FIX-NEXT:   numbers: same-numbers: the IR before and after, in eager PyTorch (reference evaluator), max abs diff 0
// FIX:      verified: with bitwise-and-or, {{.*}}and-tensor-fixed.mlir lowers through torch-to-linalg, and the RefBackend matches the reference evaluator of the input
// FIX:      wrote {{.*}}.fixed.mlir (bitwise-and-or; run it through torch-to-linalg)

// RUN: FileCheck %s --check-prefix=IR --input-file %t.fixed.mlir
// IR-LABEL: func.func @and_of_masks(
// IR:         torch.aten.bitwise_and.Tensor %arg0, %arg1
// IR-NOT:     torch.aten.__and__.Tensor

// RUN: torch-mlir-opt %t.fixed.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// LINALG-LABEL: func.func @and_of_masks(
// LINALG:         arith.andi %{{.*}}, %{{.*}} : i1
// LINALG-NOT:     torch.

func.func @and_of_masks(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>) -> !torch.vtensor<[2,4],i1> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  return %0 : !torch.vtensor<[2,4],i1>
}
