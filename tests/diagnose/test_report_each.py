"""report's issue-28 wiring: a module with several distinct failures becomes one bundle per
failure (``--each``), and TorchScript object-graph input is reduced at its failing pass."""

from __future__ import annotations

import json
from pathlib import Path

from harness.diagnose.report import ReportOptions, make_report, make_reports_each

from support import harness
from test_reduce_at_pass import _object_graph
from test_reduce_split import CONTRACT, OPS, THREE_GAPS


# A failure of another cause than THREE_GAPS' missing shape functions: a backend-illegal 3-D
# convolution_backward (lit_tests/pass/convolution-backward-3d-illegal-error.mlir's case, reduced).
CONV_BACKWARD_3D = """
func.func @convolution_backward_3d(%arg0: !torch.vtensor<[1,4,5,5,5],f32>, %arg1: !torch.vtensor<[1,2,5,5,5],f32>, %arg2: !torch.vtensor<[4,2,3,1,3],f32>) {
  %true = torch.constant.bool true
  %false = torch.constant.bool false
  %int4 = torch.constant.int 4
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %0 = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %1 = torch.prim.ListConstruct %int1, %int1, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %2 = torch.prim.ListConstruct %int1, %int0, %int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.prim.ListConstruct %int0, %int0, %int0 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %4 = torch.prim.ListConstruct %true, %true, %true : (!torch.bool, !torch.bool, !torch.bool) -> !torch.list<bool>
  %r0, %r1, %r2 = torch.aten.convolution_backward %arg0, %arg1, %arg2, %0, %1, %2, %1, %false, %3, %int1, %4 : !torch.vtensor<[1,4,5,5,5],f32>, !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool, !torch.list<int>, !torch.int, !torch.list<bool> -> !torch.vtensor<[1,2,5,5,5],f32>, !torch.vtensor<[4,2,3,1,3],f32>, !torch.vtensor<[4],f32>
  return
}
"""  # noqa: E501 (IR as printed)


def test_failures_of_one_cause_are_one_bundle_listing_every_op(tmp_path):
    # Issue 44: three ops without shape functions are one bug (one change to the library), so
    # one bundle: the first op's reproducer, and each other op's own reduced file.
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    results = make_reports_each(src, CONTRACT, options=ReportOptions(out_dir=tmp_path / "out", budget_s=20))
    assert len(results) == 1
    result = results[0]
    assert result.self_check.reproduced, result.self_check.describe()
    assert result.same_cause == OPS[1:]
    assert result.title == ("[torch-mlir] no shape or dtype function in the library for 3 ops "
                            "(`aten.xlogy.Tensor`, `aten.__rshift__.Scalar`, `aten.complex`): their "
                            "results stay unrefined and the backend contract rejects them")
    folder = Path(result.folder)
    for n, op in enumerate(OPS, 1):
        reduced = (folder / ("reduced.mlir" if n == 1 else f"reduced-{n}.mlir")).read_text()
        assert op in reduced and not any(o in reduced for o in OPS if o != op), reduced
    issue = (folder / "issue.md").read_text()
    assert "## Same root cause" in issue and "This issue covers 3 ops." in issue
    assert "`reduced-3.mlir` fails with `pass-failure: unsupported by backend contract" in issue
    record = json.loads((folder / "record.json").read_text())
    assert [m["ops"] for m in record["same_cause"]] == [[OPS[1]], [OPS[2]]]


def test_a_failure_of_another_cause_keeps_its_own_bundle(tmp_path):
    src = tmp_path / "mixed.mlir"
    src.write_text(THREE_GAPS.split("func.func @complex")[0] + CONV_BACKWARD_3D)
    proc = harness("report", str(src), "--pipeline", CONTRACT, "--each", "--out", str(tmp_path / "out"),
                   "--budget-s", "20", "--json", timeout=900)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)
    assert isinstance(found, list) and len(found) == 2
    assert len(list((tmp_path / "out").glob("report-*.tar.gz"))) == 2
    grouped = [r for r in found if r["same_cause"]]
    assert len(grouped) == 1 and grouped[0]["same_cause"] == [OPS[1]]
    alone = next(r for r in found if not r["same_cause"])
    assert "convolution_backward" in alone["title"] and "Same root cause" not in \
        (Path(alone["folder"]) / "issue.md").read_text()


def test_only_listed_causes_merge():
    from harness.diagnose.causes import group_by_cause

    signatures = ["pass-failure: unsupported by backend contract: tensor with unknown rank: 'torch.aten.a'",
                  "legalization-failure: failed to legalize operation 'torch.aten.b'",
                  "pass-failure: unsupported by backend contract: tensor with unknown dtype: 'torch.aten.c'",
                  "legalization-failure: failed to legalize operation 'torch.aten.d'"]
    # each missing lowering is its own bug; unknown rank and unknown dtype are one
    assert group_by_cause(signatures, str) == [[signatures[0], signatures[2]], [signatures[1]],
                                               [signatures[3]]]


def test_without_each_one_bundle_hides_the_others(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    result = make_report(src, CONTRACT, options=ReportOptions(out_dir=tmp_path / "out", budget_s=20))
    replayed = (Path(result.folder) / result.self_check.replayed_file).read_text()
    assert OPS[0] in replayed and OPS[1] not in replayed


def test_one_failure_is_one_bundle(tmp_path):
    src = tmp_path / "one.mlir"
    src.write_text(THREE_GAPS.split("func.func @fine")[0])
    results = make_reports_each(src, CONTRACT, options=ReportOptions(out_dir=tmp_path / "out", budget_s=20))
    assert len(results) == 1 and results[0].self_check.reproduced


def test_object_graph_is_reduced_at_the_failing_pass(tmp_path):
    src = tmp_path / "og.mlir"
    src.write_text(_object_graph())
    result = make_report(src, "torchscript-to-torch",
                         options=ReportOptions(out_dir=tmp_path / "out", budget_s=60))
    folder = Path(result.folder)
    assert result.self_check.reproduced, result.self_check.describe()
    assert result.pipeline != ""
    reduced = (folder / "reduced.mlir").read_text()
    assert 'torch.operator "aten.fft_fftn"' in reduced
    assert "torch.nn_module" not in reduced and "torch.aten.relu" not in reduced
    # repro.sh and issue.md run the failing pass alone, which is what reduced.mlir fails.
    single = "builtin.module(func.func(torch-reduce-op-variants{extra-library=}))"
    assert single in (folder / "repro.sh").read_text()
    assert single in (folder / "issue.md").read_text()


def test_never_keeps_the_object_graph(tmp_path):
    src = tmp_path / "og.mlir"
    src.write_text(_object_graph())
    result = make_report(src, "torchscript-to-torch", options=ReportOptions(
        out_dir=tmp_path / "out", budget_s=60, at_failing_pass="never"))
    replayed = (Path(result.folder) / result.self_check.replayed_file).read_text()
    assert "torch.nn_module" in replayed
