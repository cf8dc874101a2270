func.func @f(%arg0: !torch.vtensor<[],f32>) -> !torch.vtensor<[?,?],f32> {
  %0 = torch.prim.ListConstruct %arg0 : (!torch.vtensor<[],f32>) -> !torch.list<vtensor>
  %int7 = torch.constant.int 7
  %1 = torch.aten.cat %0, %int7 : !torch.list<vtensor>, !torch.int -> !torch.vtensor<[?,?],f32>
  return %1 : !torch.vtensor<[?,?],f32>
}
