"""One import, every target and backend: the port lowers the one torch backend contract to
linalg, TOSA and StableHLO (harness.compiler.targets), checks each one's numbers on the
RefBackend and on IREE (harness.execute.backends), and records each as its own port."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.compiler.targets import Target
from harness.errors import HarnessEnvironmentError
from harness.execute import backend_iree
from harness.execute.backend_names import BackendName
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_targets
from harness.port.progress import QUIET
from harness.port.record import (
    FrontendPort,
    PassSource,
    PortOutcome,
    PortRecord,
    PortStage,
    SourceKind,
    VariantRecord,
)
from harness.port.render import summary
from harness.models.choice import Variant
from harness.port.subject import Subject

from support.subjects import masked_subject

ALL = (Target.LINALG, Target.TOSA, Target.STABLEHLO)


class TanhGelu(nn.Module):
    """HF's gelu_pytorch_tanh after a matmul: torch-to-linalg's tanh-gelu constant is sqrt(7/11),
    not sqrt(2/pi) (2e-4 relative: off by the float64 rule, within rtol 1e-4); TorchToTosa and
    TorchToStablehlo lower the same op right."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16, generator=torch.Generator().manual_seed(3)) / 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x @ self.w, approximate="tanh")


class AndMask(nn.Module):
    """``&`` of two boolean masks, which TorchScript records as aten.__and__.Tensor."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * ((mask > 0) & (x > 0)).float()


def _subject(module: nn.Module, name: str) -> Subject:
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(4, 16, generator=g) * 2, torch.randn(4, 16, generator=g) * 2
    module = module.eval()
    return Subject(name, module, InputSet(("x",), (x0,), "seed 0"), InputSet(("x",), (x1,), "seed 0, 2"),
                   trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                   output_names=("y",))


def _ports(subject: Subject, frontend: FrontendName, tmp_path: Path, **options):
    return port_targets(subject, frontend, tmp_path / f"{subject.name}.{frontend.value}",
                        PortOptions(out=str(tmp_path), **options), QUIET)


def test_each_target_is_its_own_port_from_one_import(tmp_path: Path):
    ports = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path, targets=ALL)
    assert [p.target for p in ports] == list(ALL)
    assert [str(p.path) for p in ports] == ["fx", "fx-tosa", "fx-stablehlo"]
    # the wrong constant is torch-to-linalg's alone: the other two contracts compute it right
    assert [p.outcome for p in ports] == [PortOutcome.NUMERICS_MISMATCH, PortOutcome.VERIFIED,
                                          PortOutcome.VERIFIED]
    names = [[s.name for s in p.stages] for p in ports]
    assert names[1][2:5] == [PortStage.FX_TO_TORCH, PortStage.TORCH_TO_TOSA, PortStage.TOSA_TO_LINALG]
    assert names[2][2:5] == [PortStage.FX_TO_TORCH, PortStage.TORCH_TO_STABLEHLO,
                             PortStage.STABLEHLO_TO_LINALG]
    # export, import and the torch backend contract made once: the same stage, the same file
    contracts = {p.stages[2].output for p in ports}
    assert len(contracts) == 1 and {p.stages[0].seconds for p in ports} == {ports[0].stages[0].seconds}
    folders = [Path(p.folder).name for p in ports]
    assert folders == ["gelu.fx", "gelu.fx-tosa", "gelu.fx-stablehlo"]
    tosa = Path(ports[1].stages[3].output).read_text()
    assert "tosa." in tosa and Path(ports[1].stages[3].output).parent.name == "gelu.fx-tosa"
    assert "stablehlo." in Path(ports[2].stages[3].output).read_text()
    # the mismatch's check command names the target's own stages
    assert "fx-to-torch,torch-to-linalg" in ports[0].commands[0]


def test_a_target_that_fails_is_diagnosed_while_another_verifies(tmp_path: Path):
    """TorchScript records ``&`` as aten.__and__.Tensor: torch-to-linalg and torch-to-tosa have
    no pattern for it; torch-to-stablehlo has one."""
    ports = _ports(masked_subject(AndMask()), FrontendName.TORCHSCRIPT, tmp_path, targets=ALL)
    linalg, tosa, stablehlo = ports
    assert linalg.failed_stage is PortStage.TORCH_TO_LINALG
    assert tosa.failed_stage is PortStage.TORCH_TO_TOSA
    assert tosa.blockers[0].op == "torch.aten.__and__.Tensor"
    assert tosa.blockers[0].failing_pass == "convert-torch-to-tosa"
    assert "--pipeline torch-to-tosa" in " ".join(tosa.commands)
    assert stablehlo.outcome is PortOutcome.VERIFIED
    record = PortRecord("and", SourceKind.TYPE, "and",
                        variants=[VariantRecord(Variant.STOCK, "and", ports=ports)])
    lines = summary(record)
    assert any(line.startswith("and torchscript to stablehlo: verified") for line in lines)
    assert any(line.startswith("and torchscript to tosa: fails at torch-to-tosa") for line in lines)
    again = PortRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert [p.path for _, p in again.ports()] == ["torchscript", "torchscript-tosa",
                                                  "torchscript-stablehlo"]


def test_each_target_has_its_folder_whichever_comes_first_and_fix_reaches_tosa(tmp_path: Path):
    """``--target tosa,linalg``: each target's files in its own folder beside the frontend's
    (once suffixed: andmask.torchscript-tosa and andmask.torchscript); ``--fix`` answers TorchScript's
    __and__ on TOSA too (the fix loop skips the bindings stage's analysis)."""
    ports = _ports(masked_subject(AndMask()), FrontendName.TORCHSCRIPT, tmp_path,
                   targets=(Target.TOSA, Target.LINALG), fix=True)
    assert [Path(p.folder).name for p in ports] == ["andmask.torchscript-tosa", "andmask.torchscript"]
    assert [p.outcome for p in ports] == [PortOutcome.VERIFIED, PortOutcome.VERIFIED]
    llvm = [s.output for p in ports for s in p.stages if s.name is PortStage.REFBACKEND_LOWERING]
    assert len(set(llvm)) == 2


def test_a_sweep_keeps_a_frontends_shared_files_while_one_of_its_ports_fails():
    from harness.sweep.runner import verified_folders

    ok = FrontendPort(FrontendName.FX, PortOutcome.VERIFIED, folder="m.fx")
    tosa = FrontendPort(FrontendName.FX, PortOutcome.FAILS, folder="m.fx-tosa", target=Target.TOSA)
    iree = FrontendPort(FrontendName.FX, PortOutcome.VERIFIED, folder="m.fx", backend=BackendName.IREE)
    ts = FrontendPort(FrontendName.TORCHSCRIPT, PortOutcome.VERIFIED, folder="m.torchscript")
    record = PortRecord("m", SourceKind.TYPE, "m",
                        variants=[VariantRecord(Variant.STOCK, "m", ports=[ok, tosa, iree, ts])])
    assert verified_folders(record) == ["m.torchscript"]  # fx-tosa reads m.fx's contract
    assert verified_folders(record, {"m.torchscript": "numerics-mismatch"}) == []
    tosa.outcome = PortOutcome.VERIFIED
    assert verified_folders(record) == ["m.fx", "m.fx-tosa", "m.torchscript"]


def test_a_record_without_targets_reads_as_linalg_on_the_refbackend():
    path = Path(__file__).parents[1] / "data" / "port" / "opt-tiny-stock.record.json"
    record = PortRecord.read(path)
    assert all(p.target is Target.LINALG and p.backend is BackendName.REFBACKEND
               for _, p in record.ports())
    assert [p.path for _, p in record.ports()] == [p.frontend.value for _, p in record.ports()]


def test_iree_runs_linalg_and_stablehlo_and_refuses_tosa_outside_its_profile(tmp_path: Path):
    ports = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path, targets=ALL,
                   backends=(BackendName.REFBACKEND, BackendName.IREE))
    by_path = {p.path: p for p in ports}
    assert list(by_path) == ["fx", "fx-iree", "fx-tosa", "fx-tosa-iree", "fx-stablehlo",
                             "fx-stablehlo-iree"]
    # IREE runs the same linalg file: the same wrong constant, the same verdict; the one-op
    # search (on the RefBackend) does not speak for IREE: no culprit named, no verdict flipped
    assert by_path["fx-iree"].outcome is PortOutcome.NUMERICS_MISMATCH
    assert all(c.culprit.startswith("not narrowed: the one-op search runs on the RefBackend")
               for c in by_path["fx-iree"].numerics if c.verdict is PortOutcome.NUMERICS_MISMATCH)
    # StableHLO as printed goes through IREE's own input conversion, which is right
    assert by_path["fx-stablehlo-iree"].outcome is PortOutcome.VERIFIED
    iree = by_path["fx-stablehlo-iree"]
    assert [s.name for s in iree.stages][-2:] == [PortStage.IREE_COMPILE, PortStage.EXECUTION]
    assert Path(iree.stages[-2].output).suffix == ".vmfb"
    # TOSA in generic form through IREE's TOSA input: right too (no f64, no i64 casts here)
    assert by_path["fx-tosa-iree"].outcome is PortOutcome.VERIFIED


class LayerNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class Positions(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.arange(16).float()


@pytest.mark.parametrize(("module", "said", "idiom", "bundle", "fix"), [
    # the FX path's variance in float64
    (LayerNorm(), "element type 'f64' is not legal", "tosa-variance-f64",
     "variance-f32-in-f64-outside-tosa-profiles", "tosa-variance-f32"),
    # an int64 -> float32 cast
    (Positions(), "got (i64,f32)", "tosa-cast-i64-f32", "tosa-cast-i64-to-f32-outside-profiles",
     "tosa-cast-via-i32"),
])
def test_tosa_outside_iree_s_profiles_fails_at_iree_compile(tmp_path: Path, module, said, idiom, bundle,
                                                            fix):
    port = _ports(_subject(module, "m"), FrontendName.FX, tmp_path, targets=(Target.TOSA,),
                  backends=(BackendName.IREE,))[0]
    assert port.failed_stage is PortStage.IREE_COMPILE
    blocker = port.blockers[0]
    assert blocker.op == "tosa.cast" and said in blocker.message
    # its own finding: torch-mlir's emitter and the bundle, and the TOSA fix for IREE (--fix)
    assert blocker.hint.startswith(f"{idiom}: not the model's")
    assert fix in " ".join(blocker.fixes), blocker.fixes
    # the IREE pass that refused it, from the compile's own after-failure dump (issue 43 item 4)
    assert blocker.failing_pass == "tosa-validate"
    assert blocker.failing_pass_from is PassSource.AFTER_FAILURE_DUMP
    assert f"reports/upstream/{bundle}/" in blocker.hint
    assert "--iree-input-type=tosa" in port.commands[0] and port.commands[0].endswith(".vmfb")
    rerun = subprocess.run(shlex.split(port.commands[0]), capture_output=True, text=True)
    assert rerun.returncode != 0 and said in rerun.stderr


def test_the_records_iree_commands_paste_and_run(tmp_path: Path):
    import numpy as np

    port = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path,
                  targets=(Target.STABLEHLO,), backends=(BackendName.IREE,))[0]
    compile_stage = port.stages[-2]
    vmfb = Path(compile_stage.output)
    assert compile_stage.name is PortStage.IREE_COMPILE
    assert "--iree-input-type=stablehlo" in compile_stage.command
    vmfb.unlink()
    assert subprocess.run(shlex.split(compile_stage.command), capture_output=True).returncode == 0
    assert vmfb.is_file()
    check = port.numerics[0]
    assert check.run_command.startswith(shlex.quote(backend_iree.tool("iree-run-module")))
    output = Path(next(w[len("--output=@"):] for w in shlex.split(check.run_command)
                       if w.startswith("--output=@")))
    before = np.load(output)
    output.unlink()
    assert subprocess.run(shlex.split(check.run_command), capture_output=True).returncode == 0
    assert np.array_equal(np.load(output), before)
    with np.load(check.inputs_file) as inputs:  # what harness check --inputs takes
        assert list(inputs.files) == ["arg0"]


