// Seed idiom 6, tuple-of-views, exported through torch.export and the FX importer (2022 and now:
// README.md here). Functional graphs have no non-value tensors: the idiom lowers to linalg, the
// cache flattened into extra results.

// RUN: %PYTHON -m harness emit seed-tuple-of-views --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.*}}: tensor<2x5x8xf32>) -> (tensor<2x5x8xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>)
// The cache results are the key and value views themselves (each projection's heads split and
// transposed), per layer in order.
// CHECK:         linalg.matmul
// CHECK:         %[[K0:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x2x4xf32>) outs(%{{.*}} : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         linalg.matmul
// CHECK:         %[[V0:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x2x4xf32>) outs(%{{.*}} : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         linalg.matmul
// CHECK:         %[[K1:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x2x4xf32>) outs(%{{.*}} : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
// CHECK:         linalg.matmul
// CHECK:         %[[V1:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x5x2x4xf32>) outs(%{{.*}} : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     torch.
// CHECK:         return %{{.*}}, %[[K0]], %[[V0]], %[[K1]], %[[V1]] : tensor<2x5x8xf32>, tensor<2x2x5x4xf32>,
