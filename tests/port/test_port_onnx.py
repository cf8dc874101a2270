"""The ONNX frontend: the FX frontend's torch.export program through torch.onnx.export, the
wheel's onnx_importer and torch-onnx-to-torch-backend-pipeline, then any target and backend;
onnxruntime runs the .onnx file against eager PyTorch, so an exporter's bug is told apart from
torch-mlir's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.compiler.targets import Target
from harness.errors import HarnessEnvironmentError
from harness.frontends import onnx as onnx_frontend
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_targets
from harness.port.options import parse_frontends
from harness.port.progress import QUIET
from harness.port.record import PortOutcome, PortStage, PortRecord, SourceKind, VariantRecord
from harness.port.render import render
from harness.port.subject import Subject
from harness.models.choice import Variant


class Block(nn.Module):
    """A linear layer, a layer norm and a softmax: ONNX's Gemm, LayerNormalization, Softmax."""

    def __init__(self) -> None:
        super().__init__()
        self.linear, self.norm = nn.Linear(16, 16), nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.linear(x)).softmax(-1)


class TanhGelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 16, generator=torch.Generator().manual_seed(3)) / 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x @ self.w, approximate="tanh")


def _subject(module: nn.Module, name: str) -> Subject:
    torch.manual_seed(0)
    module = module.eval()
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(4, 16, generator=g) * 2, torch.randn(4, 16, generator=g) * 2
    return Subject(name, module, InputSet(("x",), (x0,), "seed 0"), InputSet(("x",), (x1,), "seed 0, 2"),
                   output_names=("y",))


def _ports(subject: Subject, tmp_path: Path, **options):
    return port_targets(subject, FrontendName.ONNX, tmp_path / f"{subject.name}.onnx",
                        PortOptions(out=str(tmp_path), **options), QUIET)


def test_a_module_through_onnx_is_verified_with_its_onnx_file_kept(tmp_path: Path):
    port = _ports(_subject(Block(), "block"), tmp_path)[0]
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    assert [s.name for s in port.stages] == [
        PortStage.EXPORT, PortStage.ONNX_EXPORT, PortStage.IMPORT, PortStage.ONNX_TO_TORCH,
        PortStage.TORCH_TO_LINALG, PortStage.REFBACKEND_LOWERING, PortStage.EXECUTION]
    onnx_file = Path(port.folder) / "block.onnx"
    import onnx

    assert [str(n.op_type) for n in onnx.load(str(onnx_file)).graph.node] == [
        "Gemm", "LayerNormalization", "Softmax"]
    imported = Path(port.stages[2].output).read_text()
    assert 'torch.operator "onnx.LayerNormalization"' in imported
    # onnxruntime ran the file against eager: not bit-exact, and right by the float64 rule
    assert all(c.program_ok is True and c.program_max_abs_diff is not None for c in port.numerics)
    assert Path(port.stages[3].output).name == "block.1.onnx-to-torch.mlir"


def test_a_port_of_fx_and_onnx_exports_the_model_once_and_both_verify(tmp_path: Path):
    """The ONNX frontend converts the FX frontend's export; on static shapes the capture's
    settings make the same program, so the second port takes the first one's (issue 42: three
    frontends at most 1.5x two). Under --dynamic each keeps its own export (its settings
    differ there)."""
    subject = _subject(Block(), "block")
    fx = port_targets(subject, FrontendName.FX, tmp_path / "block.fx", PortOptions(out=str(tmp_path)),
                      QUIET)[0]
    onnx_port = _ports(subject, tmp_path)[0]
    assert (fx.outcome, onnx_port.outcome) == (PortOutcome.VERIFIED, PortOutcome.VERIFIED), (
        fx.blockers, onnx_port.blockers)
    assert not any("reused" in n for n in fx.notes)
    assert any(n.startswith("export: the fx port's program of this model, reused") for n in onnx_port.notes)
    export = next(s for s in onnx_port.stages if s.name is PortStage.EXPORT)
    assert export.ok and export.seconds < 0.05, export.seconds
    assert list(subject.made_programs) == [("fx", "static")]


