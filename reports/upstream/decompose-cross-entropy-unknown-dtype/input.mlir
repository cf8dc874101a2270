


func.func @cross_entropy_no_reduction(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?],si64>) -> !torch.vtensor<[?],unk> {
  %int0 = torch.constant.int 0
  %none = torch.constant.none
  %int-100 = torch.constant.int -100
  %float0 = torch.constant.float 0.000000e+00
  %0 = torch.aten.cross_entropy_loss %arg0, %arg1, %none, %int0, %int-100, %float0 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?],si64>, !torch.none, !torch.int, !torch.int, !torch.float -> !torch.vtensor<[?],unk>
  return %0 : !torch.vtensor<[?],unk>
}
