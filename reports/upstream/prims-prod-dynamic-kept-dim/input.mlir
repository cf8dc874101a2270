func.func @prod_dynamic_kept_dim(%arg0: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.prims.prod %arg0, %0, %none : !torch.vtensor<[?,?,?],f32>, !torch.list<int>, !torch.none -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}
