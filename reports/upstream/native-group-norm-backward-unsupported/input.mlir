



func.func @native_group_norm_backward(%arg0: !torch.vtensor<[2,6,2,2],f32>, %arg1: !torch.vtensor<[2,6,2,2],f32>, %arg2: !torch.vtensor<[2,3],f32>, %arg3: !torch.vtensor<[2,3],f32>, %arg4: !torch.vtensor<[6],f32>) -> (!torch.vtensor, !torch.vtensor, !torch.vtensor) {
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %int4 = torch.constant.int 4
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %true, %true, %true : (!torch.bool, !torch.bool, !torch.bool) -> !torch.list<bool>
  %result0, %result1, %result2 = torch.aten.native_group_norm_backward %arg0, %arg1, %arg2, %arg3, %arg4, %int2, %int6, %int4, %int3, %0 : !torch.vtensor<[2,6,2,2],f32>, !torch.vtensor<[2,6,2,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[6],f32>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.list<bool> -> !torch.vtensor, !torch.vtensor, !torch.vtensor
  return %result0, %result1, %result2 : !torch.vtensor, !torch.vtensor, !torch.vtensor
}
