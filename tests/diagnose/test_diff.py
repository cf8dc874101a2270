"""harness diff: targets on two builds, the changed outcomes listed, the rest counted, as JSON.

The second build is the real binary behind a wrapper that changes one behaviour
(wrapped_builds.py); the diff of two real releases is in test_builds_network.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import BuildCache, origin_of
from harness.errors import InputFileError, UsageError
from harness.diagnose.diff import (
    DIFF_SCHEMA,
    Change,
    DiffResult,
    Side,
    classify_change,
    diff_builds,
)
from harness.diagnose.diff_targets import TargetKind, collect_targets

from support import harness
from support.wrapped_builds import CUMSUM, LLVM23_VERSION, REAL, SCALE, make_build


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    return tmp_path


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    cumsum, scale = tmp_path / "cumsum.mlir", tmp_path / "scale.mlir"
    cumsum.write_text(CUMSUM)
    scale.write_text(SCALE)
    return cumsum, scale


def _side(outcome="success", ok=True, crashed=False, signature="success"):
    return Side(outcome=outcome, ok=ok, crashed=crashed, signature=signature, elapsed_s=0.1)


@pytest.mark.parametrize("a, b, change", [
    (_side(), _side(), Change.UNCHANGED),
    (_side(), _side("legalization-failure", False, signature="x"), Change.BROKE),
    (_side("legalization-failure", False, signature="x"), _side(), Change.FIXED),
    (_side("pass-failure", False, signature="x"), _side("pass-failure", False, signature="y"),
     Change.SIGNATURE),
    (_side("pass-failure", False, signature="x"), _side("pass-failure", False, signature="x"),
     Change.UNCHANGED),
    # A crash appearing outranks pass->fail; one going away outranks fail->pass.
    (_side(), _side("crash", False, True, "crash: SIGFPE"), Change.CRASH_APPEARED),
    (_side("crash", False, True, "crash: SIGFPE"), _side(), Change.CRASH_GONE),
    (_side("crash", False, True, "crash: a"), _side("crash", False, True, "crash: b"), Change.SIGNATURE),
])
def test_classify_change(a, b, change):
    assert classify_change(a, b) is change


def test_a_lost_conversion_breaks_only_what_needs_it(env, inputs):
    cumsum, scale = inputs
    cache = BuildCache()
    a = cache.get("wheel")
    b = origin_of(cache.add("no-tmtensor", make_build(env, "no-tmtensor",
                                                       drop_pass="convert-torch-to-tmtensor")).path)
    targets = collect_targets([str(cumsum), str(scale)], "torch-to-linalg")
    result = diff_builds(a, b, targets)
    by_name = {Path(e.target.input).name: e for e in result.entries}
    assert by_name["cumsum.mlir"].change is Change.BROKE
    assert by_name["cumsum.mlir"].a.ok and not by_name["cumsum.mlir"].b.ok
    assert str(by_name["cumsum.mlir"].b.outcome) == "legalization-failure"
    assert by_name["scale.mlir"].change is Change.UNCHANGED
    assert result.counts() == {"pass->fail": 1}
    text = "\n".join(result.render())
    assert "2 targets: 1 changed, 1 unchanged" in text
    assert f"pass->fail         {cumsum} [torch-to-linalg]" in text
    assert "scale.mlir" not in text  # unchanged targets are counted, not listed


def test_a_crash_appears_and_goes(env, inputs):
    _, scale = inputs
    cache = BuildCache()
    wheel = cache.get("wheel")
    crashing = origin_of(cache.add("crashy", make_build(env, "crashy",
                                                        crash_on_op="torch.aten.mul.Scalar")).path)
    targets = collect_targets([str(scale)], "torch-to-linalg")
    [entry] = diff_builds(wheel, crashing, targets).entries
    assert entry.change is Change.CRASH_APPEARED
    assert str(entry.b.outcome) == "crash" and entry.b.signature.startswith("crash: SIGFPE")
    [entry] = diff_builds(crashing, wheel, targets).entries
    assert entry.change is Change.CRASH_GONE


def test_time_ratio_of_a_slower_build(env, inputs):
    _, scale = inputs
    cache = BuildCache()
    slow = origin_of(cache.add("slow", make_build(env, "slow", sleep_s=0.5)).path)
    result = diff_builds(cache.get("wheel"), slow, collect_targets([str(scale)], "torch-to-linalg"))
    [entry] = result.entries
    assert entry.change is Change.UNCHANGED
    assert entry.b.elapsed_s >= 0.5 > entry.a.elapsed_s
    assert entry.time_ratio == pytest.approx(entry.b.elapsed_s / entry.a.elapsed_s)
    assert result.time_ratio_geomean() == pytest.approx(entry.time_ratio)


def test_cli_writes_versioned_json_and_exits_1_on_a_change(env, inputs):
    cumsum, scale = inputs
    make_build(env, "no-tmtensor", drop_pass="convert-torch-to-tmtensor")
    proc = harness("builds", "add", f"no-tmtensor={env / 'no-tmtensor' / 'torch-mlir-opt'}")
    assert proc.returncode == 0, proc.stderr
    out = env / "diff.json"
    proc = harness("diff", "--opt", "wheel", "--opt", "no-tmtensor", str(cumsum), str(scale),
                   "--pipeline", "torch-to-linalg", "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("A: build 'wheel' (torch-mlir 20261001, LLVM ")
    assert "B: build 'no-tmtensor'" in proc.stdout and f"json: {out}" in proc.stdout
    d = json.loads(out.read_text())
    assert d["schema"] == DIFF_SCHEMA == "harness.diff/1"
    assert d["a"]["name"] == "wheel" and d["a"]["kind"] == "wheel"
    assert d["b"]["name"] == "no-tmtensor" and d["b"]["kind"] == "added"
    assert d["summary"]["targets"] == 2 and d["summary"]["unchanged"] == 1
    assert d["summary"]["changes"] == {"pass->fail": 1}
    changed = [e for e in d["entries"] if e["change"] != "unchanged"]
    assert changed[0]["target"]["kind"] == "ir" and changed[0]["target"]["input"] == str(cumsum)
    assert changed[0]["a"]["record"]["outcome"] == "success"
    assert changed[0]["b"]["record"]["outcome"] == "legalization-failure"
    # The board reads it back into the same result.
    again = DiffResult.from_json(d)
    assert [e.change for e in again.entries] == [Change.BROKE, Change.UNCHANGED]
    # No change: exit 0.
    proc = harness("diff", "--opt", "wheel", "--opt", REAL, str(scale), "--pipeline", "torch-to-linalg")
    assert proc.returncode == 0 and "1 target: 0 changed, 1 unchanged" in proc.stdout


def test_a_sweep_folder_of_records_is_run_again(env, inputs):
    cumsum, scale = inputs
    sweep = env / "sweep"
    sweep.mkdir()
    for source in (cumsum, scale):
        ir = Path(shutil.copy(source, sweep))  # a record's IR lies in its folder
        proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--json")
        (sweep / f"{ir.stem}.json").write_text(proc.stdout)
    (sweep / "notes.json").write_text('{"not": "a record"}')
    targets = collect_targets([str(sweep)], None)
    assert [(t.kind, Path(t.input).name) for t in targets] == [
        (TargetKind.IR, "cumsum.mlir"), (TargetKind.IR, "scale.mlir")]
    assert targets[0].pipeline == "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"


def test_a_lit_folder_diffs_test_results_and_features_follow_the_build(env):
    """An LLVM 23 build (by its --version) lacks the feature the LLVM 24 wording needs: the test
    is skipped there, not failed, and the diff says PASS -> UNSUPPORTED."""
    old = make_build(env, "llvm23", version_text=LLVM23_VERSION)
    proc = harness("diff", "--opt", "wheel", "--opt", str(old), "lit_tests/pass", "--lit",
                   "--lit-filter", "view-nonvalue-tensor-error|to-dtype-bool", "-o",
                   str(env / "lit.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    d = json.loads((env / "lit.json").read_text())
    codes = {e["target"]["id"]: (e["a"]["outcome"], e["b"]["outcome"], e["change"])
             for e in d["entries"]}
    assert codes == {
        "torch-mlir-harness :: pass/to-dtype-bool.mlir": ("PASS", "PASS", "unchanged"),
        "torch-mlir-harness :: pass/view-nonvalue-tensor-error.mlir":
            ("PASS", "UNSUPPORTED", "signature-changed"),
    }
    assert d["b"]["kind"] == "path" and d["b"]["llvm_version"] == "23.0.0git"


def test_bad_targets_are_usage_errors(env, inputs, tmp_path):
    cumsum, _ = inputs
    with pytest.raises(UsageError, match="--pipeline"):
        collect_targets([str(cumsum)], None)
    with pytest.raises(UsageError, match="at least one TARGET"):
        collect_targets([], None)
    with pytest.raises(InputFileError, match="does not exist"):
        collect_targets([str(tmp_path / "nope.mlir")], "torch-to-linalg")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputFileError, match="neither a lit config"):
        collect_targets([str(empty)], None)
    proc = harness("diff", "--opt", "wheel", str(cumsum), "--pipeline", "torch-to-linalg")
    assert proc.returncode == 2 and "give --opt A --opt B" in proc.stderr


def test_a_lit_config_above_a_folder_of_records_is_never_run(env, inputs, tmp_path):
    """A lit.cfg.py planted in a parent folder (a shared /tmp) made the folder a lit suite: lit
    ran the planted config as Python. Only a folder holding a config, or one
    named with --lit, is a lit suite."""
    cumsum, _ = inputs
    marker = tmp_path / "PLANTED-RAN"
    (tmp_path / "lit.cfg.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    records = tmp_path / "shared" / "records"
    records.mkdir(parents=True)
    run = harness("run", shutil.copy(cumsum, records), "--pipeline", "torch-to-linalg", "--json")
    (records / "cumsum.json").write_text(run.stdout)
    targets = collect_targets([str(records)], None)
    assert [t.kind for t in targets] == [TargetKind.IR]
    proc = harness("diff", "--opt", "wheel", "--opt", "wheel", str(records))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()
    # named with --lit it is a lit target (lit finds the config above it, as asked)
    assert [t.kind for t in collect_targets([str(records)], None, lit=True)] == [TargetKind.LIT]


def test_a_record_is_not_followed_out_of_its_folder(env, inputs, tmp_path):
    """A record planted in a folder of records, naming a file elsewhere (/etc/shadow): diff ran
    it, and the parser's errors quoted its lines."""
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    records = tmp_path / "records"
    records.mkdir()
    (records / "planted.json").write_text(json.dumps(
        {"outcome": "parse-error", "input_path": str(secret), "pipeline": "builtin.module(canonicalize)"}))
    with pytest.raises(InputFileError, match="outside"):
        collect_targets([str(records)], None)
    with pytest.raises(InputFileError, match="outside"):
        collect_targets([str(records / "planted.json")], None)
    proc = harness("diff", "--opt", "wheel", "--opt", "wheel", str(records))
    assert proc.returncode == 2 and "SECRET" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize("pipeline", [
    "-load-pass-plugin=PLUGIN -canonicalize",              # would load and run the library's code
    "--mlir-generate-reproducer=VICTIM -canonicalize",     # would overwrite the user's file
    " -canonicalize",
    "builtin.module(canonicalize)\nrm -rf ~",
    42,
])
def test_a_record_pipeline_never_reaches_the_compiler_as_flags(env, inputs, tmp_path, pipeline):
    """A planted record whose pipeline starts with '-': diff handed it to torch-mlir-opt as its
    own flags (round-4 probes: a -load-pass-plugin library's constructor wrote a marker file)."""
    cumsum, _ = inputs
    records = tmp_path / "records"
    records.mkdir()
    shutil.copy(cumsum, records)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n")
    if isinstance(pipeline, str):
        pipeline = pipeline.replace("PLUGIN", str(tmp_path / "evil.so")).replace("VICTIM", str(victim))
    (records / "planted.json").write_text(json.dumps(
        {"outcome": "success", "input_path": "cumsum.mlir", "pipeline": pipeline}))
    with pytest.raises(InputFileError, match="not a textual pipeline"):
        collect_targets([str(records / "planted.json")], None)
    proc = harness("diff", "--opt", "wheel", "--opt", "wheel", str(records))
    assert proc.returncode == 2 and "never passed to torch-mlir-opt as flags" in proc.stderr, proc.stderr
    assert victim.read_text() == "the user's file\n"


