// torch.aten.upsample_bilinear2d.vec (what F.interpolate(mode="bilinear") records in
// TorchScript) at the torch backend contract. No pattern of torch-mlir lowers it: no
// DecomposeComplexOps pattern (the nearest-mode .vec ops have one), no TorchToLinalg or other
// conversion (TorchToLinalg's bilinear lowering is for aten.__interpolate.size_list_scale_list;
// only TorchToTosa takes the .vec op). The backend contract accepts it, so the linalg pipeline
// fails, and its error names the first op of the function left unconverted, a
// torch.constant.int, not the upsample.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// InterpolateStaticModule_sizes_bilinear_no_align_corners,
// InterpolateStaticModule_scales_bilinear_align_corners and InterpolateDynamicModule_sizes_bilinear
// fail torch-to-linalg with this error (upstream lists them in LINALG_XFAIL_SET for its own
// TorchScript config, "unsupported op: aten.upsample_[mode/dims].vec"). The FX path passes
// because torch-mlir's FX importer decomposes aten.upsample_bilinear2d.vec in Python
// (torch._decomp, python/torch_mlir/extras/fx_decomp_util.py) before import.
// Upstream fix: a DecomposeComplexOps pattern from upsample_bilinear2d.vec to
// aten.__interpolate.size_list_scale_list (as there is for the nearest modes), or a lowering.
//
// Now: the error below. When upstream lowers the op, `not` fails here.

// RUN: not torch-mlir-opt %s %{pipeline:torch-to-linalg} -o /dev/null 2>&1 | FileCheck %s

// CHECK:     error: failed to legalize operation 'torch.constant.int'
// CHECK-NOT: error:

func.func @upsample_bilinear_sizes(%arg0: !torch.vtensor<[1,1,4,5],f32>) -> !torch.vtensor<[1,1,3,5],f32> {
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int3 = torch.constant.int 3
  %int5 = torch.constant.int 5
  %0 = torch.prim.ListConstruct %int3, %int5 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.upsample_bilinear2d.vec %arg0, %0, %false, %none : !torch.vtensor<[1,1,4,5],f32>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[1,1,3,5],f32>
  return %1 : !torch.vtensor<[1,1,3,5],f32>
}
