"""``harness port --fix`` applies the module fixes (harness.fixes.modules) where their blocker
shows: a trace's ``prim::PythonOp`` (autograd-function-forward, then trace again) and the FX
import's missing state mapping (persistent-buffers, then export and import again). Each is
checked in eager before the port goes on, listed in the record, and a fix that changes the
numbers is rolled back. Small modules through the real frontends and torch-mlir-opt."""

from __future__ import annotations

import torch
from torch import nn

from harness.fixes.base import Application, BlockerSeen, ModuleEvidence, ModuleFix, Site
from harness.fixes.modules import apply_module_fix
from harness.fixes.outcomes import StepOutcome
from harness.fixes.steps import FixVerdict
from harness.frontends.names import FrontendName
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome
from harness.port.subject import Subject

from support.subjects import masked_subject


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad * (s + x * s * (1 - s))


class CallsAFunction(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return Swish.apply(x) + mask.float()


class NonPersistentBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([1.0, 2.0, 3.0, 4.0]), persistent=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * self.scale + mask.float()


def _subject(module: nn.Module) -> Subject:
    return masked_subject(module)


def _port(module: nn.Module, frontend: FrontendName, folder, fix: bool):
    return port_frontend(_subject(module), frontend, folder / frontend.value,
                         PortOptions(out=str(folder), fix=fix), QUIET)


def test_prim_python_op_is_traced_through_its_forward_with_fix(tmp_path):
    stock = _port(CallsAFunction(), FrontendName.TORCHSCRIPT, tmp_path / "stock", fix=False)
    assert str(stock.outcome) == PortOutcome.FAILS.value
    assert str(stock.failed_stage) == "torchscript-to-torch"

    port = _port(CallsAFunction(), FrontendName.TORCHSCRIPT, tmp_path / "fixed", fix=True)
    assert str(port.outcome) == PortOutcome.VERIFIED.value, port.blockers
    [step] = port.fixes
    assert (step.fix, step.outcome, step.answers.stage) == (
        "autograd-function-forward", StepOutcome.KEPT, "trace")
    assert step.verification is not None and step.verification.verdict is FixVerdict.SAME
    assert step.application is not None and step.application.module is None  # not the record's
    assert [str(s.name) for s in port.stages][:3] == ["trace", "trace", "import"]  # traced again
    assert all(c.max_abs_diff < 1e-6 for c in port.numerics)
    assert "apply" not in vars(Swish)  # the class is as it was: apply inherited again


def test_missing_state_mapping_is_answered_by_persistent_buffers_with_fix(tmp_path):
    module = NonPersistentBuffer()
    stock = _port(module, FrontendName.FX, tmp_path / "stock", fix=False)
    assert str(stock.outcome) == PortOutcome.FAILS.value and str(stock.failed_stage) == "import"
    assert "Could not find state mapping for buffer" in stock.blockers[0].message

    port = _port(module, FrontendName.FX, tmp_path / "fixed", fix=True)
    assert str(port.outcome) == PortOutcome.VERIFIED.value, port.blockers
    [step] = port.fixes
    assert (step.fix, step.outcome, step.answers.stage) == (
        "persistent-buffers", StepOutcome.KEPT, "import")
    assert step.application is not None
    assert [s.what for s in step.application.changed] == ["buffer scale made persistent"]
    assert [str(s.name) for s in port.stages][:2] == ["export", "import"] and port.stages[1].ok
    assert any(n.startswith("Before --fix: export") for n in port.notes)
    # the first export's decomposed program imported again, not a second export
    assert [str(s.name) for s in port.stages].count("export") == 1
    assert any("imported again with persistent-buffers's change made on it" in n for n in port.notes)
    # the export runs in PyTorch beside eager (the imported program's graph is the importer's)
    assert all(c.program_max_abs_diff == 0.0 and not c.program_failed for c in port.numerics)
    assert "scale" in module._non_persistent_buffers_set  # undone after the export


class ZeroesTheBuffer(ModuleFix):
    """A deliberately wrong fix: the driver must see the numbers move and undo it."""

    name = "zeroes-the-buffer"

    def apply(self, module, evidence=ModuleEvidence()):
        saved = module.scale.clone()
        module.scale.zero_()
        app = Application(self.name, self.level, [Site("scale zeroed", "test")], module=module)
        app.undo = lambda: module.scale.copy_(saved)
        return app


def test_a_module_fix_that_changes_the_numbers_is_rolled_back():
    module = NonPersistentBuffer().eval()
    subject = _subject(module)
    step = apply_module_fix(ZeroesTheBuffer(), BlockerSeen(message="test", stage="import"),
                            module, [subject.inputs.tensors, subject.second_inputs.tensors])
    assert step.outcome.value == "rolled-back"
    assert step.verification.verdict.value == "numbers-changed"
    assert step.verification.max_abs_diff > 0.1
    assert torch.equal(module.scale, torch.tensor([1.0, 2.0, 3.0, 4.0]))  # undone


class CountsEagerRuns(NonPersistentBuffer):
    """Counts its forward calls on real tensors (export traces it on fake ones)."""

    def __init__(self):
        super().__init__()
        self.eager_runs = 0

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if type(x) is torch.Tensor:
            self.eager_runs += 1
        return super().forward(x, mask)


def test_the_fix_is_checked_against_the_ports_own_eager_outputs(tmp_path):
    """The unfixed module's outputs the fix is checked against are the subject's eager ones
    (which the numbers compare with too), not a second eager run of each set: two runs for the
    fix's check and none more; the check still compares (the rolled-back case above)."""
    module = CountsEagerRuns()
    port = _port(module, FrontendName.FX, tmp_path / "fixed", fix=True)
    assert str(port.outcome) == PortOutcome.VERIFIED.value, port.blockers
    assert port.fixes[0].outcome is StepOutcome.KEPT
    # the subject's outputs on both sets, then the fixed module on both sets
    assert module.eager_runs == 4


def test_given_outputs_stand_for_the_module_before_the_fix():
    module = CountsEagerRuns().eval()
    subject = _subject(module)
    examples = [subject.inputs.tensors, subject.second_inputs.tensors]
    wrong = [(torch.zeros(2, 4),), (torch.zeros(2, 4),)]  # not what the module computes
    step = apply_module_fix(ZeroesTheBuffer(), BlockerSeen(message="test", stage="import"),
                            module, examples, expected=wrong)
    # the fixed module on the first set only (its numbers moved: the check stops there); zeroing
    # the scale leaves mask.float(), ones, not the zeros given
    assert module.eager_runs == 1 and step.outcome.value == "rolled-back"
    module.eager_runs = 0
    step = apply_module_fix(ZeroesTheBuffer(), BlockerSeen(message="test", stage="import"),
                            module, examples)
    assert module.eager_runs == 3 and step.outcome.value == "rolled-back"  # 2 before, 1 after


def test_a_failed_import_is_imported_again_only_through_the_frontends_own_seam(monkeypatch):
    """Issue 41: the port named one FX fix (persistent-buffers) and built FX's payload itself;
    now a frontend says whether it can import the program its import failed on again
    (``Frontend.reimport``), and a module fix whether it can make its change on that program
    (``ModuleFix.on_export``). A frontend without the seam, or a fix without a program form,
    makes the fixed module's program anew."""
    from harness.fixes.buffers import PersistentBuffers
    from harness.fixes.steps import FixStep
    from harness.frontends.base import frontend
    from harness.frontends.fx import FxPayload, ImportFailed
    from harness.knowledge.fixes import FIXES
    from harness.port import frontend as port_frontend

    def kept_step(fix: str) -> FixStep:  # as fix_module returns a kept one
        return FixStep(fix, FIXES[fix].level, BlockerSeen(message="m", stage="import"), "import",
                       StepOutcome.KEPT)

    stopped = port_frontend._Stopped()
    stopped.exported = object()  # only present
    stopped.failure = ImportFailed("Could not find state mapping for buffer", decomposed=object())
    monkeypatch.setattr(PersistentBuffers, "on_export", lambda self, program: f"changed {program!r}")
    buffers, autograd = [kept_step("persistent-buffers")], [kept_step("autograd-function-forward")]
    made = port_frontend._reimported(frontend("fx"), stopped, buffers)
    assert isinstance(made, FxPayload) and made.decomposed and made.exported.startswith("changed")
    assert port_frontend._reimported(frontend("torchscript"), stopped, buffers) is None
    assert port_frontend._reimported(frontend("onnx"), stopped, buffers) is None
    assert port_frontend._reimported(frontend("fx"), stopped, autograd) is None
    stopped.failure = RuntimeError("no program kept")
    assert port_frontend._reimported(frontend("fx"), stopped, buffers) is None
