"""Issue 28 item 2, Reproduces through: with ``--module FILE.py:CLASS`` the report tries the FX
path itself (torch.export + the wheel's fx_importer, then the FX stages to where the report's
pipeline ends) and compares the failure: the same op is "both", a clean FX run "TorchScript
only", another FX failure is said with that failure; a bare IR file says it could not try.
Everything runs for real: the project's TorchScript importer, torch.export, torch-mlir-opt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import harness
import torch

from harness import torchscript
from harness.compiler.runner import run_pipeline
from harness.diagnose.report.sections import (FxTry, Provenance, Through, reproduces_through,
                                              same_failure, with_fx_try)
from harness.errors import UsageError
from harness.port.fx_try import fx_stages, load_module, try_fx

TS_TO_TORCH = "torchscript-to-torch"
# The whole path as one textual pipeline: object graph -> backend contract -> linalg.
TS_TO_LINALG = ("builtin.module(torchscript-module-to-torch-backend-pipeline,"
                "torch-backend-to-linalg-on-tensors-backend-pipeline)")

MODELS = '''
import torch

class Erfinv(torch.nn.Module):
    """aten.erfinv: no conversion to linalg in torch-mlir 20261001, on either frontend."""
    def forward(self, x, y):
        return torch.erfinv(x) + y

class Xlogy(torch.nn.Module):
    """aten.xlogy.Tensor: no shape function, so TorchScript's untyped result stops the backend
    contract; torch.export types every result itself, so FX passes."""
    def forward(self, x, y):
        return torch.xlogy(x, y)

class Branchy(Xlogy):
    """A branch on a tensor's value: torch.export refuses it (data-dependent guard)."""
    def forward(self, x, y):
        if x.sum() > 0:
            return torch.xlogy(x, y)
        return x

def example_inputs():
    return (torch.rand(3, 4), torch.rand(3, 4))
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fxtry")
    (folder / "models.py").write_text(MODELS)
    return folder


def _torchscript_ir(models: Path, cls: str, *, script: bool = False) -> Path:
    """The TorchScript path's IR; ``script``: scripted, not traced, so no result is typed by the
    trace (a missing shape function then shows)."""
    source = load_module(f"{models / 'models.py'}:{cls}")
    program = torch.jit.script(source.module) if script else torch.jit.trace(source.module, source.examples)
    module = torchscript.compile(program, source.examples,
                                 output_type="raw")
    path = models / f"{cls}.ts.mlir"
    path.write_text(str(module))
    return path


def test_fx_reproduces_the_same_failure_both(models):
    ts = run_pipeline(_torchscript_ir(models, "Erfinv"), TS_TO_LINALG)
    assert str(ts.signature) == "legalization-failure: failed to legalize operation 'torch.aten.erfinv'"
    fx = try_fx(f"{models / 'models.py'}:Erfinv", TS_TO_LINALG)
    assert fx.stages == ("fx-to-torch", "torch-to-linalg") and str(fx.failed_stage) == "torch-to-linalg"
    assert same_failure(ts, fx.record)
    p = with_fx_try(Provenance(blocks=("m",)), fx, ts)
    assert p.through is Through.BOTH and p.blocks == ("m",)
    text = reproduces_through(p, "input.mlir")
    assert text.startswith("Both (tried by the report: `") and "torch.aten.erfinv" in text


def test_fx_passes_torchscript_only(models):
    ts = run_pipeline(_torchscript_ir(models, "Xlogy", script=True),
                      "builtin.module(torchscript-module-to-torch-backend-pipeline)")
    assert ts.signature.op == "torch.aten.xlogy.Tensor", ts.stderr  # the premise: TorchScript fails
    fx = try_fx(f"{models / 'models.py'}:Xlogy", TS_TO_TORCH)
    assert fx.stages == ("fx-to-torch",) and fx.passed, fx.failure()
    p = with_fx_try(Provenance(), fx, ts)
    assert p.through is Through.TORCHSCRIPT_ONLY
    assert reproduces_through(p, "input.mlir").startswith("TorchScript only (tried by the report")


def test_fx_fails_differently_says_so_with_its_failure(models):
    ts = run_pipeline(_torchscript_ir(models, "Erfinv"), TS_TO_LINALG)
    fx = try_fx(f"{models / 'models.py'}:Branchy", TS_TO_LINALG)
    assert not fx.passed and "GuardOnDataDependentSymNode" in fx.import_error
    p = with_fx_try(Provenance(), fx, ts)
    assert p.through is Through.FX_FAILS_DIFFERENTLY
    text = reproduces_through(p, "input.mlir")
    assert "fails differently" in text and "GuardOnDataDependentSymNode" in text
    # a pass failure that is another one is not "the same" either
    other = run_pipeline(_torchscript_ir(models, "Xlogy", script=True), TS_TO_LINALG)
    assert not same_failure(ts, other)
    p = with_fx_try(Provenance(), FxTry("m.py:X", ("fx-to-torch",), "fx-to-torch", other), ts)
    assert p.through is Through.FX_FAILS_DIFFERENTLY and "xlogy" in p.fx_failure


def test_the_fx_stages_end_where_the_pipeline_ends():
    assert fx_stages("torchscript-to-torch") == ("fx-to-torch",)
    assert fx_stages("torchscript-module-to-torch-backend-pipeline") == ("fx-to-torch",)
    assert fx_stages("torch-to-linalg") == ("fx-to-torch", "torch-to-linalg")
    assert fx_stages("builtin.module(canonicalize)") == ("fx-to-torch", "torch-to-linalg")


def test_a_bad_module_spec_is_a_usage_error(models):
    with pytest.raises(UsageError, match=r"FILE\.py:CLASS"):
        load_module(str(models / "models.py"))
    with pytest.raises(UsageError, match=r"no torch\.nn\.Module class 'Nope'"):
        load_module(f"{models / 'models.py'}:Nope")


def _report(*words: str) -> tuple[int, dict]:
    done = harness("report", *words, "--no-reduce", "--json")
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip().startswith("{") else
                             {"stderr": done.stderr})


def test_cli_module_and_bare_ir(models, tmp_path):
    """The command a user types: with --module, issue.md says what the FX run showed; the same
    IR file without it says the FX path could not be tried."""
    ir_file = _torchscript_ir(models, "Xlogy", script=True)
    code, found = _report(str(ir_file), "--pipeline", TS_TO_TORCH, "--out", str(tmp_path / "a"),
                          "--module", f"{models / 'models.py'}:Xlogy")
    assert code == 1, found
    issue = (Path(found["folder"]) / "issue.md").read_text()
    assert "TorchScript only (tried by the report: `" in issue and "torch.export -> fx-to-torch" in issue
    code, found = _report(str(ir_file), "--pipeline", TS_TO_TORCH, "--out", str(tmp_path / "b"))
    issue = (Path(found["folder"]) / "issue.md").read_text()
    assert "bare IR file" in issue and "could not be tried" in issue
    code, found = _report(str(ir_file), "--pipeline", TS_TO_TORCH, "--out", str(tmp_path / "c"),
                          "--module", f"{models / 'models.py'}:Xlogy", "--reproduces-through", "both")
    assert code == 2 and "--module and --reproduces-through" in found["stderr"], found
