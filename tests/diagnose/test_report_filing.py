"""Issue 44: the report decides how a bundle goes upstream (record.json's "filing"), not a hand
edit: a known duplicate or a by-design limit is a comment for the thread the catalog names; a
TorchScript-only construct upstream said it will not act on is not filed; the rest are new.
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
    triage,
    upstream_section,
    with_source,
)
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


def test_by_design_is_a_comment_for_the_tracking_issue():
    verdict = triage("", "", "the code dies by SIGABRT: mismatched size for broadcast")
    assert verdict.label == "by design" and verdict.filing == FILE_COMMENT
    assert verdict.threads == ("llvm/torch-mlir#2149",)


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
