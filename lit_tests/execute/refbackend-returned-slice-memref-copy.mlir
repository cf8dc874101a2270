// A function that returns a slice of its argument (`x[:, :]` with dynamic sizes, which no
// folder removes) bufferizes to a copy out of a strided memref. The RefBackend's own
// linalg-to-LLVM pipeline (refback-munge-memref-copy runs before that copy exists) lowers it to a
// call to `memrefCopy`, a function of MLIR's C runner utilities that the RefBackend's
// ExecutionEngine does not load: the module compiles and fails at run time with "Symbols not
// found: [ memrefCopy ]".
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// SliceWholeTensorModule_basic and SplitWithSizes_Module_basic. The FX path passes both: export
// gives the slice static sizes, and it folds away. The linalg is valid; upstream fix: turn the
// copy into a linalg.generic after bufferization, or load the runner utilities.
//
// Now: the lowered module declares and calls memrefCopy. When upstream fixes the pipeline, the
// CHECKs fail: then check that no external call is left.

// RUN: %bindings-opt %s %{pipeline:linalg-to-llvm} | FileCheck %s

// CHECK: llvm.func @memrefCopy(
// CHECK-LABEL: llvm.func @forward(
// CHECK: llvm.call @memrefCopy(
func.func @forward(%arg0: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?x?xf32>
  %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?xf32>
  %0 = arith.maxsi %dim, %c0 : index
  %1 = arith.maxsi %dim_0, %c0 : index
  %slice = tensor.extract_slice %arg0[0, 0] [%0, %1] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  return %slice : tensor<?x?xf32>
}
