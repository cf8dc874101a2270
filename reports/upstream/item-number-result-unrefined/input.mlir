



func.func @item_number_returned(%arg0: !torch.vtensor<[],si64>) -> !torch.number {
  %0 = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.number
  return %0 : !torch.number
}