def test_iree_run_module_fails_on_wrong_expected_output(tmp_path: Path):
    """IREE's own check (``--expected_output``) can fail: the numbers it is given decide."""
    ports = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path,
                   targets=(Target.STABLEHLO,), backends=(BackendName.IREE,))
    vmfb = Path(ports[0].stages[-2].output)
    work = next(Path(ports[0].folder).glob("execution-traced-*"))
    import numpy as np

    right = np.load(work / "output0.npy")
    np.save(tmp_path / "wrong.npy", right + 1e-2)
    base = [backend_iree.tool("iree-run-module"), backend_iree.RUN_DEVICE, f"--module={vmfb}",
            "--function=main", f"--input=@{work / 'input0.npy'}"]
    ok = subprocess.run([*base, f"--expected_output=@{work / 'output0.npy'}"], capture_output=True)
    bad = subprocess.run([*base, f"--expected_output=@{tmp_path / 'wrong.npy'}"], capture_output=True)
    assert ok.returncode == 0 and bad.returncode != 0


def test_a_missing_iree_is_said_in_one_paragraph(monkeypatch, tmp_path: Path):
    monkeypatch.setattr(backend_iree.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HarnessEnvironmentError, match=r"pip install -e '\.\[iree\]'.*--backend"):
        backend_iree.IreeBackend().check()


