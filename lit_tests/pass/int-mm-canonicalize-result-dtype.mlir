// aten._int_mm returns int32 whatever its int8/uint8 operands (eager: torch._int_mm(u8, i8)
// and torch._int_mm(i8, i8) are both torch.int32). torch-mlir's canonicalizer rewrites it to
// aten.mm while the result is still untyped (`!torch.vtensor`, what both importers give a
// scripted op's result), so the int32 is lost: type refinement then gives aten.mm its promoted
// operand dtype, si16 for u8 x i8 (a wrong result dtype, no error) and si8 for i8 x i8 (which
// convert-torch-to-linalg then refuses, "for conversion to byte or char type dstOriginalDtype
// has to be passed", and crashes after: SIGSEGV in createElementwiseLinalgGeneric).
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// AtenIntMMMixedSigni8_basic (int16 where eager gives int32) and AtenIntMM_basic (legalization
// failure). The FX path passes both: export gives the result its si32 type before import, and
// the rewrite keeps a typed result. Upstream fix: rewrite _int_mm to mm only with a result typed
// si32, or give aten.mm the accumulator type explicitly.
//
// Now: the first canonicalize already has aten.mm; the backend pipeline types it si16 / si8.
// When upstream fixes it, these CHECKs fail: then expect si32.

// RUN: torch-mlir-opt %s -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline)' | FileCheck %s

// CANON-LABEL: func.func @int_mm_mixed_sign
// CANON:         torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
// CANON-NOT:     torch.aten._int_mm
// CHECK-LABEL: func.func @int_mm_mixed_sign
// CHECK-SAME:    -> !torch.vtensor<[3,3],si16>
// CHECK:         torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor<[3,3],si16>
func.func @int_mm_mixed_sign(%arg0: !torch.vtensor<[3,4],ui8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
  return %0 : !torch.vtensor
}

// CHECK-LABEL: func.func @int_mm_signed
// CHECK-SAME:    -> !torch.vtensor<[3,3],si8>
// CHECK:         torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,4],si8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor<[3,3],si8>
func.func @int_mm_signed(%arg0: !torch.vtensor<[3,4],si8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],si8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
  return %0 : !torch.vtensor
}

// Even a result the function declares si32 comes out si16 (int-mm-mixed-sign-declared-si32.mlir
// lowers it to linalg: i32 products truncated to i16).
// CHECK-LABEL: func.func @int_mm_mixed_sign_declared_si32
// CHECK-SAME:    -> !torch.vtensor<[3,3],si16>
func.func @int_mm_mixed_sign_declared_si32(%arg0: !torch.vtensor<[3,4],ui8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor<[3,3],si32> {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
  %1 = torch.tensor_static_info_cast %0 : !torch.vtensor to !torch.vtensor<[3,3],si32>
  return %1 : !torch.vtensor<[3,3],si32>
}
