// torch.aten.reshape whose operand and result are the same sized type of unknown dtype
// (!torch.vtensor<[12],unk>). AtenReshapeOp::fold checks that the type has sizes, then asks it for
// its builtin tensor type, which a type without a dtype does not have, and calls hasStaticShape()
// on the null type it gets.
//
// Seen in upstream's e2e suite through the project's TorchScript importer:
// ArangeStartOutModule_basic and ArangeStartOutDtypeModule_basic (`torch.arange(0, 12, out=x)`)
// crash torchscript-to-torch: torch-mlir decomposes aten.arange.start_out into
// aten.arange.start_step and an aten.reshape of its result, typed !torch.vtensor, and folding
// that reshape while shapes are being refined ends here. The importer types the values as
// upstream's C++ importer did; the FX path passes because export records no out= variant.
// Upstream fix: also require hasDtype() before toBuiltinTensor().
//
// Now (release build): SIGSEGV in mlir::TensorType::hasRank under AtenReshapeOp::fold. When
// upstream fixes the fold, `not --crash` fails here: then make this a test of the fold.

// RUN: not --crash torch-mlir-opt %s -canonicalize 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(canonicalize))' -mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | FileCheck %s --check-prefix=REPRO

// CRASH:      Stack dump:
// CRASH-NEXT: Program arguments: {{.*}}torch-mlir-opt

// REPRO:      error: Failures have been detected while processing an MLIR pass pipeline
// REPRO-NEXT: note: Pipeline failed while executing [`CanonicalizerPass` on 'func.func' operation: @reshape_unknown_dtype]: reproducer generated at

func.func @reshape_unknown_dtype(%arg0: !torch.vtensor<[12],unk>) -> !torch.vtensor<[12],unk> {
  %int12 = torch.constant.int 12
  %0 = torch.prim.ListConstruct %int12 : (!torch.int) -> !torch.list<int>
  %1 = torch.aten.reshape %arg0, %0 : !torch.vtensor<[12],unk>, !torch.list<int> -> !torch.vtensor<[12],unk>
  return %1 : !torch.vtensor<[12],unk>
}
