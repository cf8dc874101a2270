



func.func @reshape_unknown_dtype(%arg0: !torch.vtensor<[12],unk>) -> !torch.vtensor<[12],unk> {
  %int12 = torch.constant.int 12
  %0 = torch.prim.ListConstruct %int12 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.reshape %arg0, %0 : !torch.vtensor<[12],unk>, !torch.list<int> -> !torch.vtensor<[12],unk>
  return %1 : !torch.vtensor<[12],unk>
}
