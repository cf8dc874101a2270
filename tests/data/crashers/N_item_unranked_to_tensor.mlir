func.func @f(%arg0: !torch.vtensor<*,f32>) -> !torch.float {
  %0 = torch.aten.item %arg0 : !torch.vtensor<*,f32> -> !torch.float
  return %0 : !torch.float
}
