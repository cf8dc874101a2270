// The loop of ../prim-loop-tensor-iter-arg-unranked-error.mlir with its iter argument typed.

func.func @loop_carried_typed(%arg0: !torch.vtensor<[7,9],f32>) -> !torch.vtensor<[7,9],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %int50 = torch.constant.int 50
  %1 = torch.prim.Loop %int50, %true, init(%arg0) {
  ^bb0(%arg1: !torch.int, %arg2: !torch.vtensor<[7,9],f32>):
    %2 = torch.aten.add.Scalar %arg2, %arg1, %int1 : !torch.vtensor<[7,9],f32>, !torch.int, !torch.int -> !torch.vtensor<[7,9],f32>
    torch.prim.Loop.condition %true, iter(%2 : !torch.vtensor<[7,9],f32>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[7,9],f32>) -> !torch.vtensor<[7,9],f32>
  return %1 : !torch.vtensor<[7,9],f32>
}
