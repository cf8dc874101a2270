"""The board, the baseline comparison, --merge and --shard, on the records of the real sweep
(``sweep_run``), changed where a test needs another outcome through the port's own dataclasses."""

from __future__ import annotations

import json
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.errors import InputFileError
from harness.port.record import Blocker, PortOutcome, PortRecord, PortStage
from harness.sweep import board, highlight, records
from harness.sweep.runner import Shard
from harness.sweep.status import Status, compare, rows_of

from support import ROOT, harness


class Cells(HTMLParser):
    """The board's rows (tr.model) and each cell's data-status, in page order."""

    def __init__(self, table_id: str = "board"):
        super().__init__()
        self.table_id, self.inside, self.rows = table_id, False, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.inside = a.get("id") == self.table_id
        elif (self.inside and tag == "tr" and a.get("class") in ("model", "blocker")) or \
                (self.inside and tag == "tr" and str(a.get("class", "")).startswith("change")):
            self.rows.append({"attrs": a, "cells": []})
        elif self.inside and tag == "td" and a.get("class") == "cell":
            self.rows[-1]["cells"].append(a.get("data-status"))

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False


def parse(page: str, table_id: str = "board") -> list[dict]:
    p = Cells(table_id)
    p.feed(page)
    return p.rows


def copy_sweep(src: Path, dst: Path) -> Path:
    shutil.copytree(src / "records", dst / "records")
    if (src / "checks").is_dir():
        shutil.copytree(src / "checks", dst / "checks")
    return dst


def edit(path: Path, change) -> None:
    record = PortRecord.read(path)
    change(record)
    record.write(path)


def test_the_board_has_a_row_per_model_variant_and_a_cell_per_frontend(sweep_run):
    out, _ = sweep_run
    page = (out / "index.html").read_text()
    rows = parse(page)
    assert [(r["attrs"]["data-model"], r["cells"]) for r in rows] == [
        ("bert", ["verified", "verified"]),
        ("gpt2", ["verified", "verified"]),
        ("nosuchmodel", ["crashed"]),
    ]
    assert "op-level check: verified" in page and "fixes: bitwise-and-or" in page
    assert "persistent-buffers" in page  # bert's FX port, the module fix kept
    assert "http://" not in page and "https://" not in page and "<script" not in page
    # With --fix every real port lowers: no blocker left (the next test fails one).
    assert parse(page, "blockers") == []


def test_a_failing_port_shows_its_blocker_reproducer_and_report_bundle(sweep_run, tmp_path):
    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    # The board shows files of the sweep's own folders only.
    reproducer = sweep_dir / "ports" / "and.mlir"
    reproducer.parent.mkdir()
    reproducer.write_text("func.func @f(%a: !torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1> {\n"
                          "  %0 = torch.aten.__and__.Tensor %a, %a : !torch.vtensor<[2],i1>, "
                          "!torch.vtensor<[2],i1> -> !torch.vtensor<[2],i1>\n"
                          "  return %0 : !torch.vtensor<[2],i1>\n}\n")
    bundle = sweep_dir / "ports" / "bert.torchscript" / "report"
    bundle.parent.mkdir()

    def fail(record: PortRecord) -> None:
        port = record.variants[0].ports[0]
        port.outcome, port.failed_stage = PortOutcome.FAILS, PortStage.TORCH_TO_LINALG
        port.folder = str(bundle.parent)
        port.blockers = [Blocker(rank=1, stage="torch-to-linalg", signature="no-lowering:aten.__and__.Tensor",
                                 op="torch.aten.__and__.Tensor", count=2,
                                 location="/x/site-packages/transformers/masking_utils.py:54",
                                 message="failed to legalize operation 'torch.aten.__and__.Tensor'",
                                 fixes=["bitwise-and-or"], reproducer=str(reproducer))]
        port.commands = [f"harness report {port.folder}/in.mlir --pipeline torch-to-linalg --out {bundle}"]

    edit(sweep_dir / "records" / "bert.json", fail)
    bundle.mkdir(exist_ok=True)
    try:
        page = board.render(records.load(sweep_dir))
    finally:
        bundle.rmdir()
    assert parse(page)[0]["cells"] == ["fails", "verified"]
    blockers = parse(page, "blockers")
    assert [r["attrs"]["data-signature"] for r in blockers] == ["no-lowering:aten.__and__.Tensor"]
    assert "transformers/masking_utils.py:54" in page and "site-packages/transformers" not in page
    assert 'href="ports/and.mlir"' in page  # relative: the page opens from the folder
    assert "report bundle: <a href=" in page
    # The reproducer, highlighted: %0 is a value token; with mlir-pygments (pinned), the op
    # name is a token of its own.
    assert '<pre class="mlir">' in page and re.search(r'class="nv[^"]*">%0</span>', page)
    if highlight.lexer()[1].startswith("mlir-pygments"):
        assert '<span class="nf">aten.__and__.Tensor</span>' in page


