// torch.aten.broadcast_tensors: one result, a list of tensors. torch-mlir's library has a shape
// function for it (aten〇broadcast_tensors〡shape, returning List[List[int]], one shape per
// tensor in the list), so torch-reify-shape-calculations wraps the op in a
// torch.shape.calculate and yields that function's return as the op's shapes. The yield takes
// one int list per tensor result, and the op has no tensor result: the
// torch.shape.calculate.yield.shapes the pass built gets a !torch.list<list<int>> and fails the
// verifier. This comes before DecomposeComplexOps, whose DecomposeAtenBroadcastTensorsOp (into
// aten.broadcast_to per tensor) would have handled the op: run first, as in the last RUN line,
// it lets the pipeline through.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// BroadcastTensorsModule_basic and BroadcastTensorsModuleList_multiple_ranks
// (`torch.broadcast_tensors(a, b)`) fail torchscript-to-torch with this error. The importer
// emits aten.broadcast_tensors on a list of the arguments as upstream's C++ importer did; the
// FX path passes because export decomposes broadcast_tensors before import.
// Upstream fix: reify list-of-tensor results (or do not reify ops whose results are not
// tensors), or drop the shape and dtype functions of broadcast_tensors so the decomposition runs.
//
// Now: the verifier error below, from the one pass and from the whole pipeline. When upstream
// fixes it, `not` fails here.

// RUN: not torch-mlir-opt %s -torch-reify-shape-calculations 2>&1 | FileCheck %s
// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} 2>&1 | FileCheck %s
// RUN: torch-mlir-opt %s -torch-decompose-complex-ops | torch-mlir-opt %{pipeline:function-to-torch} | FileCheck %s --check-prefix=DECOMPOSED

// CHECK:      error: 'torch.shape.calculate.yield.shapes' op operand #0 must be variadic of Int list type (int[]) of Torch IntType values, but got '!torch.list<list<int>>'
// CHECK-NEXT: torch.aten.broadcast_tensors

// DECOMPOSED-LABEL: func.func @broadcast_tensors
// DECOMPOSED-COUNT-2: torch.aten.broadcast_to
// DECOMPOSED-NOT:    torch.aten.broadcast_tensors

func.func @broadcast_tensors(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,?],f32>) -> (!torch.vtensor, !torch.vtensor) {
  %0 = torch.prim.ListConstruct %arg0, %arg1 : (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>) -> !torch.list<vtensor>
  %1 = torch.aten.broadcast_tensors %0 : !torch.list<vtensor> -> !torch.list<vtensor>
  %2:2 = torch.prim.ListUnpack %1 : !torch.list<vtensor> -> !torch.vtensor, !torch.vtensor
  return %2#0, %2#1 : !torch.vtensor, !torch.vtensor
}
