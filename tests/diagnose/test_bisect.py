"""bisect on real inputs: a crasher inside a real pipeline, a legalization failure that the
finalizing pass reports for convert-torch-to-linalg, and a verifier error after a conversion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compiler import builds as builds_module
from harness.compiler.records import Outcome
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import InputFileError, PipelineConfigError
from harness.diagnose import bisect as bisect_module
from harness.diagnose.bisect import (
    BisectResult,
    bisect,
    dumped_pipeline,
    reproducer_pipeline,
    reproducer_pipeline_of_file,
)

from support import CRASHERS, ROOT, harness

LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"
NONZERO = """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64>
  return %0 : !torch.vtensor<[?,1],si64>
}
"""


REAL = builds_module.resolve().path
# Stock OPT's mask: a bool literal and'ed with a computed mask.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
BOOL_AND = """\
func.func @forward(%arg0: !torch.vtensor<[1,7],si64>) -> !torch.vtensor<[1,7],i1> {
  %int0 = torch.constant.int 0
  %true = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> loc("m.py":52:0)
  %0 = torch.aten.gt.Scalar %arg0, %int0 : !torch.vtensor<[1,7],si64>, !torch.int -> !torch.vtensor<[1,7],i1> loc("m.py":53:0)
  %1 = torch.aten.__and__.Tensor %true, %0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,7],i1> -> !torch.vtensor<[1,7],i1> loc("m.py":54:0)
  return %1 : !torch.vtensor<[1,7],i1>
}
"""  # noqa: E501
# x % 0 only after the call is inlined: the first canonicalize sees an argument.
REMAINDER_BEHIND_A_CALL = """\
func.func private @rem(%a: !torch.int, %b: !torch.int) -> !torch.int {
  %0 = torch.aten.remainder.int %a, %b : !torch.int, !torch.int -> !torch.int
  return %0 : !torch.int
}
func.func @f() -> !torch.int {
  %c7 = torch.constant.int 7
  %c0 = torch.constant.int 0
  %0 = func.call @rem(%c7, %c0) : (!torch.int, !torch.int) -> !torch.int
  return %0 : !torch.int
}
"""


def _replay_single_pass(result: BisectResult):
    """The pre-pass IR through the named pass alone, as a user would rerun it."""
    return run_pipeline(result.pre_pass_ir, result.failing_pass_pipeline)


@pytest.fixture(scope="module")
def crash_in_pipeline(tmp_path_factory):
    return bisect(CRASHERS / "F_view_zero_numel.mlir", LINALG, out_dir=tmp_path_factory.mktemp("b"))


def test_crash_inside_the_linalg_pipeline(crash_in_pipeline):
    r = crash_in_pipeline
    assert r.runs == 2 and r.found and r.reproduced, r.detail
    assert r.failing_pass == "convert-torch-to-linalg" and r.failing_pass_name == "ConvertTorchToLinalg"
    assert r.failing_pass_pipeline == (
        "builtin.module(func.func(convert-torch-to-linalg{allow-non-finites=true}))")
    assert r.failing_on == "'func.func' operation: @f"
    assert r.outcome is Outcome.CRASH
    assert str(r.signature) == ("crash: SIGFPE in ConvertTorchToLinalg at "
                           "(anonymous namespace)::ConvertAtenViewOp::matchAndRewrite")
    # Run 1 recovered the crash in-process (exit 1); the replay crashed for real.
    assert r.first.returncode == 1 and r.replay.returncode == -8
    assert r.pipeline_passes[r.pass_positions[0] - 1] == "convert-torch-to-linalg"
    assert r.pipeline_passes[-1] == "torch-verify-linalg-on-tensors-backend-contract"
    assert r.responsible == []


def test_pre_pass_ir_fails_the_pass_alone_with_the_same_signature(crash_in_pipeline):
    r = crash_in_pipeline
    pre = Path(r.pre_pass_ir)
    assert pre.name == "before-convert-torch-to-linalg.mlir" and pre.parent == Path(r.out_dir)
    text = pre.read_text()
    assert "torch.aten.view" in text and "F_view_zero_numel.mlir" in text  # locations kept
    assert reproducer_pipeline(text) == r.failing_pass_pipeline
    assert _replay_single_pass(r).signature == r.signature


def test_output_folder(crash_in_pipeline):
    out = Path(crash_in_pipeline.out_dir)
    assert out.name.startswith("bisect-F_view_zero_numel-")
    assert sorted(p.name for p in out.iterdir()) == [
        "before-convert-torch-to-linalg.mlir", "bisect.json", "replay.stderr.txt", "run1.stderr.txt"]
    data = json.loads((out / "bisect.json").read_text())
    assert data["failing_pass"] == "convert-torch-to-linalg" and data["reproduced"] is True
    assert data["replay"]["crash"]["signal"] == "SIGFPE"
    assert "Stack dump:" in (out / "replay.stderr.txt").read_text()


def test_textual_pipeline_with_canonicalize(tmp_path):
    r = bisect(CRASHERS / "A_remainder_int_by_zero.mlir", "builtin.module(func.func(cse,canonicalize))",
               out_dir=tmp_path)
    assert r.reproduced and r.failing_pass == "canonicalize" and r.failing_pass_name == "CanonicalizerPass"
    assert r.pass_positions == [2] and r.pipeline_passes == ["cse", "canonicalize"]
    assert str(r.signature) == ("crash: SIGFPE in Canonicalizer at "
                                "mlir::torch::Torch::AtenRemainderIntOp::fold")
    assert _replay_single_pass(r).signature == r.signature


def test_legalization_failure_replays_the_conversions_on_the_left_over_op(tmp_path):
    """No table of op -> pass: each conversion pass of the pipeline runs alone on the op alone,
    and none lowers aten.nonzero (2 runs to bisect + the blocker analysis)."""
    ir = tmp_path / "nonzero.mlir"
    ir.write_text(NONZERO)
    r = bisect(ir, LINALG, out_dir=tmp_path)
    assert r.reproduced, r.detail
    # The finalizing pass reports what the conversions left behind.
    assert r.failing_pass == "torch-finalizing-backend-type-conversion"
    assert r.outcome is Outcome.LEGALIZATION_FAILURE
    assert str(r.signature) == "legalization-failure: failed to legalize operation 'torch.aten.nonzero'"
    [blame] = r.responsible
    assert blame.op == "torch.aten.nonzero" and blame.blocker
    assert blame.converted_by == [] and blame.responsible_pass == ""
    assert blame.describe() == "no conversion pass of this pipeline lowers torch.aten.nonzero"
    assert r.blockers.conversions == ["convert-torch-to-tmtensor", "convert-torch-to-linalg",
                                      "convert-torch-to-scf", "convert-torch-to-arith",
                                      "convert-torch-to-tensor", "convert-torch-conversion-to-mlprogram"]
    assert r.runs == 2 + r.blockers.runs
    replay = _replay_single_pass(r)
    assert replay.outcome is Outcome.LEGALIZATION_FAILURE and replay.signature == r.signature
    # The pre-pass IR is already converted up to that pass, with the input's locations.
    text = Path(r.pre_pass_ir).read_text()
    assert "torch_c.from_builtin_tensor" in text and 'loc("' in text
    assert replay.first_error().file.endswith("nonzero.mlir") and replay.first_error().line == 2
    assert not hasattr(bisect_module, "_OP_CONVERSIONS")  # the guesswork is gone


def test_the_literal_is_a_symptom_and_and_the_op_no_conversion_lowers(tmp_path):
    """Issue 18 item 1: stock OPT's pattern. The finalizing pass names the literal, which
    convert-torch-to-arith lowers; no conversion lowers aten.__and__.Tensor, and
    convert-torch-to-linalg lowers the bitwise_and that the fix bitwise-and-or puts there."""
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_AND)
    r = bisect(ir, LINALG, out_dir=tmp_path)
    assert r.reproduced and r.failing_pass == "torch-finalizing-backend-type-conversion"
    assert str(r.signature) == ("legalization-failure: "
                                "failed to legalize operation 'torch.aten.__and__.Tensor'")
    blocker, symptom = r.responsible
    assert (str(blocker.op), blocker.blocker, blocker.converted_by) == ("torch.aten.__and__.Tensor", True, [])
    assert (blocker.equivalent_op, blocker.fix) == ("torch.aten.bitwise_and.Tensor", "bitwise-and-or")
    assert blocker.equivalent_converted_by == ["convert-torch-to-linalg"]
    assert blocker.responsible_pass == "convert-torch-to-linalg"
    assert (symptom.op, symptom.blocker, symptom.converted_by) == (
        "torch.vtensor.literal", False, ["convert-torch-to-arith"])
    assert symptom.symptom_of == ["torch.aten.__and__.Tensor"]
    text = "\n".join(r.render())
    assert ("torch.aten.__and__.Tensor  blocker: no conversion pass of this pipeline lowers "
            "torch.aten.__and__.Tensor; convert-torch-to-linalg lowers the equivalent "
            "torch.aten.bitwise_and.Tensor (fix: bitwise-and-or)") in text
    assert ("torch.vtensor.literal      symptom: convert-torch-to-arith lowers it alone; it is left "
            "only because its user torch.aten.__and__.Tensor was not converted") in text
    assert "should have been lowered by:" not in text


def test_the_position_of_a_pass_listed_twice_is_the_one_that_ran(tmp_path):
    """Issue 18 item 5: canonicalize is listed at 1 and 4; only the inlined call makes the
    remainder by zero, so the second one crashes. MLIR's timing tree says which ran last."""
    ir = tmp_path / "two.mlir"
    ir.write_text(REMAINDER_BEHIND_A_CALL)
    r = bisect(ir, "builtin.module(canonicalize,inline{default-pipeline=},cse,canonicalize)",
               out_dir=tmp_path)
    assert r.reproduced and r.failing_pass == "canonicalize" and r.outcome is Outcome.CRASH
    assert r.pipeline_passes == ["canonicalize", "inline", "cse", "canonicalize"]
    assert r.pass_positions == [4], r.position_note
    assert "pass 4 of 4)" in "\n".join(r.render())
    assert r.runs == 2


