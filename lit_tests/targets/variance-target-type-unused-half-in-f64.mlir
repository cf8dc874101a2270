// The input of reports/upstream/variance-target-type-unused-half-in-f64/: an f16 var_mean (the
// form the FX importer emits) is computed in f64 on every backend, here linalg-on-tensors
// (arith.extf f16 -> f64) and TOSA (an f16 -> f64 tosa.cast), where #4283 meant f32.
//
// Now: calculateVariance (DecomposeComplexOps.cpp) computes targetTy (f32 for 16-bit floats,
// llvm/torch-mlir#4283) and still passes getF64Type() to convertTensorToDtype; newOutputType is
// f64 too. When both use targetTy, the CHECK lines fail (f16 to f32, xf32 in place of xf64).

// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// RUN: torch-mlir-opt %s %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-tosa} | FileCheck %s --check-prefix=TOSA

// LINALG-LABEL: func.func @variance_f16(
// LINALG:         arith.extf %{{.*}} : f16 to f64
// LINALG:         arith.addf %{{.*}}, %{{.*}} : f64
// LINALG:         arith.truncf %{{.*}} : f64 to f16

// TOSA-LABEL: func.func @variance_f16(
// TOSA:         tosa.cast %{{.*}} : (tensor<4x16xf16>) -> tensor<4x16xf64>
// TOSA:         tosa.reduce_sum %{{.*}} : (tensor<4x16xf64>) -> tensor<4x1xf64>
// TOSA:         tosa.cast %{{.*}} : (tensor<4x1xf64>) -> tensor<4x1xf16>
func.func @variance_f16(%arg0: !torch.vtensor<[4,16],f16>) -> !torch.vtensor<[4,1],f16> {
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %var, %mean = torch.aten.var_mean.correction %arg0, %dims, %int0, %true : !torch.vtensor<[4,16],f16>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f16>, !torch.vtensor<[4,1],f16>
  return %var : !torch.vtensor<[4,1],f16>
}
