#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
#map6 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4, d1)>
#map7 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#map8 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
module {
  func.func @forward(%arg0: tensor<1x8x7x7xf32>, %arg1: tensor<8x3xf32>) -> tensor<1x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %cst_0 = arith.constant 4.900000e+01 : f32
    %0 = tensor.empty() : tensor<7x7xi1>
    %1 = tensor.empty() : tensor<1x1xf32>
    %2 = tensor.empty() : tensor<1x8x1x1xf32>
    %3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%2 : tensor<1x8x1x1xf32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<1x8x1x1xf32>
    %padded = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1] {
    ^bb0(%arg2: index, %arg3: index, %arg4: index, %arg5: index):
      tensor.yield %cst : f32
    } : tensor<1x8x7x7xf32> to tensor<1x8x8x8xf32>
    %4:2 = linalg.generic {indexing_maps = [#map1, #map2, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%0 : tensor<7x7xi1>) outs(%3, %1 : tensor<1x8x1x1xf32>, tensor<1x1xf32>) {
    ^bb0(%in: i1, %out: f32, %out_1: f32):
      %8 = linalg.index 1 : index
      %9 = linalg.index 4 : index
      %10 = linalg.index 5 : index
      %extracted = tensor.extract %padded[%c0, %8, %9, %10] : tensor<1x8x8x8xf32>
      %11 = arith.cmpi ult, %9, %c7 : index
      %12 = arith.select %11, %extracted, %cst : f32
      %13 = arith.cmpi ult, %10, %c7 : index
      %14 = arith.select %13, %12, %cst : f32
      %15 = arith.addf %14, %out : f32
      linalg.yield %15, %cst_0 : f32, f32
    } -> (tensor<1x8x1x1xf32>, tensor<1x1xf32>)
    %5 = tensor.empty() : tensor<1x3xf32>
    %6 = linalg.generic {indexing_maps = [#map4], iterator_types = ["parallel", "parallel"]} outs(%5 : tensor<1x3xf32>) {
    ^bb0(%out: f32):
      linalg.yield %cst : f32
    } -> tensor<1x3xf32>
    %expanded = tensor.expand_shape %arg1 [[0, 1, 2], [3]] output_shape [8, 1, 1, 3] : tensor<8x3xf32> into tensor<8x1x1x3xf32>
    %7:2 = linalg.generic {indexing_maps = [#map5, #map6, #map7, #map8], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%4#1, %expanded : tensor<1x1xf32>, tensor<8x1x1x3xf32>) outs(%4#0, %6 : tensor<1x8x1x1xf32>, tensor<1x3xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32, %out_2: f32):
      %8 = arith.divf %out, %in : f32
      %9 = arith.mulf %8, %in_1 : f32
      %10 = arith.addf %out_2, %9 : f32
      linalg.yield %8, %10 : f32, f32
    } -> (tensor<1x8x1x1xf32>, tensor<1x3xf32>)
    return %7#1 : tensor<1x3xf32>
  }
}
