#loc2 = loc("input.mlir":25:34)
#loc7 = loc("input.mlir":31:8)
#loc8 = loc("input.mlir":31:27)
module {
  func.func @loop_carried_unranked(%arg0: !torch.vtensor<[7,9],f32> loc("input.mlir":25:34)) {
    %true = torch.constant.bool true loc(#loc3)
    %int50 = torch.constant.int 50 loc(#loc4)
    %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[7,9],f32> to !torch.vtensor loc(#loc5)
    %1 = torch.prim.Loop %int50, %true, init(%0) {
    ^bb0(%arg1: !torch.int loc("input.mlir":31:8), %arg2: !torch.vtensor loc("input.mlir":31:27)):
      torch.prim.Loop.condition %true, iter(%arg2 : !torch.vtensor) loc(#loc9)
    } : (!torch.int, !torch.bool, !torch.vtensor) -> !torch.vtensor loc(#loc6)
    return loc(#loc10)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":25:1)
#loc3 = loc("input.mlir":27:11)
#loc4 = loc("input.mlir":28:12)
#loc5 = loc("input.mlir":29:8)
#loc6 = loc("input.mlir":30:8)
#loc9 = loc("input.mlir":33:5)
#loc10 = loc("input.mlir":35:3)
