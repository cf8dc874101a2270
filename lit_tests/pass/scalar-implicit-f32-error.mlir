// torch.aten.ScalarImplicit of a non-constant 0-d f32 tensor, through the torch-to-linalg
// pipeline: what `torch.full(size, t)` with a traced 0-d tensor `t` (the walkthrough's
// `torch.tensor(float("-inf"))`, when it is not a constant) looks like at the backend contract.
//
// 2022: not reached; the walkthrough failed earlier, on the !torch.number operand of the shape
// function (reify-shape-number-operand.mlir).
// Now: %{pipeline:function-to-torch} refines the Scalar to !torch.float, but TorchToLinalg
// lowers ScalarImplicit to a plain tensor.extract, whose f32 then meets the f64 that
// !torch.float stands for, and the verifier rejects the cast it builds:
//   error: 'torch_c.to_f64' op operand #0 must be Torch FloatType, but got 'f32'
// torch.aten.item on the same tensor lowers (tensor.extract + arith.extf): @item_f32.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file -verify-diagnostics | FileCheck %s

// From the importer's form (Inputs/full-of-f32-tensor.mlir), through both pipelines:
// RUN: torch-mlir-opt %S/Inputs/full-of-f32-tensor.mlir %{pipeline:function-to-torch} | FileCheck %s --check-prefix=FULL-TORCH
// RUN: torch-mlir-opt %S/Inputs/full-of-f32-tensor.mlir %{pipeline:function-to-torch} | not torch-mlir-opt %{pipeline:torch-to-linalg} 2>&1 | FileCheck %s --check-prefix=FULL-LINALG

// FULL-TORCH-LABEL: func.func @full_of_f32_tensor(
// FULL-TORCH-SAME:      %{{.*}}: !torch.vtensor<[1,?],si64>, %[[FILL_T:.*]]: !torch.vtensor<[],f32>) -> !torch.vtensor<[?,?],f32> {
// FULL-TORCH:         %[[FILL:.*]] = torch.aten.ScalarImplicit %[[FILL_T]] : !torch.vtensor<[],f32> -> !torch.float
// FULL-TORCH:         torch.prim.NumToTensor.Scalar %[[FILL]] : !torch.float -> !torch.vtensor<[],f64>
// FULL-TORCH:         torch.aten.broadcast_to

// FULL-LINALG: error: 'torch_c.to_f64' op operand #0 must be Torch FloatType, but got 'f32'
// FULL-LINALG-NEXT: torch.prim.NumToTensor.Scalar

func.func @scalar_implicit_f32(%arg0: !torch.vtensor<[],f32>) -> !torch.vtensor<[],f64> {
  %0 = torch.aten.ScalarImplicit %arg0 : !torch.vtensor<[],f32> -> !torch.float
  // expected-error @+1 {{'torch_c.to_f64' op operand #0 must be Torch FloatType, but got 'f32'}}
  %1 = torch.prim.NumToTensor.Scalar %0 : !torch.float -> !torch.vtensor<[],f64>
  return %1 : !torch.vtensor<[],f64>
}

// -----

// CHECK-LABEL: func.func @item_f32(
// CHECK-SAME:      %[[ARG:.*]]: tensor<f32>) -> tensor<f64> {
// CHECK:         %[[X:.*]] = tensor.extract %[[ARG]][] : tensor<f32>
// CHECK:         %[[X64:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK:         linalg.fill ins(%[[X64]] : f64)
func.func @item_f32(%arg0: !torch.vtensor<[],f32>) -> !torch.vtensor<[],f64> {
  %0 = torch.aten.item %arg0 : !torch.vtensor<[],f32> -> !torch.float
  %1 = torch.prim.NumToTensor.Scalar %0 : !torch.float -> !torch.vtensor<[],f64>
  return %1 : !torch.vtensor<[],f64>
}
