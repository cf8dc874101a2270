"""harness.diagnose.blockers: the op whose conversion failed, told apart from the ops a failure
names only because their users were not converted. On the real binary, with IR shaped like
stock OPT's mask (a bool literal and'ed with a computed mask)."""

from __future__ import annotations

from pathlib import Path

from harness.compiler.runner import run_pipeline
from harness.diagnose.blockers import analyze

LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"

# What OPT's and_mask traces to: `result = q.new_ones((), dtype=bool)` frozen as a literal,
# then `result & mask` as aten.__and__.Tensor, which has no linalg lowering.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
AND_MASK = """\
func.func @forward(%arg0: !torch.vtensor<[1,7],si64>) -> !torch.vtensor<[1,7],i1> {
  %int0 = torch.constant.int 0
  %true = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> loc("model.py":52:0)
  %mask = torch.aten.gt.Scalar %arg0, %int0 : !torch.vtensor<[1,7],si64>, !torch.int -> !torch.vtensor<[1,7],i1> loc("model.py":53:0)
  %and = torch.aten.__and__.Tensor %true, %mask : !torch.vtensor<[],i1>, !torch.vtensor<[1,7],i1> -> !torch.vtensor<[1,7],i1> loc("model.py":54:0)
  return %and : !torch.vtensor<[1,7],i1>
}
"""  # noqa: E501

# Two independent blockers: an op torch-mlir does not know, and the __and__ above.
TWO_BLOCKERS = """\
func.func @forward(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],i1>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],i1>) {
  %0 = torch.operator "aten.made_up_op"(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> loc("m.py":3:0)
  %1 = torch.aten.__and__.Tensor %arg1, %arg1 : !torch.vtensor<[4],i1>, !torch.vtensor<[4],i1> -> !torch.vtensor<[4],i1> loc("m.py":4:0)
  return %0, %1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],i1>
}
"""  # noqa: E501


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return path


def test_the_reported_literal_is_a_symptom_and_and_is_the_blocker(tmp_path):
    path = _write(tmp_path, AND_MASK)
    reported = run_pipeline(path, LINALG)
    # What MLIR names: the literal (the first illegal op the finalizing pass meets).
    assert reported.illegal_ops() == ["torch.vtensor.literal"]
    analysis = analyze(path, LINALG)
    assert [str(b.name) for b in analysis.blockers] == ["torch.aten.__and__.Tensor"]
    assert [str(s.name) for s in analysis.symptoms] == ["torch.vtensor.literal"]
    blocker = analysis.blockers[0]
    assert '"model.py":54:0' in blocker.location
    # Alone, the blocker still fails, naming itself; no conversion of the pipeline lowers it.
    assert blocker.isolated_record.illegal_ops() == ["torch.aten.__and__.Tensor"]
    assert blocker.converted_by == []
    assert "torch.vtensor.literal" not in blocker.isolated_ir  # tensor operands became arguments
    # The literal lowers alone, by convert-torch-to-arith: it stays only because of its user.
    symptom = analysis.symptoms[0]
    assert symptom.isolated_record.ok and symptom.converted_by == ["convert-torch-to-arith"]
    assert symptom.users == ["torch.aten.__and__.Tensor"]


def test_each_blocker_is_found_and_isolated_alone(tmp_path):
    analysis = analyze(_write(tmp_path, TWO_BLOCKERS), LINALG, replay_conversions=False)
    assert sorted(b.name for b in analysis.blockers) == ['torch.aten.__and__.Tensor',
                                                          'torch.operator "aten.made_up_op"']
    assert analysis.symptoms == []
    for blocker in analysis.blockers:
        assert blocker.isolated_ir.count("= torch.") == 1  # one op, nothing else


def test_a_passing_file_has_nothing_to_analyze(tmp_path):
    path = _write(tmp_path, AND_MASK.replace(
        "torch.aten.__and__.Tensor %true, %mask : !torch.vtensor<[],i1>,",
        "torch.aten.bitwise_and.Tensor %true, %mask : !torch.vtensor<[],i1>,"))
    analysis = analyze(path, LINALG)
    assert analysis.illegal == [] and analysis.detail == "the pipeline succeeds"


def test_a_fix_that_renames_the_blocker_is_replayed_through_the_same_passes(tmp_path):
    """bitwise-and-or turns __and__ into bitwise_and: convert-torch-to-linalg lowers that, and
    the whole pipeline passes on the renamed one-op function."""
    blocker = analyze(_write(tmp_path, AND_MASK), LINALG).blockers[0]
    eq = blocker.equivalent
    assert (str(eq.op), str(eq.fix), eq.lowers) == ("torch.aten.bitwise_and.Tensor", "bitwise-and-or", True)
    assert eq.converted_by == ["convert-torch-to-linalg"]
    assert blocker.reproduces_alone
    assert '"model.py":54:0' in blocker.diagnostic.location or blocker.diagnostic.file == "model.py"


