


func.func @unregistered_op_in_dead_branch(%arg0: !torch.vtensor<[?,?,?,?],f32>) -> !torch.tensor {
  %none = torch.constant.none
  %int2 = torch.constant.int 2
  %int5 = torch.constant.int 5
  %0 = torch.tensor_static_info_cast %arg0 : !torch.vtensor<[?,?,?,?],f32> to !torch.vtensor
  %1 = torch.copy.to_tensor %0 : !torch.tensor
  %2 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.dim %1 : !torch.tensor -> !torch.int
  %4 = torch.aten.eq.int %3, %int5 : !torch.int, !torch.int -> !torch.bool
  %5 = torch.prim.If %4 -> (!torch.tensor) {
    %6 = torch.operator "aten.upsample_nearest3d.vec"(%1, %2, %none) : (!torch.tensor, !torch.list<int>, !torch.none) -> !torch.tensor
    torch.prim.If.yield %6 : !torch.tensor
  } else {
    %6 = torch.aten.upsample_nearest2d.vec %1, %2, %none : !torch.tensor, !torch.list<int>, !torch.none -> !torch.tensor
    torch.prim.If.yield %6 : !torch.tensor
  }
  return %5 : !torch.tensor
}
