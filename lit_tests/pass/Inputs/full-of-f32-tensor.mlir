// Input of scalar-implicit-f32-error.mlir: torch.full(size, t) with a 0-d f32 tensor argument
// `t`, as the TorchScript importer emits the Scalar (aten.ScalarImplicit -> !torch.number).
func.func @full_of_f32_tensor(%arg0: !torch.vtensor<[1,?],si64>, %fill_t: !torch.vtensor<[],f32>) -> !torch.vtensor {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %fill = torch.aten.ScalarImplicit %fill_t : !torch.vtensor<[],f32> -> !torch.number
  %len = torch.aten.size.int %arg0, %int-1 : !torch.vtensor<[1,?],si64>, !torch.int -> !torch.int
  %size = torch.prim.ListConstruct %len, %len : (!torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.full %size, %fill, %none, %none, %none, %none : !torch.list<int>, !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %r : !torch.vtensor
}
