#loc2 = loc("input.mlir":1:19)
#loc3 = loc("input.mlir":1:53)
module {
  func.func @int_mm(%arg0: !torch.vtensor<[3,4],si8> loc("input.mlir":1:19), %arg1: !torch.vtensor<[4,3],si8> loc("input.mlir":1:53)) {
    %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],si8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor loc(#loc4)
    return loc(#loc5)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":1:1)
#loc4 = loc("input.mlir":2:8)
#loc5 = loc("input.mlir":3:3)