def test_the_ir_tools_take_a_target_for_a_pipeline(tmp_path: Path):
    """``--target T`` for ``--pipeline``: check lowers through T's stages on to linalg; the
    other tools run T's lowering; a wrong name is argparse's usage error (exit 2)."""
    import sys

    ports = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path, numerics=False,
                   keep_weights=True)
    contract = ports[0].stages[2].output  # fx-to-torch's: the torch backend contract
    np_inputs = tmp_path / "in.npz"
    import numpy as np

    np.savez(np_inputs, np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))

    def harness(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "harness", "--no-progress", *args],
                              capture_output=True, text=True, cwd=tmp_path)

    checked = harness("check", contract, "--target", "stablehlo", "--inputs", str(np_inputs))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "through torch-to-stablehlo,stablehlo-to-linalg and the RefBackend" in checked.stdout
    linalg = harness("check", contract, "--target", "linalg", "--inputs", str(np_inputs))
    assert linalg.returncode == 1 and "numerics-mismatch" in linalg.stdout  # the gelu constant
    explained = harness("explain", contract, "--target", "tosa")
    assert "torch-backend-to-tosa-backend-pipeline" in explained.stdout
    wrong = harness("check", contract, "--target", "mhlo")
    assert wrong.returncode == 2 and "unknown target 'mhlo'" in wrong.stderr


