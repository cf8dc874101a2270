func.func @f(%a0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?,?],f32> {
  %d = torch.constant.int 7
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %r = torch.aten.softmax.int %a0, %d, %none : !torch.vtensor<[2,3],f32>, !torch.int, !torch.none -> !torch.vtensor<[?,?],f32>
  return %r : !torch.vtensor<[?,?],f32>
}
