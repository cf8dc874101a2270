// torch.aten.cumsum of a non-value tensor reaching convert-torch-to-tmtensor, the first
// conversion of the linalg pipeline. Raw TorchScript imports are full of non-value tensors;
// OPT computes its position ids with a cumsum over the attention mask, so running the linalg
// pipeline on a raw import (skipping torchscript-to-torch) dies here. `harness reduce` cut
// opt-tiny's raw import down to this. (Not in the 2022 walkthrough: found here.)
//
// Now (release build): SIGSEGV in ConvertAtenCumsumOp::matchAndRewrite (TorchToTMTensor.cpp),
// which builds its zero init tensor from a type it assumes is a ranked value tensor. The
// torch-to-linalg contract says non-value tensors must not reach it; a crash instead of a
// diagnostic is the bug.

// RUN: not --crash torch-mlir-opt %s -convert-torch-to-tmtensor -mlir-disable-threading 2>&1 | FileCheck %s
// CHECK:      Stack dump:
// CHECK-NEXT: Program arguments: {{.*}}torch-mlir-opt

// lit turns LLVM's in-process symbolization off; `harness run` symbolizes the frames offline
// and names the pass and the frame that crashed.
// RUN: not %PYTHON -m harness run %s --pipeline=-convert-torch-to-tmtensor | FileCheck %s --check-prefix=HARNESS
// HARNESS:      crash: {{.*}} (SIGSEGV)
// HARNESS:      pass: ConvertTorchToTMTensor
// HARNESS:      signature: crash: SIGSEGV in ConvertTorchToTMTensor at mlir::torch::(anonymous namespace)::ConvertAtenCumsumOp::matchAndRewrite

func.func @cumsum_nonvalue(%arg0: !torch.tensor<[1,7],si64>) -> !torch.tensor {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %arg0, %int1, %none : !torch.tensor<[1,7],si64>, !torch.int, !torch.none -> !torch.tensor
  return %0 : !torch.tensor
}
