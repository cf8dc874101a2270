// BLOOM's fused-QKV split (modeling_bloom.py:216: view(batch, seq, heads, 3, head_dim), then
// [..., 0, :]) as the TorchScript port imports it with --dynamic seq: the import reads no traced
// value types, so the view's result is [?,?,?,?,?] at the backend contract although its size
// list is (1, seq, 4, 3, 16). convert-torch-to-linalg then builds a linalg.generic whose operand
// is tensor<1x?x4x3x16xf32> and whose result is tensor<?x?x?x?x?xf32>, and the verifier rejects
// it. The same view with its result typed [1,?,4,3,16] (what FX's export gives) lowers (the
// second function). Reduced by `harness report` from the port's 376 ops
// (no bundle kept: TorchScript only and no crash, so not on upstream's supported path; a row of
// reports/upstream/README.md).
//
// Now: a verifier error for the first function. When upstream fixes it, the first CHECK fails.

// RUN: not torch-mlir-opt %s -split-input-file -convert-torch-to-linalg 2>&1 | FileCheck %s

// CHECK:     error: 'linalg.generic' op expected type of operand #1 ('tensor<1x?x4x3x16xf32>') to match type of corresponding result ('tensor<?x?x?x?x?xf32>')
// CHECK-LABEL: func.func @view_typed_then_slice
// CHECK-NOT: torch.aten.view

func.func @view_unrefined_then_slice(%arg0: !torch.vtensor<[1,?,192],f32>) -> !torch.vtensor<[?,?,?,1,?],f32> {
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int16 = torch.constant.int 16
  %0 = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,192],f32>, !torch.int -> !torch.int
  %1 = torch.prim.ListConstruct %int1, %0, %int4, %int3, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %arg0, %1 : !torch.vtensor<[1,?,192],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?,?],f32>
  %3 = torch.aten.slice.Tensor %2, %int3, %int0, %int1, %int1 : !torch.vtensor<[?,?,?,?,?],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,?,?,1,?],f32>
  return %3 : !torch.vtensor<[?,?,?,1,?],f32>
}

// -----

func.func @view_typed_then_slice(%arg0: !torch.vtensor<[1,?,192],f32>) -> !torch.vtensor<[1,?,4,1,16],f32> {
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %int16 = torch.constant.int 16
  %0 = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,192],f32>, !torch.int -> !torch.int
  %1 = torch.prim.ListConstruct %int1, %0, %int4, %int3, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %arg0, %1 : !torch.vtensor<[1,?,192],f32>, !torch.list<int> -> !torch.vtensor<[1,?,4,3,16],f32>
  %3 = torch.aten.slice.Tensor %2, %int3, %int0, %int1, %int1 : !torch.vtensor<[1,?,4,3,16],f32>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[1,?,4,1,16],f32>
  return %3 : !torch.vtensor<[1,?,4,1,16],f32>
}
