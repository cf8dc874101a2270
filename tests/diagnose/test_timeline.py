"""``harness timeline`` against the real binary: the page in headless Chromium, ``--follow`` on
a decomposition we know, a diff between two builds, and bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from harness.compiler import binary, builds
from harness.compiler.outcomes import Outcome
from harness.errors import InputFileError, UsageError
from harness.diagnose.timeline import TimelineOptions, run_timeline
from harness.diagnose.timeline_record import Follow, FollowKind, RowState, Timeline, load

from support import CRASHERS, harness
from support.browser import chromium
from support.wrapped_builds import CUMSUM, make_build


# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
# aten.linear of 2-D operands: DecomposeComplexOps (DecomposeAtenLinearOp) turns it into
# transpose + aten.mm + add; nothing before it in function-to-torch makes an aten.mm.
LINEAR = """func.func @forward(%arg0: !torch.vtensor<[3,4],f32>, %arg1: !torch.vtensor<[5,4],f32>, %arg2: !torch.vtensor<[5],f32>) -> !torch.vtensor<[3,5],f32> {
  %0 = torch.aten.linear %arg0, %arg1, %arg2 : !torch.vtensor<[3,4],f32>, !torch.vtensor<[5,4],f32>, !torch.vtensor<[5],f32> -> !torch.vtensor<[3,5],f32> loc("model.py":7:3)
  return %0 : !torch.vtensor<[3,5],f32>
}
"""  # noqa: E501
# A rank-3 matmul with dynamic batch: the backend contract marks it illegal and
# DecomposeComplexOps declines it (lit_tests/pass/matmul-3d-unequal-batch-illegal-error.mlir).
ILLEGAL = """func.func @matmul_3d_dynamic_batch(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %0 = torch.aten.matmul %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %0 : !torch.vtensor<[?,?,?],f32>
}
"""  # noqa: E501


@pytest.fixture
def linear(tmp_path) -> Path:
    path = tmp_path / "linear.mlir"
    path.write_text(LINEAR)
    return path


def test_follow_op_counts_appear_at_the_decomposition(linear, tmp_path):
    timeline = run_timeline(str(linear), "builtin.module(torch-function-to-torch-backend-pipeline)",
                            tmp_path / "tl", options=TimelineOptions(follow=Follow.parse("aten.mm")))
    assert timeline.ok and timeline.initial_followed == 0
    first = next(r for r in timeline.rows if r.followed)
    assert (first.pass_name, first.argument, first.anchor) == (
        "DecomposeComplexOps", "torch-decompose-complex-ops", "func.func @forward")
    assert first.followed == 1 and first.state is RowState.CHANGED
    assert first.delta["torch.aten.mm"] == 1 and first.delta["torch.aten.linear"] == -1
    assert all(r.followed == 0 for r in timeline.rows[:first.index - 1])
    assert timeline.rows[-1].followed == 1
    # The row's IR and diff are written, inside the folder.
    assert "torch.aten.mm" in (tmp_path / "tl" / first.ir_file).read_text()
    assert "+  %" in (tmp_path / "tl" / first.diff_file).read_text()
    flow = timeline.op_flow()
    assert "torch.aten.mm" in flow.entered and "torch.aten.linear" in flow.left
    # The record reads back as it was written.
    assert load(tmp_path / "tl").to_json() == timeline.to_json()


def test_follow_location_counts_ops_at_the_python_line(linear, tmp_path):
    timeline = run_timeline(str(linear), "builtin.module(torch-function-to-torch-backend-pipeline)",
                            tmp_path / "tl", options=TimelineOptions(follow=Follow.parse("model.py:7")))
    assert timeline.initial_followed == 1
    decompose = next(r for r in timeline.rows if r.argument == "torch-decompose-complex-ops")
    # transpose, mm and add carry the linear's location, and the constants it needs.
    assert decompose.followed > 1
    # A location is left out when rows are compared: a pass that does nothing stays unchanged.
    refine = next(r for r in timeline.rows if r.argument == "torch-refine-public-return")
    assert refine.state is RowState.UNCHANGED


def test_page_in_chromium_marks_the_failing_pass(tmp_path):
    source = tmp_path / "illegal.mlir"
    source.write_text(ILLEGAL)
    out = tmp_path / "page"
    proc = harness("timeline", str(source), "--pipeline", "function-to-torch", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "failing pass: #" in proc.stdout and "LowerToBackendContract" in proc.stdout
    dom = chromium(out / "index.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = re.findall(r'<tr class="pass (\w+)" id="pass-(\d+)"[^>]*data-pass="([^"]+)"', dom.stdout)
    record = load(out)
    assert len(rows) == len(record.rows) > 10
    failed = [(int(i), p) for state, i, p in rows if state == "failed"]
    assert failed and failed[-1][1] == "torch-lower-to-backend-contract"
    assert "found an op that was marked as backend illegal" in dom.stdout
    assert 'id="failing"' in dom.stdout and "<details>" in dom.stdout
    shot = tmp_path / "timeline.png"
    proc = chromium(out / "index.html", tmp_path, f"--screenshot={shot}", "--window-size=1400,1200")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_diff_of_two_builds_names_the_first_pass_that_differs(tmp_path, monkeypatch):
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    source = tmp_path / "cumsum.mlir"
    source.write_text(CUMSUM)
    dropped = make_build(tmp_path, "no-tmtensor", drop_pass="convert-torch-to-tmtensor")
    first = tmp_path / "first"
    proc = harness("timeline", str(source), "--pipeline", "torch-to-linalg", "--out", str(first))
    assert proc.returncode == 0, proc.stderr
    a_rows = load(first).rows
    where = next(r.index for r in a_rows if r.argument == "convert-torch-to-tmtensor")
    proc = harness("diff", str(first), "--opt", "wheel", "--opt", str(dropped), "--json")
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["difference"]
    assert found["kind"] == "different-pass" and found["index"] == where
    assert found["a"]["argument"] == "convert-torch-to-tmtensor"
    assert found["b"]["argument"] != "convert-torch-to-tmtensor"
    # The two timelines it ran compare the same way as files; a timeline with itself: no difference.
    d = json.loads(proc.stdout)
    proc = harness("diff", d["a"], d["b"])
    assert proc.returncode == 1 and f"first difference at pass {where}: different-pass" in proc.stdout
    assert f"{d['a']}/index.html#pass-{where}" in proc.stdout
    proc = harness("diff", d["a"], d["a"])
    assert proc.returncode == 0 and "no difference" in proc.stdout


@pytest.mark.parametrize("args, words", [
    (["missing.mlir", "--pipeline", "function-to-torch"], "does not exist"),
    (["LINEAR", "--pipeline", "no-such-pipeline"], "unknown pipeline 'no-such-pipeline'"),
    (["LINEAR", "--pipeline", "function-to-torch", "--follow", "not an op"], "--follow 'not an op'"),
    (["LINEAR", "--pipeline", "linalg-to-llvm"], "runs on the MLIR Python bindings"),
])
def test_bad_input_is_a_usage_error(linear, tmp_path, args, words):
    args = [str(linear) if a == "LINEAR" else str(tmp_path / a) if a.endswith(".mlir") else a for a in args]
    proc = harness("timeline", *args, "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    message = proc.stderr.strip().splitlines()[-1]
    assert message.startswith("harness: error: ") and words in message


def test_follow_parsing():
    assert Follow.parse("aten.mm") == Follow(FollowKind.OP, "aten.mm")
    assert Follow.parse("src/model.py:12") == Follow(FollowKind.LOCATION, "src/model.py:12")
    assert Follow.parse("aten.mm").matches_op("torch.aten.mm")
    assert not Follow.parse("aten.mm").matches_op("torch.aten.mmx")
    for bad in ("", "mm", "model.py:x", "a..b"):
        with pytest.raises(UsageError):
            Follow.parse(bad)


def test_a_record_naming_a_file_outside_its_folder_is_refused(linear, tmp_path):
    timeline = run_timeline(str(linear), "builtin.module(canonicalize)", tmp_path / "tl")
    data = timeline.to_json()
    data["rows"][0]["ir_file"] = "../../etc/passwd"
    with pytest.raises(InputFileError, match="outside its folder"):
        Timeline.from_json(data)


@pytest.mark.parametrize("change", ["middle", "head", "tail"])
def test_diff_of_the_changed_middle_is_difflibs_whole_diff(change):
    import difflib

    from harness.diagnose.timeline import _unified

    a = [f"line {i}" for i in range(50)]
    b = {"middle": [*a[:20], "x", *a[21:30], "y", *a[30:]], "head": ["q", *a], "tail": [*a, "z"]}[change]
    assert _unified(a, b, "A", "B") == list(difflib.unified_diff(a, b, "A", "B", lineterm="", n=2))


def test_a_change_too_long_to_diff_is_one_hunk_out_then_in(monkeypatch):
    from harness.diagnose import timeline

    monkeypatch.setattr(timeline, "MAX_DIFF_WORK", 0)
    a = [f"line {i}" for i in range(50)]
    b = [*a[:20], "x", "y", *a[25:]]
    lines = timeline._unified(a, b, "A", "B")
    assert lines[:3] == ["--- A", "+++ B", "@@ -19,9 +19,6 @@"]
    body = lines[3:]
    assert [x[1:] for x in body if x[0] in " -"] == a[18:27]
    assert [x[1:] for x in body if x[0] in " +"] == b[18:24]


# -mlir-timing-display=tree of function-to-torch on LINEAR, cut down (the real binary's text):
# the pipeline LowerToBackendContract runs itself is printed beside it, at its depth.
TIMING = """===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 1.0762 seconds

  ----Wall Time----  ----Name----
    0.0346 (  3.2%)  Parser
    0.0001 (  0.0%)  AdjustCallingConventions
    1.0413 ( 96.8%)  LowerToBackendContract
    1.0407 ( 96.7%)  'builtin.module' Pipeline
    0.0001 (  0.0%)    'func.func' Pipeline
    0.0000 (  0.0%)      CanonicalizerPass
    0.5354 ( 49.8%)    ReifyShapeCalculations
    0.0015 (  0.1%)    InlinerPass
    0.0000 (  0.0%)      (A) CallGraph
    0.0003 (  0.0%)    'func.func' Pipeline
    0.0000 (  0.0%)      CanonicalizerPass
    0.0002 (  0.0%)      DecomposeComplexOps
    0.0001 (  0.0%)  Output
   -1.0416 (-96.8%)  Rest
    1.0762 (100.0%)  Total
