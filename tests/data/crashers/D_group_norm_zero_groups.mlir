func.func @f(%arg0: !torch.vtensor<[2,4,3],f32>) -> !torch.vtensor<[2,4,3],f32> {
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %eps = torch.constant.float 1.000000e-05
  %false = torch.constant.bool false
  %0 = torch.aten.group_norm %arg0, %int0, %none, %none, %eps, %false : !torch.vtensor<[2,4,3],f32>, !torch.int, !torch.none, !torch.none, !torch.float, !torch.bool -> !torch.vtensor<[2,4,3],f32>
  return %0 : !torch.vtensor<[2,4,3],f32>
}
