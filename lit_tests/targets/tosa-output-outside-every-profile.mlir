// torch-mlir's TOSA for float32 programs, checked against the TOSA profiles by MLIR's own
// tosa-validate (what IREE's TOSA input runs, and refuses the module on): the FX path's variance
// (torch.export's layer norm is var_mean.correction) computes in f64, and an int64 tensor's
// .float() is a tosa.cast i64 -> f32; neither is in any TOSA 1.0 or 1.1.draft profile or
// extension (here: both profiles and the int64 extension). reports/upstream/
// tosa-output-outside-every-profile/ is the bundle; variance-f64-in-tosa.mlir shows the f64
// TOSA itself.
//
// Not in the 2022 walkthrough (TOSA then took no f64 at all). Now: calculateVariance
// (DecomposeComplexOps.cpp) upcasts to f64 and tosaCastTensorToType (TosaLegalizeUtils.cpp)
// emits any cast, its spec check commented out since llvm/torch-mlir#3948; nothing in
// torch-backend-to-tosa-backend-pipeline validates. When either emitter is fixed, its CHECK
// lines fail; when the pipeline validates, the first RUN line's torch-mlir-opt fails instead.

// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-tosa} | not %bindings-opt - '-pass-pipeline=builtin.module(tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp extensions=int64},tosa-validate{strict-op-spec-alignment})' 2>&1 | FileCheck %s

// CHECK: error: 'tosa.cast' op is not profile-aligned: element type 'f64' is not legal
// CHECK: error: 'tosa.reduce_sum' op is not profile-aligned: element type 'f64' is not legal
// CHECK: error: 'tosa.cast' op illegal: operation operand/result data types did not align with any profile or extension, got (i64,f32)
func.func @variance_f32(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %var, %mean = torch.aten.var_mean.correction %arg0, %dims, %int0, %true : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %var : !torch.vtensor<[4,1],f32>
}

func.func @int64_to_f32(%arg0: !torch.vtensor<[4,16],si64>) -> !torch.vtensor<[4,16],f32> {
  %int6 = torch.constant.int 6
  %0 = torch.prims.convert_element_type %arg0, %int6 : !torch.vtensor<[4,16],si64>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}
