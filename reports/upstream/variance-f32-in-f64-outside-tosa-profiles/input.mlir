func.func @variance_f32(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %var, %mean = torch.aten.var_mean.correction %arg0, %dims, %int0, %true : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %var : !torch.vtensor<[4,1],f32>
}
