// torch.prims.prod reducing dims 0 and 1 of a tensor whose kept dimension is dynamic
// ([?,?,?] -> [?]). TorchToLinalg's reduction lowering (computeReductionOpInfoFromDimList in
// lib/Conversion/TorchToLinalg/Reduction.cpp) infers keepdim by comparing the op's result sizes
// with the input's, but takes the input sizes from the converted builtin tensor type (dynamic
// is ShapedType::kDynamic) and the result sizes from the torch type (dynamic is
// kUnknownSize, -1). A dynamic kept dimension never compares equal, the pattern reports "result
// shape does not match expected reduced shape", and prims.prod stays illegal. The same op with
// that dimension static lowers (the second function), whatever the reduced dimensions are.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// PrimsProdFloatModule_basic (`torch.ops.prims.prod(a, dims=[0, 1])`, annotated
// [-1, -1, -1]) fails torch-to-linalg with this error. The importer keeps the annotated dynamic
// sizes as upstream's C++ importer did; the FX path passes because upstream's FX e2e config
// exports with the concrete inputs (static sizes).
// Upstream fix: compare in one convention (the torch type's sizes of the input, or the builtin
// type of the result).
//
// Now: the first function fails to legalize, the second lowers. When upstream fixes the
// comparison, the first CHECK fails here.

// RUN: not torch-mlir-opt %s -split-input-file -convert-torch-to-linalg 2>&1 | FileCheck %s

// CHECK:     error: failed to legalize operation 'torch.prims.prod' that was explicitly marked illegal
// CHECK-LABEL: func.func @prod_static_kept_dim
// CHECK:     linalg.generic
// CHECK-NOT: torch.prims.prod

func.func @prod_dynamic_kept_dim(%arg0: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.prims.prod %arg0, %0, %none : !torch.vtensor<[?,?,?],f32>, !torch.list<int>, !torch.none -> !torch.vtensor<[?],f32>
  return %1 : !torch.vtensor<[?],f32>
}

// -----

func.func @prod_static_kept_dim(%arg0: !torch.vtensor<[?,?,4],f32>) -> !torch.vtensor<[4],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.prims.prod %arg0, %0, %none : !torch.vtensor<[?,?,4],f32>, !torch.list<int>, !torch.none -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}
