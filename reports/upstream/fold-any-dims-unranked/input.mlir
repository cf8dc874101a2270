



func.func @any_dims_unranked(%arg0: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor {
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.any.dims %arg0, %0, %false : !torch.vtensor<[?,?,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor
  return %1 : !torch.vtensor
}
