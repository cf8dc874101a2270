// torch.aten.item with the result type TorchScript gives it, Scalar (!torch.number), on a tensor
// whose dtype is known (si64). No pass of the pipeline refines a !torch.number to !torch.int or
// !torch.float from the operand's dtype (the dtype functions type tensors only), and the backend
// contract rejects !torch.number wherever it is used: returned (the first function) or fed to
// another op (the third). The same op typed !torch.int (what the FX importer emits for
// aten._local_scalar_dense) passes (the second).
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// AtenSymConstrainRange_basic, AtenSymConstrainRangeForSize_basic, Aten_AssertScalar_basic
// (`a = x.item()` on an int tensor; TorchScript drops the sym_constrain_range/_assert_scalar
// calls, which leaves `%a : Scalar = aten::item(%x)` returned). Upstream's C++ importer typed
// aten::item's result !torch.number too (its type table maps Scalar to !torch.number); upstream
// lists these three in LINALG_XFAIL_SET, for the then-missing `aten::_check_is_size`.
// Upstream fix: refine aten.item's !torch.number result from the operand's dtype (an
// integer dtype gives !torch.int, a floating one !torch.float).
//
// Now: the first and third functions are rejected, the second passes. When upstream refines
// the type, the ERR lines fail here.

// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} 2>/dev/null | FileCheck %s

// ERR:      error: unsupported by backend contract: type '!torch.number'
// ERR:      note: see current operation: %0 = "torch.aten.item"(%arg0) : (!torch.vtensor<[],si64>) -> !torch.number
// ERR:      error: unsupported by backend contract: type '!torch.number'
// ERR:      note: see current operation: {{.*}}"torch.aten.item"(%arg0) : (!torch.vtensor<[],si64>) -> !torch.number
// ERR-NOT:  error:

// CHECK-LABEL: func.func @item_int
// CHECK:         torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.int
// CHECK-NOT:     func.func @item_number

func.func @item_number_returned(%arg0: !torch.vtensor<[],si64>) -> !torch.number {
  %0 = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.number
  return %0 : !torch.number
}

// -----

func.func @item_int(%arg0: !torch.vtensor<[],si64>) -> !torch.int {
  %0 = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.int
  return %0 : !torch.int
}

// -----

func.func @item_number_used(%arg0: !torch.vtensor<[],si64>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %0 = torch.aten.item %arg0 : !torch.vtensor<[],si64> -> !torch.number
  %1 = torch.aten.add.Scalar %arg0, %0, %int1 : !torch.vtensor<[],si64>, !torch.number, !torch.int -> !torch.vtensor
  return %1 : !torch.vtensor
}