def test_ran_passes_reads_the_timing_tree():
    stderr = """\
  ----Wall Time----  ----Name----
    0.0151 ( 93.9%)  Parser
    0.0580 ( 51.2%)  'func.func' Pipeline
    0.0003 (  0.3%)    RestructureNonConstantAxes
    0.0142 ( 12.5%)    CanonicalizerPass
    0.6231 ( 90.3%)  LowerToBackendContract
    0.6220 ( 90.1%)    'builtin.module' Pipeline
    0.0002 (  0.0%)      'func.func' Pipeline
    0.0002 (  0.0%)        CanonicalizerPass
    0.0095 (  8.4%)  CSEPass
    0.0000 (  0.0%)    (A) DominanceInfo
    0.0005 (  2.9%)  Rest
    0.0161 (100.0%)  Total
"""
    ran = bisect_module.ran_passes(stderr)
    assert [str(p.name) for p in ran] == ["RestructureNonConstantAxes", "CanonicalizerPass",
                                     "LowerToBackendContract", "CSEPass"]
    assert ran[2].nested == ["CanonicalizerPass"] and ran[3].nested == []
    listed = ["torch-restructure-non-constant-axes", "canonicalize", "torch-lower-to-backend-contract", "cse"]
    assert bisect_module.failing_position(stderr, "CSEPass", "cse", listed) == (4, "")
    # Cut after the contract pass: a canonicalize inside it failed, not the one at 2.
    cut = stderr[:stderr.index("    0.0095")]
    assert bisect_module.failing_position(cut, "CanonicalizerPass", "canonicalize", listed) == (
        3, "inside a pipeline that torch-lower-to-backend-contract runs itself")


