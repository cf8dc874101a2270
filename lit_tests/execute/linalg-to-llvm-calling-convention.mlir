// The RefBackend's lowering of linalg-on-tensors to LLVM (pipelines.toml `linalg-to-llvm`, the
// passes of upstream's RefBackend): the calling convention harness/execute/jit.py relies on.
// A public function keeps its name and gets a `_mlir_ciface_` wrapper taking one pointer per
// tensor (an unranked memref descriptor); its results go to an external
// `refbackend_consume_func_return_<TOKENS>`, one token per result: `mr` + element type for a
// tensor (signless: ui8 and si8 are both `mri8`), a 0-d tensor included.
//
// It runs on the wheel's MLIR Python bindings (%bindings-opt): the wheel's torch-mlir-opt
// registers torch-mlir's refback-* and tm-tensor-* passes but none of upstream MLIR's
// bufferization and LLVM-conversion passes (second RUN line).

// RUN: %bindings-opt %s %{pipeline:linalg-to-llvm} | FileCheck %s
// RUN: not torch-mlir-opt %s %{pipeline:linalg-to-llvm} 2>&1 | FileCheck %s --check-prefix=OPT

// OPT: 'linalg-generalize-named-ops' does not refer to a registered pass or pass pipeline

// CHECK-LABEL: llvm.func private @refbackend_consume_func_return_mrf32_mri1_mri64(
// CHECK-SAME:      attributes {llvm.emit_c_interface, sym_visibility = "private"}
// CHECK:       llvm.func @_mlir_ciface_refbackend_consume_func_return_mrf32_mri1_mri64(!llvm.ptr, !llvm.ptr, !llvm.ptr)

// CHECK-LABEL: llvm.func @forward(
// CHECK-SAME:      %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK:         llvm.call @refbackend_consume_func_return_mrf32_mri1_mri64(
// CHECK-LABEL: llvm.func @_mlir_ciface_forward(
// CHECK-SAME:      %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
func.func @forward(%x: tensor<2x3xf32>, %m: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<i64>) {
  %c0 = arith.constant 0 : i64
  %init = tensor.empty() : tensor<i64>
  %zero = linalg.fill ins(%c0 : i64) outs(%init : tensor<i64>) -> tensor<i64>
  %count = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]}
      ins(%m : tensor<2x3xi1>) outs(%zero : tensor<i64>) {
  ^bb0(%in: i1, %acc: i64):
    %one = arith.extui %in : i1 to i64
    %sum = arith.addi %one, %acc : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  return %x, %m, %count : tensor<2x3xf32>, tensor<2x3xi1>, tensor<i64>
}
