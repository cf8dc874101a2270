#loc2 = loc("input.mlir":6:36)
#loc3 = loc("input.mlir":6:72)
module {
  func.func @matmul_3d_dynamic_batch(%arg0: !torch.vtensor<[?,?,?],f32> loc("input.mlir":6:36), %arg1: !torch.vtensor<[?,?,?],f32> loc("input.mlir":6:72)) {
    %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32> loc(#loc4)
    return loc(#loc5)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":6:1)
#loc4 = loc("input.mlir":7:8)
#loc5 = loc("input.mlir":8:3)
