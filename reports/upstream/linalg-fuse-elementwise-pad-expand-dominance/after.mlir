module {
  func.func @pad_then_expand(%arg0: tensor<?x?x?x?xf32>) -> tensor<?x4x?x?x?xf32> {
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 0.000000e+00 : f32
    %c3 = arith.constant 3 : index
    %c2 = arith.constant 2 : index
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x?x?xf32>
    %dim_0 = tensor.dim %arg0, %c2 : tensor<?x?x?x?xf32>
    %dim_1 = tensor.dim %arg0, %c3 : tensor<?x?x?x?xf32>
    %expanded = tensor.expand_shape %arg0 [[0], [1, 2], [3], [4]] output_shape [%dim, 4, %0, %dim_0, %dim_1] : tensor<?x?x?x?xf32> into tensor<?x4x?x?x?xf32>
    %dim_2 = tensor.dim %arg0, %c1 : tensor<?x?x?x?xf32>
    %0 = arith.divsi %dim_2, %c4 : index
    %padded = tensor.pad %expanded low[0, 0, 0, 2, 2] high[0, 0, 0, 2, 2] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index, %arg5: index):
      tensor.yield %cst : f32
    } : tensor<?x4x?x?x?xf32> to tensor<?x4x?x?x?xf32>
    return %padded : tensor<?x4x?x?x?xf32>
  }
}

