#map = affine_map<(d0) -> ()>
#map1 = affine_map<(d0) -> (d0)>
module {
  func.func @main(%arg0: tensor<1x4x8xf32>, %arg1: tensor<f32>, %arg2: tensor<?xi64>, %arg3: tensor<?xi64>, %arg4: tensor<?xi64>) -> tensor<1x4x8xf32> {
    %c0_i64 = arith.constant 0 : i64
    %c1_i64 = arith.constant 1 : i64
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %arg2, %c0 : tensor<?xi64>
    %0 = arith.index_cast %dim : index to i64
    %1 = arith.maxsi %0, %c1_i64 : i64
    %dim_0 = tensor.dim %arg3, %c0 : tensor<?xi64>
    %2 = arith.index_cast %dim_0 : index to i64
    %3 = arith.maxsi %2, %1 : i64
    %dim_1 = tensor.dim %arg4, %c0 : tensor<?xi64>
    %4 = arith.index_cast %dim_1 : index to i64
    %5 = arith.maxsi %4, %3 : i64
    %6 = arith.cmpi sge, %5, %c0_i64 : i64
    cf.assert %6, "negative values not allowed in new dimensions"
    %7 = arith.index_cast %5 : i64 to index
    %8 = tensor.empty(%7) : tensor<?xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel"]} ins(%arg1 : tensor<f32>) outs(%8 : tensor<?xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<?xf32>
    cf.assert %6, "unimplemented: dynamic negative broadcast sizes"
    %10 = tensor.empty(%7) : tensor<?xi64>
    %11 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%10 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %15 = linalg.index 0 : index
      %16 = arith.cmpi eq, %dim, %c1 : index
      %17 = arith.select %16, %c0, %15 : index
      %extracted = tensor.extract %arg2[%17] : tensor<?xi64>
      linalg.yield %extracted : i64
    } -> tensor<?xi64>
    cf.assert %6, "unimplemented: dynamic negative broadcast sizes"
    %12 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%10 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %15 = linalg.index 0 : index
      %16 = arith.cmpi eq, %dim_0, %c1 : index
      %17 = arith.select %16, %c0, %15 : index
      %extracted = tensor.extract %arg3[%17] : tensor<?xi64>
      linalg.yield %extracted : i64
    } -> tensor<?xi64>
    cf.assert %6, "unimplemented: dynamic negative broadcast sizes"
    %13 = linalg.generic {indexing_maps = [#map1], iterator_types = ["parallel"]} outs(%10 : tensor<?xi64>) {
    ^bb0(%out: i64):
      %15 = linalg.index 0 : index
      %16 = arith.cmpi eq, %dim_1, %c1 : index
      %17 = arith.select %16, %c0, %15 : index
      %extracted = tensor.extract %arg4[%17] : tensor<?xi64>
      linalg.yield %extracted : i64
    } -> tensor<?xi64>
    %expanded = tensor.expand_shape %11 [[0, 1]] output_shape [%7, 1] : tensor<?xi64> into tensor<?x1xi64>
    %expanded_2 = tensor.expand_shape %12 [[0, 1]] output_shape [%7, 1] : tensor<?xi64> into tensor<?x1xi64>
    %expanded_3 = tensor.expand_shape %13 [[0, 1]] output_shape [%7, 1] : tensor<?xi64> into tensor<?x1xi64>
    %concat = tensor.concat dim(1) %expanded, %expanded_2, %expanded_3 : (tensor<?x1xi64>, tensor<?x1xi64>, tensor<?x1xi64>) -> tensor<?x3xi64>
    %expanded_4 = tensor.expand_shape %9 [[0, 1, 2, 3]] output_shape [%7, 1, 1, 1] : tensor<?xf32> into tensor<?x1x1x1xf32>
    %14 = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(true) ins(%expanded_4, %concat : tensor<?x1x1x1xf32>, tensor<?x3xi64>) outs(%arg0 : tensor<1x4x8xf32>) {
    ^bb0(%arg5: f32, %arg6: f32):
      tm_tensor.yield %arg5 : f32
    } -> tensor<1x4x8xf32>
    return %14 : tensor<1x4x8xf32>
  }
}

