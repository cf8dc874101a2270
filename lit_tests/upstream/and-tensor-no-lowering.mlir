// Upstream gap: torch-mlir 20261001 has no conversion for torch.aten.__and__.Tensor,
// which torch.jit.trace records for Python's `&` on tensors (transformers' masking_utils.py:54,
// `result & mask(...)`; it stops 19 of 21 traced HF architectures). torch.aten.bitwise_and.Tensor,
// the same op under the name torch.export records, lowers to arith.andi in a linalg.generic.
// Upstream: llvm/torch-mlir#4749 (open PR); our bundle: reports/upstream/known/and-tensor-no-lowering/ (a reproducer for it).
//
// This test states today's failure. When upstream lowers __and__.Tensor, `not` fails here: then
// delete this file, and the harness fix `bitwise-and-or` (harness/fixes/bitwise.py) is no longer
// needed on this path.

// RUN: not torch-mlir-opt %s %{pipeline:torch-to-linalg} 2>&1 | FileCheck %s

// CHECK: error: failed to legalize operation 'torch.aten.__and__.Tensor'
// CHECK-NOT: error:

func.func @and_of_masks(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>) -> !torch.vtensor<[2,4],i1> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  return %0 : !torch.vtensor<[2,4],i1>
}
