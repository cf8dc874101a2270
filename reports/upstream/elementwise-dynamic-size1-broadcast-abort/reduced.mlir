#loc2 = loc("<path>/c1.torch.mlir":2:32)
#loc3 = loc("<path>/c1.torch.mlir":2:68)
module {
  func.func @logaddexp_dynamic(%arg0: !torch.vtensor<[?,?,?],f32> loc("<path>/c1.torch.mlir":2:32), %arg1: !torch.vtensor<[?,?,?],f32> loc("<path>/c1.torch.mlir":2:68)) {
    %float1.000000e00 = torch.constant.float 1.000000e+00 loc(#loc4)
    %0 = torch.aten.sub.Tensor %arg0, %arg1, %float1.000000e00 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?],f32> loc(#loc5)
    return loc(#loc6)
  } loc(#loc1)
} loc(#loc)
#loc = loc("<path>/c1.torch.mlir":1:1)
#loc1 = loc("<path>/c1.torch.mlir":2:3)
#loc4 = loc("<path>/c1.torch.mlir":4:25)
#loc5 = loc("<path>/c1.torch.mlir":5:10)
#loc6 = loc("<path>/c1.torch.mlir":15:5)
