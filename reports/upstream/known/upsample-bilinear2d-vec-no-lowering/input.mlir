


func.func @upsample_bilinear_sizes(%arg0: !torch.vtensor<[1,1,4,5],f32>) -> !torch.vtensor<[1,1,3,5],f32> {
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %0 = torch.prim.ListConstruct %int3, %int5 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.upsample_bilinear2d.vec %arg0, %0, %false, %none : !torch.vtensor<[1,1,4,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1,3,5],f32>
  return %1 : !torch.vtensor<[1,1,3,5],f32>
}
