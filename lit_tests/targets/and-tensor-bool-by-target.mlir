// torch.aten.__and__.Tensor on bool tensors (Python's `&` as torch.jit.trace records it) through
// each backend contract's lowering: what `harness port gpt2 --frontend torchscript --target
// linalg,tosa,stablehlo` meets (linalg and TOSA fail at transformers' and_mask, StableHLO
// verifies).
//
// Not in the 2022 walkthrough. Now: TorchToLinalg and TorchToTosa have no pattern for
// __and__.Tensor (only for bitwise_and.Tensor, as torch.export records it); TorchToStablehlo
// lowers it to stablehlo.and. When TorchToTosa learns it, the TOSA run fails (no error).
// pass/and-tensor-bool-error.mlir pins the linalg side.

// RUN: torch-mlir-opt %s %{pipeline:torch-to-tosa} -verify-diagnostics
// RUN: torch-mlir-opt %s %{pipeline:torch-to-stablehlo} | FileCheck %s --check-prefix=STABLEHLO

// STABLEHLO-LABEL: func.func @and_of_masks(
// STABLEHLO-SAME:      %[[A:.*]]: tensor<2x4xi1>, %[[B:.*]]: tensor<2x4xi1>) -> tensor<2x4xi1>
// STABLEHLO:         %[[AND:.*]] = stablehlo.and %[[A]], %[[B]] : tensor<2x4xi1>
// STABLEHLO:         return %[[AND]]
func.func @and_of_masks(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>) -> !torch.vtensor<[2,4],i1> {
  // expected-error @+1 {{failed to legalize operation 'torch.aten.__and__.Tensor'}}
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  return %0 : !torch.vtensor<[2,4],i1>
}
