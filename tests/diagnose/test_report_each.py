"""report's issue-28 wiring: a module with several distinct failures becomes one bundle per
failure (``--each``), and TorchScript object-graph input is reduced at its failing pass."""

from __future__ import annotations

import json
from pathlib import Path

from harness.diagnose.report import ReportOptions, make_report, make_reports_each

from support import harness
from test_reduce_at_pass import _object_graph
from test_reduce_split import CONTRACT, OPS, THREE_GAPS


def test_each_failure_is_its_own_bundle(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    results = make_reports_each(src, CONTRACT, options=ReportOptions(out_dir=tmp_path / "out", budget_s=20))
    assert len(results) == 3
    for result, op in zip(results, OPS, strict=True):
        assert result.self_check.reproduced, result.self_check.describe()
        folder = Path(result.folder)
        replayed = (folder / result.self_check.replayed_file).read_text()
        assert op in replayed and not any(o in replayed for o in OPS if o != op), replayed
        # The input is the module the failure is met in: the failures before it knocked out.
        assert not any(o in (folder / "input.mlir").read_text() for o in OPS[:OPS.index(op)])
    assert len({r.folder for r in results}) == 3


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


def test_cli_each_prints_a_list(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    proc = harness("report", str(src), "--pipeline", CONTRACT, "--each", "--out", str(tmp_path / "out"),
                   "--budget-s", "20", "--json", timeout=900)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)
    assert isinstance(found, list) and len(found) == 3
    assert len(list((tmp_path / "out").glob("report-*.tar.gz"))) == 3


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
