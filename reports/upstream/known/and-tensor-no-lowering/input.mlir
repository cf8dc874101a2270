


func.func @and_of_masks(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>) -> !torch.vtensor<[2,4],i1> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  return %0 : !torch.vtensor<[2,4],i1>
}
