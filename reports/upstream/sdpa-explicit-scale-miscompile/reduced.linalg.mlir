module {
  func.func @sdpa_scale_one(%arg0: tensor<1x1x3x4xf32>, %arg1: tensor<1x1x3x4xf32>, %arg2: tensor<1x1x3x4xf32>, %arg3: tensor<1x1x3x3xi1>) -> tensor<1x1x3x4xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<1x1x3x4xf32> into tensor<1x3x4xf32>
    %collapsed_0 = tensor.collapse_shape %arg1 [[0, 1], [2], [3]] : tensor<1x1x3x4xf32> into tensor<1x3x4xf32>
    %collapsed_1 = tensor.collapse_shape %arg2 [[0, 1], [2], [3]] : tensor<1x1x3x4xf32> into tensor<1x3x4xf32>
    %collapsed_2 = tensor.collapse_shape %arg3 [[0, 1], [2], [3]] : tensor<1x1x3x3xi1> into tensor<1x3x3xi1>
    %0 = tensor.empty() : tensor<1x3x4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    %2 = tm_tensor.attention {scale = 1.000000e+00 : f64} ins(%collapsed, %collapsed_0, %collapsed_1, %collapsed_2 : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x3xi1>) outs(%1 : tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    %expanded = tensor.expand_shape %2 [[0, 1], [2], [3]] output_shape [1, 1, 3, 4] : tensor<1x3x4xf32> into tensor<1x1x3x4xf32>
    return %expanded : tensor<1x1x3x4xf32>
  }
}

