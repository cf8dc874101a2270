// The same convolution as a named op, as torch-mlir's TorchToLinalg emits it for
// torch.nn.functional.conv2d(x, w, stride=2) on a 1x2x4x4 input (linalg-generalize-named-ops
// turns it into input.mlir's linalg.generic).
func.func @strided_conv_1x1_output(%input: tensor<1x2x4x4xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%input, %filter : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}
