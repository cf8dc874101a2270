func.func @f(%arg0: !torch.vtensor<*,f32>) -> !torch.vtensor<[?,3],f32> {
  %int-1 = torch.constant.int -1
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %int-1, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.broadcast_to %arg0, %0 : !torch.vtensor<*,f32>, !torch.list<int> -> !torch.vtensor<[?,3],f32>
  return %1 : !torch.vtensor<[?,3],f32>
}