def test_a_silent_miscompile_gets_its_own_status(sweep_run, tmp_path):
    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    path = records.check_path(sweep_dir, "gpt2", "gpt2", "fx")
    data = json.loads(path.read_text())
    data["outcome"] = "numerics-mismatch"
    path.write_text(json.dumps(data))
    sweep = records.load(sweep_dir)
    assert not sweep.by_model()["gpt2"].ok
    rows = parse(board.render(sweep))
    assert rows[1]["attrs"]["data-model"] == "gpt2" and rows[1]["cells"] == ["verified", "miscompile"]


def test_the_baseline_says_what_got_better_and_worse(sweep_run, tmp_path):
    out, _ = sweep_run
    old = copy_sweep(out, tmp_path / "old")
    (old / "records" / "gpt2.json").unlink()
    edit(old / "records" / "bert.json",
         lambda r: setattr(r.variants[0].ports[0], "outcome", PortOutcome.FAILS.value))
    changes = compare(rows_of(records.load(old)), rows_of(records.load(out)))
    assert [(c.key, c.direction) for c in changes] == [
        (("bert", "bert", "torchscript"), "better"),
        (("gpt2", "gpt2", "fx"), "new"),
        (("gpt2", "gpt2", "torchscript"), "new"),
    ]
    page = board.render(records.load(out), board.BoardOptions(baseline=records.load(old)))
    assert len(parse(page, "changes")) == 3
    assert "better (was fails)" in page
    back = compare(rows_of(records.load(out)), rows_of(records.load(old)))
    assert {c.direction for c in back} == {"worse", "gone"}
    assert Status.FAILS.rank < Status.MISCOMPILE.rank < Status.VERIFIED.rank


def test_shards_are_disjoint_and_cover_the_list():
    models = ["gpt2", "bert", "opt", "llama", "t5:encoder"]
    shards = [Shard.parse(f"{i}/3").select(models) for i in (1, 2, 3)]
    assert shards == [["gpt2", "llama"], ["bert", "t5:encoder"], ["opt"]]
    assert sorted(m for shard in shards for m in shard) == sorted(models)


def test_merge_joins_shard_folders(sweep_run, tmp_path):
    out, _ = sweep_run
    a, b = tmp_path / "a" / "records", tmp_path / "b" / "records"
    a.mkdir(parents=True), b.mkdir(parents=True)
    shutil.copy(out / "records" / "gpt2.json", a)
    shutil.copy(out / "records" / "bert.json", b)
    shutil.copy(out / "records" / "nosuchmodel.json", b)
    shutil.copy(out / "records" / "bert.json", a)  # in both: the last folder's copy is kept
    shutil.copytree(out / "checks", tmp_path / "b" / "checks")
    merged = tmp_path / "m"
    proc = harness("sweep", "--merge", str(a.parent), str(b.parent), "--out", str(merged), timeout=120)
    assert proc.returncode == 1, proc.stderr  # nosuchmodel has no record
    assert "bert: in more than one folder" in proc.stdout
    assert sorted(p.name for p in (merged / "records").iterdir()) == [
        "bert.json", "gpt2.json", "nosuchmodel.json"]
    assert [r["attrs"]["data-model"] for r in parse((merged / "index.html").read_text())] == \
        ["bert", "gpt2", "nosuchmodel"]
    assert len(records.load(merged).by_model()["bert"].checks) == 2  # the checks came along


