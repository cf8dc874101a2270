



func.func @loop_carried_unranked(%arg0: !torch.vtensor<[7,9],f32>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %int50 = torch.constant.int 50
  %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[7,9],f32> to !torch.vtensor
  %1 = torch.prim.Loop %int50, %true, init(%0) {
  ^bb0(%arg1: !torch.int, %arg2: !torch.vtensor):
    %2 = torch.aten.add.Scalar %arg2, %arg1, %int1 : !torch.vtensor, !torch.int, !torch.int -> !torch.vtensor
    torch.prim.Loop.condition %true, iter(%2 : !torch.vtensor)
  } : (!torch.int, !torch.bool, !torch.vtensor) -> !torch.vtensor
  return %1 : !torch.vtensor
}

