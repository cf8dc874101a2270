"""Issue 44: the report decides how a bundle goes upstream (record.json's "filing"), not a hand
edit: a known duplicate is a comment for the thread the catalog names; a by-design limit is not
filed (README lists it with upstream's reason); a TorchScript-only construct upstream said it will
not act on, and any TorchScript-only failure that is no crash and no miscompile (upstream switched
that path off, #3693), is not filed; a crash or a miscompile stays filed whatever the path; the
rest are new.
"""

from __future__ import annotations

from dataclasses import replace

from harness.diagnose.report.sections import (
    FILE_COMMENT,
    FILE_NEW,
    FILE_NONE,
    PathOutcome,
    PathResult,
    Provenance,
    UpstreamVerdict,
    pass_broke_valid_ir,
    triage,
    upstream_section,
    with_source,
)
from harness.compiler.outcomes import Outcome
from harness.knowledge import upstream
from harness.knowledge.upstream_src import SourceLookup

# The SIGSEGV text the int-mm bundle's failure carries (catalog: #4725, fixed by open PR #4762).
INT8_CRASH = ("for conversion to byte or char type dstOriginalDtype has to be passed to "
              "convertScalarToDtype")
# What the prim-loop bundle's backend contract says (catalog: #1896, upstream's word on loops).
LOOP_UNRANKED = "unsupported by backend contract: tensor with unknown rank: 'torch.tensor_static_info_cast'"

WORD = upstream.UpstreamReport(
    repo="llvm/torch-mlir", number=1896, kind=upstream.UpstreamKind.ISSUE, state="closed",
    title="Failed when compiling RNN model to mlir", triage=upstream.Triage.UNSUPPORTED_PATH,
    messages=(LOOP_UNRANKED,))


def _paths(fx: PathOutcome, onnx: PathOutcome) -> tuple[PathResult, ...]:
    return (PathResult("fx", "FX (torch.export + fx_importer)", True, fx),
            PathResult("onnx", "ONNX (torch.onnx.export + onnx_importer)", True, onnx),
            PathResult("torchscript", "TorchScript (torch.jit + this project's importer)", False,
                       PathOutcome.HITS))


def test_a_known_issue_is_a_comment_for_it_and_the_open_pr_that_fixes_it():
    verdict = triage("", "", INT8_CRASH)
    assert verdict.label == "known #4725"
    assert verdict.filing == FILE_COMMENT
    assert verdict.threads == ("llvm/torch-mlir#4725", "llvm/torch-mlir#4762")
    text = upstream_section(verdict)
    assert ("Filing: **not a new issue**: a reproducer to add to llvm/torch-mlir#4725, "
            "llvm/torch-mlir#4762 (below).") in text


def test_by_design_is_not_filed_and_rests_on_upstreams_reason():
    """The size-1 abort: #240 made the guard, closed PR #2882 was turned down (a dynamic dim
    cannot be 1 at run time); #2149 is about a dynamic broadcast_to, not that thread."""
    verdict = triage("", "", "the code dies by SIGABRT: mismatched size for broadcast")
    assert verdict.label == "by design" and verdict.filing == FILE_NONE
    assert verdict.threads == ("llvm/torch-mlir#240", "llvm/torch-mlir#2882")
    assert 2149 not in [m.number for m in verdict.matches]
    text = upstream_section(verdict)
    assert ("Filing: **not filed**: by design upstream (llvm/torch-mlir#240, llvm/torch-mlir#2882, "
            "below).") in text


def _ts_only(verdict: UpstreamVerdict, fx: PathOutcome = PathOutcome.PASSES,
             onnx: PathOutcome = PathOutcome.FAILS_OTHERWISE) -> UpstreamVerdict:
    return with_source(verdict, SourceLookup(), Provenance(paths=_paths(fx, onnx)))


def test_a_torchscript_only_failure_that_is_no_crash_is_not_on_the_supported_path():
    """The general rule: no catalog entry about the construct, yet only TorchScript hits it (FX
    passes, ONNX fails elsewhere) and it is a verifier or pass error: upstream's word on the
    path (#3693 switched the importer off; #3033, #4387: deprecated, not maintained) decides."""
    verdict = _ts_only(triage("torch.aten.broadcast_tensors", "",
                              "error: 'torch.shape.calculate.yield.shapes' op"))
    assert verdict.label == "not on the supported path" and verdict.filing == FILE_NONE
    assert verdict.threads == ("llvm/torch-mlir#3693", "llvm/torch-mlir#3033", "llvm/torch-mlir#4387")
    text = upstream_section(verdict)
    assert ("it is not a crash or a miscompile, and upstream has switched that path off and does not "
            "maintain it (llvm/torch-mlir#3693, llvm/torch-mlir#3033, llvm/torch-mlir#4387") in text
    assert "- llvm/torch-mlir#3693 (pull request, merged" in text
    assert "catalog" not in text


