#input = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#filter = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#output = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
// A stride-2 3x3 convolution whose output is 1x1: it reads rows and columns 0..2 of the 4x4
// input (row and column 3 are never read), as PyTorch's conv2d(stride=2) does on a 4x4 input.
func.func @strided_conv_1x1_output(%input: tensor<1x2x4x4xf32>, %filter: tensor<2x2x3x3xf32>, %init: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = linalg.generic {indexing_maps = [#input, #filter, #output], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%input, %filter : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %1 = arith.mulf %in, %w : f32
    %2 = arith.addf %acc, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x1x1xf32>
  return %0 : tensor<1x2x1x1xf32>
}