def test_failure_in_a_function_with_unknown_location(tmp_path):
    """Imported functions often carry loc(unknown): MLIR then prints the pipeline summary at
    `<unknown>:0:`, which must still be read (stock OPT's failure looks like this)."""
    ir = tmp_path / "mask.mlir"
    ir.write_text(
        "func.func @forward(%arg0: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,1,7,7],i1> {\n"
        '  %0 = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> loc("m.py":52:0)\n'
        "  %1 = torch.aten.__and__.Tensor %0, %arg0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1>"
        " -> !torch.vtensor<[1,1,7,7],i1> loc(unknown)\n"
        "  return %1 : !torch.vtensor<[1,1,7,7],i1> loc(unknown)\n"
        "} loc(unknown)\n")
    first = run_pipeline(ir, LINALG)
    with_reproducer = run_pipeline(ir, LINALG, options=RunOptions(
        extra_args=(f"--mlir-pass-pipeline-crash-reproducer={tmp_path / 'r.mlir'}",)))
    summary = [d for d in with_reproducer.diagnostics if d.message.startswith("Failures have been")]
    assert summary and summary[0].file == ""  # printed at <unknown>:0
    assert "FinalizingBackendTypeConversion" in summary[0].notes[0].message
    assert str(first.signature) == ("legalization-failure: "
                                    "failed to legalize operation 'torch.vtensor.literal'")
    r = bisect(ir, LINALG, out_dir=tmp_path)
    assert r.reproduced, r.detail
    assert r.failing_pass == "torch-finalizing-backend-type-conversion"
    assert [(x.op, x.responsible_pass) for x in r.responsible] == [
        ("torch.aten.__and__.Tensor", "convert-torch-to-linalg"),
        ("torch.vtensor.literal", "convert-torch-to-arith")]