def test_a_crash_or_miscompile_stays_filed_whatever_the_path():
    verdict = _ts_only(triage("torch.aten.any.dims", "", "SIGSEGV"))
    assert verdict.filing == FILE_NONE  # the same failure as a verifier error would not be filed
    crash = replace(verdict, crash_or_miscompile=True)
    assert crash.label == "" and crash.filing == FILE_NEW and crash.threads == ()


def test_a_pass_that_breaks_valid_ir_is_filed_whatever_the_path():
    """Issue 44's policy: a pass that turns verifier-valid torch IR into IR the verifier rejects
    is a pass bug like a crash (the view-unrefined, reify-shape, recompose and cross-entropy
    rows); a legalization failure or a pass's own error that only TorchScript reaches stays
    unfiled. The report refuses input that fails before any pass, so a verifier error in its
    run is a pass's output."""
    assert pass_broke_valid_ir(Outcome.VERIFIER_ERROR)
    assert not any(pass_broke_valid_ir(o) for o in (Outcome.LEGALIZATION_FAILURE, Outcome.PASS_FAILURE,
                                                    Outcome.PARSE_ERROR, Outcome.CRASH))
    verdict = _ts_only(triage("torch.aten.broadcast_tensors", "",
                              "error: 'torch.shape.calculate.yield.shapes' op"))
    assert verdict.filing == FILE_NONE  # a legalization or pass error would not be filed
    broke = replace(verdict, broke_valid_ir=True)
    assert broke.label == "" and broke.filing == FILE_NEW and broke.threads == ()


def test_the_general_rule_needs_the_paths_and_a_torch_mlir_bug():
    base = triage("torch.aten.foo", "", "error: x")
    # FX hits it too: a bug on the supported path
    assert _ts_only(base, fx=PathOutcome.HITS).filing == FILE_NEW
    # nobody said which paths hit it
    assert with_source(base, SourceLookup(), Provenance()).filing == FILE_NEW
    # an upstream MLIR pass's bug goes to llvm-project whatever frontend made its input
    assert _ts_only(replace(base, target_repo="llvm/llvm-project")).filing == FILE_NEW


def test_the_general_entry_matches_no_failure_by_itself():
    general = [r for r in upstream.KNOWN_UPSTREAM if r.general]
    assert [r.number for r in general] == [3693]
    assert not general[0].matches("torch.aten.foo", "", "error: anything")
    assert [r.number for r in upstream.path_statements()] == [3693, 3033, 4387]


def test_upstreams_word_and_a_torchscript_only_failure_are_not_filed():
    verdict = UpstreamVerdict(matches=(WORD,), only_torchscript=True)
    assert verdict.label == "not on the supported path"
    assert verdict.filing == FILE_NONE and verdict.threads == ("llvm/torch-mlir#1896",)
    assert verdict.title_prefix == "[torch-mlir] [not on the supported path] "
    text = upstream_section(verdict)
    assert text.count("Filing: **not filed**: only the TorchScript path hits it") == 1
    assert "Triage: **not on the supported path**. What upstream said" in text


def test_upstreams_word_alone_does_not_decide_it_the_paths_must_agree():
    # FX hits it too, or nobody said which paths do: a new issue, upstream's word only listed
    for seen in (False, None):
        verdict = UpstreamVerdict(matches=(WORD,), only_torchscript=seen)
        assert verdict.label == "" and verdict.filing == FILE_NEW and verdict.threads == ()
        assert "Filing:" not in upstream_section(verdict)


def test_the_paths_are_read_without_a_torch_mlir_checkout():
    """--path alone (no --torch-mlir-src) tells the verdict that only TorchScript hits it."""
    verdict = triage("", "", LOOP_UNRANKED)
    assert [m.number for m in verdict.matches][:1] == [1896] and verdict.label == ""
    ts_only = Provenance(paths=_paths(PathOutcome.PASSES, PathOutcome.PASSES))
    assert with_source(verdict, SourceLookup(), ts_only).label == "not on the supported path"
    fx_too = Provenance(paths=replace_fx(ts_only.paths, PathOutcome.HITS))
    assert with_source(verdict, SourceLookup(), fx_too).filing == FILE_NEW


