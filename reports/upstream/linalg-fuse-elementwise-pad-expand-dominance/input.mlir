func.func @pad_then_expand(%arg0: tensor<?x?x?x?xf32>) -> tensor<?x4x?x?x?xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %n = tensor.dim %arg0, %c0 : tensor<?x?x?x?xf32>
  %c = tensor.dim %arg0, %c1 : tensor<?x?x?x?xf32>
  %h = tensor.dim %arg0, %c2 : tensor<?x?x?x?xf32>
  %w = tensor.dim %arg0, %c3 : tensor<?x?x?x?xf32>
  %padded = tensor.pad %arg0 low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  // The padded sizes [n, c, h + 4, w + 4], with c split as 4 x (c / 4):
  %hp = arith.addi %h, %c4 : index
  %wp = arith.addi %w, %c4 : index
  %per_group = arith.divsi %c, %c4 : index
  %expanded = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [%n, 4, %per_group, %hp, %wp] : tensor<?x?x?x?xf32> into tensor<?x4x?x?x?xf32>
  return %expanded : tensor<?x4x?x?x?xf32>
}