def test_verifier_error_after_a_conversion(tmp_path):
    # lit_tests/pass/scalar-implicit-f32-error.mlir: both pipelines in one; TorchToLinalg builds
    # a torch_c.to_f64 of an f32 and the verifier after it rejects the result.
    r = bisect(ROOT / "lit_tests" / "pass" / "Inputs" / "full-of-f32-tensor.mlir",
               "builtin.module(torch-function-to-torch-backend-pipeline,"
               "torch-backend-to-linalg-on-tensors-backend-pipeline)", out_dir=tmp_path)
    assert r.reproduced and r.failing_pass == "convert-torch-to-linalg"
    assert r.outcome is Outcome.VERIFIER_ERROR
    assert str(r.signature) == ("verifier-error: 'torch_c.to_f64' op operand #0 must be Torch FloatType, "
                           "but got 'f32'")


def test_hang_is_localized_by_the_timeout(tmp_path):
    r = bisect(CRASHERS / "P_softmax_dim_oob_HANG.mlir",
               "builtin.module(torch-function-to-torch-backend-pipeline)", out_dir=tmp_path, timeout_s=1)
    assert r.failing_pass == "torch-decompose-complex-ops" and r.reproduced
    assert r.outcome is Outcome.TIMEOUT and str(r.signature) == "timeout: hang in DecomposeComplexOps"


def test_nothing_to_bisect(tmp_path):
    ok = tmp_path / "ok.mlir"
    ok.write_text("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
                  "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")
    r = bisect(ok, LINALG, out_dir=tmp_path)
    assert r.runs == 1 and not r.found and r.first.ok
    bad = tmp_path / "bad.mlir"
    bad.write_text("garbage\n")
    r = bisect(bad, LINALG, out_dir=tmp_path)
    assert r.runs == 1 and not r.found and "does not parse" in r.detail


