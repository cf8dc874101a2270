// torch.aten.to.dtype of a small literal into a result of unknown shape (!torch.vtensor: the
// type the TorchScript importer gives every op result until shape refinement runs).
// AtenToDtypeOp::fold converts literals of up to 16 elements; it asks the result type for its
// builtin tensor type, which an unranked !torch.vtensor does not have, and calls hasStaticShape()
// on the null type it gets.
//
// Seen in upstream's e2e suite through the project's TorchScript importer: 9
// ToDtypeConst*Module_basic tests and UInt8Tensor_basic (`torch.ops.aten.to(CONST, dtype=D)` of a
// module attribute or a torch.tensor([...]) of one element) crash torchscript-to-torch in
// torch-maximize-value-semantics' canonicalization. The importer types these values as upstream's
// C++ importer did (`!torch.tensor` results); the FX path passes them because export gives
// every result a shape. Upstream fix: return {} from the fold when the result has no sizes or no
// dtype, as AtenToDtypeOp::fold's other early exits do.
//
// Now (release build): SIGSEGV in mlir::TensorType::hasRank under AtenToDtypeOp::fold. When
// upstream fixes the fold, `not --crash` fails here: then make this a test that the op survives.

// RUN: not --crash torch-mlir-opt %s -canonicalize 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(canonicalize))' -mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | FileCheck %s --check-prefix=REPRO

// CRASH:      Stack dump:
// CRASH-NEXT: Program arguments: {{.*}}torch-mlir-opt

// REPRO:      error: Failures have been detected while processing an MLIR pass pipeline
// REPRO-NEXT: note: Pipeline failed while executing [`CanonicalizerPass` on 'func.func' operation: @to_dtype_of_literal]: reproducer generated at

func.func @to_dtype_of_literal() -> !torch.vtensor {
  %none = torch.constant.none
  %false = torch.constant.bool false
  %int3 = torch.constant.int 3
  %0 = torch.vtensor.literal(dense<true> : tensor<1xi1>) : !torch.vtensor<[1],i1>
  %1 = torch.aten.to.dtype %0, %int3, %false, %false, %none : !torch.vtensor<[1],i1>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor
  return %1 : !torch.vtensor
}
