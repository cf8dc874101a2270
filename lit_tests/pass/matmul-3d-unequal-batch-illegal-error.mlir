// torch.aten.matmul of two rank-3 tensors whose batch sizes are dynamic or differ (a broadcast
// batch, [4,8,5] x [1,5,6]). The backend contract (LowerToBackendContract.cpp) marks every
// rank-3 x rank-3 matmul illegal, on the assumption that DecomposeComplexOps turns it into
// aten.bmm; but that decomposition (DecomposeAtenMatmulOp) now declines unless both batch sizes
// are static and equal (bmm does not broadcast). Nothing else rewrites the op, so the pipeline
// stops with "found an op that was marked as backend illegal", although TorchToLinalg's own
// matmul lowering (ConvertAtenMatmulOp) handles these operands: the last RUN line lowers both.
// Matmuls of other ranks (3 x 4 below) stay legal and reach that lowering.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// Matmul_3d ([-1,-1,-1] x [-1,-1,-1]), Matmul3DStaticBroadcast_basic, and
// ScaledDotProductAttentionSameDynamicModule_basic (SDPA's own decomposition emits a dynamic
// rank-3 matmul). Both importers emit aten.matmul for torch.matmul; the FX path passes because
// export's decompositions have already turned it into bmm with expanded batch.
// Upstream fix: make the legality rule match the decomposition (legal when the batch sizes are
// not static and equal), or decompose with an explicit broadcast before bmm.
//
// Now: the first two functions are rejected, the equal-batch one becomes bmm, the 3 x 4 one is
// legal. When upstream fixes it, the ERR lines fail here.

// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} 2>/dev/null | FileCheck %s
// RUN: torch-mlir-opt %s -split-input-file -convert-torch-to-linalg | FileCheck %s --check-prefix=LINALG

// ERR:      error: found an op that was marked as backend illegal
// ERR-NEXT: torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32>
// ERR:      note: this is likely due to DecomposeComplexOps being unable to decompose this op
// ERR:      error: found an op that was marked as backend illegal
// ERR-NEXT: torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[4,8,5],f32>, !torch.vtensor<[1,5,6],f32>
// ERR-NOT:  error:

// CHECK-LABEL: func.func @matmul_3d_equal_batch
// CHECK:         torch.aten.bmm
// CHECK-LABEL: func.func @matmul_3x4
// CHECK:         torch.aten.matmul

// LINALG-LABEL: func.func @matmul_3d_dynamic_batch
// LINALG:         linalg.batch_matmul
// LINALG-NOT:     torch.aten.matmul
// LINALG-LABEL: func.func @matmul_3d_broadcast_batch
// LINALG:         linalg.batch_matmul
// LINALG-NOT:     torch.aten.matmul

func.func @matmul_3d_dynamic_batch(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %0 : !torch.vtensor<[?,?,?],f32>
}

// -----

func.func @matmul_3d_broadcast_batch(%arg0: !torch.vtensor<[4,8,5],f32>, %arg1: !torch.vtensor<[1,5,6],f32>) -> !torch.vtensor<[4,8,6],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[4,8,5],f32>, !torch.vtensor<[1,5,6],f32> -> !torch.vtensor<[4,8,6],f32>
  return %0 : !torch.vtensor<[4,8,6],f32>
}

// -----

func.func @matmul_3d_equal_batch(%arg0: !torch.vtensor<[4,8,5],f32>, %arg1: !torch.vtensor<[4,5,6],f32>) -> !torch.vtensor<[4,8,6],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[4,8,5],f32>, !torch.vtensor<[4,5,6],f32> -> !torch.vtensor<[4,8,6],f32>
  return %0 : !torch.vtensor<[4,8,6],f32>
}

// -----

func.func @matmul_3x4(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor<[?,?,?,?],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?,?],f32> -> !torch.vtensor<[?,?,?,?],f32>
  return %0 : !torch.vtensor<[?,?,?,?],f32>
}
