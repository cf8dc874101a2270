// The ONNX frontend's pipeline on imported ONNX IR, through to linalg: torch.onnx.export's graph
// for torch.ops.aten.index(a, (None, ind, None)) with every size dynamic, as the wheel's
// onnx_importer prints it. onnx.GatherND's conversion flattens the dynamic index dimensions with
// aten.flatten.using_ints; pipelines.toml's onnx-to-torch keeps it backend-legal, as upstream's
// own onnx e2e config does, and torch-to-linalg lowers it to a tensor.collapse_shape. Decomposed
// instead (backend-legal-ops empty), the flatten became an aten.view to [-1, 1, 1] that
// torch-to-linalg lowered wrongly: the compiled code aborted ("mismatching contracting
// dimension"; tools/onnx_conformance.py found it on IndexTensorSelectDimModule_basic, and
// tests/frontends/test_onnx_pipeline.py runs this IR's numbers on the RefBackend).
//
// Not in the 2022 walkthrough (no ONNX path then). Now: lowers, the flatten kept.

// RUN: torch-mlir-opt %s %{pipeline:onnx-to-torch} | FileCheck %s --check-prefix=TORCH
// RUN: torch-mlir-opt %s %{pipeline:onnx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG

// TORCH-LABEL: func.func @main_graph(
// TORCH:         torch.aten.flatten.using_ints
// TORCH-NOT:     torch.operator "onnx.
// LINALG-LABEL: func.func @main_graph(
// LINALG-SAME:      tensor<?x?x?xf32>
// LINALG:         tensor.collapse_shape
// LINALG-NOT:     torch.
func.func @main_graph(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?],si64>) -> !torch.vtensor<[?,?,?,?],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 20 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "2.13.0"} {
  %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<-1> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64>
  %1 = torch.operator "onnx.Transpose"(%arg0) {torch.onnx.perm = [1 : si64, 0 : si64, 2 : si64]} : (!torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32>
  %2 = torch.operator "onnx.Unsqueeze"(%arg1, %0) : (!torch.vtensor<[?,?],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[?,?,1],si64>
  %3 = torch.operator "onnx.GatherND"(%1, %2) {torch.onnx.batch_dims = 0 : si64} : (!torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,1],si64>) -> !torch.vtensor<[?,?,?,?],f32>
  %4 = torch.operator "onnx.Transpose"(%3) {torch.onnx.perm = [2 : si64, 0 : si64, 1 : si64, 3 : si64]} : (!torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor<[?,?,?,?],f32>
  return %4 : !torch.vtensor<[?,?,?,?],f32>
}