def test_a_record_of_another_schema_is_refused_with_what_to_do(sweep_run, tmp_path):
    out, _ = sweep_run
    data = json.loads((out / "records" / "gpt2.json").read_text())
    data["schema"] = "harness.port/2"
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "gpt2.json").write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=r"schema harness.port/1.*harness port --json"):
        records.load(tmp_path)


def test_the_highlighter_is_the_installed_mlir_lexer():
    try:
        import mlir_pygments  # noqa: F401 (pinned in pyproject.toml)
        expected = "mlir-pygments 1.0.0"
    except ImportError:
        expected = "pygments' LLVM lexer"
    assert highlight.lexer()[1].startswith(expected)
    html = highlight.mlir_html("%0 = torch.aten.mm %a, %b : !torch.vtensor<[2,2],f32>\n" * 50)
    assert html.count("\n") == 40 and "10 more lines" in html
    assert '<span class="nv' in html  # %0 coloured as a value by either lexer


def test_reports_make_one_bundle_per_blocker_and_the_board_links_it(sweep_run, tmp_path):
    """--reports runs the report command a failing port printed, once per distinct blocker;
    here gpt2's TorchScript port as it is without --fix (its IR before bitwise-and-or)."""
    from harness.sweep.reports import make_reports
    from harness.sweep.runner import SweepOptions

    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    folder = sweep_dir / "ports" / "gpt2.torchscript"  # the record's files lie in the sweep
    folder.mkdir(parents=True)

    def fail(record: PortRecord) -> None:
        port = record.variants[0].ports[0]
        unfixed = shutil.copy(next(s.output for s in port.stages
                                   if str(s.name) == "torchscript-to-torch"), folder)
        port.outcome, port.failed_stage = PortOutcome.FAILS, PortStage.TORCH_TO_LINALG
        port.folder = str(folder)
        port.blockers = [Blocker(rank=1, stage="torch-to-linalg", signature="no-lowering:aten.__and__.Tensor",
                                 op="torch.aten.__and__.Tensor")]
        port.commands = [f"{sys.executable} -m harness report {unfixed} --pipeline torch-to-linalg "
                         f"--no-reduce --out {folder / 'report'}"]

    edit(sweep_dir / "records" / "gpt2.json", fail)
    sweep = records.load(sweep_dir)
    runs = make_reports(sweep, SweepOptions(out=sweep_dir, cwd=str(ROOT)))
    assert [(r.signature, r.ok, r.reused) for r in runs] == [("no-lowering:aten.__and__.Tensor", True, False)]
    bundles = [p for p in (folder / "report").iterdir() if p.is_dir()]  # beside its .tar.gz
    assert len(bundles) == 1 and (bundles[0] / "repro.sh").is_file()
    # The sweep's record of the model goes with the report (--port-record): its ports say which
    # frontends hit the blocker, and the model is in Blocks.
    issue = (bundles[0] / "issue.md").read_text()
    through = issue.split("## Reproduces through\n", 1)[1].split("\n## ", 1)[0]
    assert ("- TorchScript (torch.jit + a JIT IR importer; its IR matches what upstream's JIT IR "
            "importer, off by default since llvm/torch-mlir#3693, emits): **hits**") in through, through
    assert "`gpt2 (" in issue.split("## Blocks\n", 1)[1].split("\n## ", 1)[0]
    page = board.render(sweep)
    assert 'report bundle: <a href="ports/gpt2.torchscript/report">' in page
    # Made once: a second sweep reuses the bundle.
    assert [r.reused for r in make_reports(sweep, SweepOptions(out=sweep_dir, cwd=str(ROOT)))] == [True]


