// torch.aten.tensor built from a list of bools (torch.tensor([True], dtype=torch.bool) in
// TorchScript: prim::ListConstruct of bools, then aten::tensor). torch-mlir's library has shape
// and dtype functions for the scalar forms (aten.tensor.bool/.int/.float) but none for
// aten.tensor of a list. A list of ints is typed anyway, by torch-simplify-shape-calculations
// (torch-mlir treats it as a shape tensor), and then folded into a literal (the second function:
// [1] x si64); nothing types a list of bools. Its result keeps no sizes, and the backend contract
// rejects it.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// BoolTensor_basic (`torch.tensor([True], dtype=torch.bool)`, then to(float32)). Upstream's C++
// importer emitted the same two ops (aten::tensor's schema takes t[] data); the test was added in
// 2025, after upstream stopped running its TorchScript config. The FX path passes because export
// turns the constant tensor into a literal.
// Upstream fix: a shape (and dtype) function for aten.tensor (the list length, nested for
// nested lists), or folding constant bool lists as the int case is folded.
//
// Now: the first function is rejected, the second becomes a literal. When upstream fixes it, the
// ERR lines fail here.

// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} 2>/dev/null | FileCheck %s

// ERR:      error: unsupported by backend contract: tensor with unknown rank
// ERR:      note: see current operation: {{.*}}"torch.aten.tensor"({{.*}}) : (!torch.list<bool>, !torch.int, !torch.none, !torch.bool) -> !torch.vtensor
// ERR-NOT:  error:

// CHECK-LABEL: func.func @tensor_int_list
// CHECK:         torch.vtensor.literal(dense<1> : tensor<1xsi64>) : !torch.vtensor<[1],si64>

func.func @tensor_bool_list() -> !torch.vtensor {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int11 = torch.constant.int 11
  %0 = torch.prim.ListConstruct %true : (!torch.bool) -> !torch.list<bool>
  %1 = torch.aten.tensor %0, %int11, %none, %false : !torch.list<bool>, !torch.int, !torch.none, !torch.bool -> !torch.vtensor
  return %1 : !torch.vtensor
}

// -----

func.func @tensor_int_list() -> !torch.vtensor {
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int1 = torch.constant.int 1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.tensor %0, %int4, %none, %false : !torch.list<int>, !torch.int, !torch.none, !torch.bool -> !torch.vtensor
  return %1 : !torch.vtensor
}
