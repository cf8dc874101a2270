func.func @f(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?,?],f32> {
  %int99 = torch.constant.int 99
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.to.dtype %arg0, %int99, %false, %false, %none : !torch.vtensor<[2,3],f32>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[?,?],f32>
  return %0 : !torch.vtensor<[?,?],f32>
}
