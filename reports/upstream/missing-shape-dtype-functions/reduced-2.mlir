#loc2 = loc("<path>/missing-shape-dtype-functions.mlir":7:26)
module {
  func.func @rshift_scalar(%arg0: !torch.vtensor<[?,?],si8> loc("<path>/missing-shape-dtype-functions.mlir":7:26)) {
    %int1 = torch.constant.int 1 loc(#loc3)
    %0 = torch.aten.__rshift__.Scalar %arg0, %int1 : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor loc(#loc4)
    return loc(#loc5)
  } loc(#loc1)
} loc(#loc)
#loc = loc("<path>/missing-shape-dtype-functions.mlir":0:0)
#loc1 = loc("<path>/missing-shape-dtype-functions.mlir":7:1)
#loc3 = loc("<path>/missing-shape-dtype-functions.mlir":8:11)
#loc4 = loc("<path>/missing-shape-dtype-functions.mlir":9:8)
#loc5 = loc("<path>/missing-shape-dtype-functions.mlir":10:3)
