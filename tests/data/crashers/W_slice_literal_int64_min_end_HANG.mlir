// Found by tools/fuzz.py (seed 16) from B_slice_literal_negative_step.mlir: an end of INT64_MIN
// (step 1) on a literal; AtenSliceTensorOp::fold walks the literal's elements without end.
func.func @f() -> !torch.vtensor<[2],si64> {
  %t = torch.vtensor.literal(dense<[1, 1, 3, 4]> : tensor<4xsi64>) : !torch.vtensor<[4],si64>
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %min = torch.constant.int -9223372036854775808
  %0 = torch.aten.slice.Tensor %t, %int0, %int0, %min, %int1 : !torch.vtensor<[4],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2],si64>
  return %0 : !torch.vtensor<[2],si64>
}
