// GPT-Neo's _split_heads (modeling_gpt_neo.py:97: view(size()[:-1] + (heads, head_dim)), then
// permute(0, 2, 1, 3)) as the TorchScript port imports it with --dynamic seq: the import reads no
// traced value types, so the view's result is [?,?,?,?] although its size list is
// (1, seq, 4, 16). convert-torch-to-linalg builds a linalg.transpose whose result dim 0 is 1
// while its input's dim 0 is dynamic (-9223372036854775808, kDynamic), and the verifier rejects
// it. The same view with its result typed [1,?,4,16] (what FX's export gives) lowers (the second
// function). `harness report` reduced the port's 335 ops to the view and permute
// (its reducer also replaced the seq size.int by a constant, which fails the same way). No
// bundle kept: TorchScript only and no crash, so not on upstream's supported path (a row of
// reports/upstream/README.md).
//
// Now: a verifier error for the first function. When upstream fixes it, the first CHECK fails.

// RUN: not torch-mlir-opt %s -split-input-file -convert-torch-to-linalg 2>&1 | FileCheck %s

// CHECK:     error: 'linalg.transpose' op dim(result, 0) = 1 doesn't match dim(input, permutation[0]) = -9223372036854775808
// CHECK-LABEL: func.func @view_typed_then_permute
// CHECK:     linalg.transpose
// CHECK-NOT: torch.aten.permute

func.func @view_unrefined_then_permute(%arg0: !torch.vtensor<[1,?,64],f32>) -> !torch.vtensor<[?,?,?,?],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int16 = torch.constant.int 16
  %seq = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,64],f32>, !torch.int -> !torch.int
  %0 = torch.prim.ListConstruct %int1, %seq, %int4, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[1,?,64],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?],f32>
  %2 = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.permute %1, %2 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,?,?],f32>
  return %3 : !torch.vtensor<[?,?,?,?],f32>
}

// -----

func.func @view_typed_then_permute(%arg0: !torch.vtensor<[1,?,64],f32>) -> !torch.vtensor<[1,4,?,16],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %int16 = torch.constant.int 16
  %seq = torch.aten.size.int %arg0, %int1 : !torch.vtensor<[1,?,64],f32>, !torch.int -> !torch.int
  %0 = torch.prim.ListConstruct %int1, %seq, %int4, %int16 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[1,?,64],f32>, !torch.list<int> -> !torch.vtensor<[1,?,4,16],f32>
  %2 = torch.prim.ListConstruct %int0, %int2, %int1, %int3 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.permute %1, %2 : !torch.vtensor<[1,?,4,16],f32>, !torch.list<int> -> !torch.vtensor<[1,4,?,16],f32>
  return %3 : !torch.vtensor<[1,4,?,16],f32>
}
