// torch.aten.adaptive_max_pool{1d,2d} whose input size is not one that a single fixed max-pool
// window can cover. DecomposeComplexOps (DecomposeAtenAdaptivePool1dOp / 2dOp) rewrites the op
// into aten.max_pool{1d,2d} anyway: it guards its kernel/stride formula only with
// torch.runtime.assert ops, which fold to `false` for these static sizes, and still returns
// success. The max pool it builds is wrong, and TorchToLinalg then fails on it:
//   - 10x16 -> 7x13 (and 1d 10 -> 7): the window it picks yields a 9x15 (10) result, which the
//     lowering casts to the op's 7x13 (7): tensor.cast rejects the incompatible cast;
//   - 10x9 -> 7x13: an output larger than the input gives stride 9 floordiv 13 = 0, and
//     linalg.pooling_nchw_max rejects it ("unexpected loop dimension");
//   - dynamic input sizes: kernel and stride are computed from aten.size.int, not constants,
//     and the max_pool2d lowering needs constant lists: max_pool2d is left illegal.
// TorchToLinalg lowers aten.adaptive_max_pool{1d,2d} itself for every size; the last RUN line
// shows all four cases lower when the op is backend-legal, so the decomposition never runs.
//
// Seen in upstream's e2e suite through the project's TorchScript importer, the
// importer typing the op as upstream's C++ importer did:
//   AdaptiveMaxPool2dStatic, 2dStaticWithIndices, 2dDynamic, 2dDynamicNoBatch,
//   2dDynamicWithIndices (_basic). The FX path passes them only because upstream's FX e2e config
//   declares aten.adaptive_max_pool2d backend-legal (fx_importer_backend.py BACKEND_LEGAL_OPS).
//   AdaptiveMaxPool1dStatic, 1dDynamicNoBatch and 1dDynamic (the folded assert aborts at run
//   time) fail the same way here; the FX path passes them too, because the wheel's FX import
//   (its decompositions) turns adaptive_max_pool1d into adaptive_max_pool2d of an unsqueezed
//   input, which that config keeps legal.
// Upstream fix: make the decomposition fail to match when kernel and stride are not constants
// it can prove valid, so the op reaches TorchToLinalg's adaptive pooling lowering.
//
// Now: the four errors below. When upstream fixes the decomposition, `not` fails here.

// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline,torch-backend-to-linalg-on-tensors-backend-pipeline)' -o /dev/null 2>&1 | FileCheck %s
// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(torch-function-to-torch-backend-pipeline{backend-legal-ops=aten.adaptive_max_pool1d,aten.adaptive_max_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)' | FileCheck %s --check-prefix=LEGAL

// CHECK: error: 'tensor.cast' op operand type 'tensor<1x512x9x15xf32>' and result type 'tensor<1x512x7x13xf32>' are cast incompatible
// CHECK: error: unexpected loop dimension for convolution op
// CHECK: note: see current operation:
// CHECK-NEXT: "linalg.pooling_nchw_max"{{.*}}strides = dense<[1, 0]>
// CHECK: error: failed to legalize operation 'torch.aten.max_pool2d' that was explicitly marked illegal
// CHECK: error: 'tensor.cast' op operand type 'tensor<1x512x10xf32>' and result type 'tensor<1x512x7xf32>' are cast incompatible

// LEGAL-LABEL: func.func @static_10x16_to_7x13
// LEGAL-LABEL: func.func @static_10x9_to_7x13
// LEGAL-LABEL: func.func @dynamic_to_7x13
// LEGAL-LABEL: func.func @static_1d_10_to_7
// LEGAL-NOT:   torch.

func.func @static_10x16_to_7x13(%arg0: !torch.vtensor<[1,512,10,16],f32>) -> !torch.vtensor<[1,512,7,13],f32> {
  %int7 = torch.constant.int 7
  %int13 = torch.constant.int 13
  %0 = torch.prim.ListConstruct %int7, %int13 : (!torch.int, !torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool2d %arg0, %0 : !torch.vtensor<[1,512,10,16],f32>, !torch.list<int> -> !torch.vtensor<[1,512,7,13],f32>, !torch.vtensor<[1,512,7,13],si64>
  return %result0 : !torch.vtensor<[1,512,7,13],f32>
}

func.func @static_10x9_to_7x13(%arg0: !torch.vtensor<[1,512,10,9],f32>) -> !torch.vtensor<[1,512,7,13],f32> {
  %int7 = torch.constant.int 7
  %int13 = torch.constant.int 13
  %0 = torch.prim.ListConstruct %int7, %int13 : (!torch.int, !torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool2d %arg0, %0 : !torch.vtensor<[1,512,10,9],f32>, !torch.list<int> -> !torch.vtensor<[1,512,7,13],f32>, !torch.vtensor<[1,512,7,13],si64>
  return %result0 : !torch.vtensor<[1,512,7,13],f32>
}

func.func @dynamic_to_7x13(%arg0: !torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor<[?,?,7,13],f32> {
  %int7 = torch.constant.int 7
  %int13 = torch.constant.int 13
  %0 = torch.prim.ListConstruct %int7, %int13 : (!torch.int, !torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool2d %arg0, %0 : !torch.vtensor<[?,?,?,?],f32>, !torch.list<int> -> !torch.vtensor<[?,?,7,13],f32>, !torch.vtensor<[?,?,7,13],si64>
  return %result0 : !torch.vtensor<[?,?,7,13],f32>
}

func.func @static_1d_10_to_7(%arg0: !torch.vtensor<[1,512,10],f32>) -> !torch.vtensor<[1,512,7],f32> {
  %int7 = torch.constant.int 7
  %0 = torch.prim.ListConstruct %int7 : (!torch.int) -> !torch.list<int>
  %result0, %result1 = torch.aten.adaptive_max_pool1d %arg0, %0 : !torch.vtensor<[1,512,10],f32>, !torch.list<int> -> !torch.vtensor<[1,512,7],f32>, !torch.vtensor<[1,512,7],si64>
  return %result0 : !torch.vtensor<[1,512,7],f32>
}
