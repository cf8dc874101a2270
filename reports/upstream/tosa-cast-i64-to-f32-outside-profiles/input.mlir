func.func @int64_to_f32(%arg0: !torch.vtensor<[4,16],si64>) -> !torch.vtensor<[4,16],f32> {
  %int6 = torch.constant.int 6
  %0 = torch.prims.convert_element_type %arg0, %int6 : !torch.vtensor<[4,16],si64>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}