class Wide(nn.Module):
    """Two linear layers of 32x32 weights: large enough to print as hex."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x)))


def test_the_onnx_ports_weights_reach_the_jit_as_flat_arrays(tmp_path: Path) -> None:
    """Issue 42: torch-mlir's onnx.Constant pattern makes each weight an inline hex
    ``dense<"0x...">``, not the FX path's ``dense_resource``; the JIT's flat-globals rewrite
    passed over them, and translating their nested array types made rt_detr's JIT 85 s against
    FX's 4 s. Every multi-dimensional weight global of the ONNX port's LLVM module is flat as
    the JIT gets it, and the port is verified."""
    from harness.execute.flat_globals import flatten_constant_globals

    port = _ports(_subject(Wide(), "wide"), tmp_path)[0]
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    text = (Path(port.folder) / "wide.llvm.mlir").read_bytes()
    weights = [line for line in text.splitlines()
               if line.lstrip().startswith(b"llvm.mlir.global") and b'(dense<"0x' in line]
    assert len(weights) >= 2 and all(b"x array<" in line for line in weights), weights
    flat, count = flatten_constant_globals(text)
    assert count >= 2
    assert not [line for line in flat.splitlines()
                if line.lstrip().startswith(b"llvm.mlir.global") and b"x array<" in line
                and b'(dense<"0x' in line]


class Rows(nn.Module):
    """``int(n)`` of a tensor input: a value the non-strict export guards on and cannot see."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        return x.reshape(int(n), -1) * 2


def test_the_onnx_export_falls_back_to_strict_as_torch_onnx_export_does(tmp_path: Path):
    """torch.onnx.export's capture tries torch.export non-strict, then strict (upstream's
    UnsafeViewCollapseDynamicWithAtenSizeIntModule passed through upstream's onnx config and
    failed at export through the harness's). The ONNX frontend's export does the same and says
    so; the FX frontend keeps the one non-strict export, as upstream's fx_importer config, and
    does not take the ONNX port's strict program either."""
    g = torch.Generator().manual_seed(0)
    n = torch.tensor(2)
    subject = Subject("rows", Rows().eval(), InputSet(("x", "n"), (torch.randn(4, 6, generator=g), n), "s0"),
                      InputSet(("x", "n"), (torch.randn(4, 6, generator=g), n), "s1"), output_names=("y",))
    onnx_port = _ports(subject, tmp_path)[0]
    assert onnx_port.outcome is PortOutcome.VERIFIED, onnx_port.blockers
    assert any(note.startswith("export: the non-strict torch.export failed (GuardOnDataDependentSymNode")
               and "strict=True exported it" in note for note in onnx_port.notes), onnx_port.notes
    fx = port_targets(subject, FrontendName.FX, tmp_path / "rows.fx", PortOptions(out=str(tmp_path)),
                      QUIET)[0]
    assert fx.failed_stage is PortStage.EXPORT and "GuardOnDataDependentSymNode" in fx.blockers[0].message
    assert subject.made_programs == {}


def test_the_gelu_constant_is_met_through_onnx_too_and_only_on_linalg(tmp_path: Path):
    """The supported path reaches the bug: ONNX's Gelu(approximate="tanh") becomes aten.gelu
    in TorchOnnxToTorch, then torch-to-linalg's sqrt(7/11)."""
    ports = _ports(_subject(TanhGelu(), "gelu"), tmp_path,
                   targets=(Target.LINALG, Target.TOSA, Target.STABLEHLO))
    assert [(p.path, p.outcome) for p in ports] == [
        ("onnx", PortOutcome.NUMERICS_MISMATCH), ("onnx-tosa", PortOutcome.VERIFIED),
        ("onnx-stablehlo", PortOutcome.VERIFIED)]
    culprit = next(c.culprit for c in ports[0].numerics if c.culprit)
    assert culprit.startswith("aten.gelu computes wrong"), culprit
    assert "onnx-to-torch,torch-to-linalg" in ports[0].commands[0]


