module {
  func.func @forward(%arg0: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %arg0, %c1 : tensor<?x?xf32>
    %dim_0 = tensor.dim %arg0, %c0 : tensor<?x?xf32>
    %0 = arith.maxsi %dim, %c0 : index
    %extracted_slice = tensor.extract_slice %arg0[0, 0] [%dim_0, %0] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
    return %extracted_slice : tensor<?x?xf32>
  }
}

