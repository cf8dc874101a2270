// `harness port gpt2 --frontend fx --dynamic batch,seq` fails at execution: GPT-2's Conv1D
// flattens [batch, seq, hidden] with x.view(-1, x.size(-1)) (transformers/pytorch_utils.py:119),
// and with batch and seq both dynamic torch-to-linalg lowers that view by casting the input to
// tensor<?x1x4xf32> (seq assumed 1) and collapsing [[0], [1, 2]] (seq into the hidden size):
// the result keeps batch rows only, and the RefBackend's runtime verification aborts on an
// out-of-bounds memref access (tests/port/test_dynamic_shapes.py). With only seq dynamic the same
// view collapses [[0, 1], [2]], as it should; --dynamic seq ports GPT-2 verified.
//
// Not in the 2022 walkthrough (every port there was static). Now: wrong collapse, no error at
// compile time.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @flatten_batch_and_seq_dynamic(
// CHECK-SAME:      %[[ARG:.*]]: tensor<?x?x4xf32>) -> tensor<?x4xf32> {
// CHECK:         %[[CAST:.*]] = tensor.cast %[[ARG]] : tensor<?x?x4xf32> to tensor<?x1x4xf32>
// CHECK:         tensor.collapse_shape %[[CAST]] {{\[\[}}0], [1, 2]] : tensor<?x1x4xf32> into tensor<?x4xf32>
func.func @flatten_batch_and_seq_dynamic(%arg0: !torch.vtensor<[?,?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[?,?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
  return %1 : !torch.vtensor<[?,4],f32>
}

// -----

// CHECK-LABEL: func.func @flatten_seq_dynamic(
// CHECK-SAME:      %[[ARG:.*]]: tensor<2x?x4xf32>) -> tensor<?x4xf32> {
// CHECK:         tensor.collapse_shape %[[ARG]] {{\[\[}}0, 1], [2]] : tensor<2x?x4xf32> into tensor<?x4xf32>
func.func @flatten_seq_dynamic(%arg0: !torch.vtensor<[2,?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[2,?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
  return %1 : !torch.vtensor<[?,4],f32>
}