class LastColumn(nn.Module):
    """``x[:, [-1]]``, Falcon's ``qkv[:, :, :, [-1]]``: TorchToStablehlo's index lowering does
    not wrap a negative index (stablehlo.gather clamps it to 0); linalg and TOSA wrap it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, [-1]] * 2


def test_an_iree_test_case_runs_with_iree_tools_alone(tmp_path: Path):
    cases = tmp_path / "cases"
    ports = _ports(_subject(LastColumn(), "last"), FrontendName.FX, tmp_path,
                   targets=(Target.LINALG, Target.STABLEHLO), backends=(BackendName.IREE,),
                   testcase_dir=str(cases))
    assert [(p.path, p.outcome) for p in ports] == [
        ("fx-iree", PortOutcome.VERIFIED), ("fx-stablehlo-iree", PortOutcome.NUMERICS_MISMATCH)]
    for port, status in zip(ports, (0, 1), strict=True):
        folder = cases / f"last.{port.path}"
        assert sorted(p.name for p in folder.iterdir()) == [
            "module.mlir", "run.sh", "second", "second.flagfile", "traced", "traced.flagfile"]
        assert port.testcase == str(folder / "run.sh")
        moved = tmp_path / f"moved-{port.path}"
        folder.rename(moved)  # relative paths only: it runs wherever it is put
        env = {"PATH": str(Path(backend_iree.tool("iree-compile")).parent) + ":/usr/bin:/bin"}
        done = subprocess.run(["sh", str(moved / "run.sh")], capture_output=True, text=True, env=env)
        assert done.returncode == status, done.stdout + done.stderr


def test_the_one_op_search_cuts_an_op_with_its_list_of_tensors(tmp_path: Path):
    """``aten.index.Tensor_hacked_twin`` takes its indices as a ``!torch.list<vtensor>``, which
    cannot be an argument: the op's own program takes the list's construction along. Before, the
    search skipped it ("cannot run alone") and named no op for falcon on StableHLO."""
    port = _ports(_subject(LastColumn(), "last"), FrontendName.FX, tmp_path,
                  targets=(Target.STABLEHLO,))[0]
    assert port.outcome is PortOutcome.NUMERICS_MISMATCH
    culprit = next(c.culprit for c in port.numerics if c.culprit)
    assert culprit.startswith("aten.index.Tensor_hacked_twin computes wrong"), culprit
    command = next(c.culprit_command for c in port.numerics if c.culprit_command)
    assert "--pipeline torch-to-stablehlo,stablehlo-to-linalg" in command


def test_a_backend_of_ones_own_registered_in_the_table_ports_a_model(tmp_path: Path, monkeypatch):
    """The backend seam: a backend written in one module under tests/ (the reference evaluator
    in PyTorch, no compiler) put in BACKENDS; the port runs through it with nothing else
    changed: it compiles, runs both sets, and the verdict stands on its outputs."""
    from harness.execute import backends
    from support.reference_backend import ReferenceBackend

    made: list[ReferenceBackend] = []

    def factory() -> ReferenceBackend:
        made.append(ReferenceBackend())
        return made[-1]

    monkeypatch.setitem(backends.BACKENDS, BackendName.REFBACKEND, factory)
    port = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path, targets=(Target.TOSA,))[0]
    assert made and made[0].ran == [2]
    # its outputs are eager PyTorch's own ops: the float64 rule finds nothing wrong
    assert port.outcome is PortOutcome.VERIFIED, [c.max_abs_diff for c in port.numerics]
    # it took the torch backend contract, not TOSA's linalg: TOSA's way on to linalg never ran
    assert [s.name for s in port.stages][-2:] == [PortStage.REFBACKEND_LOWERING, PortStage.EXECUTION]
    assert PortStage.TOSA_TO_LINALG not in [s.name for s in port.stages]


@pytest.mark.parametrize(("options", "said"), [
    ({}, "add --backend iree"),
    ({"backends": (BackendName.IREE,), "numerics": False}, "--no-numerics and --torch-only skip"),
])
def test_an_iree_testcase_nothing_would_write_is_refused_before_the_model(tmp_path: Path, options, said):
    """It was silently ignored (review item 12): --iree-testcase without an IREE port, or without
    the numbers check that writes it."""
    from harness.errors import UsageError
    from harness.port import port_model

    with pytest.raises(UsageError, match=said):
        port_model("no-such-model-type", PortOptions(testcase_dir=str(tmp_path / "cases"), **options))
    assert not (tmp_path / "cases").exists()


@pytest.mark.parametrize("backends", [(BackendName.IREE,), (BackendName.IREE, BackendName.REFBACKEND)],
                         ids=["iree", "iree,refbackend"])
def test_a_port_on_iree_alone_never_runs_the_way_on_to_linalg(tmp_path: Path, backends):
    """IREE takes TOSA as it is: with --no-numerics and IREE the only backend, or the first
    (--no-numerics ports on the first backend alone: `--backend iree,refbackend`),
    tosa-to-linalg ran unrecorded (review item 8); now it does not run at all, and the
    RefBackend first still gets it."""
    alone = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path / "alone",
                   targets=(Target.TOSA,), backends=backends, numerics=False)
    assert [p.backend for p in alone] == [BackendName.IREE]
    assert [s.name for s in alone[0].stages][-1] is PortStage.TORCH_TO_TOSA
    assert alone[0].outcome is PortOutcome.LOWERED
    assert not list((tmp_path / "alone").rglob("*tosa-to-linalg*"))
    beside = _ports(_subject(TanhGelu(), "gelu"), FrontendName.FX, tmp_path / "beside",
                    targets=(Target.TOSA,), numerics=False)
    assert [s.name for s in beside[0].stages][-1] is PortStage.TOSA_TO_LINALG

