// TOSA on to linalg-on-tensors the way torch-mlir's e2e suite checks TOSA's numbers
// (tosa_backends/linalg_on_tensors.py: tosa-to-arith, tosa-to-scf, tosa-optional-decompositions,
// tosa-to-linalg-named, tosa-to-linalg, tosa-to-tensor, tosa-to-arith), run on the wheel's MLIR
// Python bindings: the wheel's torch-mlir-opt does not register MLIR's TOSA conversions (the
// second RUN line expects its refusal). `harness port --target tosa` runs this as its
// tosa-to-linalg stage.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-tosa} | %bindings-opt - %{pipeline:tosa-to-linalg} | FileCheck %s
// RUN: torch-mlir-opt %s %{pipeline:torch-to-tosa} | not torch-mlir-opt %{pipeline:tosa-to-linalg} 2>&1 | FileCheck %s --check-prefix=UNREGISTERED

// Upstream's pass list leaves the reshapes' tosa.const_shape operands dead (nothing erases them
// until the RefBackend's lowering); every op that computes is linalg, tensor or arith.
// CHECK-LABEL: func.func @mm_relu(
// CHECK-NOT:     tosa.{{matmul|clamp|reshape}}
// CHECK:         tensor.expand_shape
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.generic
// CHECK:         arith.maximumf
// CHECK-NOT:     tosa.{{matmul|clamp|reshape}}
// UNREGISTERED: 'tosa-to-arith' does not refer to a registered pass
func.func @mm_relu(%arg0: !torch.vtensor<[4,8],f32>, %arg1: !torch.vtensor<[8,5],f32>) -> !torch.vtensor<[4,5],f32> {
  %0 = torch.aten.mm %arg0, %arg1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8,5],f32> -> !torch.vtensor<[4,5],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  return %1 : !torch.vtensor<[4,5],f32>
}