def test_reports_group_blockers_of_one_root_cause(sweep_run, tmp_path):
    """Issue 44: two ops without shape functions are one bug: one report run, which names the
    other blocker it covers; a blocker of another cause is not folded in."""
    from harness.sweep.reports import make_reports
    from harness.sweep.runner import SweepOptions

    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    folder = sweep_dir / "ports" / "gpt2.torchscript"
    (folder / "report" / "made-before").mkdir(parents=True)  # reused: no report runs here
    (folder / "x.mlir").write_text("module {}\n")
    rank = "pass-failure: unsupported by backend contract: tensor with unknown rank: 'torch.aten.{}'"

    def fail(record: PortRecord) -> None:
        port = record.variants[0].ports[0]
        port.outcome, port.failed_stage = PortOutcome.FAILS, PortStage.TORCH_TO_LINALG
        port.folder = str(folder)
        port.blockers = [Blocker(rank=n, stage="torch-to-linalg", signature=sig, op=op)
                         for n, (sig, op) in enumerate([
                             (rank.format("xlogy.Tensor"), "torch.aten.xlogy.Tensor"),
                             ("no-lowering:aten.__and__.Tensor", "torch.aten.__and__.Tensor"),
                             (rank.replace("rank", "dtype").format("complex"), "torch.aten.complex")], 1)]
        port.commands = [f"{sys.executable} -m harness report {folder / 'x.mlir'} --pipeline torch-to-linalg "
                         f"--out {folder / 'report'}"]

    edit(sweep_dir / "records" / "gpt2.json", fail)
    runs = make_reports(records.load(sweep_dir), SweepOptions(out=sweep_dir, cwd=str(ROOT)))
    assert [(r.signature, r.covers) for r in runs] == [
        (rank.format("xlogy.Tensor"), [rank.replace("rank", "dtype").format("complex")]),
        ("no-lowering:aten.__and__.Tensor", [])]


def test_timelines_run_the_failing_ports_timeline_command_and_the_board_links_it(sweep_run, tmp_path):
    """--timelines runs the timeline command a failing port printed (here gpt2's TorchScript
    port without --fix, at torch-to-linalg); the cell links the page."""
    from harness.sweep.runner import SweepOptions, sweep_one

    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    folder = sweep_dir / "ports" / "gpt2.torchscript"  # records are input: inside the sweep
    folder.mkdir(parents=True)

    def fail(record: PortRecord) -> None:
        port = record.variants[0].ports[0]
        unfixed = shutil.copy(next(s.output for s in port.stages
                                   if str(s.name) == "torchscript-to-torch"), folder)
        port.outcome, port.failed_stage = PortOutcome.FAILS, PortStage.TORCH_TO_LINALG
        port.folder = str(folder)
        # The sweep builds the command itself: this one's extra words are never run.
        port.commands = [f"{sys.executable} -m harness timeline {unfixed} --pipeline torch-to-linalg "
                         f"--out {folder / 'timeline'} --follow aten.mm"]

    edit(sweep_dir / "records" / "gpt2.json", fail)
    link = '<a href="ports/gpt2.torchscript/timeline/index.html">timeline</a>'
    assert link not in board.render(records.load(sweep_dir))
    run = sweep_one("gpt2", SweepOptions(out=sweep_dir, cwd=str(ROOT), timelines=True))
    assert run.reused  # the port's record is read back; only the timeline runs
    page = (folder / "timeline" / "index.html").read_text()
    assert 'class="pass failed"' in page
    assert not json.loads((folder / "timeline" / "timeline.json").read_text()).get("follow")
    assert link in board.render(records.load(sweep_dir))


def test_timelines_never_run_a_file_outside_the_sweep(sweep_run, tmp_path):
    """A record whose timeline command names a file outside the sweep gets no timeline run."""
    from harness.sweep.runner import SweepOptions, timeline_command

    out, _ = sweep_run
    sweep_dir = copy_sweep(out, tmp_path / "s")
    port = records.load(sweep_dir).by_model()["gpt2"].record.variants[0].ports[0]
    port.folder = str(sweep_dir / "ports")
    port.commands = [f"harness timeline {tmp_path / 'outside.mlir'} --pipeline torch-to-linalg --out x"]
    assert timeline_command(port, SweepOptions(out=sweep_dir)) is None
    inside = sweep_dir / "ports" / "in.mlir"
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text("module {}\n")
    port.commands = [f"harness timeline {inside} --pipeline torch-to-linalg --out /etc/x"]
    argv = timeline_command(port, SweepOptions(out=sweep_dir))
    assert argv is not None and argv[-1] == str((sweep_dir / "ports").resolve() / "timeline")
