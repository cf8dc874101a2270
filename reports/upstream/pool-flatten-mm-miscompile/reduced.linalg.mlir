#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
module {
  func.func @forward(%arg0: tensor<1x8x7x7xf32>, %arg1: tensor<8x3xf32>) -> tensor<1x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %cst_0 = arith.constant 4.900000e+01 : f32
    %0 = tensor.empty() : tensor<7x7xi1>
    %1 = tensor.empty() : tensor<1x1xf32>
    %2 = tensor.empty() : tensor<1x8x1x1xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
    %padded = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1] {
    ^bb0(%arg2: index, %arg3: index, %arg4: index, %arg5: index):
      tensor.yield %cst : f32
    } : tensor<1x8x7x7xf32> to tensor<1x8x8x8xf32>
    %4:2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%0 : tensor<7x7xi1>) outs(%3, %1 : tensor<1x8x1x1xf32>, tensor<1x1xf32>) {
    ^bb0(%in: i1, %out: f32, %out_1: f32):
      %9 = linalg.index 1 : index
      %10 = linalg.index 4 : index
      %11 = linalg.index 5 : index
      %extracted = tensor.extract %padded[%c0, %9, %10, %11] : tensor<1x8x8x8xf32>
      %12 = arith.cmpi ult, %10, %c7 : index
      %13 = arith.select %12, %extracted, %cst : f32
      %14 = arith.cmpi ult, %11, %c7 : index
      %15 = arith.select %14, %13, %cst : f32
      %16 = arith.addf %15, %out : f32
      linalg.yield %16, %cst_0 : f32, f32
    } -> (tensor<1x8x1x1xf32>, tensor<1x1xf32>)
    %5 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4#1 : tensor<1x1xf32>) outs(%4#0 : tensor<1x8x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.divf %out, %in : f32
      linalg.yield %9 : f32
    } -> tensor<1x8x1x1xf32>
    %collapsed = tensor.collapse_shape %5 [[0], [1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<1x8xf32>
    %6 = tensor.empty() : tensor<1x3xf32>
    %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<1x3xf32>) -> tensor<1x3xf32>
    %8 = linalg.matmul ins(%collapsed, %arg1 : tensor<1x8xf32>, tensor<8x3xf32>) outs(%7 : tensor<1x3xf32>) -> tensor<1x3xf32>
    return %8 : tensor<1x3xf32>
  }
}

