#map = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
#map1 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4, d1)>
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
module {
  func.func @main_kernel(%arg0: tensor<1x8x1x1xf32>, %arg1: tensor<1x1xf32>, %arg2: tensor<8x3xf32>) -> tensor<1x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x3xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x3xf32>) -> tensor<1x3xf32>
    %expanded = tensor.expand_shape %arg2 [[0, 1, 2], [3]] output_shape [8, 1, 1, 3] : tensor<8x3xf32> into tensor<8x1x1x3xf32>
    %2:2 = linalg.generic {indexing_maps = [#map, #map1, #map2, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1, %expanded : tensor<1x1xf32>, tensor<8x1x1x3xf32>) outs(%arg0, %1 : tensor<1x8x1x1xf32>, tensor<1x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32, %out_1: f32):
      %3 = arith.divf %out, %in : f32
      %4 = arith.mulf %3, %in_0 : f32
      %5 = arith.addf %out_1, %4 : f32
      linalg.yield %3, %5 : f32, f32
    } -> (tensor<1x8x1x1xf32>, tensor<1x3xf32>)
    return %2#1 : tensor<1x3xf32>
  }
}