def test_the_signature_groups_by_the_blocker_once_known(tmp_path):
    """OPT names the literal, a module of one's own names __and__ itself: with the blocker
    known both are the same bug (the op MLIR named stays on the side, out of the key)."""
    from dataclasses import replace

    opt_like = run_pipeline(_write(tmp_path, AND_MASK), LINALG)
    direct = tmp_path / "direct.mlir"
    direct.write_text(
        "func.func @f(%arg0: !torch.vtensor<[4],i1>) -> !torch.vtensor<[4],i1> {\n"
        "  %0 = torch.aten.__and__.Tensor %arg0, %arg0 : !torch.vtensor<[4],i1>, "
        "!torch.vtensor<[4],i1> -> !torch.vtensor<[4],i1>\n"
        "  return %0 : !torch.vtensor<[4],i1>\n}\n")
    own = run_pipeline(direct, LINALG)
    assert own.signature.op == "torch.aten.__and__.Tensor"
    assert opt_like.signature != own.signature  # what MLIR's message alone gives
    analysis = analyze(tmp_path / "in.mlir", LINALG, replay_conversions=False)
    grouped = replace(opt_like, blockers=analysis.names())
    assert grouped.signature == own.signature and str(grouped.signature) == str(own.signature)
    assert grouped.signature.reported == "torch.vtensor.literal"
    assert type(grouped).from_json(grouped.to_json()).signature == own.signature


def test_the_analysis_is_kept_per_input_content(tmp_path):
    path = _write(tmp_path, AND_MASK)
    first = analyze(path, LINALG)
    assert analyze(path, LINALG) is first
    path.write_text(AND_MASK.replace("model.py", "other.py"))
    assert analyze(path, LINALG) is not first
    assert analyze(path, LINALG, cache=False) is not analyze(path, LINALG)


# What the mixture-of-experts models of the catalog (afmoe, aria_text, deepseek_v4, ...) trace
# to: ops torch-mlir has no op for, as torch.operator "NAME", one using another's result.
# Their OpView has a `name` attribute of its own: `.name` is a StringAttr there, not the op name.
GROUPED_MM = """\
func.func @forward(%a: !torch.vtensor<[4,8],f32>, %b: !torch.vtensor<[2,8,8],f32>, %offs: !torch.vtensor<[2],si32>) -> (!torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>) {
  %none = torch.constant.none
  %0 = torch.operator "aten._grouped_mm"(%a, %b, %offs, %none, %none) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[2,8,8],f32>, !torch.vtensor<[2],si32>, !torch.none, !torch.none) -> !torch.vtensor<[4,8],f32> loc("moe.py":10:0)
  %int8 = torch.constant.int 8
  %f0 = torch.constant.float 0.0
  %f1 = torch.constant.float 1.0
  %1 = torch.operator "aten.histc"(%0, %int8, %f0, %f1) : (!torch.vtensor<[4,8],f32>, !torch.int, !torch.float, !torch.float) -> !torch.vtensor<[8],f32> loc("moe.py":11:0)
  %2 = torch.operator "aten._grouped_mm"(%0, %b, %offs, %none, %none) : (!torch.vtensor<[4,8],f32>, !torch.vtensor<[2,8,8],f32>, !torch.vtensor<[2],si32>, !torch.none, !torch.none) -> !torch.vtensor<[4,8],f32> loc("moe.py":12:0)
  return %2, %1 : !torch.vtensor<[4,8],f32>, !torch.vtensor<[8],f32>
}
"""  # noqa: E501


def test_torch_operators_using_each_other_are_named_by_their_operator(tmp_path):
    """A torch.operator that uses another's result is met as a use's owner (an OpView): the
    analysis reads its op name, not its `name` attribute (which was an internal error on 40
    models of 'harness sweep --all')."""
    analysis = analyze(_write(tmp_path, GROUPED_MM), LINALG, replay_conversions=False)
    grouped, histc = 'torch.operator "aten._grouped_mm"', 'torch.operator "aten.histc"'
    assert sorted(b.name for b in analysis.blockers) == [grouped, histc]
    assert analysis.get(grouped).count == 2
    assert sorted(analysis.get(grouped).users) == [grouped, histc]


