// An ONNX op that no TorchOnnxToTorch pattern converts, as the wheel's onnx_importer imports it
// (the generic torch.operator "onnx.Softsign", with the function's opset): the ONNX frontend's
// pipeline (pipelines.toml onnx-to-torch, torch-onnx-to-torch-backend-pipeline) stops at
// convert-torch-onnx-to-torch. The port and `harness explain` say it in ONNX's terms (the node,
// the opset, where the pattern goes: tests/port/test_port_onnx.py, tests/diagnose/test_onnx_terms.py).
//
// Not in the 2022 walkthrough (no ONNX path then). Now: no pattern for Softsign at opset 17, so
// the op is left illegal and the pipeline fails on it; the test flips when upstream adds one.

// RUN: not torch-mlir-opt %s %{pipeline:onnx-to-torch} 2>&1 | FileCheck %s

// CHECK: error: failed to legalize operation 'torch.operator' that was explicitly marked illegal
// CHECK-SAME: name = "onnx.Softsign"
func.func @g(%arg0: !torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "", torch.onnx_meta.producer_version = ""} {
  %none = torch.constant.none
  %0 = torch.operator "onnx.Softsign"(%arg0) : (!torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32>
  return %0 : !torch.vtensor<[2,4],f32>
}
