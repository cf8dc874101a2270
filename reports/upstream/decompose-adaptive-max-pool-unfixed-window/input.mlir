func.func @static_10x16_to_7x13(%arg0: !torch.vtensor<[1,512,10,16],f32>) -> !torch.vtensor<[1,512,7,13],f32> {
  %int7 = torch.constant.int 7
  %int13 = torch.constant.int 13
  %0 = torch.prim.ListConstruct %int7, %int13 : (!torch.int, !torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool2d %arg0, %0 : !torch.vtensor<[1,512,10,16],f32>, !torch.list<int> -> !torch.vtensor<[1,512,7,13],f32>, !torch.vtensor<[1,512,7,13],si64>
  return %result0 : !torch.vtensor<[1,512,7,13],f32>
}
