// The bug of linalg-fold-unit-extent-dims-strided-conv-error.mlir where no verifier sees it, and
// the case it gets right. @dynamic_input: the same stride-2 convolution with the input's spatial
// sizes dynamic. The pass succeeds and indexes the input (d1, d2, d3), bare dims, so the folded
// op takes the kernel loops' range from the input (4 at run time) and reads the 3x3 filter out of
// bounds: IREE computes wrong values for a 4x4 input (the bundle's run_dynamic.py). When the pass
// is fixed the input map is no longer bare, or the input is sliced to 3x3: its CHECKs fail.
// @exact_input: a 3x3 input, which the window covers exactly; the same fold is right there and
// stays right after a fix.

// REQUIRES: iree
// RUN: iree-opt --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,linalg-fold-unit-extent-dims))' %s | FileCheck %s

// CHECK-DAG: #[[$BARE:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-LABEL: func.func @dynamic_input(
// CHECK:   %[[IN:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<1x2x?x?xf32> into tensor<2x?x?xf32>
// CHECK:   linalg.generic {indexing_maps = [#[[$BARE]], {{.+}}ins(%[[IN]], %{{.+}} : tensor<2x?x?xf32>, tensor<2x2x3x3xf32>)
func.func @dynamic_input(%input: tensor<1x2x?x?xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%input, %filter : tensor<1x2x?x?xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}

// CHECK-LABEL: func.func @exact_input(
// CHECK:   linalg.generic {indexing_maps = [#[[$BARE]], {{.+}}ins(%{{.+}}, %{{.+}} : tensor<2x3x3xf32>, tensor<2x2x3x3xf32>)
func.func @exact_input(%input: tensor<1x2x3x3xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%input, %filter : tensor<1x2x3x3xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}
