// torch.aten.native_group_norm_backward. torch-mlir has no support for this op at all: no shape
// or dtype function in its abstract interpretation library (its results here, !torch.vtensor
// as TorchScript leaves them, stay unranked and the backend contract rejects them), no
// decomposition in DecomposeComplexOps, and no TorchToLinalg conversion (with the result types
// written in, Inputs/native-group-norm-backward-typed.mlir passes the contract, and
// -convert-torch-to-linalg leaves the op as it is).
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// NativeGroupNormBackwardModule_basic (torch.ops.aten.native_group_norm_backward on static
// [2,6,2,2] inputs). Upstream's C++ importer emitted the same op with !torch.tensor results. The
// FX path passes because export decomposes the op into primitive ops before import.
// Upstream fix: shape and dtype functions plus a decomposition or a lowering (as the forward
// native_group_norm has).
//
// Now: the contract error here, the op left unconverted in the typed copy. When upstream adds
// support, the ERR lines (and then the LINALG ones) fail here.

// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: torch-mlir-opt %S/Inputs/native-group-norm-backward-typed.mlir %{pipeline:function-to-torch} | torch-mlir-opt -convert-torch-to-linalg | FileCheck %s --check-prefix=LINALG

// ERR:      error: unsupported by backend contract: tensor with unknown rank
// ERR:      note: see current operation: {{.*}}"torch.aten.native_group_norm_backward"
// ERR-NOT:  error:

// LINALG-LABEL: func.func @native_group_norm_backward_typed
// LINALG:         torch.aten.native_group_norm_backward {{.*}} -> !torch.vtensor<[2,6,2,2],f32>, !torch.vtensor<[6],f32>, !torch.vtensor<[6],f32>

func.func @native_group_norm_backward(%arg0: !torch.vtensor<[2,6,2,2],f32>, %arg1: !torch.vtensor<[2,6,2,2],f32>, %arg2: !torch.vtensor<[2,3],f32>, %arg3: !torch.vtensor<[2,3],f32>, %arg4: !torch.vtensor<[6],f32>) -> (!torch.vtensor, !torch.vtensor, !torch.vtensor) {
  %true = torch.constant.bool true
  %int2 = torch.constant.int 2
  %int6 = torch.constant.int 6
  %int4 = torch.constant.int 4
  %int3 = torch.constant.int 3
  %0 = torch.prim.ListConstruct %true, %true, %true : (!torch.bool, !torch.bool, !torch.bool) -> !torch.list<bool>
  %result0, %result1, %result2 = torch.aten.native_group_norm_backward %arg0, %arg1, %arg2, %arg3, %arg4, %int2, %int6, %int4, %int3, %0 : !torch.vtensor<[2,6,2,2],f32>, !torch.vtensor<[2,6,2,2],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>, !torch.vtensor<[6],f32>, !torch.int, !torch.int, !torch.int, !torch.int, !torch.list<bool> -> !torch.vtensor, !torch.vtensor, !torch.vtensor
  return %result0, %result1, %result2 : !torch.vtensor, !torch.vtensor, !torch.vtensor
}
