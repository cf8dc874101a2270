#loc = loc(unknown)
module {
  func.func @isolated(%arg0: !torch.vtensor<[2,4],i1> loc(unknown), %arg1: !torch.vtensor<[2,4],i1> loc(unknown)) -> !torch.vtensor<[2,4],i1> {
    %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1> loc(#loc1)
    return %0 : !torch.vtensor<[2,4],i1> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("input.mlir":5:8)
