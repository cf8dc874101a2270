func.func @f(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?],f32> {
  %int0 = torch.constant.int 0
  %int9 = torch.constant.int 9
  %0 = torch.aten.flatten.using_ints %arg0, %int0, %int9 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
