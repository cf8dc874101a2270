// torch.aten.rms_norm whose weight (and normalized trailing dimensions) have dynamic sizes.
// The backend contract marks aten.rms_norm illegal, so DecomposeComplexOps must expand it (x *
// rsqrt(mean(x^2) + eps) * weight). The wheel's decomposition (DecomposeAtenRMSLayerNormOp,
// torch-mlir 20261001) declines when it cannot prove at compile time that the weight's sizes
// equal normalized_shape ("weight sizes should match normalized shape"), which with dynamic
// sizes it never can; no lowering takes the op, and the pipeline stops with "found an op that
// was marked as backend illegal". The same op with a static weight decomposes (the second
// function), and so does it with no weight. Upstream's source at 0029fc2e (August 2026) has no
// such check; the wheel's newer pattern adds it and leaves the dynamic case with no path.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// RMSNormDynamicModule_basic (x [-1,-1,-1,-1], weight [-1,-1,-1], normalized_shape [2,3,4]).
// Both importers emit aten.rms_norm for torch.ops.aten.rms_norm; the FX path passes because
// export decomposes rms_norm into primitive ops before import.
// Upstream fix: decompose with a run-time size check (torch.runtime.assert), as other
// decompositions do, instead of declining.
//
// Now: the first function is rejected, the second decomposes. When upstream fixes it, the ERR
// line fails here.

// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not torch-mlir-opt %s -split-input-file %{pipeline:function-to-torch} 2>/dev/null | FileCheck %s

// ERR:      error: found an op that was marked as backend illegal
// ERR-NEXT: torch.aten.rms_norm %arg0, %0, %arg1, %float8.000000e-01 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.vtensor<[?,?,?],f32>
// ERR:      note: this is likely due to DecomposeComplexOps being unable to decompose this op
// ERR-NOT:  error:

// CHECK-LABEL: func.func @rms_norm_static_weight
// CHECK:         torch.aten.rsqrt
// CHECK-NOT:     torch.aten.rms_norm

func.func @rms_norm_dynamic_weight(%arg0: !torch.vtensor<[?,?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?,?],f32> {
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %float8.000000e-01 = torch.constant.float 8.000000e-01
  %0 = torch.prim.ListConstruct %int2, %int3, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.rms_norm %arg0, %0, %arg1, %float8.000000e-01 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?,?],f32>
  return %1 : !torch.vtensor<[?,?,?,?],f32>
}

// -----

func.func @rms_norm_static_weight(%arg0: !torch.vtensor<[?,?,?,?],f32>, %arg1: !torch.vtensor<[2,3,4],f32>) -> !torch.vtensor<[?,?,?,?],f32> {
  %int2 = torch.constant.int 2
  %int3 = torch.constant.int 3
  %int4 = torch.constant.int 4
  %float8.000000e-01 = torch.constant.float 8.000000e-01
  %0 = torch.prim.ListConstruct %int2, %int3, %int4 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.rms_norm %arg0, %0, %arg1, %float8.000000e-01 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int>, !torch.vtensor<[2,3,4],f32>, !torch.float -> !torch.vtensor<[?,?,?,?],f32>
  return %1 : !torch.vtensor<[?,?,?,?],f32>
}
