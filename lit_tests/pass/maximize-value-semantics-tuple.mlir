// torch-maximize-value-semantics on OPT's attention pattern: view -> transpose -> contiguous ->
// view, where the contiguous result is also put in a torch.prim.TupleConstruct (the
// past_key_value cache HF returns).
//
// 2022 (walkthrough): the pass did not handle a tuple holding the views, so the tensors stayed
// non-value, torch.aten.view reached convert-torch-to-linalg with a !torch.tensor operand and
// ConvertAtenViewOp crashed (SIGSEGV; an assertion in a debug build).
// Now: the same. Without the tuple every tensor becomes a value tensor (@no_tuple); with it the
// pass succeeds silently and changes nothing (@tuple_of_views), and the !torch.tensor views
// then fail in TorchToLinalg: see view-nonvalue-tensor-error.mlir and
// view-nonvalue-unranked-crash.mlir.

// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(torch-maximize-value-semantics))' -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @no_tuple(
// CHECK-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,7,768],f32>) -> !torch.vtensor<[12,7,64],f32> {
// CHECK-NOT:     torch.copy.to_tensor
// CHECK:         %[[VIEW:.*]] = torch.aten.view %[[ARG]], %{{.*}} : !torch.vtensor<[1,7,768],f32>, !torch.list<int> -> !torch.vtensor<[1,7,12,64],f32>
// CHECK:         %[[TR:.*]] = torch.aten.transpose.int %[[VIEW]], {{.*}} -> !torch.vtensor<[1,12,7,64],f32>
// CHECK:         %[[CONT:.*]] = torch.aten.contiguous %[[TR]], {{.*}} -> !torch.vtensor<[1,12,7,64],f32>
// CHECK:         %[[VIEW2:.*]] = torch.aten.view %[[CONT]], {{.*}} -> !torch.vtensor<[12,7,64],f32>
// CHECK-NOT:     torch.copy.to_vtensor
// CHECK:         return %[[VIEW2]] : !torch.vtensor<[12,7,64],f32>
func.func @no_tuple(%arg0: !torch.vtensor<[1,7,768],f32>) -> !torch.vtensor<[12,7,64],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[1,7,768],f32>
  %shape = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %t, %shape : !torch.tensor<[1,7,768],f32>, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
  %tr = torch.aten.transpose.int %v, %int1, %int2 : !torch.tensor<[1,7,12,64],f32>, !torch.int, !torch.int -> !torch.tensor<[1,12,7,64],f32>
  %c = torch.aten.contiguous %tr, %int0 : !torch.tensor<[1,12,7,64],f32>, !torch.int -> !torch.tensor<[1,12,7,64],f32>
  %shape2 = torch.prim.ListConstruct %int12, %int7, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v2 = torch.aten.view %c, %shape2 : !torch.tensor<[1,12,7,64],f32>, !torch.list<int> -> !torch.tensor<[12,7,64],f32>
  %r = torch.copy.to_vtensor %v2 : !torch.vtensor<[12,7,64],f32>
  return %r : !torch.vtensor<[12,7,64],f32>
}

// -----

// CHECK-LABEL: func.func @tuple_of_views(
// CHECK-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,7,768],f32>)
// CHECK:         %[[T:.*]] = torch.copy.to_tensor %[[ARG]] : !torch.tensor<[1,7,768],f32>
// CHECK:         %[[VIEW:.*]] = torch.aten.view %[[T]], %{{.*}} : !torch.tensor<[1,7,768],f32>, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
// CHECK:         %[[TR:.*]] = torch.aten.transpose.int %[[VIEW]], {{.*}} -> !torch.tensor<[1,12,7,64],f32>
// CHECK:         %[[CONT:.*]] = torch.aten.contiguous %[[TR]], {{.*}} -> !torch.tensor<[1,12,7,64],f32>
// CHECK:         %[[VIEW2:.*]] = torch.aten.view %[[CONT]], {{.*}} : !torch.tensor<[1,12,7,64],f32>, !torch.list<int> -> !torch.tensor<[12,7,64],f32>
// CHECK:         %[[R:.*]] = torch.copy.to_vtensor %[[VIEW2]] : !torch.vtensor<[12,7,64],f32>
// CHECK:         %[[KV:.*]] = torch.prim.TupleConstruct %[[CONT]], %[[CONT]] : !torch.tensor<[1,12,7,64],f32>, !torch.tensor<[1,12,7,64],f32> -> !torch.tuple<tensor<[1,12,7,64],f32>, tensor<[1,12,7,64],f32>>
// CHECK:         return %[[R]], %[[KV]]
func.func @tuple_of_views(%arg0: !torch.vtensor<[1,7,768],f32>) -> (!torch.vtensor<[12,7,64],f32>, !torch.tuple<tensor<[1,12,7,64],f32>, tensor<[1,12,7,64],f32>>) {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %t = torch.copy.to_tensor %arg0 : !torch.tensor<[1,7,768],f32>
  %shape = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v = torch.aten.view %t, %shape : !torch.tensor<[1,7,768],f32>, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
  %tr = torch.aten.transpose.int %v, %int1, %int2 : !torch.tensor<[1,7,12,64],f32>, !torch.int, !torch.int -> !torch.tensor<[1,12,7,64],f32>
  %c = torch.aten.contiguous %tr, %int0 : !torch.tensor<[1,12,7,64],f32>, !torch.int -> !torch.tensor<[1,12,7,64],f32>
  %shape2 = torch.prim.ListConstruct %int12, %int7, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %v2 = torch.aten.view %c, %shape2 : !torch.tensor<[1,12,7,64],f32>, !torch.list<int> -> !torch.tensor<[12,7,64],f32>
  %r = torch.copy.to_vtensor %v2 : !torch.vtensor<[12,7,64],f32>
  %kv = torch.prim.TupleConstruct %c, %c : !torch.tensor<[1,12,7,64],f32>, !torch.tensor<[1,12,7,64],f32> -> !torch.tuple<tensor<[1,12,7,64],f32>, tensor<[1,12,7,64],f32>>
  return %r, %kv : !torch.vtensor<[12,7,64],f32>, !torch.tuple<tensor<[1,12,7,64],f32>, tensor<[1,12,7,64],f32>>
}
