#loc2 = loc("input.mlir":1:18)
#loc3 = loc("input.mlir":1:52)
module {
  func.func @xlogy(%arg0: !torch.vtensor<[?,?],f32> loc("input.mlir":1:18), %arg1: !torch.vtensor<[?,?],f32> loc("input.mlir":1:52)) {
    %0 = torch.aten.xlogy.Tensor %arg0, %arg1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor loc(#loc4)
    return loc(#loc5)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":1:1)
#loc4 = loc("input.mlir":2:8)
#loc5 = loc("input.mlir":3:3)
