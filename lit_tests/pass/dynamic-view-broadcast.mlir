// What `harness port --dynamic` meets on the FX path (tests/port/test_dynamic_shapes.py's own
// modules, their IR at the torch backend contract as torch.export and fx-to-torch wrote it):
// - x.view(x.shape[0], -1) with a dynamic batch: the view becomes a tensor.reshape by a shape
//   computed at run time (tensor.dim, a cf.assert on the inferred -1), the result stays
//   tensor<?x12xf32>; no collapse_shape, since the reshape's input size is not static.
// - a [1,?,4] * [1,?,1] broadcast on a dynamic seq: the two ? sizes are checked equal at run
//   time (cf.assert "mismatched size for broadcast"), the size-1 axis is broadcast statically.
//
// Not in the 2022 walkthrough (every port there was static). Now: both lower, sizes kept ?.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dynamic_view(
// CHECK-SAME:      %[[ARG:.*]]: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
// CHECK:         tensor.dim %[[ARG]], %{{.*}} : tensor<?x3x4xf32>
// CHECK:         cf.assert %{{.*}}, "must have at most one inferred (negative) dimension"
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi64>
// CHECK:         %[[VIEW:.*]] = tensor.reshape %[[ARG]](%[[SHAPE]]) : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[VIEW]] : tensor<?x12xf32>)
// CHECK:         return %{{.*}} : tensor<?x12xf32>
func.func @dynamic_view(%arg0: !torch.vtensor<[?,3,4],f32>) -> !torch.vtensor<[?,12],f32> {
  %float2 = torch.constant.float 2.000000e+00
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %0 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[?,3,4],f32>, !torch.int -> !torch.int
  %1 = torch.prim.ListConstruct %0, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.aten.view %arg0, %1 : !torch.vtensor<[?,3,4],f32>, !torch.list<int> -> !torch.vtensor<[?,12],f32>
  %3 = torch.aten.mul.Scalar %2, %float2 : !torch.vtensor<[?,12],f32>, !torch.float -> !torch.vtensor<[?,12],f32>
  return %3 : !torch.vtensor<[?,12],f32>
}

// -----

// CHECK-LABEL: func.func @dynamic_broadcast(
// CHECK-SAME:      %[[X:.*]]: tensor<1x?x4xf32>,
// CHECK-SAME:      %[[M:.*]]: tensor<1x?xf32>) -> tensor<1x?x4xf32> {
// CHECK:         %[[MDIM:.*]] = tensor.dim %[[M]], %{{.*}} : tensor<1x?xf32>
// CHECK:         %[[M3:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2]] output_shape [1, %[[MDIM]], 1] : tensor<1x?xf32> into tensor<1x?x1xf32>
// CHECK:         %[[XDIM:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<1x?x4xf32>
// CHECK:         %[[SAME:.*]] = arith.cmpi eq, %[[XDIM]], %[[MDIM]] : index
// CHECK:         cf.assert %[[SAME]], "mismatched size for broadcast"
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[M3]] : tensor<1x?x4xf32>, tensor<1x?x1xf32>)
// CHECK:         return %{{.*}} : tensor<1x?x4xf32>
func.func @dynamic_broadcast(%arg0: !torch.vtensor<[1,?,4],f32>, %arg1: !torch.vtensor<[1,?],f32>) -> !torch.vtensor<[1,?,4],f32> {
  %int-1 = torch.constant.int -1
  %0 = torch.aten.unsqueeze %arg1, %int-1 : !torch.vtensor<[1,?],f32>, !torch.int -> !torch.vtensor<[1,?,1],f32>
  %1 = torch.aten.mul.Tensor %arg0, %0 : !torch.vtensor<[1,?,4],f32>, !torch.vtensor<[1,?,1],f32> -> !torch.vtensor<[1,?,4],f32>
  return %1 : !torch.vtensor<[1,?,4],f32>
}
