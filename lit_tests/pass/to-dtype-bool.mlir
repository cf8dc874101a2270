// torch.aten.to.dtype from f32 to bool (i1) through the torch-to-linalg pipeline: the
// `inverted_mask.to(torch.bool)` of OPT's _expand_mask.
//
// 2022 (walkthrough):
//   error: unsupported byte, char or bool type for convertScalarToDtype 'f32'(scalar type) ->
//   'i1'(dtype)
//   error: failed to legalize operation 'torch.aten.to.dtype' that was explicitly marked illegal
// Now: lowers. Each element becomes `x != 0.0` (arith.cmpf une, true for NaN as in PyTorch).

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} | FileCheck %s

// CHECK-LABEL: func.func @f32_to_bool(
// CHECK-SAME:      %[[ARG:.*]]: tensor<1x1x7x7xf32>) -> tensor<1x1x7x7xi1> {
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[INIT:.*]] = tensor.empty() : tensor<1x1x7x7xi1>
// CHECK:         %[[RES:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[ARG]] : tensor<1x1x7x7xf32>) outs(%[[INIT]] : tensor<1x1x7x7xi1>)
// CHECK:           ^bb0(%[[IN:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT:        %[[NE:.*]] = arith.cmpf une, %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:        linalg.yield %[[NE]] : i1
// CHECK:         return %[[RES]] : tensor<1x1x7x7xi1>
func.func @f32_to_bool(%arg0: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],i1> {
  %int11 = torch.constant.int 11
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.to.dtype %arg0, %int11, %false, %false, %none : !torch.vtensor<[1,1,7,7],f32>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,1,7,7],i1>
  return %0 : !torch.vtensor<[1,1,7,7],i1>
}
