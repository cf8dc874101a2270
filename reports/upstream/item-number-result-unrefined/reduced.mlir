#loc2 = loc("input.mlir":5:33)
module {
  func.func @item_number_returned(%arg0: !torch.vtensor<[],si64> loc("input.mlir":5:33)) {
    %0 = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.number loc(#loc3)
    return loc(#loc4)
  } loc(#loc1)
} loc(#loc)
#loc = loc("input.mlir":0:0)
#loc1 = loc("input.mlir":5:1)
#loc3 = loc("input.mlir":6:8)
#loc4 = loc("input.mlir":7:3)
