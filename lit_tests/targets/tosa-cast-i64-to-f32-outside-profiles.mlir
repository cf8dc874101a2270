// The input of reports/upstream/tosa-cast-i64-to-f32-outside-profiles/: an int64 tensor's
// .float() lowered to TOSA is one tosa.cast i64 -> f32, which no TOSA 1.0 or 1.1.draft profile
// or extension has (here: both profiles and the int64 extension; arm/tosa-specification#36), so
// MLIR's tosa-validate (what IREE's TOSA input runs, and refuses the module on) refuses it.
//
// Now: tosaCastTensorToType (TosaLegalizeUtils.cpp) emits any cast, its spec check
// checkValidityOfCast commented out since llvm/torch-mlir#3948 (the check before it allowed
// int64 -> f32: never rejected, not a regression); nothing in
// torch-backend-to-tosa-backend-pipeline validates. When it casts through i32 (as #4257 casts
// float <-> bool through i8), the CHECK line fails; when the conversion refuses the cast or the
// pipeline validates, the first RUN line's torch-mlir-opt fails instead.

// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-tosa} | not %bindings-opt - '-pass-pipeline=builtin.module(tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp extensions=int64},tosa-validate{strict-op-spec-alignment})' 2>&1 | FileCheck %s

// CHECK: error: 'tosa.cast' op illegal: operation operand/result data types did not align with any profile or extension, got (i64,f32)
func.func @int64_to_f32(%arg0: !torch.vtensor<[4,16],si64>) -> !torch.vtensor<[4,16],f32> {
  %int6 = torch.constant.int 6
  %0 = torch.prims.convert_element_type %arg0, %int6 : !torch.vtensor<[4,16],si64>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}
