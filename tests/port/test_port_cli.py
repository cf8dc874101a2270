"""``harness port`` as a user runs it: GPT-2 through both frontends with its numbers checked,
the record it writes, the commands it prints (run as pasted), and bad input."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from harness import cli
from harness.compiler.binary import wheel_binary
from harness.port import SCHEMA, PortRecord
from harness.port.progress import Progress

from support import ROOT, harness as run_harness

# A whole port of GPT-2 (import, lowering, numbers at each level): 15 minutes before a command
# counts as hung (the shared default is 10).
harness = partial(run_harness, timeout=900)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """One port of GPT-2 through the command line (piped, so without progress lines)."""
    out = tmp_path_factory.mktemp("gpt2")
    opt = str(wheel_binary())
    proc = harness("port", "gpt2", "--out", str(out), "--json", str(out / "gpt2.json"),
                   "--opt", opt, "--timeout", "300")
    return proc, out, opt


def test_gpt2_fx_verifies_against_eager_on_both_input_sets(gpt2):
    proc, out, _ = gpt2
    assert proc.returncode == 1, proc.stderr  # the TorchScript path fails: the port did not verify
    record = json.loads((out / "gpt2.json").read_text())
    assert record["schema"] == SCHEMA and record["model"] == "gpt2"
    assert record["options"]["timeout_s"] == 300 and record["options"]["seq"] == 8
    [variant] = record["variants"]
    fx = {p["frontend"]: p for p in variant["ports"]}["fx"]
    assert fx["outcome"] == "verified" and not fx["blockers"]
    assert [s["name"] for s in fx["stages"]] == ["export", "import", "fx-to-torch", "torch-to-linalg",
                                                 "refbackend-lowering", "execution"]
    assert all(s["seconds"] > 0 for s in fx["stages"])
    assert [c["inputs"] for c in fx["numerics"]] == ["traced", "second"]
    for check in fx["numerics"]:
        assert check["verdict"] == "verified" and 0 < check["max_abs_diff"] < 1e-5
        assert check["outputs"][0]["name"] == "last_hidden_state"
        assert check["outputs"][0]["shape"] == [1, 8, 64]
    assert "padded" in fx["numerics"][1]["description"]
    assert fx["signature"] == ("func.func @main(%arg0: tensor<1x8xi64>, %arg1: tensor<1x8xi64>) "
                               "-> tensor<1x8x64xf32>")
    assert "gpt2 fx: verified on 2 input sets" in proc.stdout


def test_gpt2_torchscript_blocker_and_its_commands_paste_and_run(gpt2):
    proc, out, opt = gpt2
    record = PortRecord.read(out / "gpt2.json")
    ts = {p.frontend.value: p for p in record.variants[0].ports}["torchscript"]
    assert (ts.outcome.value, str(ts.failed_stage)) == ("fails", "torch-to-linalg")
    [blocker] = ts.blockers
    assert blocker.op == "torch.aten.__and__.Tensor"
    assert blocker.location.endswith("transformers/masking_utils.py:54")
    assert ("gpt2 torchscript: fails at torch-to-linalg (legalization-failure): "
            "torch.aten.__and__.Tensor at transformers/masking_utils.py:54 has no lowering "
            "(fix: bitwise-and-or)") in proc.stdout
    assert "    fix: bitwise-and-or (torch-ir: " in proc.stdout
    assert f"  reproduce: {ts.reproduce}\n" in proc.stdout and ts.reproduce.startswith(opt + " ")
    # the printed commands are the record's, and carry the binary the port ran (--opt)
    printed = [line.strip() for line in proc.stdout.splitlines() if line.strip() in ts.commands]
    assert printed == ts.commands
    assert [shlex.split(c)[3] for c in printed] == ["explain", "bisect", "reduce", "report", "timeline"]
    assert all(f"--opt {shlex.quote(opt)}" in c for c in printed)
    # the report is given the port's record (issue 45 item 5: without it the bundle said
    # "Reproduces through: Not determined"), and that record is there once the port ends
    report = shlex.split(printed[3])
    given = Path(report[report.index("--port-record") + 1])
    assert given.name == "record.json" and PortRecord.read(given).model == record.model
    explain = subprocess.run(shlex.split(printed[0]), capture_output=True, text=True, cwd=ROOT,
                             timeout=300)
    assert explain.returncode == 1, explain.stderr
    assert "masking_utils.py" in explain.stdout
    # the timeline of the failing stage: its page marks the pass that failed
    timeline = subprocess.run(shlex.split(printed[4]), capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
    assert timeline.returncode == 1, timeline.stderr
    page = (Path(shlex.split(printed[4])[-1]) / "index.html").read_text()
    assert 'class="pass failed"' in page and "error: failed to legalize operation" in page
    # piped: no progress lines on stderr
    assert "gpt2 torchscript]" not in proc.stderr and "gpt2 fx]" not in proc.stderr


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_each_stage_shows_on_a_terminal_as_it_runs(tmp_path, monkeypatch, capsys):
    shown = Terminal()
    monkeypatch.setattr(sys, "stderr", shown)
    assert cli.main(["port", "gpt2", "--frontend", "torchscript", "--no-numerics",
                     "--out", str(tmp_path)]) == 1
    text = shown.getvalue()
    assert text.startswith("  loading torch and transformers, building gpt2 (a few seconds)\n")
    # each stage: "LABEL ..." when it starts, rewritten in place as "LABEL STATUS TIME s"
    ended = re.findall(r"  (\[[^\]]+\] [^\r\n]+) \.\.\..*?\r  \1 (ok|FAILED) \d+\.\d\d s\x1b\[K\n",
                       text, flags=re.S)
    assert ended == [("[gpt2] build", "ok"), ("[gpt2 torchscript] trace", "ok"),
                     ("[gpt2 torchscript] import", "ok"),
                     ("[gpt2 torchscript] torchscript-to-torch", "ok"),
                     ("[gpt2 torchscript] torch-to-linalg", "FAILED"),
                     ("[gpt2 torchscript] diagnose torch-to-linalg", "ok")]
    assert "gpt2 torchscript: fails at torch-to-linalg" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["before", "after"])
def test_no_progress_silences_a_terminal_and_progress_shows_when_piped(tmp_path, monkeypatch, capsys,
                                                                       where):
    """main's convention: --no-progress / --progress, before or after the subcommand, decide."""
    port = ["port", "gpt2", "--frontend", "torchscript", "--torch-only", "--out", str(tmp_path)]
    silenced = Terminal()
    monkeypatch.setattr(sys, "stderr", silenced)
    argv = ["--no-progress", *port] if where == "before" else [*port, "--no-progress"]
    assert cli.main(argv) == 0
    # (transformers' own logger may still say something once per process: not ours)
    assert [line for line in silenced.getvalue().splitlines()
            if not line.startswith("[transformers]")] == []
    assert "gpt2 torchscript: lowers through torchscript-to-torch" in capsys.readouterr().out
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    argv = ["--progress", *port] if where == "before" else [*port, "--progress"]
    assert cli.main(argv) == 0
    assert "  loading torch and transformers, building gpt2" in piped.getvalue()
    assert "  [gpt2 torchscript] torchscript-to-torch ok " in piped.getvalue()


