#loc2 = loc("input.mlir":5:30)
#loc3 = loc("input.mlir":5:64)
module {
  func.func @broadcast_tensors(%arg0: !torch.vtensor<[?,?],f32> loc("input.mlir":5:30), %arg1: !torch.vtensor<[?,?],f32> loc("input.mlir":5:64)) {
    %0 = torch.prim.ListConstruct %arg0, %arg1 : (!torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32>) -> !torch.list<vtensor> loc(#loc4)
    %1 = torch.aten.broadcast_tensors %0 : !torch.list<vtensor> -> !torch.list<vtensor> loc(#loc5)
    return loc(#loc6)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":5:1)
#loc4 = loc("input.mlir":6:8)
#loc5 = loc("input.mlir":7:8)
#loc6 = loc("input.mlir":9:3)