"""


def test_timing_tree_keeps_a_pass_own_pipeline_under_it():
    from harness.diagnose.timing import assign_timers, read_timing

    timers, leaves = read_timing(TIMING)
    assert [str(t.label) for t in timers] == [
        "AdjustCallingConventions",
        "LowerToBackendContract",
        "LowerToBackendContract › 'builtin.module' Pipeline › 'func.func' Pipeline › CanonicalizerPass",
        "LowerToBackendContract › 'builtin.module' Pipeline › ReifyShapeCalculations",
        "LowerToBackendContract › 'builtin.module' Pipeline › InlinerPass",
        "LowerToBackendContract › 'builtin.module' Pipeline › 'func.func' Pipeline › CanonicalizerPass",
        "LowerToBackendContract › 'builtin.module' Pipeline › 'func.func' Pipeline › DecomposeComplexOps",
    ]
    # Rows in run order: the canonicalize after the inliner is the second pipeline's.
    runs = [("AdjustCallingConventions", "builtin.module"), ("CanonicalizerPass", "func.func"),
            ("ReifyShapeCalculations", "builtin.module"), ("InlinerPass", "builtin.module"),
            ("CanonicalizerPass", "func.func"), ("DecomposeComplexOps", "func.func"),
            ("LowerToBackendContract", "builtin.module")]
    assert assign_timers(runs, leaves) == ([0, 2, 3, 4, 5, 6, 1], 2)
    # The five slowest leave out LowerToBackendContract, whose time holds its pipeline's.
    timeline = Timeline(input_path="", pipeline="", binary="", outcome=Outcome.SUCCESS, elapsed_s=0.0,
                        command=[], initial_counts={}, timers=timers)
    assert timeline.slowest(2)[0].label.endswith("ReifyShapeCalculations")
    assert all(t.label != "LowerToBackendContract" for t in timeline.slowest())


def test_a_crash_is_a_failed_row_named_after_the_crashing_pass(tmp_path):
    crasher = CRASHERS / "A_remainder_int_by_zero.mlir"
    timeline = run_timeline(str(crasher), "builtin.module(func.func(cse,canonicalize))", tmp_path / "tl")
    assert timeline.outcome is Outcome.CRASH
    assert [(r.pass_name, r.state) for r in timeline.rows] == [
        ("CSEPass", RowState.UNCHANGED), ("Canonicalizer", RowState.FAILED)]
    assert timeline.failing is timeline.rows[-1] and "SIGFPE" in timeline.failing.error


def test_timelines_of_different_inputs_differ_at_the_input(linear, tmp_path):
    other = tmp_path / "other.mlir"
    other.write_text(LINEAR.replace("@forward", "@other"))
    for source, name in ((linear, "a"), (other, "b")):
        proc = harness("timeline", str(source), "--pipeline", "function-to-torch",
                       "--out", str(tmp_path / name))
        assert proc.returncode == 0, proc.stderr
    proc = harness("diff", str(tmp_path / "a"), str(tmp_path / "b"))
    assert proc.returncode == 1 and "start from different input modules" in proc.stdout


SCALE_FN = """func.func @scale(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %float = torch.constant.float 2.500000e-01
  %0 = torch.aten.mul.Scalar %arg0, %float : !torch.vtensor<[2,3],f32>, !torch.float -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
"""  # noqa: E501


def _printed_order(source: Path, pipeline: str) -> list[tuple[str, str]]:
    """(pass, op) of every pass in the order MLIR ran them: its own stderr dumps, whose headers
    name the op under module scope (what the tree dir's names leave out)."""
    from harness.compiler.binary import wheel_binary

    err = subprocess.run([str(wheel_binary()), str(source), f"-pass-pipeline={pipeline}", "-o", os.devnull,
                          "-mlir-print-ir-after-all", "-mlir-print-ir-module-scope",
                          "-mlir-disable-threading"],
                         capture_output=True, text=True, timeout=300).stderr
    return [(m[1], m[2] or "builtin.module")
            for m in re.finditer(r"IR Dump After (\w+).*?\('[\w.]+' operation(?:: (@[\w.]+))?\)", err)]


def test_rows_run_in_the_order_mlir_ran_the_passes(tmp_path):
    """The tree dir's names order each op's dumps; across two functions the rows follow each
    pipeline over every function, as MLIR ran them (checked against its stderr dumps)."""
    source = tmp_path / "two.mlir"
    source.write_text(LINEAR + SCALE_FN)
    torch_ir = tmp_path / "two.torch.mlir"
    proc = harness("run", source, "--pipeline", "function-to-torch", "-o", torch_ir, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def rows(timeline: Timeline) -> list[tuple[str, str]]:
        return [(r.pass_name, r.anchor.partition(" ")[2] or r.anchor) for r in timeline.rows]

    linalg = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"
    timeline = run_timeline(str(torch_ir), linalg, tmp_path / "linalg")
    assert rows(timeline) == _printed_order(torch_ir, linalg) and len(timeline.rows) > 20
    # The inliner visits its callees in call-graph order, which the names do not keep: there
    # each function's own passes are still in order.
    contract = "builtin.module(torch-function-to-torch-backend-pipeline)"
    timeline = run_timeline(str(source), contract, tmp_path / "contract")
    printed = _printed_order(source, contract)
    assert sorted(rows(timeline)) == sorted(printed)
    for fn in ("@forward", "@scale"):
        assert [r for r in rows(timeline) if r[1] == fn] == [r for r in printed if r[1] == fn]


def test_dumps_mlir_could_not_write_make_the_timeline_incomplete(tmp_path):
    """A 300-character function name: MLIR cannot create that op's dump folder, says so, and
    exits 0. The timeline had shown 'success' with those passes missing."""
    name = "f" * 300
    src = tmp_path / "long.mlir"
    src.write_text(f"func.func @{name}(%x: !torch.vtensor<[4,5],f32>) -> !torch.vtensor<[4,5],f32> {{\n"
                   "  %0 = torch.aten.tanh %x : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>\n"
                   "  return %0 : !torch.vtensor<[4,5],f32>\n}\n")
    timeline = run_timeline(str(src), "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)",
                            tmp_path / "t")
    assert timeline.outcome is Outcome.SUCCESS  # the pipeline itself ran to its end
    assert timeline.lost_dumps and "File name too long" in timeline.lost_dumps[0]
    assert not timeline.ok and "could not write" in timeline.error
    assert load(tmp_path / "t").lost_dumps == timeline.lost_dumps  # kept in the record
    proc = harness("timeline", src, "--pipeline", "torch-to-linalg", "--out", tmp_path / "cli")
    assert proc.returncode == 1 and "incomplete: MLIR could not write" in proc.stdout, proc.stdout


@pytest.mark.parametrize("forge", [
    lambda d: d.update(rows="x"), lambda d: d.update(rows=[1, 2]), lambda d: d.update(timers={"a": 1}),
    lambda d: d.update(elapsed_s="slow"), lambda d: d.update(initial_counts=[1]),
    lambda d: d.update(outcome=5),
], ids=["rows-str", "rows-ints", "timers-dict", "elapsed-str", "counts-list", "outcome-int"])
def test_a_forged_timeline_record_is_one_paragraph_naming_the_file(linear, tmp_path, forge):
    """Issue 45 item 9: ``harness diff`` of timelines read fields of other types as they were
    and crashed (exit 3); each is an InputFileError (exit 2) naming the record."""
    run_timeline(str(linear), "builtin.module(canonicalize)", tmp_path / "tl")
    record = tmp_path / "tl" / "timeline.json"
    data = json.loads(record.read_text())
    forge(data)
    record.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=r"timeline record .*tl/timeline\.json"):
        load(tmp_path / "tl")
