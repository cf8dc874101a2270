#loc2 = loc("<path>/missing-shape-dtype-functions.mlir":14:20)
#loc3 = loc("<path>/missing-shape-dtype-functions.mlir":14:52)
module {
  func.func @complex(%arg0: !torch.vtensor<[?],f32> loc("<path>/missing-shape-dtype-functions.mlir":14:20), %arg1: !torch.vtensor<[?],f32> loc("<path>/missing-shape-dtype-functions.mlir":14:52)) {
    %0 = torch.aten.complex %arg0, %arg1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor loc(#loc4)
    return loc(#loc5)
  } loc(#loc1)
} loc(#loc)
#loc = loc("<path>/missing-shape-dtype-functions.mlir":0:0)
#loc1 = loc("<path>/missing-shape-dtype-functions.mlir":14:1)
#loc4 = loc("<path>/missing-shape-dtype-functions.mlir":15:8)
#loc5 = loc("<path>/missing-shape-dtype-functions.mlir":16:3)
