// The harness's surgically fixed OPT (harness.models.opt_fixed.FixedOPT: OPT's forward with
// static structure: no cache or attention outputs, no size reads, no `.to` round trips, the
// padding/causal mask as a float bias) built from the same tiny OPTModel as opt-tiny-stock.mlir
// (2 layers, hidden 64, 4 heads, ffn 128), traced on batch 1 x 7 tokens: it lowers fully to
// linalg-on-tensors. Per layer: q/k/v/out projections, the two attention batch matmuls and the
// two feed-forward matmuls (8 linalg.batch_matmul), one softmax (one math.exp), two layer norms,
// plus the final layer norm (5 math.rsqrt in all). opt-fixed-125m.mlir: the same at OPT-125m.

// RUN: %PYTHON -m harness emit opt-fixed-tiny --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} -o %t.linalg.mlir
// RUN: FileCheck %s --input-file %t.linalg.mlir
// CHECK-LABEL:   func.func @forward(
// CHECK-SAME:      %[[IDS:.*]]: tensor<1x7xi64>, %[[MASK:.*]]: tensor<1x7xi64>) -> tensor<1x7x64xf32>
// CHECK-COUNT-16:  linalg.batch_matmul
// CHECK-NOT:       linalg.batch_matmul
// CHECK:           return %{{.*}} : tensor<1x7x64xf32>
// CHECK-NOT:       torch.

// RUN: FileCheck %s --check-prefix=SOFTMAX --input-file %t.linalg.mlir
// SOFTMAX-LABEL:   func.func @forward(
// SOFTMAX-COUNT-2:   math.exp
// SOFTMAX-NOT:       math.exp
// RUN: FileCheck %s --check-prefix=NORM --input-file %t.linalg.mlir
// NORM-COUNT-5:      math.rsqrt
// NORM-NOT:          math.rsqrt
