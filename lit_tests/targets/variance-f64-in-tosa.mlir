// torch.aten.var.correction decomposed at the torch level, then lowered to TOSA: why torch-mlir's
// TOSA for float32 models holds f64 (the FX path's layer norm reaches var_mean through torch-mlir's
// own DEFAULT_DECOMPOSITIONS, fx_decomp_util.py's native_layer_norm entry: torch.export keeps
// aten.layer_norm), which IREE's TOSA input refuses ("'tosa.cast' op is not profile-aligned:
// element type 'f64' is not legal": harness port gpt2 --frontend fx --target tosa --backend iree).
//
// Not in the 2022 walkthrough. Now: calculateVariance in
// lib/Dialect/Torch/Transforms/DecomposeComplexOps.cpp upcasts every non-f64 input to f64.
// llvm/torch-mlir#4283 (ac4657a7, 2025-08-06, "Upcast gradually when computing variance") meant
// f16 and bf16 to go to f32 and 8-bit floats to bf16: it computes that type (targetTy) but still
// passes getF64Type() to convertTensorToDtype, so the f16 function below is upcast to f64 too.
// When the upcast follows #4283's intent, the F16 lines fail (f32 instead of f64).

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | torch-mlir-opt %{pipeline:torch-to-tosa} | FileCheck %s

// CHECK-LABEL: func.func @var_f32(
// CHECK:         tosa.cast %{{.*}} : (tensor<2x4xf32>) -> tensor<2x4xf64>
// CHECK:         tosa.reduce_sum %{{.*}} : (tensor<2x4xf64>) -> tensor<2x1xf64>
// CHECK:         tosa.cast %{{.*}} : (tensor<2x1xf64>) -> tensor<2x1xf32>
func.func @var_f32(%arg0: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,1],f32> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %float0 = torch.constant.float 0.000000e+00
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.var.correction %arg0, %dims, %float0, %true : !torch.vtensor<[2,4],f32>, !torch.list<int>, !torch.float, !torch.bool -> !torch.vtensor<[2,1],f32>
  return %0 : !torch.vtensor<[2,1],f32>
}

// CHECK-LABEL: func.func @var_f16(
// CHECK:         tosa.cast %{{.*}} : (tensor<2x4xf16>) -> tensor<2x4xf64>
// CHECK:         tosa.cast %{{.*}} : (tensor<2x1xf64>) -> tensor<2x1xf16>
func.func @var_f16(%arg0: !torch.vtensor<[2,4],f16>) -> !torch.vtensor<[2,1],f16> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %float0 = torch.constant.float 0.000000e+00
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %0 = torch.aten.var.correction %arg0, %dims, %float0, %true : !torch.vtensor<[2,4],f16>, !torch.list<int>, !torch.float, !torch.bool -> !torch.vtensor<[2,1],f16>
  return %0 : !torch.vtensor<[2,1],f16>
}
