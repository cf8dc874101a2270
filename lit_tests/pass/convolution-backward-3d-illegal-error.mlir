// torch.aten.convolution_backward of a 3-D convolution (5-D tensors). The backend contract marks
// convolution_backward illegal (LowerToBackendContract.cpp), but DecomposeComplexOps' rewrite
// (DecomposeAtenConvolutionBackwardOp) handles 2-D convolutions only ("unimplemented: only 2D
// convolutions supported"), so the pipeline stops with "found an op that was marked as backend
// illegal". TorchToLinalg's own conversion of the op (ConvertAtenConvolutionBackwardOp) takes
// any number of spatial dimensions: with the op kept backend-legal (the second RUN line) this
// function lowers to linalg, and `harness check` on that torch IR matches eager PyTorch (max
// abs diff 4e-6 on the three results, random inputs).
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// ConvolutionBackwardModule3DStatic_basic (the same op on [1,4,64,64,64] / [1,32,64,64,64] /
// [4,32,3,1,3]). Upstream lists it in LINALG_XFAIL_SET, its TorchScript config, for this
// reason. The FX path passes because export decomposes convolution_backward before import.
// Upstream fix: make the op legal when the decomposition cannot apply (as matmul's rule does
// for ranks it does not decompose), or decompose N-D.
//
// Now: the first RUN line's error; the op lowers when legal. When upstream fixes it, the ERR
// lines fail here.

// RUN: not torch-mlir-opt %s %{pipeline:function-to-torch} -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline{backend-legal-ops=aten.convolution_backward},torch-backend-to-linalg-on-tensors-backend-pipeline)' | FileCheck %s --check-prefix=LEGAL

// ERR:      error: found an op that was marked as backend illegal
// ERR:      note: see current operation: {{.*}}"torch.aten.convolution_backward"{{.*}}(!torch.vtensor<[1,4,5,5,5],f32>
// ERR:      note: this is likely due to DecomposeComplexOps being unable to decompose this op
// ERR-NOT:  error:

// LEGAL-LABEL: func.func @convolution_backward_3d
// LEGAL:         linalg.generic
// LEGAL-NOT:     torch.aten.convolution_backward

func.func @convolution_backward_3d(%arg0: !torch.vtensor<[1,4,5,5,5],f32>, %arg1: !torch.vtensor<[1,2,5,5,5],f32>, %arg2: !torch.vtensor<[4,2,3,1,3],f32>) -> (!torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>) {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %int4 = torch.constant.int 4
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %1 = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.prim.ListConstruct %int1, %int0, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %4 = torch.prim.ListConstruct %true, %true, %true : (!torch.bool, !torch.bool, !torch.bool) -> !torch.list<bool>
  %r0, %r1, %r2 = torch.aten.convolution_backward %arg0, %arg1, %arg2, %0, %1, %2, %1, %false, %3, %int1, %4 : !torch.vtensor<[1,4,5,5,5],f32>, !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int, !torch.list<bool> -> !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>
  return %r0, %r1, %r2 : !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>
}
