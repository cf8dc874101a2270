// What the harness fix `bitwise-and-or` relies on: aten.bitwise_and.Tensor and
// aten.bitwise_or.Tensor on bool tensors lower through the torch-to-linalg pipeline (arith.andi
// and arith.ori on i1 in a linalg.generic), while aten.__and__.Tensor does not
// (and-tensor-bool-error.mlir). aten.__or__.Tensor lowers too: canonicalize rewrites it to
// bitwise_or first; __and__.Tensor has no such rewrite.
//
// Not in the 2022 walkthrough. Now: all three lower.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @bitwise_and(
// CHECK-SAME:      %[[A:.*]]: tensor<1x7xi1>,
// CHECK-SAME:      %[[B:.*]]: tensor<1x7xi1>) -> tensor<1x7xi1> {
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<1x7xi1>, tensor<1x7xi1>)
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i1
func.func @bitwise_and(%arg0: !torch.vtensor<[1,7],i1>, %arg1: !torch.vtensor<[1,7],i1>) -> !torch.vtensor<[1,7],i1> {
  %0 = torch.aten.bitwise_and.Tensor %arg0, %arg1 : !torch.vtensor<[1,7],i1>, !torch.vtensor<[1,7],i1> -> !torch.vtensor<[1,7],i1>
  return %0 : !torch.vtensor<[1,7],i1>
}

// -----

// OPT's and_mask with bitwise_and: the scalar literal broadcasts.
// CHECK-LABEL: func.func @bitwise_and_mask(
// CHECK-SAME:      %[[M:.*]]: tensor<1x1x7x7xi1>) -> tensor<1x1x7x7xi1> {
// CHECK:         arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NOT:     torch.
func.func @bitwise_and_mask(%arg0: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,1,7,7],i1> {
  %true = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1>
  %0 = torch.aten.bitwise_and.Tensor %true, %arg0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1> -> !torch.vtensor<[1,1,7,7],i1>
  return %0 : !torch.vtensor<[1,1,7,7],i1>
}

// -----

// CHECK-LABEL: func.func @or_operator(
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
func.func @or_operator(%arg0: !torch.vtensor<[1,7],i1>, %arg1: !torch.vtensor<[1,7],i1>) -> !torch.vtensor<[1,7],i1> {
  %0 = torch.aten.__or__.Tensor %arg0, %arg1 : !torch.vtensor<[1,7],i1>, !torch.vtensor<[1,7],i1> -> !torch.vtensor<[1,7],i1>
  return %0 : !torch.vtensor<[1,7],i1>
}
