// A model that uses a @torch.jit.script class, scripted (torch.jit.script) and imported by the
// harness (harness.frontends.torchscript); T_jit_script_class_call_method.issue.md is the report
// `harness report` wrote on the whole import through torchscript-to-torch:
//
//   @torch.jit.script
//   class Pair:
//       def __init__(self, a: torch.Tensor, b: torch.Tensor):
//           self.a = a
//           self.b = b
//       def total(self) -> torch.Tensor:
//           return self.a + self.b
//
//   class UsesScriptClass(nn.Module):
//       def forward(self, x: torch.Tensor) -> torch.Tensor:
//           return Pair(x, x * 2).total()
//
// The import has prim.CreateObject / prim.CallMethod on !torch.nn.Module<"__torch__.Pair"> and
// no torch.class_type for Pair; the pass looks the class up and uses it without a check. This is
// the report's reduced.mlir without its locations: the whole pipeline and the pass alone crash.
module attributes {torch.debug_module_name = "UsesScriptClass"} {
  torch.class_type @__torch__.UsesScriptClass {
    torch.method "forward", @__torch__.UsesScriptClass.forward
  }
  func.func private @__torch__.UsesScriptClass.forward(%arg0: !torch.nn.Module<"__torch__.UsesScriptClass">, %arg1: !torch.tensor) -> !torch.tensor {
    %0 = torch.prim.CreateObject !torch.nn.Module<"__torch__.Pair">
    %1 = torch.prim.CallMethod %0["total"] () : !torch.nn.Module<"__torch__.Pair">, () -> !torch.tensor
    return %1 : !torch.tensor
  }
}
