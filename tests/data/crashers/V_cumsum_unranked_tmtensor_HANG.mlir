// Found by tools/fuzz.py (seed 16) from S_cumsum_nonvalue_tmtensor.mlir: with the operand's
// shape dropped (an unranked !torch.tensor) ConvertAtenCumsumOp no longer crashes but loops,
// building tensor.dim ops for the sizes of a tensor of unknown rank (getTensorSizes).
func.func @forward(%arg0: !torch.tensor) -> !torch.tensor {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %arg0, %int1, %none : !torch.tensor, !torch.int, !torch.none -> !torch.tensor
  return %0 : !torch.tensor
}