def replace_fx(paths: tuple[PathResult, ...], outcome: PathOutcome) -> tuple[PathResult, ...]:
    return tuple(replace(p, outcome=outcome) if p.frontend == "fx" else p for p in paths)


def test_a_failure_with_no_catalog_match_is_a_new_issue():
    verdict = triage("torch.aten.nonzero", "", "error: something else")
    assert verdict.filing == FILE_NEW and verdict.threads == ()


def test_a_grouped_bundle_is_triaged_on_every_op_of_its_cause(tmp_path):
    """--each's one bundle for one cause: the catalog's reports and searches about any member op
    are the bundle's (the missing-functions bundle's im2col member has open PR #4766)."""
    from harness.compiler.outcomes import Outcome
    from harness.compiler.records import RunRecord
    from harness.diagnose.report.build import _verdict
    from harness.diagnose.report.result import ReportOptions, SameCauseMember

    first = RunRecord(Outcome.PASS_FAILURE, [], "p", "x.mlir", "opt", 1, 0.1,
                      stderr="error: unsupported by backend contract: tensor with unknown rank")
    im2col = SameCauseMember(("torch.aten.im2col",), "pass-failure: unsupported by backend contract: "
                             "tensor with unknown rank: 'torch.aten.im2col'", "", "reduced-2.mlir", "p")
    alone = _verdict(first, None, None, ReportOptions(out_dir=tmp_path), lambda _: None)
    grouped = _verdict(first, None, None, ReportOptions(out_dir=tmp_path, same_cause=(im2col,)),
                       lambda _: None)
    assert 4766 not in [m.number for m in alone.matches]
    assert 4766 in [m.number for m in grouped.matches] and grouped.filing == FILE_NEW
    assert any(4766 in r.matches for r in grouped.searched)


def test_a_pass_failure_worded_without_the_op_is_found_to_break_valid_ir():
    """Real torch-mlir-opt: DecomposeComplexOps leaves a return whose operand type differs from
    the function's result type, which the verifier words without the op's name (a "pass
    failure" by its wording); run again with --verify-each=0 the pass succeeds and its output
    does not verify. A legalization failure (the op left illegal) is no broken IR."""
    from harness.compiler import builds
    from harness.compiler.runner import run_pipeline
    from harness.diagnose.report.build import _broke_valid_ir

    from support import ROOT

    exe = builds.resolve(None)
    broken = ROOT / "lit_tests" / "pass" / "decompose-cross-entropy-unknown-dtype-error.mlir"
    original = run_pipeline(broken, "-torch-decompose-complex-ops", opt=exe.path)
    assert original.outcome is Outcome.PASS_FAILURE  # the wording alone does not tell
    assert _broke_valid_ir(broken, "-torch-decompose-complex-ops", exe, original, 60.0)
    illegal = ROOT / "lit_tests" / "pass" / "prims-prod-dynamic-kept-dim-error.mlir"
    original = run_pipeline(illegal, "-convert-torch-to-linalg", opt=exe.path)
    assert not original.ok
    assert not _broke_valid_ir(illegal, "-convert-torch-to-linalg", exe, original, 60.0)


def test_the_bindings_tool_without_verify_each_leaves_broken_ir_unknown():
    """The bindings tool (upstream MLIR passes torch-mlir-opt lacks) rejects --verify-each=0 as
    a pipeline error: the rerun then says "not known to break IR", it does not stop the report
    (the llvm-project pad bundle could not be regenerated before)."""
    from harness.compiler import builds
    from harness.compiler.runner import run_pipeline
    from harness.diagnose.report.build import _broke_valid_ir
    from harness.diagnose.tool_choice import tool_for

    from support import ROOT

    pipeline = "builtin.module(func.func(linalg-fuse-elementwise-ops))"
    exe = builds.resolve(tool_for(pipeline, None, "bindings"))
    pad = ROOT / "tools" / "upstream_llvm" / "linalg-fuse-elementwise-pad-expand-dominance" / "input.mlir"
    original = run_pipeline(pad, pipeline, opt=exe.path)
    assert original.outcome is Outcome.PASS_FAILURE
    assert not _broke_valid_ir(pad, pipeline, exe, original, 60.0)
