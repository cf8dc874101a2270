// torch.aten.__and__.Tensor on bool tensors through the torch-to-linalg pipeline: Python's `&`
// on tensors as torch.jit.trace records it (transformers' masking_utils and_mask:
// `result & mask(...)`; a survey measured it blocking 19 of 21 HF architectures traced).
//
// Not in the 2022 walkthrough (its OPT built masks with additions and `.to`).
// Now: no conversion pass of the pipeline lowers __and__.Tensor; nothing marks it illegal, so
// torch-finalizing-backend-type-conversion reports it at the end. When one of its operands is
// a literal (`new_ones((), dtype=torch.bool)` frozen by the trace), the error names the literal
// instead: convert-torch-to-arith lowered it, canonicalize folded it back into a torch tensor
// for the unconverted user, and the finalizing pass meets it first. `harness explain` names
// __and__ for both (tests/diagnose/test_explain.py). The same expression as aten.bitwise_and.Tensor, as
// torch.export records it, lowers: and-or-bool.mlir. Upstream: llvm/torch-mlir#4749 (open PR).

// RUN: torch-mlir-opt %s %{pipeline:torch-to-linalg} -split-input-file -verify-diagnostics

// Two computed masks: the error names __and__ itself.
func.func @and_of_masks(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>) -> !torch.vtensor<[2,4],i1> {
  // expected-error @+1 {{failed to legalize operation 'torch.aten.__and__.Tensor'}}
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  return %0 : !torch.vtensor<[2,4],i1>
}

// -----

// OPT's and_mask: a dense<true> scalar and'ed with a mask. The error names the literal.
func.func @and_mask(%arg0: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,1,7,7],i1> {
  // expected-error @+1 {{failed to legalize operation 'torch.vtensor.literal'}}
  %true = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1>
  %0 = torch.aten.__and__.Tensor %true, %arg0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1> -> !torch.vtensor<[1,1,7,7],i1>
  return %0 : !torch.vtensor<[1,1,7,7],i1>
}
