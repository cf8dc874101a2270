#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2)>
module attributes {torch.debug_module_name = "gpt2"} {
  func.func @forward(%arg0: tensor<64xf32>, %arg1: tensor<?x?x?xf32>, %arg2: tensor<?x?x64xf32>) -> tensor<?x?xf32> {
    %c3_i64 = arith.constant 3 : i64
    %c64_i64 = arith.constant 64 : i64
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c63_i64 = arith.constant 63 : i64
    %dim = tensor.dim %arg2, %c0 : tensor<?x?x64xf32>
    %0 = tensor.empty(%dim) : tensor<?x1x64xf32>
    %cast = tensor.cast %arg2 : tensor<?x?x64xf32> to tensor<?x1x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%cast, %arg0 : tensor<?x1x64xf32>, tensor<64xf32>) outs(%0 : tensor<?x1x64xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %6 = arith.addf %in, %in_2 : f32
      linalg.yield %6 : f32
    } -> tensor<?x1x64xf32>
    %collapsed = tensor.collapse_shape %1 [[0], [1, 2]] : tensor<?x1x64xf32> into tensor<?x64xf32>
    %cast_0 = tensor.cast %collapsed : tensor<?x64xf32> to tensor<?x?xf32>
    %dim_1 = tensor.dim %arg1, %c2 : tensor<?x?x?xf32>
    %2 = arith.index_cast %dim_1 : index to i64
    %3 = arith.addi %2, %c63_i64 : i64
    %4 = arith.floordivsi %3, %c64_i64 : i64
    %5 = arith.cmpi eq, %4, %c3_i64 : i64
    cf.assert %5, "numResults should equal to floordiv(totalSize + splitSize - 1, splitSize)"
    return %cast_0 : tensor<?x?xf32>
  }
}

