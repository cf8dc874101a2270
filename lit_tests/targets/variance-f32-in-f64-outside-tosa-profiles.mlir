// The input of reports/upstream/variance-f32-in-f64-outside-tosa-profiles/: a float32 var_mean (what
// fx.export_and_import's default table, DEFAULT_DECOMPOSITIONS, makes of a layer norm) lowered to TOSA computes in f64, which no TOSA 1.0 or
// 1.1.draft profile or extension has (here: both profiles and the int64 extension), so MLIR's
// tosa-validate (what IREE's TOSA input runs, and refuses the module on) names each f64 op.
// variance-f64-in-tosa.mlir shows the f64 TOSA itself (and f16's).
//
// Now: calculateVariance (DecomposeComplexOps.cpp) upcasts float32 to f64 on purpose (since
// d386b8f9e, 2022; #4283's targetTy is f64 for 32-bit floats too, so its unused targetTy,
// variance-target-type-unused-half-in-f64.mlir, is not this), and nothing in
// torch-backend-to-tosa-backend-pipeline validates. When the TOSA path computes a float32
// variance in f32, the CHECK lines fail (tosa-validate succeeds and `not` fails); when the
// pipeline validates, the first RUN line's torch-mlir-opt fails instead.

// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-tosa} | not %bindings-opt - '-pass-pipeline=builtin.module(tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp extensions=int64},tosa-validate{strict-op-spec-alignment})' 2>&1 | FileCheck %s

// CHECK: error: 'tosa.const' op is not profile-aligned: element type 'f64' is not legal
// CHECK: error: 'tosa.cast' op is not profile-aligned: element type 'f64' is not legal
// CHECK: error: 'tosa.reduce_sum' op is not profile-aligned: element type 'f64' is not legal
// CHECK: error: 'tosa.sub' op is not profile-aligned: element type 'f64' is not legal
func.func @variance_f32(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %var, %mean = torch.aten.var_mean.correction %arg0, %dims, %int0, %true : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %var : !torch.vtensor<[4,1],f32>
}
