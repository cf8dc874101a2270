"""The one op that computes wrong: real torch-mlir-opt and RefBackend, and an evaluator
that gets one op deliberately wrong (at the start, in the middle, just before an f32 -> f64
upcast), so the lowering looks miscompiled at exactly that op. An error within the tolerance of
the dtype it is made in names no op, even where an upcast would judge it at f64's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.execute import ref_ops
from harness.diagnose.numerics import (
    NumericsBisectOptions,
    FunctionVerdict,
    bisect_numerics,
    one_op,
)
from harness.diagnose.numerics.programs import computing_ops

from support import ROOT, harness

T = "!torch.vtensor<[4,5],f32>"
D = "!torch.vtensor<[4,5],f64>"
# Line numbers matter: exp is on line 6, sin on line 8, sigmoid (before the upcast) on line 12.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
MODULE = f"""\
func.func @forward(%x: {T}, %w: {T}) -> {D} {{
  %int1 = torch.constant.int 1
  %int7 = torch.constant.int 7
  %false = torch.constant.bool false
  %none = torch.constant.none
  %0 = torch.aten.exp %x : {T} -> {T}
  %1 = torch.aten.mul.Tensor %0, %w : {T}, {T} -> {T}
  %2 = torch.aten.sin %1 : {T} -> {T}
  %3 = torch.aten.add.Tensor %2, %x, %int1 : {T}, {T}, !torch.int -> {T}
  %4 = torch.aten.tanh %3 : {T} -> {T}
  %5 = torch.aten.mul.Tensor %4, %w : {T}, {T} -> {T}
  %6 = torch.aten.sigmoid %5 : {T} -> {T}
  %7 = torch.aten.to.dtype %6, %int7, %false, %false, %none : {T}, !torch.int, !torch.bool, !torch.bool, !torch.none -> {D}
  %8 = torch.aten.mul.Tensor %7, %7 : {D}, {D} -> {D}
  return %8 : {D}
}}
"""  # noqa: E501
ALL_F32 = MODULE.replace(f"-> {D} {{", f"-> {T} {{").replace(
    f"  %7 = torch.aten.to.dtype %6, %int7, %false, %false, %none : {T}, !torch.int, !torch.bool, "
    f"!torch.bool, !torch.none -> {D}\n", "").replace(
    f"%8 = torch.aten.mul.Tensor %7, %7 : {D}, {D} -> {D}",
    f"%8 = torch.aten.mul.Tensor %6, %6 : {T}, {T} -> {T}").replace(
    f"return %8 : {D}", f"return %8 : {T}")


def off_by(monkeypatch, name: str, rel: float) -> None:
    """The reference evaluator computes ``torch.aten.NAME`` ``rel`` too large (relative)."""
    fn = getattr(torch, name)
    monkeypatch.setitem(ref_ops.HANDLERS, f"torch.aten.{name}",
                        lambda ev, op, args: (fn(args[0]) * (1 + rel),))


def bisect(tmp_path, text=MODULE):
    src = tmp_path / "m.mlir"
    src.write_text(text)
    return bisect_numerics(src, "torch-to-linalg",
                           options=NumericsBisectOptions(out_dir=str(tmp_path), blame=False))


@pytest.mark.parametrize("name,line,rel", [("exp", 6, 0.05), ("sin", 8, 0.05), ("sigmoid", 12, 1e-3)],
                         ids=["start", "middle", "before-upcast"])
def test_the_wrong_op_is_named_with_its_own_difference(tmp_path, monkeypatch, name, line, rel):
    off_by(monkeypatch, name, rel)
    result = bisect(tmp_path)
    assert result.verdict is FunctionVerdict.LOCALIZED
    culprit = result.one_op.culprit
    assert culprit is not None and culprit.alone
    assert culprit.name == f"aten.{name}" and culprit.frames[0].line == line
    assert culprit.computes_in == "float32"
    # Fed the reference's operands, its own relative error is the one put in (of the wrong value).
    assert culprit.own.departs and culprit.own.max_rel_diff == pytest.approx(rel / (1 + rel), rel=0.02)
    # Found by the isolated run (every op on the reference's operands in one lowering), not
    # inside the observed run of the whole function.
    assert result.one_op.reason == "each op on the reference's operands, then the op alone"
    assert culprit.inside is None and culprit.own.noise is not None and culprit.own.noise.ratio > 4
    # Its error alone makes the function's difference (the lowering computes the rest right).
    assert culprit.share == pytest.approx(1.0, abs=0.05)
    # The reproducer is one op, fed the values the function gave it.
    with subject_context():
        assert [n.removeprefix("torch.") for n in computing_ops_of(culprit.program_path)] == [f"aten.{name}"]
    with np.load(culprit.inputs_path) as inputs, np.load(culprit.expected_path) as expected:
        operand = inputs["arg0"]
        eager = getattr(torch, name)(torch.from_numpy(operand)).numpy()
        np.testing.assert_allclose(expected["result0"], eager * (1 + rel), rtol=1e-5)
    # `harness check` runs it (the real evaluator: right, as the lowering is).
    proc = subprocess.run([*culprit.reproduce().replace("harness", f"{sys.executable} -m harness", 1).split(),
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=900, env={**os.environ})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rendered = "\n".join(result.render())
    assert (f"the op that computes wrong: aten.{name} computes wrong at "
            f"{tmp_path / 'm.mlir'}:{line}:") in rendered


def test_the_upcast_is_judged_by_float32_noise(tmp_path, monkeypatch):
    """Sigmoid off by 1e-7 relative (about an ulp of float32): beyond f64's flat tolerance after
    the upcast, within float32's own rounding. A value computed in float32 and cast up is judged
    by float32's noise, never by f64's tolerance: the function is right."""
    off_by(monkeypatch, "sigmoid", 1e-7)
    result = bisect(tmp_path)
    assert result.verdict is FunctionVerdict.VERIFIED
    assert result.one_op is None


def test_an_error_within_float32_rounding_names_no_op(tmp_path, monkeypatch):
    off_by(monkeypatch, "sin", 5e-8)  # under an ulp of float32
    src = tmp_path / "m.mlir"
    src.write_text(ALL_F32)
    found = one_op(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    # every op on the reference's operands, the values inside it returned, then the function
    # alone (in case returning them hid it)
    assert found.culprit is None and found.runs == 3
    assert found.reason.startswith("the function's results agree with the reference")


def test_an_error_under_the_tolerance_beyond_float32_rounding_is_named(tmp_path, monkeypatch):
    """sin off by 1e-6 relative: within rtol 1e-4 at every element, about ten times float32's
    own rounding of sin against float64. The flat tolerance saw nothing; the float64 rule names
    it, fed the reference's operands, with its ratio."""
    off_by(monkeypatch, "sin", 1e-6)
    src = tmp_path / "m.mlir"
    src.write_text(ALL_F32)
    found = one_op(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert found.culprit is not None and found.culprit.name == "aten.sin" and found.culprit.alone
    own = found.culprit.own
    assert own.max_rel_diff < 1e-4 and own.noise is not None and own.noise.ratio > 4
    assert found.reason == "each op on the reference's operands, then the op alone"


def test_string_operands_are_spelled_out(tmp_path, monkeypatch):
    """gelu's approximation is a string operand: the verdict shows which one."""
    text = f"""\
func.func @forward(%x: {T}) -> {T} {{
  %str = torch.constant.str "tanh"
  %0 = torch.aten.gelu %x, %str : {T}, !torch.str -> {T}
  %1 = torch.aten.tanh %0 : {T} -> {T}
  return %1 : {T}
}}
"""
    monkeypatch.setitem(ref_ops.HANDLERS, "torch.aten.gelu",
                        lambda ev, op, args: (torch.nn.functional.gelu(args[0]),))  # ignores it
    result = bisect(tmp_path, text)
    culprit = result.one_op.culprit
    assert culprit.name == "aten.gelu" and culprit.call == "aten.gelu(f32[4,5], 'tanh')"


class subject_context:
    def __enter__(self):
        from harness.compiler.mlir import new_context

        self.ctx = new_context()
        self.ctx.__enter__()

    def __exit__(self, *exc):
        self.ctx.__exit__(*exc)


def computing_ops_of(path: str) -> list[str]:
    from torch_mlir import ir

    module = ir.Module.parseFile(path)
    return computing_ops(module.operation)


def test_reduce_keeps_the_wrong_op_alone(tmp_path, monkeypatch):
    from harness.diagnose.reduce.miscompile import NumericsReduceOptions, reduce_numerics

    off_by(monkeypatch, "sin", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    result = reduce_numerics(src, "torch-to-linalg", options=NumericsReduceOptions(
        output_path=tmp_path / "small.mlir", out_dir=str(tmp_path)))
    assert result.computing_ops == ["aten.sin"]
    assert result.culprit.startswith(f"aten.sin computes wrong at {src}:8:")


LEGAL_POOL = ("builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops="
              "aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)")
# A ResNet tail no other test or tool uses: conv -> batch norm -> relu -> pool -> flatten ->
# Linear, batch 3, 12 channels of 6x6.
HELD_OUT_TAIL = """\
import sys
import torch
import torch.nn.functional as F
from harness import torchscript


class Tail(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.conv = torch.nn.Conv2d(4, 12, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(12).eval()
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(torch.relu(self.bn(self.conv(x))), (1, 1))
        return self.fc(torch.flatten(y, 1))


module = torchscript.compile(Tail().eval(), (torch.zeros(3, 4, 6, 6),), output_type="raw", use_tracing=True)
module.operation.print(file=sys.stdout, enable_debug_info=True)
"""


def test_reduce_keeps_the_held_out_resnet_tails_culprit_and_its_feeders(tmp_path):
    script = tmp_path / "tail.py"
    script.write_text(HELD_OUT_TAIL)
    raw = tmp_path / "tail.mlir"
    raw.write_text(subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                  check=True, cwd=ROOT, timeout=600).stdout)
    out = tmp_path / "small.mlir"
    proc = harness("reduce", str(raw), "--pipeline", LEGAL_POOL, "--numerics", "-o", str(out), timeout=900)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert "(14 -> 3 computing: aten.adaptive_avg_pool2d -> aten.view -> aten.mm)" in lines[0]
    # Five torch ops beside the constants: the pool, the flatten, the mm and their two lists.
    torch_ops = [line for line in out.read_text().splitlines()
                 if " = torch." in line and " = torch.constant." not in line]
    assert len(torch_ops) <= 5, torch_ops
    assert lines[-1].startswith("the op that computes wrong: aten.mm computes wrong only together "
                                "with aten.adaptive_avg_pool2d, aten.view")
    # placed at the model's own line (the script's), not at torch/nn/modules/linear.py under it
    assert f"{script}:" in lines[-1] and "torch/nn/modules/linear.py" not in lines[-1]


def test_a_numerics_mismatch_port_prints_the_op(tmp_path, monkeypatch):
    """The port's narrowing (``port.culprit.narrow``, called once the mismatch is known) on the
    mismatching set's inputs: the record names the op, the printed port shows it."""
    from harness.execute.inputs import save_npz
    from harness.frontends.names import FrontendName
    from harness.port.culprit import narrow
    from harness.port.options import PortOptions
    from harness.port.record import InputSetName, NumericsCheck, PortOutcome
    from harness.port.render import _numerics_lines

    off_by(monkeypatch, "sin", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    rng = np.random.default_rng(3)
    save_npz(tmp_path / "inputs.npz", [rng.standard_normal((4, 5), dtype=np.float32) for _ in range(2)])
    checks = [NumericsCheck(InputSetName.TRACED, "traced", PortOutcome.VERIFIED, 0.0, 0.0),
              NumericsCheck(InputSetName.SECOND, "other ids", PortOutcome.NUMERICS_MISMATCH, 0.1, 0.1,
                            inputs_file=str(tmp_path / "inputs.npz"))]
    narrow(checks, src, "torch-to-linalg", tmp_path, PortOptions())
    assert not checks[0].culprit
    assert checks[1].culprit.startswith(f"aten.sin computes wrong at {src}:8:")
    assert "max abs diff" in checks[1].culprit
    assert checks[1].culprit_command.startswith("harness check ")
    assert "culprit.mlir" in checks[1].culprit_command
    lines = _numerics_lines(checks[1], FrontendName.TORCHSCRIPT)
    at = lines.index(f"      the op that computes wrong: {checks[1].culprit}")
    # under it, its call and its error's profile (bias, the worst elements with their inputs)
    assert lines[at + 1] == "        call: aten.sin(f32[4,5])"
    assert lines[at + 2].startswith("        error profile: rms ")
    assert all("input " in line and "float32 eager" in line for line in lines[at + 3:])
    assert len(lines) == at + 6


def test_the_boards_miscompile_cell_names_the_op(tmp_path):
    from harness.frontends.names import FrontendName
    from harness.port.record import (
        FrontendPort,
        InputSetName,
        NumericsCheck,
        PortOutcome,
        PortRecord,
        SourceKind,
        Variant,
        VariantRecord,
    )
    from harness.sweep import board
    from harness.sweep.records import ModelResult
    from harness.sweep.status import Cell, Status, cells_of

    said = "aten.sin computes wrong at m.py:8:0: max abs diff 1.2"
    port = FrontendPort(FrontendName.FX, PortOutcome.NUMERICS_MISMATCH)
    port.numerics.append(NumericsCheck(InputSetName.TRACED, "traced", PortOutcome.NUMERICS_MISMATCH,
                                       1.2, 1.0, culprit=said))
    record = PortRecord("m", SourceKind.TYPE, "m", variants=[VariantRecord(Variant.STOCK, "m", ports=[port])])
    [row] = cells_of(ModelResult("m", tmp_path, record=record,
                                 checks={("m", "fx"): {"outcome": "numerics-mismatch"}}))
    assert row.cells["fx"].status is Status.MISCOMPILE and row.cells["fx"].culprit == said
    cell = Cell("m", "m", "fx", Status.MISCOMPILE, culprit=said)
    assert f"the op that computes wrong: {said}" in board._cell(cell, ROOT, None)
    verified = Cell("m", "m", "fx", Status.VERIFIED, culprit=said)
    assert "the op that computes wrong" not in board._cell(verified, ROOT, None)


def test_the_report_bundles_the_one_op_reproducer(tmp_path, monkeypatch):
    from harness.diagnose.report.miscompile import NumericsReportOptions, make_numerics_report

    off_by(monkeypatch, "sin", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    result = make_numerics_report(src, "torch-to-linalg", options=NumericsReportOptions(
        out_dir=tmp_path / "r", redact=False, reduce=False))
    assert result.chain == ["aten.sin"]  # the one op, even without the IR reductions
    assert result.culprit.startswith(f"aten.sin computes wrong at {src}:8:")
    folder = Path(result.folder)
    with subject_context():
        assert computing_ops_of(str(folder / "reduced.mlir")) == ["torch.aten.sin"]
    assert "The op that computes wrong: aten.sin computes wrong at" in (folder / "issue.md").read_text()


def test_the_second_opinion_lowers_the_op_the_other_ways(tmp_path, monkeypatch):
    """The pool kept backend-legal (as the pool-flatten-mm pipeline keeps it), off by 5% in the evaluator:
    kept, decomposed by torch-mlir's torch-level pipeline and FX's decomposition all compute
    the true pool, so all three disagree with it, each by its own measure."""
    from harness.diagnose.numerics.opinion import Says, Way

    monkeypatch.setitem(ref_ops.HANDLERS, "torch.aten.adaptive_avg_pool2d", lambda ev, op, args: (
        torch.nn.functional.adaptive_avg_pool2d(args[0], args[1]) * 1.05,))
    x, p = "!torch.vtensor<[1,8,7,7],f32>", "!torch.vtensor<[1,8,1,1],f32>"
    src = tmp_path / "m.mlir"
    src.write_text(f"""\
func.func @forward(%x: {x}) -> {p} {{
  %int1 = torch.constant.int 1
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.adaptive_avg_pool2d %x, %0 : {x}, !torch.list<int> -> {p}
  %2 = torch.aten.tanh %1 : {p} -> {p}
  return %2 : {p}
}}
""")
    found = one_op(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert found.culprit.call == "aten.adaptive_avg_pool2d(f32[1,8,7,7], [1, 1])"
    opinions = {o.way: o for o in found.culprit.opinions}
    assert list(opinions) == [Way.KEPT, Way.DECOMPOSED, Way.FX]
    for way in Way:
        assert opinions[way].verdict is Says.WRONG, opinions[way].render()
        assert opinions[way].diff.max_rel_diff == pytest.approx(0.05 / 1.05, rel=0.01)
    assert "    no way tried gives eager's value" in found.culprit.render()


def test_random_draws_are_not_taken_for_the_wrong_op(tmp_path, monkeypatch):
    """A random op's values cannot match eager's; they are not observed (nor are uninitialized
    ones, aten.empty*), so the wrong op after it is the one named."""
    off_by(monkeypatch, "sin", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(f"""\
func.func @forward(%x: {T}) -> ({T}, {T}) {{
  %none = torch.constant.none
  %f0 = torch.constant.float 0.000000e+00
  %f1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.uniform %x, %f0, %f1, %none : {T}, !torch.float, !torch.float, !torch.none -> {T}
  %1 = torch.aten.sin %x : {T} -> {T}
  %2 = torch.aten.mul.Scalar %0, %f0 : {T}, !torch.float -> {T}
  return %1, %2 : {T}, {T}
}}
""")
    found = one_op(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path), blame=False))
    assert found.candidates == ["aten.sin"] and found.culprit.name == "aten.sin"


def test_a_spent_budget_keeps_the_chain_it_has(tmp_path, monkeypatch):
    # a port gives the chain's search ONE_OP_BUDGET_S: past it, every bound found so far holds,
    # so the chain is longer (here the whole function, nothing narrowed), never wrong
    from harness.diagnose.numerics.programs import END
    from harness.diagnose.numerics.search import Searcher, localize
    from harness.diagnose.numerics.subject import SubjectOptions, prepare
    from harness.execute.worker import RefBackendWorker

    off_by(monkeypatch, "sin", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(MODULE)
    subject = prepare(src, SubjectOptions.of("torch-to-linalg", NumericsBisectOptions(out_dir=str(tmp_path))))
    with RefBackendWorker(timeout_s=120, work_dir=subject.work_dir) as worker:
        spent = localize(Searcher(subject, worker, subject.probe_options(), deadline=0.0),
                         confirm_first=False)
        full = localize(Searcher(subject, worker, subject.probe_options()), confirm_first=False)
    assert spent.cut_short and (spent.start, spent.end) == (-1, END) and spent.result.mismatch
    assert not full.cut_short and full.result.mismatch and len(full.chain) < len(spent.chain)


def test_a_long_chain_is_named_by_its_length_and_the_ops_nearest_the_culprit():
    """gemma3n_vision's culprit went wrong only together with 436 ops, and its headline listed
    them all; a short chain is still listed whole."""
    from harness.diagnose.numerics.culprit import CHAIN_NAMED, Culprit
    from harness.diagnose.numerics.diffs import OwnDiff

    own = OwnDiff(1.3e-05, 0.087, "rtol 0.0001, atol 1e-05", True)
    chain = [f"aten.op{i}" for i in range(436)] + ["aten.mul.Tensor"]
    long = Culprit(7, "aten.mul.Tensor", [], "", "f32", own, None, alone=False, chain=chain)
    nearest = ", ".join(f"aten.op{i}" for i in range(436 - CHAIN_NAMED, 436))
    assert long.headline() == (f"aten.mul.Tensor computes wrong only together with the 436 ops "
                               f"before it (nearest: {nearest}) (none is wrong alone) at no "
                               "location: max abs diff 1.3e-05, max rel diff 0.087 (rtol 0.0001, "
                               "atol 1e-05)")
    short = Culprit(7, "aten.mul.Tensor", [], "", "f32", own, None, alone=False,
                    chain=["aten.exp", "aten.mul.Tensor"])
    assert "only together with aten.exp (none is wrong alone)" in short.headline()


CLONE = f"""\
func.func @forward(%x: {T}) -> {T} {{
  %none = torch.constant.none
  %0 = torch.aten.clone %x, %none : {T}, !torch.none -> {T}
  %1 = torch.aten.tanh %0 : {T} -> {T}
  return %1 : {T}
}}
"""


def test_the_reproducer_shows_an_op_whose_linalg_vanishes(tmp_path, monkeypatch):
    """The reference says clone moves its values (off by 5%); the lowering's one-op linalg,
    after canonicalize, returns its input: the verdict says so, with both files kept."""
    from harness.diagnose.numerics.lowered import Computes

    off_by(monkeypatch, "clone", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(CLONE)
    found = one_op(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    culprit = found.culprit
    assert culprit is not None and culprit.name == "aten.clone"
    assert culprit.lowered is not None and culprit.lowered.computes is Computes.VANISHES
    canonical = Path(culprit.lowered.canonical_path).read_text()
    assert "return %arg0" in canonical and "linalg." not in canonical
    assert "func.func @forward" in Path(culprit.lowered.linalg_path).read_text()  # as lowered, kept
    assert any("linalg computes nothing" in line for line in culprit.profile)
    assert "linalg computes nothing" in "\n".join(culprit.render())


@pytest.mark.parametrize("text, computes", [
    ("func.func @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n  return %arg0 : tensor<4xf32>\n}",
     "vanishes"),
    ("%0 = tensor.empty() : tensor<5x4xf32>\n%t = linalg.transpose ins(%arg0 : tensor<4x5xf32>) "
     "outs(%0 : tensor<5x4xf32>) permutation = [1, 0]\nreturn %t", "copies"),
    ("%1 = linalg.generic {indexing_maps = [#map, #map]} ins(%arg0) outs(%0) {\n^bb0(%in: f32, "
     "%out: f32):\n  %2 = math.tanh %in : f32\n  linalg.yield %2 : f32\n} -> tensor<4xf32>", "computes"),
])
def test_what_a_linalg_module_computes(text, computes):
    from harness.diagnose.numerics.lowered import computes as classify

    assert classify(text)[0].value == computes


def test_the_bundle_root_cause_shows_the_vanishing_op(tmp_path, monkeypatch):
    """A reduced bundle whose linalg is `return %arg0` says why in its root cause, with the
    canonicalized one-op linalg, instead of "Not determined"."""
    from harness.diagnose.report.miscompile import NumericsReportOptions, make_numerics_report

    off_by(monkeypatch, "clone", 0.05)
    src = tmp_path / "m.mlir"
    src.write_text(CLONE)
    result = make_numerics_report(src, "torch-to-linalg", options=NumericsReportOptions(
        out_dir=tmp_path / "r", redact=False, reduce=False))
    issue = (Path(result.folder) / "issue.md").read_text()
    cause = issue.split("Root cause", 1)[1]
    assert "The lowering of `aten.clone` computes nothing" in cause
    assert "return %arg0" in cause and not cause.lstrip(" #\n").startswith("Not determined")
