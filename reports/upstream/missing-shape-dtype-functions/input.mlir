func.func @xlogy(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,?],f32>) -> !torch.vtensor {
  %0 = torch.aten.xlogy.Tensor %arg0, %arg1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}


func.func @rshift_scalar(%arg0: !torch.vtensor<[?,?],si8>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %0 = torch.aten.__rshift__.Scalar %arg0, %int1 : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor
  return %0 : !torch.vtensor
}


func.func @complex(%arg0: !torch.vtensor<[?],f32>, %arg1: !torch.vtensor<[?],f32>) -> !torch.vtensor {
  %0 = torch.aten.complex %arg0, %arg1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}


func.func @im2col(%arg0: !torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %k = torch.prim.ListConstruct %int2, %int3 : (!torch.int, !torch.int) -> !torch.list<int>
  %d = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %p = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.aten.im2col %arg0, %k, %d, %p, %d : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int> -> !torch.vtensor
  return %0 : !torch.vtensor
}


func.func @reflection_pad3d(%arg0: !torch.vtensor<[1,20,20,20,20],f32>) -> !torch.vtensor {
  %int10 = torch.constant.int 10
  %0 = torch.prim.ListConstruct %int10, %int10, %int10, %int10, %int10, %int10 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.reflection_pad3d %arg0, %0 : !torch.vtensor<[1,20,20,20,20],f32>, !torch.list<int> -> !torch.vtensor
  return %1 : !torch.vtensor
}
