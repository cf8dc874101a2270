// Upstream gap (ResNet, MobileViT on IREE): MLIR's linalg-fold-unit-extent-dims
// (linalg::dropUnitDims, DropUnitDims.cpp) replaces a stride-2 convolution's unit output loops
// oh, ow (1x1 output) by 0, so the input's window index `oh * 2 + kh` becomes the bare dim `kh`,
// whose range is the kernel's 3, on an input dimension of 4 that the window never fully reads
// (row and column 3 are skipped by the stride). A bare dim must equal the operand's size, so the
// verifier rejects the pass's output. IREE's iree-dispatch-creation-fold-unit-extent-dims runs
// the same patterns and fails the same way: how the linalg-on-tensors and StableHLO targets of
// resnet and mobilevit stop on IREE (llvm-cpu); TOSA passes, as TorchToTosa trims the padding the
// window never reaches. Bundle: reports/upstream/linalg-fold-unit-extent-dims-strided-conv/.
//
// This test states today's failure, in the upstream pass (run by iree-opt, which registers it
// under its MLIR name; the bundle's repro.py runs it through the wheel's MLIR bindings) and in
// iree-compile. When the pass is fixed in the LLVM IREE ships, `not` fails here: then check what
// the fold makes of the convolution instead (see the -dynamic test beside this one).

// REQUIRES: iree
// RUN: not iree-opt --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,linalg-fold-unit-extent-dims))' %s 2>&1 | FileCheck %s --check-prefix=MLIR
// RUN: not iree-compile --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic --mlir-print-ir-after-failure %s -o %t.vmfb 2>&1 | FileCheck %s --check-prefix=IREE

// MLIR: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3
// MLIR: }) : (tensor<2x4x4xf32>, tensor<2x2x3x3xf32>, tensor<2xf32>) -> tensor<2xf32>

// IREE: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3
// IREE: IR Dump After FoldUnitExtentDimsPass Failed: iree-dispatch-creation-fold-unit-extent-dims
func.func @strided_conv_1x1_output(%input: tensor<1x2x4x4xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%input, %filter : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}
