



func.func @convolution_backward_3d(%arg0: !torch.vtensor<[1,4,5,5,5],f32>, %arg1: !torch.vtensor<[1,2,5,5,5],f32>, %arg2: !torch.vtensor<[4,2,3,1,3],f32>) -> (!torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>) {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %int4 = torch.constant.int 4
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %1 = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.prim.ListConstruct %int1, %int0, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %4 = torch.prim.ListConstruct %true, %true, %true : (!torch.bool, !torch.bool, !torch.bool) -> !torch.list<bool>
  %r0, %r1, %r2 = torch.aten.convolution_backward %arg0, %arg1, %arg2, %0, %1, %2, %1, %false, %3, %int1, %4 : !torch.vtensor<[1,4,5,5,5],f32>, !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int, !torch.list<bool> -> !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>
  return %r0, %r1, %r2 : !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>
}
