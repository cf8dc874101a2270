



func.func @rms_norm_dynamic_weight(%arg0: !torch.vtensor<[?,?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?,?],f32> {
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %float8.000000e-01 = torch.constant.float 8.000000e-01
  %0 = torch.prim.ListConstruct %int2, %int3, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.rms_norm %arg0, %0, %arg1, %float8.000000e-01 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?,?],f32>
  return %1 : !torch.vtensor<[?,?,?,?],f32>
}

