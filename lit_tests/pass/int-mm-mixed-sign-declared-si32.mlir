// aten._int_mm of u8 x i8 returns int32 in eager (torch._int_mm); through the TorchScript import
// (an untyped `!torch.vtensor` result) the canonicalizer rewrites it to aten.mm first, and
// refinement types mm with the promoted operand dtype, si16. Even when the function declares the
// result si32 (a tensor_static_info_cast of the untyped result), the cast folds away, the
// function's result type is rewritten to si16, and TorchToLinalg computes the products in i32 and
// truncates them to i16: values up to 4 * 255 * 128 = 130560 wrap, with no error (a silent wrong
// result; int-mm-canonicalize-result-dtype.mlir pins the torch-level part). FX passes: export
// imports `aten.mm` already typed si32 and it lowers to i32 (extui/extsi, no trunci).
// It needs `_int_mm`'s own result untyped (as the TorchScript import gives it): typed si32 on the
// op itself (the second function) it lowers correctly to i32, with no trunci.
// Now: these CHECKs pass; when upstream fixes it they fail: then expect i32 and no trunci.

// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline,torch-backend-to-linalg-on-tensors-backend-pipeline)' | FileCheck %s

// CHECK-LABEL: func.func @int_mm_mixed_sign_declared_si32
// CHECK-SAME:    -> tensor<3x3xi16>
// CHECK:         arith.extui %{{.*}} : i8 to i32
// CHECK:         arith.trunci %{{.*}} : i32 to i16
func.func @int_mm_mixed_sign_declared_si32(%arg0: !torch.vtensor<[3,4],ui8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor<[3,3],si32> {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
  %1 = torch.tensor_static_info_cast %0 : !torch.vtensor to !torch.vtensor<[3,3],si32>
  return %1 : !torch.vtensor<[3,3],si32>
}

// CHECK-LABEL: func.func @int_mm_mixed_sign_typed_si32
// CHECK-SAME:    -> tensor<3x3xi32>
// CHECK-NOT:     arith.trunci
// CHECK:         return %{{.*}} : tensor<3x3xi32>
func.func @int_mm_mixed_sign_typed_si32(%arg0: !torch.vtensor<[3,4],ui8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor<[3,3],si32> {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],ui8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor<[3,3],si32>
  return %0 : !torch.vtensor<[3,3],si32>
}
