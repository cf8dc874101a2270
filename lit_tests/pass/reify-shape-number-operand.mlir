// torch-reify-shape-calculations on aten.arange / aten.full whose Scalar operand is a
// !torch.number (what the TorchScript importer gives a traced `Scalar`, e.g. the
// aten::ScalarImplicit of `torch.arange(mask.size(-1))` when size() was traced as a tensor).
// The shape functions in the library take !torch.float for those operands.
//
// 2022 (walkthrough, in the TorchScript pipeline):
//   error: 'func.call' op operand type mismatch: expected operand type '!torch.float', but
//   provided '!torch.number' for operand number 0
//   note: see current operation: ... {callee = @__torch_mlir_shape_fn.aten.arange} :
//   (!torch.number, ...)
// and the same for operand number 1 of @__torch_mlir_shape_fn.aten.full.
// Now: the pass adapts the operand with torch.aten.Float.Scalar before the call, so the call
// type-checks. function-pipeline-scalar-round-trip.mlir runs the walkthrough's round trip
// through the whole torch-level pipeline.

// RUN: torch-mlir-opt %s -pass-pipeline='builtin.module(torch-reify-shape-calculations)' | FileCheck %s

// CHECK: func.func private @__torch_mlir_shape_fn.aten.arange(%{{.*}}: !torch.float,
// CHECK: func.func private @__torch_mlir_shape_fn.aten.full(%{{.*}}: !torch.list<int>, %{{.*}}: !torch.float,

// CHECK-LABEL: func.func @arange_of_number(
// CHECK-SAME:      %[[END:.*]]: !torch.number) -> !torch.vtensor {
// CHECK:         torch.shape.calculate {
// CHECK:           torch.aten.arange %[[END]]
// CHECK:         } shapes {
// CHECK:           %[[END_F:.*]] = torch.aten.Float.Scalar %[[END]] : !torch.number -> !torch.float
// CHECK:           func.call @__torch_mlir_shape_fn.aten.arange(%[[END_F]], {{.*}}) : (!torch.float,
func.func @arange_of_number(%end: !torch.number) -> !torch.vtensor {
  %none = torch.constant.none
  %0 = torch.aten.arange %end, %none, %none, %none, %none : !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %0 : !torch.vtensor
}

// CHECK-LABEL: func.func @full_of_number(
// CHECK-SAME:      %[[SIZE:.*]]: !torch.list<int>, %[[FILL:.*]]: !torch.number) -> !torch.vtensor {
// CHECK:         torch.shape.calculate {
// CHECK:           torch.aten.full %[[SIZE]], %[[FILL]]
// CHECK:         } shapes {
// CHECK:           %[[FILL_F:.*]] = torch.aten.Float.Scalar %[[FILL]] : !torch.number -> !torch.float
// CHECK:           func.call @__torch_mlir_shape_fn.aten.full(%[[SIZE]], %[[FILL_F]], {{.*}}) : (!torch.list<int>, !torch.float,
func.func @full_of_number(%size: !torch.list<int>, %fill: !torch.number) -> !torch.vtensor {
  %none = torch.constant.none
  %0 = torch.aten.full %size, %fill, %none, %none, %none, %none : !torch.list<int>, !torch.number, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor
  return %0 : !torch.vtensor
}