def test_an_exporter_that_gets_it_wrong_is_named_not_torch_mlir(tmp_path: Path, monkeypatch):
    """onnxruntime's run of the file stands for the exporter: when it differs from eager past
    the float64 rule, the mismatch is the exporter's, and no torch-mlir op is searched for."""
    real = onnx_frontend.runner

    def off(path):
        run = real(path)
        return lambda tensors: [t + 0.5 for t in run(tensors)]

    monkeypatch.setattr(onnx_frontend, "runner", off)
    port = _ports(_subject(TanhGelu(), "gelu"), tmp_path)[0]
    assert port.outcome is PortOutcome.NUMERICS_MISMATCH
    check = next(c for c in port.numerics if c.verdict is PortOutcome.NUMERICS_MISMATCH)
    assert check.program_ok is False and check.culprit.startswith("not narrowed")
    record = PortRecord("gelu", SourceKind.TYPE, "gelu", variants=[VariantRecord(Variant.STOCK, "gelu",
                                                                               ports=[port])])
    assert any("ONNX exporter got it wrong" in line for line in render(record))


def test_frontends_are_a_list_and_a_missing_onnx_is_one_paragraph(monkeypatch):
    assert parse_frontends("onnx,fx,onnx") == (FrontendName.ONNX, FrontendName.FX)
    assert parse_frontends("both") == (FrontendName.TORCHSCRIPT, FrontendName.FX)
    monkeypatch.setitem(sys.modules, "onnxscript", None)  # import onnxscript raises ImportError
    with pytest.raises(HarnessEnvironmentError, match=r"pip install -e '\.\[onnx\]'.*--frontend"):
        onnx_frontend.check()


