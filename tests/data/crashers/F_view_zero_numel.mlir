func.func @f(%arg0: !torch.vtensor<[0,4],f32>) -> !torch.vtensor<[?,0],f32> {
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int-1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[0,4],f32>, !torch.list<int> -> !torch.vtensor<[?,0],f32>
  return %1 : !torch.vtensor<[?,0],f32>
}
