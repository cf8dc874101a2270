"""The fixes one by one: a fix that changes the numbers is rolled back by the driver; the module
fixes change only what they claim and can be undone."""

from __future__ import annotations

from pathlib import Path

import torch

from harness.execute.inputs import RandomInputs, random_inputs
from harness.fixes.autograd import AutogradFunctionForward
from harness.fixes.base import Application, IRFix, ModuleEvidence, Site, walk
from harness.fixes.bitwise import replace_op
from harness.fixes.buffers import PersistentBuffers, non_persistent_buffers
from harness.fixes.loop import FixOptions, fix_stages
from harness.fixes.outcomes import StepOutcome
from harness.fixes.verify import ReferenceCache
from harness.knowledge.fixes import FixLevel

# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
AND_INT = """func.func @f(%arg0: !torch.vtensor<[4],si64>, %arg1: !torch.vtensor<[4],si64>) -> !torch.vtensor<[4],si64> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[4],si64>, !torch.vtensor<[4],si64> -> !torch.vtensor<[4],si64>
  return %0 : !torch.vtensor<[4],si64>
}
"""  # noqa: E501


class AndBecomesOr(IRFix):
    """A wrong fix (| for &), to see the driver catch it: it lowers, but the numbers change."""

    name = "and-becomes-or"
    level = FixLevel.TORCH_IR
    ops = ("torch.aten.__and__.Tensor",)
    conditions = "none: it is wrong on purpose"

    def rewrite(self, module):
        app = Application(self.name, self.level)
        with module.context:
            for op in walk(module):
                if op.name == "torch.aten.__and__.Tensor":
                    replace_op(op, "torch.aten.bitwise_or.Tensor")
                    app.changed.append(Site("__and__ -> bitwise_or", "here"))
        return app


def test_a_fix_that_changes_the_numbers_is_rolled_back(tmp_path: Path):
    src = tmp_path / "and.mlir"
    src.write_text(AND_INT)
    # Integers in [0, 4): & and | differ on most pairs.
    from harness.compiler.mlir import parse_ir
    from harness.execute.reference import entry_signature

    context, module = parse_ir(src.read_bytes())
    with context:
        signature = entry_signature(module, None)
    cache = ReferenceCache(random_inputs(signature, RandomInputs(seed=0, int_low=0, int_high=4)))
    run = fix_stages(src, ["torch-to-linalg"], tmp_path, stem="and",
                     options=FixOptions(catalog=(AndBecomesOr(),)), cache=cache)
    assert [s.outcome for s in run.steps] == [StepOutcome.ROLLED_BACK]
    assert run.steps[0].verification.verdict.value == "numbers-changed"
    assert not run.ok  # the run went on without it: __and__ still blocks
    assert run.remaining[0].op == "torch.aten.__and__.Tensor"


class WithBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([2.0, 3.0]), persistent=False)
        self.register_buffer("unset", None, persistent=False)

    def forward(self, x):
        return x * self.scale


def test_persistent_buffers_changes_persistence_only_and_undoes():
    m = WithBuffer().eval()
    x = torch.ones(2)
    before = m(x)
    assert non_persistent_buffers(m) == ["scale"] and "scale" not in m.state_dict()
    app = PersistentBuffers().apply(m)
    assert [str(s.what) for s in app.changed] == ["buffer scale made persistent"]
    assert "scale" in m.state_dict() and torch.equal(m(x), before)
    # The FX path: torch.export keeps the buffer and the state dict now maps it.
    exported = torch.export.export(m, (x,))
    assert "scale" in exported.state_dict
    app.undo()
    assert non_persistent_buffers(m) == ["scale"]


class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2 + 1

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class UsesFunction(torch.nn.Module):
    def forward(self, x):
        return Doubled.apply(x).tanh()


def test_autograd_function_is_traced_through_its_forward():
    m = UsesFunction().eval()
    x = torch.randn(3)
    script = torch.jit.trace(m, (x,))
    assert script.inlined_graph.findAllNodes("prim::PythonOp")
    app = AutogradFunctionForward().apply(m, ModuleEvidence(script=script, examples=(x,)))
    assert [str(s.what) for s in app.changed] == ["Doubled.apply -> Doubled.forward"]
    fixed = torch.jit.trace(app.module, (x,))
    assert not fixed.inlined_graph.findAllNodes("prim::PythonOp")
    assert torch.equal(fixed(x), m(x))
    assert "apply" not in vars(Doubled)  # restored after the call


def test_autograd_function_refused_in_training_mode():
    m = UsesFunction().train()
    app = AutogradFunctionForward().apply(m, ModuleEvidence(examples=(torch.randn(3),)))
    assert not app.applied and "training mode" in app.refused[0].reason