class Pooled(nn.Module):
    """Token embeddings averaged over a sequence the ONNX file leaves symbolic."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 16)

    def forward(self, ids: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return self.embed(ids).mean(1) * scale


def test_an_onnx_file_is_a_model_its_inputs_from_its_graph(tmp_path: Path):
    """``harness port FILE.onnx``: a file the test exports itself, with a dynamic sequence axis;
    its inputs come from the graph (the symbolic seq given --seq, ints ones), onnxruntime is the
    reference, and only the ONNX frontend takes it, as it is (no export)."""
    from support import harness

    ids, scale = torch.ones(2, 5, dtype=torch.int64), torch.ones(2, 1)
    seq = torch.export.Dim("seq", min=2, max=64)
    exported = torch.export.export(Pooled().eval(), (ids, scale), dynamic_shapes=({1: seq}, None))
    path = tmp_path / "pooled.onnx"
    onnx_frontend.export(exported, (ids, scale), path, name="pooled")
    record_path = tmp_path / "record.json"
    proc = harness("--no-progress", "port", str(path), "--seq", "7", "--out", tmp_path / "out",
                   "--json", record_path, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    record = PortRecord.read(record_path)
    assert record.source is SourceKind.ONNX_FILE and record.variants[0].name == "onnx-pooled"
    assert [(p.path, p.outcome) for _, p in record.ports()] == [("onnx", PortOutcome.VERIFIED)]
    port = record.variants[0].ports[0]
    assert [s.name for s in port.stages][:2] == [PortStage.IMPORT, PortStage.ONNX_TO_TORCH]
    assert "ids int64[2, 7]" in " ".join(record.variants[0].sentences)  # seq given its size
    assert "onnxruntime as the reference" in proc.stdout
    wrong = harness("--no-progress", "port", str(tmp_path / "none.onnx"), timeout=120)
    assert wrong.returncode == 2 and "ends in .onnx but is not a file" in wrong.stderr
    given = harness("--no-progress", "port", str(path), "--input", "nosuch=2x3", timeout=120)
    assert given.returncode == 2 and "has no input of that name" in given.stderr


class Positions(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + (x * 4).long().float()  # float32 <-> int64 casts: outside IREE's TOSA profile


def test_an_onnx_blocker_names_the_python_line_behind_its_onnx_node(tmp_path: Path):
    """The onnx_importer names an op's location after its ONNX node; the dynamo exporter keeps
    the node's Python stack in the file: the blocker gets the model's line and the node."""
    from harness.execute.backend_names import BackendName

    port = _ports(_subject(Positions(), "pos"), tmp_path, targets=(Target.TOSA,),
                  backends=(BackendName.IREE,))[0]
    assert port.failed_stage is PortStage.IREE_COMPILE
    blocker = port.blockers[0]
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if "(x * 4).long().float()" in text)
    assert blocker.location == f"{__file__}:{line}", blocker
    assert "ONNX node" in blocker.explanation and "tosa.cast" in blocker.message
    assert "did not align with any profile" in blocker.message


def test_an_onnx_file_onnxruntime_cannot_load_is_one_paragraph_before_any_folder(tmp_path: Path):
    """An ONNX file of a newer IR version than onnxruntime 1.31 takes was an internal error
    (exit 3) from the reference's first run; now it is bad input, said before the port makes
    its folder."""
    import subprocess

    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 99
    onnx.save(model, tmp_path / "newer.onnx")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "harness", "--no-progress", "port",
                           str(tmp_path / "newer.onnx"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    said = done.stderr.strip()
    assert said.startswith("harness: error: onnxruntime") and "cannot load the ONNX file" in said
    assert "model.ir_version" in said and "internal error" not in said and len(said.splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())


def test_an_onnx_op_without_a_torch_onnx_to_torch_pattern_is_named_in_onnx_terms(tmp_path: Path):
    """Issue 42 item 4. ``onnx.Softsign`` has no TorchOnnxToTorch pattern in the wheel: MLIR
    reports it at the node's name location (``<unknown>:0: error: loc("ss"): failed to
    legalize ...``), which was read as a pass failure of a bare ``torch.operator``. It is the
    ONNX op, with its node and opset, the conversion pass that left it, and a one-op reproducer
    in the torch.operator form that keeps the function's opset."""
    import subprocess

    from harness.compiler.binary import wheel_binary
    from support.programs import softsign_onnx

    softsign_onnx(tmp_path / "softsign.onnx", opset=17)
    done = subprocess.run([sys.executable, "-m", "harness", "--no-progress", "port",
                           str(tmp_path / "softsign.onnx"), "--out", str(tmp_path / "out"),
                           "--json", str(tmp_path / "r.json")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    (port,) = PortRecord.read(tmp_path / "r.json").variants[0].ports
    assert port.failed_stage is PortStage.ONNX_TO_TORCH
    (blocker,) = port.blockers
    assert blocker.op == 'torch.operator "onnx.Softsign"'
    assert blocker.signature.startswith("legalization-failure: ")
    assert blocker.failing_pass == "convert-torch-onnx-to-torch"
    assert "ONNX op Softsign (node ss, opset 17) has no TorchOnnxToTorch pattern" in blocker.explanation
    assert "GeneratedTorchOps.td" not in done.stdout  # not a torch op the dialect lacks
    reproducer = Path(blocker.reproducer).read_text()
    assert 'torch.operator "onnx.Softsign"' in reproducer
    assert "torch.onnx_meta.opset_version = 17" in reproducer
    alone = subprocess.run([str(wheel_binary()), "-pass-pipeline=builtin.module(func.func("
                            "convert-torch-onnx-to-torch))", blocker.reproducer],
                           capture_output=True, text=True, timeout=60, check=False)
    assert alone.returncode == 1 and "failed to legalize" in alone.stderr
    assert 'name = "onnx.Softsign"' in alone.stderr


class DynamicConv(nn.Module):
    """upstream's Conv2dModule_basic in small: the input's and the kernel's spatial sizes both
    dynamic, at equal example values."""

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return nn.functional.conv2d(x, w)


def test_the_onnx_export_is_made_as_torch_onnx_export_captures_and_fx_keeps_the_defaults(tmp_path):
    """Issue 42: torch.export's default duck sizing gives the input's and the kernel's sizes one
    symbol (equal example values), so the convolution's output size is the constant 1: the
    ONNX port stopped at the export (the dynamic sizes refused); torch.onnx.export's own capture (what
    upstream's onnx config runs) exports with backed_size_oblivious and deferred runtime
    asserts. The ONNX frontend's export now does; the FX frontend's keeps torch.export's
    defaults, as upstream's fx_importer config exports."""
    from harness.frontends.base import ExportSettings, MakeRequest, frontend
    from harness.models.dynamic import input_axes, parse_dynamic

    g = torch.Generator().manual_seed(0)
    first = (torch.randn(1, 2, 4, 4, generator=g), torch.randn(3, 2, 4, 4, generator=g))
    second = (torch.randn(1, 2, 6, 6, generator=g), torch.randn(3, 2, 3, 3, generator=g))
    spec = parse_dynamic("x.2=2..16,x.3=2..16,w.2=1..8,w.3=1..8")
    subject = Subject("dconv", DynamicConv().eval(), InputSet(("x", "w"), first, "first"),
                      InputSet(("x", "w"), second, "second, other sizes"),
                      dynamic_axes=input_axes(spec, ("x", "w"), (4, 4)), output_names=("y",))
    port = _ports(subject, tmp_path, dynamic=spec)[0]
    assert port.outcome is PortOutcome.VERIFIED, (port.failed_stage, port.blockers)
    assert [c.outputs[0].shape for c in port.numerics] == [[1, 3, 1, 1], [1, 3, 4, 4]]
    # The FX frontend's own export: torch.export's defaults, one symbol for the two sizes.
    assert frontend(FrontendName.ONNX).conversion.export is ExportSettings.ONNX_CAPTURE
    maker = frontend(FrontendName.FX).maker
    made = maker.make(MakeRequest("dconv", DynamicConv(), first, dynamic_shapes=(
        {2: torch.export.Dim.AUTO, 3: torch.export.Dim.AUTO},) * 2))
    (out,) = next(n for n in made.program.export_program().graph.nodes if n.op == "output").args[0]
    assert list(out.meta["val"].shape) == [1, 3, 1, 1]


def test_a_run_time_check_at_an_onnx_node_names_the_node_and_the_python_line(tmp_path: Path):
    """``harness port gpt2 --frontend onnx --dynamic batch,seq`` stops at execution (its static
    port verifies): MLIR's runtime check of a ``memref.store`` ends with ``Location:
    loc("node_softmax")``, the ONNX node's name location, which the blocker dropped (no file
    in it): no node, no Python line. The text below is that run's, at a node of this file's
    own export; the blocker now keeps the node, and the exporter's stack gives the line."""
    from harness.execute.refbackend import RefBackendResult, Stage
    from harness.port.diagnose import with_onnx_stacks
    from harness.port.verify import execution_blocker

    x = torch.randn(4, 16)
    path = onnx_frontend.export(torch.export.export(Block().eval(), (x,)), (x,), tmp_path / "b.onnx",
                                name="block")
    node = next(n for n, t in onnx_frontend.node_types(path).items() if t == "onnx.Softmax")
    failed = RefBackendResult("main_graph", failed_stage=Stage.EXECUTION, signal="SIGABRT", error=(
        "the code died by SIGABRT: ERROR: Runtime op verification failed\n"
        "memref.store %595, %alloc_102[%585, %587, %589, %591] : memref<?x4x1x?xf32>\n"
        f'^ out-of-bounds access\nLocation: loc("{node}")\nFatal Python error: Aborted\n'))
    blocker = execution_blocker(failed, PortStage.EXECUTION)
    assert blocker.op == "memref.store" and blocker.location == ""
    (named,) = with_onnx_stacks([blocker], path)
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if "self.norm(self.linear(x)).softmax(-1)" in text)
    assert named.location == f"{__file__}:{line}", named
    assert f"ONNX node {node} (onnx.Softmax), exported from {__file__}:{line}" in named.explanation
    # and what TorchOnnxToTorch made of the node (the check names none of those ops): from the
    # onnx-to-torch output, real torch-mlir-opt on the imported file
    from harness.compiler.mlir import WriteOptions, write_module
    from harness.compiler.runner import RunOptions
    from harness.execute.lowering import run_stage

    imported = tmp_path / "b.torch.mlir"
    module = onnx_frontend.import_file(path)
    write_module(module.operation, imported, WriteOptions(keep_weights=True))  # with its locations
    converted = tmp_path / "b.1.onnx-to-torch.mlir"
    assert run_stage(imported, "onnx-to-torch", output_path=converted,  # as the port's stages print
                     options=RunOptions(extra_args=("--mlir-print-debuginfo",))).ok
    (named,) = with_onnx_stacks([blocker], path, converted)
    made = named.explanation.partition("; onnx-to-torch made it ")[2]
    assert "torch.aten.exp" in made and "torch.aten.linear" not in made, named.explanation


def test_gpt2_through_onnx_with_dynamic_batch_and_seq_names_the_onnx_node_and_line(tmp_path: Path):
    """Issue 42 item 4's --dynamic: tiny GPT-2 through ONNX verifies static (measured: 1.19e-06)
    and stops at execution with batch and seq dynamic, an out-of-bounds memref.store at the
    ONNX node of its attention's softmax. The blocker names the node and the model's line;
    the IR keeps both sizes dynamic; the printed ``harness check`` and ``harness report`` run as
    printed (the commands work on the IR, whose ``?`` sizes carry --dynamic): the check fails
    the same way, and the bundle says where in ONNX's terms (about 2 min in all)."""
    import shlex
    import subprocess

    from support import harness

    record_path = tmp_path / "r.json"
    done = harness("--no-progress", "port", "gpt2", "--frontend", "onnx", "--dynamic", "batch,seq",
                   "--out", tmp_path / "out", "--json", record_path, timeout=900)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    (port,) = PortRecord.read(record_path).variants[0].ports
    assert port.failed_stage is PortStage.EXECUTION
    blocker = port.blockers[0]
    assert blocker.op == "memref.store" and 'at loc("node_softmax' in blocker.message
    assert "/gpt2/modeling_gpt2.py:" in blocker.location, blocker
    assert "(onnx.Softmax), exported from" in blocker.explanation
    assert "; onnx-to-torch made it torch.aten." in blocker.explanation  # the node's torch ops
    assert "func.func @main_graph(%arg0: tensor<?x?xi64>, %arg1: tensor<?x?xi64>)" in port.signature
    (check,) = [line.strip() for line in done.stdout.splitlines() if " -m harness check " in line]
    import os

    from support import ROOT

    here = {**os.environ, "PYTHONPATH": str(ROOT)}  # the printed python -m harness: this checkout's
    again = subprocess.run(shlex.split(check), capture_output=True, text=True, timeout=600,
                           check=False, cwd=tmp_path, env=here)
    said = again.stdout + again.stderr
    assert again.returncode == 1 and "out-of-bounds access" in said, said[-2000:]
    assert 'Location: loc("node_softmax' in said  # the check keeps the IR's own locations
    # The printed report bundles it and says where in ONNX's terms: the failed check's node, and
    # the line the port record has for it (was: undetermined). --no-reduce: the reduction is
    # bounded by time, and what it keeps on a loaded machine varies (one run in three here kept
    # a function whose check named no node); the whole function's check names node_softmax.
    (report,) = [line.strip() for line in done.stdout.splitlines() if " -m harness report " in line]
    bundled = subprocess.run([*shlex.split(report), "--no-reduce"], capture_output=True, text=True,
                             timeout=900, check=False, cwd=tmp_path, env=here)
    assert bundled.returncode == 1, bundled.stdout[-2000:] + bundled.stderr[-2000:]  # reproduced
    (where,) = [line for line in bundled.stdout.splitlines() if line.startswith("where: ")]
    assert where.startswith('where: ONNX node node_softmax (') and "/gpt2/modeling_gpt2.py:" in where
