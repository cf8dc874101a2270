// An unregistered op (torch.operator "aten.upsample_nearest3d.vec": the wheel's dialect has no
// upsample_nearest3d) on a branch that is dead for the input's rank, but not yet known to be:
// the argument reaches the body through a cast to !torch.vtensor, as the TorchScript pipeline's
// calling-convention passes pass it, so aten.dim does not fold before torch-reduce-op-variants.
// That pass marks every torch.operator on non-value tensors illegal (isSpecializedOperation is
// true for all of them) and fails, where shape refinement a few passes later would have removed
// the branch.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// InterpolateDynamicModule_sizes_nearest (F.interpolate of a 4-D input, mode "nearest": its
// TorchScript graph keeps the 3-D and 5-D branches). The importer emits torch.operator for an
// op the dialect does not register, as upstream's C++ importer did; the FX path passes because
// export records only the branch taken.
//
// Now: the legalization error below, from torch-function-to-torch-backend-pipeline. When
// upstream prunes the branch first or lets the op through, `not` fails here.

// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline)' 2>&1 | FileCheck %s

// CHECK: error: failed to legalize operation 'torch.operator' that was explicitly marked illegal: {{.*}}<{name = "aten.upsample_nearest3d.vec"}>

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
