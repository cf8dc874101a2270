// torch.aten.any.dims with a result of unknown shape (!torch.vtensor, and likewise the
// !torch.tensor the TorchScript importer gives every op result). AtenAnyDimsOp::fold casts the
// result and operand types to ValueTensorType and takes their builtin tensor shapes without
// checking that either has sizes (or is a value tensor at all).
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// ReduceAnyDimsFloatModule_basic (`torch.ops.aten.any(a, dim=[0, 1])`) crashes
// torchscript-to-torch in its first canonicalization, before any type refinement. The importer
// types the values as upstream's C++ importer did; the FX path passes because export gives the
// result a shape. Upstream fix: return {} unless both types are value tensors with sizes and a
// dtype.
//
// Now (release build): SIGSEGV under AtenAnyDimsOp::fold. When upstream fixes the fold,
// `not --crash` fails here: then make this a test of the fold.

// RUN: not --crash torch-mlir-opt %s -canonicalize 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(canonicalize))' -mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | FileCheck %s --check-prefix=REPRO

// CRASH:      Stack dump:
// CRASH-NEXT: Program arguments: {{.*}}torch-mlir-opt

// REPRO:      error: Failures have been detected while processing an MLIR pass pipeline
// REPRO-NEXT: note: Pipeline failed while executing [`CanonicalizerPass` on 'func.func' operation: @any_dims_unranked]: reproducer generated at

func.func @any_dims_unranked(%arg0: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor {
  %false = torch.constant.bool false
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int0, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.any.dims %arg0, %0, %false : !torch.vtensor<[?,?,?],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor
  return %1 : !torch.vtensor
}
