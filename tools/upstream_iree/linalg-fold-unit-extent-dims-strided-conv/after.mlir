#map = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0)>
module {
  func.func @strided_conv_1x1_output(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<2x2x3x3xf32>, %arg2: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x2x4x4xf32> into tensor<2x4x4xf32>
    %collapsed_0 = tensor.collapse_shape %arg2 [[0, 1, 2, 3]] : tensor<1x2x1x1xf32> into tensor<2xf32>
    %0 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "reduction", "reduction", "reduction"]} ins(%collapsed, %arg1 : tensor<2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%collapsed_0 : tensor<2xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %1 = arith.mulf %in, %in_1 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    } -> tensor<2xf32>
    %expanded = tensor.expand_shape %0 [[0, 1, 2, 3]] output_shape [1, 2, 1, 1] : tensor<2xf32> into tensor<1x2x1x1xf32>
    return %expanded : tensor<1x2x1x1xf32>
  }
}

