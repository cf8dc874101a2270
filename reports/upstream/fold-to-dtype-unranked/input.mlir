



func.func @to_dtype_of_literal() -> !torch.vtensor {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int3 = torch.constant.int 3
  %0 = torch.vtensor.literal(dense<true> : tensor<1xi1>) : !torch.vtensor<[1],i1>
  %1 = torch.aten.to.dtype %0, %int3, %false, %false, %none : !torch.vtensor<[1],i1>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor
  return %1 : !torch.vtensor
}
