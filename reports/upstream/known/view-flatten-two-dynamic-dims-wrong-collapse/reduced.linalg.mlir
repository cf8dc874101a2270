module {
  func.func @flatten_batch_and_seq_dynamic(%arg0: tensor<?x?x4xf32>) -> tensor<?x4xf32> {
    %cast = tensor.cast %arg0 : tensor<?x?x4xf32> to tensor<?x1x4xf32>
    %collapsed = tensor.collapse_shape %cast [[0], [1, 2]] : tensor<?x1x4xf32> into tensor<?x4xf32>
    return %collapsed : tensor<?x4xf32>
  }
}

