module {
  func.func @logaddexp_dynamic(%arg0: tensor<?x?x?xf32>, %arg1: tensor<?x?x?xf32>, %arg2: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x?xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x?xf32>
    %dim_1 = tensor.dim %arg0, %c2 : tensor<?x?x?xf32>
    %dim_2 = tensor.dim %arg1, %c0 : tensor<?x?x?xf32>
    %0 = arith.cmpi eq, %dim, %dim_2 : index
    cf.assert %0, "mismatched size for broadcast"
    %dim_3 = tensor.dim %arg1, %c1 : tensor<?x?x?xf32>
    %1 = arith.cmpi eq, %dim_0, %dim_3 : index
    cf.assert %1, "mismatched size for broadcast"
    %dim_4 = tensor.dim %arg1, %c2 : tensor<?x?x?xf32>
    %2 = arith.cmpi eq, %dim_1, %dim_4 : index
    cf.assert %2, "mismatched size for broadcast"
    return %arg2 : tensor<?x?x?xf32>
  }
}