def test_progress_shows_each_stage_on_a_terminal_only():
    shown = Terminal()
    progress = Progress(shown)
    with progress.stage("[fx] export") as step:
        pass
    with pytest.raises(RuntimeError), progress.stage("[fx] import"):
        raise RuntimeError("boom")
    assert step.ok and step.seconds >= 0
    lines = shown.getvalue().split("\n")
    assert lines[0].startswith("  [fx] export ...\r  [fx] export ok ") and lines[0].endswith(" s\x1b[K")
    assert lines[1].startswith("  [fx] import ...\r  [fx] import FAILED ")
    piped = io.StringIO()
    with Progress(piped).stage("[fx] export"):
        pass
    assert piped.getvalue() == ""


def test_list_names_the_model_types(capsys):
    assert cli.main(["port", "--list"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split()[0] == "opt" and len(rows) > 300
    assert any(r.split()[:2] == ["gpt2", "GPT2Model"] for r in rows)


@pytest.mark.parametrize("argv, message", [
    (["port"], "harness port needs a MODEL"),
    (["port", "gpt3"], "unknown model 'gpt3': not a transformers model type"),
    (["port", "timm:a b"], "model 'timm:a b': after 'timm:' comes a model name of that library"),
    (["port", "BertForMaskedLM:encoder"], "a class name is built whole"),
    (["port", "./no-such-folder"], "cannot use model directory no-such-folder: no such directory"),
    (["port", "gpt2", "--set", "n_layer=two"], "bad config value n_layer='two' for model 'gpt2'"),
    (["port", "gpt2", "--set", "n_layers=2"], "GPT2Config has no field 'n_layers'"),
    (["port", "gpt2", "--frontend", "fx", "--seq", "0"], "sequence length must be an integer >= 1"),
    (["port", "gpt2", "--variant", "fixed"], "model 'gpt2' has no 'fixed' variant"),
])
def test_bad_input_is_one_paragraph_and_leaves_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "out"
    assert cli.main([*argv, "--out", str(out)] if len(argv) > 1 else argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_bad_directory_and_bad_json_path(tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    assert cli.main(["port", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert f"cannot use model directory {folder}: it has no config.json" in capsys.readouterr().err
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": "x"}))
    assert cli.main(["port", str(folder), "--out", str(tmp_path / "out")]) == 2
    assert "GPT2Config" in capsys.readouterr().err
    assert cli.main(["port", "gpt2", "--json", str(tmp_path / "absent" / "r.json"),
                     "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the port record to" in err and "not a writable folder" in err
    assert not (tmp_path / "out").exists()


def test_help_states_the_library_defaults(capsys):
    from harness.models import generic
    from harness.port import OPT_DEFAULTS, PortOptions

    with pytest.raises(SystemExit):
        cli.main(["port", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {generic.DEFAULT_BATCH})" in text and f"(default: {generic.DEFAULT_SEQ})" in text
    assert f"(default: {PortOptions().timeout_s:g})" in text
    with pytest.raises(SystemExit):
        cli.main(["opt", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {OPT_DEFAULTS.seq}, the seed's prompt)" in text
    assert f"(default:{PortOptions().out})" in "".join(text.split())


def test_a_record_of_another_schema_is_refused(tmp_path):
    from harness.errors import InputFileError

    path = tmp_path / "record.json"
    for schema in ("harness.port/2", "harness.check/1", None):
        path.write_text(json.dumps({"schema": schema, "model": "gpt2", "source": "type",
                                    "model_type": "gpt2"}))
        with pytest.raises(InputFileError, match=r"not a port record of schema harness\.port/1"):
            PortRecord.read(path)
    path.write_text(json.dumps({"schema": "harness.port/1.4", "model": "gpt2", "source": "type",
                                "model_type": "gpt2", "a_later_field": 1}))
    assert PortRecord.read(path).model == "gpt2"  # a later minor version reads
    path.write_text("{")
    with pytest.raises(InputFileError, match="cannot read the port record"):
        PortRecord.read(path)
