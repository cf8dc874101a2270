module {
  func.func @strided_conv_1x1_output_dynamic(%arg0: memref<1x2x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, %arg1: memref<2x2x3x3xf32, strided<[?, ?, ?, ?], offset: ?>>, %arg2: memref<1x2x1x1xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x2x1x1xf32> {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    %collapse_shape = memref.collapse_shape %arg0 [[0, 1], [2], [3]] : memref<1x2x?x?xf32, strided<[?, ?, ?, ?], offset: ?>> into memref<2x?x?xf32, strided<[?, ?, ?], offset: ?>>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x2x1x1xf32>
    memref.copy %arg2, %alloc : memref<1x2x1x1xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<1x2x1x1xf32>
    %collapse_shape_0 = memref.collapse_shape %alloc [[0, 1, 2, 3]] : memref<1x2x1x1xf32> into memref<2xf32>
    %dim = memref.dim %collapse_shape, %c1 : memref<2x?x?xf32, strided<[?, ?, ?], offset: ?>>
    %dim_1 = memref.dim %collapse_shape, %c2 : memref<2x?x?xf32, strided<[?, ?, ?], offset: ?>>
    scf.for %arg3 = %c0 to %c2 step %c1 {
      scf.for %arg4 = %c0 to %c2 step %c1 {
        scf.for %arg5 = %c0 to %dim step %c1 {
          scf.for %arg6 = %c0 to %dim_1 step %c1 {
            %0 = memref.load %collapse_shape[%arg4, %arg5, %arg6] : memref<2x?x?xf32, strided<[?, ?, ?], offset: ?>>
            %1 = memref.load %arg1[%arg3, %arg4, %arg5, %arg6] : memref<2x2x3x3xf32, strided<[?, ?, ?, ?], offset: ?>>
            %2 = memref.load %collapse_shape_0[%arg3] : memref<2xf32>
            %3 = arith.mulf %0, %1 : f32
            %4 = arith.addf %2, %3 : f32
            memref.store %4, %collapse_shape_0[%arg3] : memref<2xf32>
          }
        }
      }
    }
    return %alloc : memref<1x2x1x1xf32>
  }
}

