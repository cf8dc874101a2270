func.func @f(%a0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?],f32> {
  %li0 = torch.constant.int 7
  %l = torch.prim.ListConstruct %li0 : (!torch.int) -> !torch.list<int>
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %r = torch.aten.var.dim %a0, %l, %true, %false : !torch.vtensor<[2,3],f32>, !torch.list<int>, !torch.bool, !torch.bool -> !torch.vtensor<[?],f32>
  return %r : !torch.vtensor<[?],f32>
}