def test_an_error_leaves_no_folder_behind(tmp_path):
    with pytest.raises(PipelineConfigError, match="nosuchpass"):
        bisect(CRASHERS / "A_remainder_int_by_zero.mlir", "builtin.module(nosuchpass)", out_dir=tmp_path)
    with pytest.raises(InputFileError, match="does not exist"):
        bisect(tmp_path / "absent.mlir", LINALG, out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_dumped_pipeline_from_stderr():
    stderr = ("Pass Manager with 2 passes:\n"
              "builtin.module(\n  func.func(\n    cse\n  ),\n  canonicalize\n)\n\n"
              "x.mlir:1:1: error: boom\n")
    assert [str(p.name) for p in dumped_pipeline(stderr)] == ["cse", "canonicalize"]
    assert dumped_pipeline("nothing") == []


def test_harness_bisect_command(tmp_path):
    proc = harness("bisect", str(CRASHERS / "F_view_zero_numel.mlir"), "--pipeline", "torch-to-linalg",
                   "--out", str(tmp_path), timeout=120)
    assert proc.returncode == 1, proc.stderr  # the failure asked about is there
    out = proc.stdout
    assert ("first failing pass: convert-torch-to-linalg "
            "(ConvertTorchToLinalg on 'func.func' operation: @f") in out
    assert "signature: crash: SIGFPE in ConvertTorchToLinalg at" in out
    # The binary that ran, so the line pastes into a shell without the venv on PATH.
    assert f"replay: reproduced: {REAL} -pass-pipeline=" in out
    assert len(list(tmp_path.glob("bisect-F_view_zero_numel-*/before-convert-torch-to-linalg.mlir"))) == 1
    ir = tmp_path / "nonzero.mlir"
    ir.write_text(NONZERO)
    proc = harness("bisect", str(ir), "--pipeline", "torch-to-linalg", "--out", str(tmp_path), "--json",
                   timeout=120)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["responsible"][0]["op"] == "torch.aten.nonzero"
    assert data["blockers"]["blockers"] == ["torch.aten.nonzero"]
    assert data["outcome"] == "legalization-failure"


_RESOURCE = ('{-#\n  external_resources: {\n    mlir_reproducer: {\n      pipeline: '
             '"builtin.module(func.func(convert-torch-to-linalg{allow-non-finites=true}))",\n'
             '      disable_threading: true\n    }\n  }\n#-}\n')
_CHUNK = 1 << 16


def _filler(chars: int) -> str:
    return ("// " + "0123456789ABCDEF" * (chars // 16 + 1))[:max(chars - 1, 0)] + "\n"


@pytest.mark.parametrize("before,after", [
    (3 << 20, 0),                   # at the end, as MLIR writes it: found in the tail
    (0, 3 << 20),                   # at the start (a hand-edited file): the first chunk
    (5 * _CHUNK - _RESOURCE.index("pipeline:") - 20, 3 << 20),  # its pipeline across a chunk boundary
], ids=["at-the-end", "at-the-start", "across-chunks"])
def test_the_reproducer_pipeline_is_read_from_a_large_file_in_pieces(tmp_path, before, after, monkeypatch):
    path = tmp_path / "repro.mlir"
    path.write_text((_filler(before) if before else "") + _RESOURCE + (_filler(after) if after else ""))
    monkeypatch.setattr(bisect_module, "_REPRO_TAIL", _CHUNK)  # many chunks: one holds it
    expected = "builtin.module(func.func(convert-torch-to-linalg{allow-non-finites=true}))"
    assert reproducer_pipeline_of_file(path) == expected
    assert reproducer_pipeline(path.read_text()) == expected


def test_a_file_without_the_resource_has_no_reproducer_pipeline(tmp_path):
    path = tmp_path / "plain.mlir"
    path.write_text(NONZERO)
    assert reproducer_pipeline_of_file(path) == ""
