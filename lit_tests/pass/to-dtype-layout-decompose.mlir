// torch.aten.to.dtype_layout on a value tensor, lowered the way the harness runs a function:
// %{pipeline:function-to-torch} to the torch backend contract, then %{pipeline:torch-to-linalg}.
//
// 2022 (walkthrough): "failed to legalize operation 'torch.aten.to.dtype_layout' that was
// explicitly marked illegal" on the way to the backend contract.
// Now: the torch-level pipeline folds the no-op conversion away and decomposes a real one into
// torch.aten.to.dtype, which TorchToLinalg lowers to an elementwise linalg.generic. Straight to
// %{pipeline:torch-to-linalg}, skipping the torch-level pipeline, it still fails: see
// to-dtype-layout-error.mlir.

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | FileCheck %s --check-prefix=TORCH
// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG

// TORCH-LABEL: func.func @same_dtype(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f32> {
// TORCH-NEXT:    return %[[ARG]] : !torch.vtensor<[1,1,7,7],f32>

// LINALG-LABEL: func.func @same_dtype(
// LINALG-SAME:      %[[ARG:.*]]: tensor<1x1x7x7xf32>) -> tensor<1x1x7x7xf32> {
// LINALG-NEXT:    return %[[ARG]] : tensor<1x1x7x7xf32>
func.func @same_dtype(%arg0: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f32> {
  %int6 = torch.constant.int 6
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.to.dtype_layout %arg0, %int6, %int0, %cpu, %none, %false, %false, %none : !torch.vtensor<[1,1,7,7],f32>, !torch.int, !torch.int, !torch.Device, !torch.none, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,1,7,7],f32>
  return %0 : !torch.vtensor<[1,1,7,7],f32>
}

// TORCH-LABEL: func.func @f32_to_f64(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f64> {
// TORCH:         %[[F64:.*]] = torch.constant.int 7
// TORCH:         %[[TO:.*]] = torch.aten.to.dtype %[[ARG]], %[[F64]],
// TORCH-SAME:      -> !torch.vtensor<[1,1,7,7],f64>
// TORCH:         return %[[TO]]

// LINALG-LABEL: func.func @f32_to_f64(
// LINALG-SAME:      %[[ARG:.*]]: tensor<1x1x7x7xf32>) -> tensor<1x1x7x7xf64> {
// LINALG:         %[[INIT:.*]] = tensor.empty() : tensor<1x1x7x7xf64>
// LINALG:         %[[RES:.*]] = linalg.generic
// LINALG-SAME:      ins(%[[ARG]] : tensor<1x1x7x7xf32>) outs(%[[INIT]] : tensor<1x1x7x7xf64>)
// LINALG:           ^bb0(%[[IN:.*]]: f32, %{{.*}}: f64):
// LINALG-NEXT:        %[[EXT:.*]] = arith.extf %[[IN]] : f32 to f64
// LINALG-NEXT:        linalg.yield %[[EXT]] : f64
// LINALG:         return %[[RES]] : tensor<1x1x7x7xf64>
func.func @f32_to_f64(%arg0: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f64> {
  %int7 = torch.constant.int 7
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.to.dtype_layout %arg0, %int7, %int0, %cpu, %none, %false, %false, %none : !torch.vtensor<[1,1,7,7],f32>, !torch.int, !torch.int, !torch.Device, !torch.none, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,1,7,7],f64>
  return %0 : !torch.vtensor<[1,1,7,7],f64>
}
