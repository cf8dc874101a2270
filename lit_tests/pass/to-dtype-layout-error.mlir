// torch.aten.to.dtype_layout on a value tensor, given straight to the torch-to-linalg pipeline.
//
// 2022 (walkthrough, the `.to(dtype)` / `.to(device)` of _make_causal_mask):
//   error: failed to legalize operation 'torch.aten.to.dtype_layout' that was explicitly
//   marked illegal
// Now: still no lowering, but the diagnostic moved. The pipeline's canonicalizer rewrites
// to.dtype_layout (strided layout, no pin_memory) into torch.aten.to.device, which no
// TorchToLinalg pattern converts; nothing complains about that op, and the run fails later, in
// torch-finalizing-backend-type-conversion, on the first torch constant still used by it:
//   error: failed to legalize operation 'torch.constant.int'
// The same input through %{pipeline:function-to-torch} first lowers fine: see
// to-dtype-layout-decompose.mlir.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file -verify-diagnostics
// RUN: not torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file -mlir-print-ir-after-failure 2>&1 | FileCheck %s

// The walkthrough's case: f32 to f32 on cpu, a no-op.
// CHECK:       IR Dump After FinalizingBackendTypeConversion Failed
// CHECK-LABEL: func.func @same_dtype(
// CHECK:         %[[INT6:.*]] = torch.constant.int 6
// CHECK:         %[[CPU:.*]] = torch.constant.device "cpu"
// CHECK:         torch.aten.to.device %{{.*}}, %[[CPU]], %[[INT6]],
// CHECK-SAME:      -> !torch.vtensor<[1,1,7,7],f32>
// CHECK-NOT:     torch.aten.to.dtype_layout
func.func @same_dtype(%arg0: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f32> {
  // expected-error @+1 {{failed to legalize operation 'torch.constant.int'}}
  %int6 = torch.constant.int 6
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.to.dtype_layout %arg0, %int6, %int0, %cpu, %none, %false, %false, %none : !torch.vtensor<[1,1,7,7],f32>, !torch.int, !torch.int, !torch.Device, !torch.none, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,1,7,7],f32>
  return %0 : !torch.vtensor<[1,1,7,7],f32>
}

// -----

// A real conversion, f32 to f64, fails the same way.
// CHECK:       IR Dump After FinalizingBackendTypeConversion Failed
// CHECK-LABEL: func.func @f32_to_f64(
// CHECK:         torch.aten.to.device
// CHECK-SAME:      -> !torch.vtensor<[1,1,7,7],f64>
func.func @f32_to_f64(%arg0: !torch.vtensor<[1,1,7,7],f32>) -> !torch.vtensor<[1,1,7,7],f64> {
  // expected-error @+1 {{failed to legalize operation 'torch.constant.int'}}
  %int7 = torch.constant.int 7
  %int0 = torch.constant.int 0
  %cpu = torch.constant.device "cpu"
  %none = torch.constant.none
  %false = torch.constant.bool false
  %0 = torch.aten.to.dtype_layout %arg0, %int7, %int0, %cpu, %none, %false, %false, %none : !torch.vtensor<[1,1,7,7],f32>, !torch.int, !torch.int, !torch.Device, !torch.none, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1,1,7,7],f64>
  return %0 : !torch.vtensor<[1,1,7,7],f64>
}
