// torch.aten.matmul of two rank-3 tensors whose batch sizes are dynamic or differ (a broadcast
// batch, [4,8,5] x [1,5,6]). The backend contract (LowerToBackendContract.cpp) marks every
// rank-3 x rank-3 matmul illegal, on the assumption that DecomposeComplexOps turns it into
// aten.bmm; but that decomposition (DecomposeAtenMatmulOp) now declines unless both batch sizes
// are static and equal (bmm does not broadcast). Nothing else rewrites the op, so the pipeline
// stops with "found an op that was marked as backend illegal", although TorchToLinalg's own
// matmul lowering (ConvertAtenMatmulOp) handles these operands: the last RUN line lowers both.
// Matmuls of other ranks (3 x 4 below) stay legal and reach that lowering.
//
// Seen in upstream's e2e suite through the project's TorchScript importer (issue 10):
// Matmul_3d ([-1,-1,-1] x [-1,-1,-1]), Matmul3DStaticBroadcast_basic, and
// ScaledDotProductAttentionSameDynamicModule_basic (SDPA's own decomposition emits a dynamic
// rank-3 matmul). Both importers emit aten.matmul for torch.matmul; the FX path passes because
// export's decompositions have already turned it into bmm with expanded batch.
// Upstream fix: make the legality rule match the decomposition (legal when the batch sizes are
// not static and equal), or decompose with an explicit broadcast before bmm.
//
// Now: the first two functions are rejected, the equal-batch one becomes bmm, the 3 x 4 one is
// legal. When upstream fixes it, the ERR lines fail here.





func.func @matmul_3d_dynamic_batch(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %0 : !torch.vtensor<[?,?,?],f32>
}