def test_a_timeline_record_is_held_to_its_folder_and_a_textual_pipeline(env, inputs, tmp_path):
    cumsum, _ = inputs
    folder = tmp_path / "timeline"
    proc = harness("timeline", str(cumsum), "--pipeline", "torch-to-linalg", "--out", str(folder))
    assert proc.returncode == 0, proc.stderr
    record = folder / "timeline.json"
    assert [t.kind for t in collect_targets([str(folder)], None)] == [TargetKind.TIMELINE]
    data = json.loads(record.read_text())
    planted = dict(data, pipeline="-load-pass-plugin=evil.so -canonicalize")
    record.write_text(json.dumps(planted))
    with pytest.raises(InputFileError, match="not a textual pipeline"):
        collect_targets([str(folder)], None)
    [target] = collect_targets([str(folder)], None) if record.write_text(json.dumps(data)) else []
    assert Path(target.input) == folder / "input.mlir"  # the folder's copy, not the user's file
    older = {k: v for k, v in data.items() if k != "input_ir"}  # a record before input_ir
    older["input_path"] = str(tmp_path / "cumsum.mlir")  # a file outside the folder
    record.write_text(json.dumps(older))
    with pytest.raises(InputFileError, match="outside"):
        collect_targets([str(folder)], None)


def test_a_relative_input_is_read_against_the_record_folder(env, inputs, tmp_path, monkeypatch):
    """From the sweep's parent folder, not only from inside it."""
    cumsum, _ = inputs
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    shutil.copy(cumsum, sweep)
    (sweep / "cumsum.json").write_text(json.dumps(
        {"outcome": "success", "input_path": "cumsum.mlir",
         "pipeline": "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    [target] = collect_targets([str(sweep)], None)
    assert Path(target.input) == sweep / "cumsum.mlir"
