func.func @f(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?,?],f32> {
  %int-10 = torch.constant.int -10
  %0 = torch.prim.ListConstruct %int-10, %int-10 : (!torch.int, !torch.int) -> !torch.list<int>
  %float0 = torch.constant.float 0.000000e+00
  %1 = torch.aten.constant_pad_nd %arg0, %0, %float0 : !torch.vtensor<[2,3],f32>, !torch.list<int>, !torch.float -> !torch.vtensor<[?,?],f32>
  return %1 : !torch.vtensor<[?,?],f32>
}
