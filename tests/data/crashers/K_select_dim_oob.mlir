func.func @f(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[?],f32> {
  %int4 = torch.constant.int 4
  %int0 = torch.constant.int 0
  %0 = torch.aten.select.int %arg0, %int4, %int0 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