def test_the_fix_loop_finds_torch_operator_blockers(tmp_path):
    """fixes.driver.blockers_of (what 'harness port --fix' and 'harness fix' ask) on the same IR."""
    from harness.compiler.outcomes import Outcome
    from harness.execute.lowering import resolve
    from harness.fixes.loop import FixOptions, blockers_of

    record = run_pipeline(_write(tmp_path, GROUPED_MM), resolve("torch-to-linalg")[0])
    assert record.outcome is Outcome.LEGALIZATION_FAILURE
    found, analysis = blockers_of(record, "torch-to-linalg", FixOptions())
    assert sorted(b.op for b in found) == ['torch.operator "aten._grouped_mm"',
                                           'torch.operator "aten.histc"']
    assert analysis is not None and {b.stage for b in found} == {"torch-to-linalg"}


# __and__ alone, on two arguments: the finalizing type conversion is the pass that fails.
AND_ONLY = """\
func.func @forward(%arg0: !torch.vtensor<[2],i1>, %arg1: !torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1> -> !torch.vtensor<[2],i1>
  return %0 : !torch.vtensor<[2],i1>
}
"""  # noqa: E501


def test_the_analysis_names_the_failing_pass_as_bisect_does(tmp_path):
    """The after-failure dump the analysis reads names the pass bisect finds (the port takes it
    from there instead of running the pipeline once more)."""
    from harness.diagnose.bisect import Replay, bisect

    path = _write(tmp_path, AND_ONLY)
    analysis = analyze(path, LINALG, replay_conversions=False)
    assert analysis.failing_pass == "torch-finalizing-backend-type-conversion"
    assert analysis.to_json()["failing_pass"] == analysis.failing_pass
    found = bisect(path, LINALG, out_dir=tmp_path / "bisect", blockers=False, replay=Replay.NONE)
    assert found.failing_pass == analysis.failing_pass


def test_the_failing_pass_is_the_innermost_one_mlir_printed_first():
    """A pass failing inside another's dynamic pipeline is printed first, then the outer pass:
    the first header names the pass (its argument, options and operation cut off)."""
    from harness.diagnose.blockers import failed_pass

    stderr = ("error: failed to legalize\n"
              "// -----// IR Dump After ReduceOpVariants Failed: torch-reduce-op-variants"
              "{extra-library=} ('func.func' operation: @forward) //----- //\nfunc.func @forward\n"
              "// -----// IR Dump After LowerToBackendContract Failed: "
              "torch-lower-to-backend-contract{backend-legal-ops= max-iterations=10} "
              "('builtin.module' operation) //----- //\nmodule {}\n")
    assert failed_pass(stderr) == "torch-reduce-op-variants"
    assert failed_pass("error: failed to legalize\n") == ""


def test_replays_left_for_later_give_the_analysis_made_at_once(tmp_path):
    """--fix's loop analyses without the conversion replays (the blockers are all it needs);
    with_replays then gives what one analysis with them gives (the literal converted by
    convert-torch-to-arith, __and__ by none, its renamed bitwise_and by convert-torch-to-linalg),
    without the failing run again."""
    from harness.diagnose.blockers import with_replays

    path = _write(tmp_path, AND_MASK)
    whole = analyze(path, LINALG, cache=False)
    first = analyze(path, LINALG, replay_conversions=False, cache=False)
    assert first.names() == whole.names() == ["torch.aten.__and__.Tensor"]
    assert first.conversions == [] and not any(op.converted_by for op in first.illegal)
    assert first.runs < whole.runs
    later = with_replays(first)
    assert later is first and later.pending is None
    drop = ("runs", "seconds")
    assert ({k: v for k, v in later.to_json().items() if k not in drop}
            == {k: v for k, v in whole.to_json().items() if k not in drop})
    assert later.runs == whole.runs
    assert later.get("torch.vtensor.literal").converted_by == ["convert-torch-to-arith"]
    assert later.blockers[0].equivalent.converted_by == ["convert-torch-to-linalg"]
    assert with_replays(later).runs == whole.runs  # once: nothing is left to replay


def test_a_replayed_analysis_is_the_one_a_full_analysis_of_the_same_file_reuses(tmp_path):
    """Kept in the process's cache under both keys: report or explain after the port's --fix
    loop analyse the failing run no second time."""
    from harness.diagnose.blockers import with_replays

    path = _write(tmp_path, AND_MASK + f"// {tmp_path.name}: a content of its own\n")
    first = with_replays(analyze(path, LINALG, replay_conversions=False))
    assert analyze(path, LINALG) is first
