// torch.aten.cumsum on a non-value tensor handed straight to the linalg pipeline (what the raw
// import of OPT's position ids looks like before torchscript-to-torch): SIGSEGV in
// ConvertTorchToTMTensor (createZeroInitTensor). Found by harness reduce on opt-tiny's raw IR.
func.func @forward(%arg0: !torch.tensor<[1,7],si64>) -> !torch.tensor {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %arg0, %int1, %none : !torch.tensor<[1,7],si64>, !torch.int, !torch.none -> !torch.tensor
  return %0 : !torch.tensor
}
