// %{pipeline:NAME} is the -pass-pipeline option that harness.compiler.pipelines renders from
// pipelines/pipelines.toml, and each one names a pipeline the binary has.

// RUN: echo %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=TEXT
// TEXT: -pass-pipeline=builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | FileCheck %s --check-prefix=TORCH
// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | FileCheck %s --check-prefix=TORCH
// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=BACKEND
// RUN: torch-mlir-opt %s %{pipeline:torch-to-tosa} | FileCheck %s --check-prefix=BACKEND
// RUN: torch-mlir-opt %s %{pipeline:torch-to-stablehlo} | FileCheck %s --check-prefix=BACKEND

// TORCH-LABEL: func.func @identity(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
// TORCH:         return %[[ARG]] : !torch.vtensor<[2],f32>

// BACKEND-LABEL: func.func @identity(
// BACKEND-SAME:      %[[ARG:.*]]: tensor<2xf32>) -> tensor<2xf32> {
// BACKEND:         return %[[ARG]] : tensor<2xf32>
func.func @identity(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  return %arg0 : !torch.vtensor<[2],f32>
}
