#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#d2d3 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#res = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main_kernel(%sum: tensor<1x8x1x1xf32>, %cnt: tensor<1x1xf32>, %w: tensor<8x3xf32>) -> tensor<1x3xf32> {
  %zero = arith.constant 0.0 : f32
  // avg = sum / cnt, written in place over %sum (the payload reads its outs)
  %avg = linalg.generic {indexing_maps = [#d2d3, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%cnt : tensor<1x1xf32>) outs(%sum : tensor<1x8x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %out, %in : f32
    linalg.yield %q : f32
  } -> tensor<1x8x1x1xf32>
  %a = tensor.collapse_shape %avg [[0], [1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<1x8xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %mm = linalg.generic {indexing_maps = [#lhs, #rhs, #res], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<1x8xf32>, tensor<8x3xf32>) outs(%init : tensor<1x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x3xf32>
  return %mm : tensor<1x3xf32>
}
