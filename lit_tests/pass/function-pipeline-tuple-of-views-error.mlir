// The attention pattern of maximize-value-semantics-tuple.mlir in the form the TorchScript
// importer emits (unknown !torch.tensor everywhere, argument types as torch.type_bound, the
// present key/value returned in a nested tuple), through %{pipeline:function-to-torch}.
//
// 2022 (walkthrough): the TorchScript pipeline accepted such IR and left non-value tensors in
// it; the crash came later, in TorchToLinalg (SIGSEGV in ConvertAtenViewOp).
// Now: torch-lower-to-backend-contract rejects it, so nothing reaches TorchToLinalg. Returning
// the tuple keeps the views non-value (without it, @no_returned_tuple, all becomes value
// tensors), shapes are never refined, and the error blames the function argument and a
// missing transfer function instead of the tuple:
//   error: unsupported by backend contract: tensor with unknown rank
//   note: this is likely due to a missing transfer function in abstract_interp_lib_gen.py

// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} -split-input-file -o /dev/null 2>&1 | FileCheck %s
// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} -split-input-file 2>/dev/null | FileCheck %s --check-prefix=CONTROL

// The same views with only the attention output returned: every tensor becomes a value tensor
// and the function meets the backend contract.
// CONTROL-LABEL: func.func @no_returned_tuple(
// CONTROL-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,7,768],f32>) -> !torch.vtensor<[12,7,64],f32> {
// CONTROL:         %[[VIEW:.*]] = torch.aten.view %[[ARG]], {{.*}} -> !torch.vtensor<[1,7,12,64],f32>
// CONTROL:         %[[VIEW2:.*]] = torch.aten.view {{.*}} -> !torch.vtensor<[12,7,64],f32>
// CONTROL:         return %[[VIEW2]] : !torch.vtensor<[12,7,64],f32>
// CONTROL-NOT:   func.func @forward
func.func @no_returned_tuple(%arg0: !torch.tensor {torch.type_bound = !torch.vtensor<[1,7,768],f32>}) -> !torch.tensor {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %shape = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %arg0, %shape : !torch.tensor, !torch.list<int> -> !torch.tensor
  %tr = torch.aten.transpose.int %v, %int1, %int2 : !torch.tensor, !torch.int, !torch.int -> !torch.tensor
  %c = torch.aten.contiguous %tr, %int0 : !torch.tensor, !torch.int -> !torch.tensor
  %shape2 = torch.prim.ListConstruct %int12, %int7, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v2 = torch.aten.view %c, %shape2 : !torch.tensor, !torch.list<int> -> !torch.tensor
  return %v2 : !torch.tensor
}

// -----

// The importer's form with the present key/value returned.
// CHECK: :[[# @LINE + 3]]:20: error: unsupported by backend contract: tensor with unknown rank
// CHECK: note: see current operation: {{.*}}torch.tensor_static_info_cast
// CHECK: note: this is likely due to a missing transfer function in abstract_interp_lib_gen.py
func.func @forward(%arg0: !torch.tensor {torch.type_bound = !torch.vtensor<[1,7,768],f32>}) -> !torch.tuple<tensor, tuple<tensor, tensor>> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %shape = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %arg0, %shape : !torch.tensor, !torch.list<int> -> !torch.tensor
  %tr = torch.aten.transpose.int %v, %int1, %int2 : !torch.tensor, !torch.int, !torch.int -> !torch.tensor
  %c = torch.aten.contiguous %tr, %int0 : !torch.tensor, !torch.int -> !torch.tensor
  %shape2 = torch.prim.ListConstruct %int12, %int7, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v2 = torch.aten.view %c, %shape2 : !torch.tensor, !torch.list<int> -> !torch.tensor
  %kv = torch.prim.TupleConstruct %c, %c : !torch.tensor, !torch.tensor -> !torch.tuple<tensor, tensor>
  %out = torch.prim.TupleConstruct %v2, %kv : !torch.tensor, !torch.tuple<tensor, tensor> -> !torch.tuple<tensor, tuple<tensor, tensor>>
  return %out : !torch.tuple<tensor, tuple<tensor, tensor>>
}
