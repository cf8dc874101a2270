// A tensor.expand_shape of a tensor.pad result, whose output_shape uses a value defined after
// the pad (here the per-group channel count, `%c floordiv 4`). linalg-fuse-elementwise-ops,
// the second pass of the RefBackend's lowering to LLVM (pipelines.toml linalg-to-llvm), moves
// the expand_shape above the pad (it reshapes the pad's source, then pads the expanded tensor)
// and builds the new expand_shape where the pad was, still using the later value: the IR it
// leaves fails the verifier ("operand #2 does not dominate this use"). The pattern is MLIR's
// (linalg elementwise fusion's reshape propagation through tensor.pad); the pass is
// torch-mlir's RefBackend pipeline's.
//
// TorchToLinalg lowers a grouped aten.convolution with padding to exactly this: the pad first,
// then the group split of the padded input with the channel count divided by the groups
// computed after it (Inputs/conv2d-groups-dynamic.mlir, the second pair of RUN lines). With
// static sizes the output_shape is all constants, and the moved expand_shape is valid.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// ConvolutionModule2DGroups_basic, ConvolutionModule3DGroupsStrided_basic and
// ConvolutionModule3DGroupsDilated_basic (all padded, all annotated with dynamic sizes) fail the
// RefBackend lowering with this error; ConvolutionModule3DGroups_basic (no padding) passes. The
// importer keeps the annotated dynamic sizes, as upstream's C++ importer did; the FX path
// passes because upstream's FX e2e config exports with the concrete inputs (static sizes).
// Upstream fixes: the pattern inserts the new expand_shape after every value it uses (or
// bails out), or TorchToLinalg computes the group sizes before the pad.
//
// torch-mlir-opt registers none of these MLIR passes; the RUN lines use the harness's
// command line over the wheel's MLIR bindings (harness.execute.bindings_tool), which takes the
// same flags.
// Now: the verifier errors below. When upstream fixes either, `not` fails here.

// RUN: not %PYTHON -m harness.execute.bindings_tool %s -pass-pipeline='builtin.module(func.func(linalg-fuse-elementwise-ops))' -o /dev/null 2>&1 | FileCheck %s
// RUN: not %PYTHON -m harness.execute.bindings_tool %s %{pipeline:linalg-to-llvm} -o /dev/null 2>&1 | FileCheck %s
// RUN: torch-mlir-opt %S/Inputs/conv2d-groups-dynamic.mlir %{pipeline:function-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} -o %t.linalg.mlir
// RUN: not %PYTHON -m harness.execute.bindings_tool %t.linalg.mlir %{pipeline:linalg-to-llvm} -o /dev/null 2>&1 | FileCheck %s --check-prefix=CONV

// CHECK:      error: operand #2 does not dominate this use
// CHECK-NEXT: note: see current operation: {{.*}}"tensor.expand_shape"(%arg0,
// CHECK-NEXT: note: operand defined here (op in the same block)

// CONV:      error: operand #2 does not dominate this use
// CONV-NEXT: note: see current operation: {{.*}}"tensor.expand_shape"(%arg0,

#plus4 = affine_map<()[s0] -> (s0 + 4)>
func.func @pad_then_expand(%arg0: tensor<?x?x?x?xf32>) -> tensor<?x4x?x?x?xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %arg0, %c0 : tensor<?x?x?x?xf32>
  %c = tensor.dim %arg0, %c1 : tensor<?x?x?x?xf32>
  %h = tensor.dim %arg0, %c2 : tensor<?x?x?x?xf32>
  %w = tensor.dim %arg0, %c3 : tensor<?x?x?x?xf32>
  %padded = tensor.pad %arg0 low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %hp = affine.apply #plus4()[%h]
  %wp = affine.apply #plus4()[%w]
  %per_group = arith.divsi %c, %c4 : index
  %expanded = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [%n, 4, %per_group, %hp, %wp] : tensor<?x?x?x?xf32> into tensor<?x4x?x?x?xf32>
  return %expanded : tensor<?x4x?x?x?xf32>
}
