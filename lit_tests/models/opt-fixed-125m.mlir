// FixedOPT (harness.models.opt_fixed) built from the OPT-125m-sized OPTModel of
// opt-125m-stock.mlir, traced on batch 1 x 7 tokens: it lowers fully to linalg-on-tensors,
// `(tensor<1x7xi64>, tensor<1x7xi64>) -> tensor<1x7x768xf32>`. 12 layers of 8 batch matmuls
// (q/k/v/out projections, two attention products, two feed-forward), 12 softmaxes (math.exp),
// 2 layer norms per layer plus the final one (25 math.rsqrt); the embedding tables stay as
// (elided, named) constants of their full size.

// RUN: %PYTHON -m harness emit opt-fixed-125m --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} -o %t.linalg.mlir
// RUN: FileCheck %s --input-file %t.linalg.mlir
// CHECK-LABEL:   func.func @forward(
// CHECK-SAME:      %{{.*}}: tensor<1x7xi64>, %{{.*}}: tensor<1x7xi64>) -> tensor<1x7x768xf32>
// CHECK-DAG:       arith.constant dense_resource<token_weight> : tensor<50272x768xf32>
// CHECK-DAG:       arith.constant dense_resource<position_weight> : tensor<2050x768xf32>
// CHECK-COUNT-96:  linalg.batch_matmul
// CHECK-NOT:       linalg.batch_matmul
// CHECK:           return %{{.*}} : tensor<1x7x768xf32>
// CHECK-NOT:       torch.
// RUN: FileCheck %s --check-prefix=SOFTMAX --input-file %t.linalg.mlir
// SOFTMAX-COUNT-12: math.exp
// SOFTMAX-NOT:      math.exp
// RUN: FileCheck %s --check-prefix=NORM --input-file %t.linalg.mlir
// NORM-COUNT-25:    math.rsqrt
// NORM-NOT:         math.rsqrt
