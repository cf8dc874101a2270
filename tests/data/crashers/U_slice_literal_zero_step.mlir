// Found by tools/fuzz.py (seed 15) from B_slice_literal_negative_step.mlir: a step of 0 on a
// literal; the fold divides by the step.
func.func @f() -> !torch.vtensor<[2],si64> {
  %t = torch.vtensor.literal(dense<[1, 2, 3, 2]> : tensor<4xsi64>) : !torch.vtensor<[4],si64>
  %int0 = torch.constant.int 0
  %int4 = torch.constant.int 4
  %0 = torch.aten.slice.Tensor %t, %int0, %int0, %int4, %int0 : !torch.vtensor<[4],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2],si64>
  return %0 : !torch.vtensor<[2],si64>
}
