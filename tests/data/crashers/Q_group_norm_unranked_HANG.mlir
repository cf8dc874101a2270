func.func @f(%a0: !torch.vtensor<*,f32>) -> !torch.vtensor<[?,?],f32> {
  %g = torch.constant.int 0
  %eps = torch.constant.float 1.0e-5
  %none = torch.constant.none
  %false = torch.constant.bool false
  %true = torch.constant.bool true
  %r = torch.aten.group_norm %a0, %g, %none, %none, %eps, %false : !torch.vtensor<*,f32>, !torch.int, !torch.none, !torch.none, !torch.float, !torch.bool -> !torch.vtensor<[?,?],f32>
  return %r : !torch.vtensor<[?,?],f32>
}
