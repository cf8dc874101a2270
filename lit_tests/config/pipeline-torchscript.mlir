// %{pipeline:torchscript-to-torch} takes a TorchScript object graph (torch.class_type,
// torch.nn_module) to a function at the torch backend contract.

// RUN: torch-mlir-opt %s %{pipeline:torchscript-to-torch} | FileCheck %s

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %[[X:.*]]: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
// CHECK:         return %[[X]] : !torch.vtensor<[2],f32>
// CHECK-NOT:   torch.nn_module

torch.class_type @__torch__.Identity {
  torch.method "forward", @__torch__.Identity.forward
}
func.func private @__torch__.Identity.forward(%self: !torch.nn.Module<"__torch__.Identity">, %x: !torch.tensor {torch.type_bound = !torch.vtensor<[2],f32>}) -> !torch.tensor {
  return %x : !torch.tensor
}
%root = torch.nn_module {
} : !torch.nn.Module<"__torch__.Identity">
