// The walkthrough's Scalar round trips, at the torch level: a size read as a tensor
// (prim.NumToTensor) and handed back as a Scalar (aten.ScalarImplicit -> !torch.number) to
// aten.arange, and a 0-d tensor handed to aten.full as its fill value, through
// %{pipeline:function-to-torch} and then %{pipeline:torch-to-linalg}.
//
// 2022 (walkthrough, `torch.arange(mask.size(-1))` and
// `torch.full((tgt_len, tgt_len), torch.tensor(float("-inf")))`):
//   error: 'func.call' op operand type mismatch: expected operand type '!torch.float', but
//   provided '!torch.number' for operand number 0 (callee @__torch_mlir_shape_fn.aten.arange;
//   operand number 1 for @__torch_mlir_shape_fn.aten.full)
// Now: both lower, and no !torch.number is left at the backend contract. The round trip folds
// to the size itself, a Scalar read from an si64 tensor is refined to !torch.int, and a
// constant fill tensor becomes a broadcast. The shape-function call itself is covered by
// reify-shape-number-operand.mlir. One form still fails: a fill value read from a non-constant
// f32 tensor, see scalar-implicit-f32-error.mlir.

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | FileCheck %s --check-prefix=TORCH
// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | FileCheck %s --check-prefix=NO-NUMBER
// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG

// NO-NUMBER:     module
// NO-NUMBER-NOT: !torch.number

// TORCH-LABEL: func.func @arange_of_size(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,?],si64>) -> !torch.vtensor<[?],si64> {
// TORCH-DAG:     %[[ONE:.*]] = torch.constant.int 1
// TORCH-DAG:     %[[ZERO:.*]] = torch.constant.int 0
// TORCH:         %[[SIZE:.*]] = torch.aten.size.int %[[ARG]], %{{.*}} : !torch.vtensor<[1,?],si64>, !torch.int -> !torch.int
// TORCH:         %[[R:.*]] = torch.aten.arange.start_step %[[ZERO]], %[[SIZE]], %[[ONE]], {{.*}} : !torch.int, !torch.int, !torch.int, {{.*}} -> !torch.vtensor<[?],si64>
// TORCH:         return %[[R]]

// LINALG-LABEL: func.func @arange_of_size(
// LINALG-SAME:      %[[ARG:.*]]: tensor<1x?xi64>) -> tensor<?xi64> {
// LINALG:         %[[DIM:.*]] = tensor.dim %[[ARG]], %{{.*}} : tensor<1x?xi64>
// LINALG:         %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?xi64>
// LINALG:         linalg.generic {{.*}} outs(%[[INIT]] : tensor<?xi64>)
// LINALG:           linalg.index 0 : index
func.func @arange_of_size(%arg0: !torch.vtensor<[1,?],si64>) -> !torch.vtensor {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %size = torch.aten.size.int %arg0, %int-1 : !torch.vtensor<[1,?],si64>, !torch.int -> !torch.int
  %t = torch.prim.NumToTensor.Scalar %size : !torch.int -> !torch.vtensor<[],si64>
  %n = torch.aten.ScalarImplicit %t : !torch.vtensor<[],si64> -> !torch.number
  %r = torch.aten.arange %n, %none, %none, %none, %none : !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %r : !torch.vtensor
}

// TORCH-LABEL: func.func @arange_of_tensor(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[],si64>) -> !torch.vtensor<[?],si64> {
// TORCH:         %[[END:.*]] = torch.aten.ScalarImplicit %[[ARG]] : !torch.vtensor<[],si64> -> !torch.int
// TORCH:         torch.aten.arange.start_step %{{.*}}, %[[END]], %{{.*}} : !torch.int, !torch.int, !torch.int,

// LINALG-LABEL: func.func @arange_of_tensor(
// LINALG-SAME:      %[[ARG:.*]]: tensor<i64>) -> tensor<?xi64> {
// LINALG:         %[[END:.*]] = tensor.extract %[[ARG]][] : tensor<i64>
// LINALG:         %[[LEN:.*]] = arith.index_cast %[[END]] : i64 to index
// LINALG:         tensor.empty(%[[LEN]]) : tensor<?xi64>
func.func @arange_of_tensor(%arg0: !torch.vtensor<[],si64>) -> !torch.vtensor {
  %none = torch.constant.none
  %n = torch.aten.ScalarImplicit %arg0 : !torch.vtensor<[],si64> -> !torch.number
  %r = torch.aten.arange %n, %none, %none, %none, %none : !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %r : !torch.vtensor
}

// TORCH-LABEL: func.func @full_of_constant_tensor(
// TORCH-SAME:      %[[ARG:.*]]: !torch.vtensor<[1,?],si64>) -> !torch.vtensor<[?,?],f32> {
// TORCH:         %[[NEG_INF:.*]] = torch.vtensor.literal(dense<0xFF800000> : tensor<f32>) : !torch.vtensor<[],f32>
// TORCH:         %[[SIZE:.*]] = torch.prim.ListConstruct
// TORCH:         %[[R:.*]] = torch.aten.broadcast_to %[[NEG_INF]], %[[SIZE]] : !torch.vtensor<[],f32>, !torch.list<int> -> !torch.vtensor<[?,?],f32>
// TORCH:         return %[[R]]

// LINALG-LABEL: func.func @full_of_constant_tensor(
// LINALG-SAME:      %{{.*}}: tensor<1x?xi64>) -> tensor<?x?xf32> {
// LINALG:         %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : tensor<f32>
// LINALG:         linalg.generic {{.*}} ins(%[[NEG_INF]] : tensor<f32>) outs(%{{.*}} : tensor<?x?xf32>)
func.func @full_of_constant_tensor(%arg0: !torch.vtensor<[1,?],si64>) -> !torch.vtensor {
  %int-1 = torch.constant.int -1
  %none = torch.constant.none
  %neg_inf = torch.vtensor.literal(dense<0xFF800000> : tensor<f32>) : !torch.vtensor<[],f32>
  %fill = torch.aten.ScalarImplicit %neg_inf : !torch.vtensor<[],f32> -> !torch.number
  %len = torch.aten.size.int %arg0, %int-1 : !torch.vtensor<[1,?],si64>, !torch.int -> !torch.int
  %size = torch.prim.ListConstruct %len, %len : (!torch.int, !torch.int) -> !torch.list<int>
  %r = torch.aten.full %size, %fill, %none, %none, %none, %none : !torch.list<int>, !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %r : !torch.vtensor
}
