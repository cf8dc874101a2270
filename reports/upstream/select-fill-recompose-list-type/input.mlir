func.func @select_fill_sized(%arg0: !torch.tensor<[1,8],si64>) -> !torch.tensor<[1,8],si64> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.aten.select.int %arg0, %int1, %int0 : !torch.tensor<[1,8],si64>, !torch.int, !torch.int -> !torch.tensor<[1],si64>
  %1 = torch.tensor.literal(dense<2> : tensor<si64>) : !torch.tensor<[],si64>
  %2 = torch.aten.fill_.Tensor %0, %1 : !torch.tensor<[1],si64>, !torch.tensor<[],si64> -> !torch.tensor<[1],si64>
  return %arg0 : !torch.tensor<[1,8],si64>
}
