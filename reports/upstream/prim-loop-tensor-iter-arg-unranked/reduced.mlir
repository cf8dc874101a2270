#loc2 = loc("input.mlir":5:34)
#loc7 = loc("input.mlir":11:8)
#loc8 = loc("input.mlir":11:27)
module {
  func.func @loop_carried_unranked(%arg0: !torch.vtensor<[7,9],f32> loc("input.mlir":5:34)) {
    %true = torch.constant.bool true loc(#loc3)
    %int50 = torch.constant.int 50 loc(#loc4)
    %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[7,9],f32> to !torch.vtensor loc(#loc5)
    %1 = torch.prim.Loop %int50, %true, init(%0) {
    ^bb0(%arg1: !torch.int loc("input.mlir":11:8), %arg2: !torch.vtensor loc("input.mlir":11:27)):
      torch.prim.Loop.condition %true, iter(%arg2 : !torch.vtensor) loc(#loc9)
    } : (!torch.int, !torch.bool, !torch.vtensor) -> !torch.vtensor loc(#loc6)
    return loc(#loc10)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":5:1)
#loc3 = loc("input.mlir":7:11)
#loc4 = loc("input.mlir":8:12)
#loc5 = loc("input.mlir":9:8)
#loc6 = loc("input.mlir":10:8)
#loc9 = loc("input.mlir":13:5)
#loc10 = loc("input.mlir":15:3)
