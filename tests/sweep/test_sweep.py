"""harness sweep end to end: real tiny ports (gpt2, bert), each in its own process, with the
op-level check, one model that leaves no record, reuse, a per-model timeout and --all's
skipped types. The sweep itself runs once (``sweep_run`` in conftest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import SWEEP_MODELS

from harness.port.record import PortRecord
from harness.sweep import records
from harness.sweep.records import RunFailure
from harness.sweep.runner import IR_SUFFIXES

from support import harness


def test_each_model_leaves_a_record_and_one_failure_costs_one_model(sweep_run):
    out, proc = sweep_run
    assert proc.returncode == 1, proc.stdout + proc.stderr  # nosuchmodel failed
    gpt2 = records.read_result(out / "records" / "gpt2.json")
    bert = records.read_result(out / "records" / "bert.json")
    missing = records.read_result(out / "records" / "nosuchmodel.json")
    assert isinstance(gpt2, PortRecord) and isinstance(bert, PortRecord)
    # --fix is the default: stock gpt2's TorchScript path lowers once __and__ is renamed.
    for record in (gpt2, bert):
        assert [p.frontend for _, p in record.ports()] == ["torchscript", "fx"]
    assert [p.outcome for _, p in gpt2.ports()] == ["verified", "verified"]
    ts = gpt2.variants[0].ports[0]
    assert [f["fix"] for f in ts.fixes if f["outcome"] == "kept"] == ["bitwise-and-or"]
    # bert's FX path stops at the importer without fixes (non-persistent buffers): port --fix
    # applies the module fix 'persistent-buffers', exports again and verifies.
    assert [p.outcome for _, p in bert.ports()] == ["verified", "verified"]
    fx = bert.variants[0].ports[1]
    assert [f["fix"] for f in fx.fixes if f["outcome"] == "kept"] == ["persistent-buffers"]
    assert isinstance(missing, RunFailure) and missing.reason == "no-record"
    assert missing.returncode == 2 and "nosuchmodel" in missing.detail
    assert (out / missing.log).is_file()
    assert (out / "index.html").is_file()


def test_keep_files_all_keeps_a_verified_ports_ir(sweep_run):
    out, _ = sweep_run  # --keep-files all (the default, failing, is tested on the cluster's sweep)
    for _, port in records.read_result(out / "records" / "gpt2.json").ports():
        outputs = [Path(s.output) for s in port.stages if s.output.endswith(IR_SUFFIXES)]
        assert outputs and all(o.is_file() for o in outputs), port.frontend


def test_progress_has_one_line_per_model_and_the_summary_names_each(sweep_run):
    _out, proc = sweep_run
    lines = [ln.strip() for ln in proc.stderr.splitlines() if re.match(r"\s*\[\d/3\]", ln)]
    assert len(lines) == 3, proc.stderr
    assert sorted(ln.split("]")[0] for ln in lines) == ["[1/3", "[2/3", "[3/3"]
    for line in lines:
        assert re.search(r"\| elapsed \d+:\d\d, ETA \d+:\d\d$", line), line
    by_model = {ln.split("] ")[1].split(":")[0]: ln for ln in lines}
    assert set(by_model) == set(SWEEP_MODELS)
    assert "crashed (no-record, exit 2)" in by_model["nosuchmodel"]
    assert "torchscript verified, check verified, fx verified, check verified" in by_model["gpt2"]
    assert "torchscript verified, check verified, fx verified, check verified" in by_model["bert"]
    assert "2 of 3 models lower and verify" in proc.stdout


def test_numerics_check_runs_the_reference_check_on_each_lowered_port(sweep_run):
    out, _ = sweep_run
    for model, frontend in (("gpt2", "torchscript"), ("gpt2", "fx"), ("bert", "torchscript"),
                            ("bert", "fx")):
            data = json.loads(records.check_path(out, model, model, frontend).read_text())
            assert data["schema"] == "harness.check/1"
            assert data["outcome"] == "verified", (model, frontend, data.get("error"))
            assert data["pipeline"] == "torch-to-linalg"
            # On the port's own traced inputs, not random ones.
            assert data["inputs"].endswith("inputs.npz"), data["inputs"]
    # A model without a record has nothing to check.
    sweep = records.load(out)
    assert {m.model: len(m.checks) for m in sweep.models} == {"bert": 2, "gpt2": 2, "nosuchmodel": 0}


def test_records_are_reused_unless_forced(sweep_run, tmp_path):
    out, _ = sweep_run
    record = out / "records" / "gpt2.json"
    before = record.stat().st_mtime_ns
    proc = harness("--progress", "sweep", "gpt2", "--out", str(out), "--numerics-check", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "record reused" in proc.stderr
    assert record.stat().st_mtime_ns == before
    assert "1 of 1 models lower and verify" in proc.stdout


# A port that never ends: a ``sitecustomize`` on PYTHONPATH makes ``harness port hang-*`` sleep
# (a real port can now finish inside any timeout short enough for a test).
HANG_HOOK = """
import sys, time
import harness.cli as _cli

_real_main = _cli.main


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if "port" in args[:-1] and args[args.index("port") + 1].startswith("hang"):
        time.sleep(600)
    return _real_main(argv)


_cli.main = main
"""


def test_a_hang_costs_one_model_its_timeout(tmp_path):
    """The per-model timeout kills the port's process group (each port its own process: --cold)
    and leaves a failure record."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HANG_HOOK)
    out = tmp_path / "s"
    proc = harness("sweep", "hang-a", "--cold", "--out", str(out), "--timeout", "3",
                   env={"PYTHONPATH": str(hook)}, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failure = records.read_result(out / "records" / "hang-a.json")
    assert isinstance(failure, RunFailure)
    assert failure.reason == "timeout" and failure.returncode is None
    assert 3 <= failure.seconds < 30
    assert "crashed (timeout)" in proc.stdout


def test_bad_usage_is_exit_2(tmp_path):
    proc = harness("sweep", "--out", str(tmp_path / "s"), timeout=60)
    assert proc.returncode == 2 and "harness sweep needs MODELs" in proc.stderr
    proc = harness("sweep", "gpt2", "--shard", "3/2", "--out", str(tmp_path / "s"), timeout=60)
    assert proc.returncode == 2 and "--shard expects I/N" in proc.stderr
    proc = harness("sweep", "--merge", str(tmp_path / "nothing"), "--out", str(tmp_path / "m"), timeout=60)
    assert proc.returncode == 2 and "is not a sweep folder" in proc.stderr


def test_all_lists_what_builds_and_why_the_rest_is_skipped(tmp_path):
    """--all's catalog on a few types: a base model that builds, and one that does not."""
    from harness.sweep.catalog import all_models

    built, skipped = all_models(tmp_path, candidates=["gpt2", "nosuchtype"])
    assert built == ["gpt2"]
    assert [s["model_type"] for s in skipped] == ["nosuchtype"]
    assert "nosuchtype" in skipped[0]["why"]
    saved = json.loads((tmp_path / "models.json").read_text())
    assert saved == {"built": built, "skipped": skipped}
    # Reused: a second call reads the file instead of building models again.
    assert all_models(tmp_path) == (built, skipped)


def _fake_python(tmp_path: Path, cases: str) -> Path:
    """Plays the catalog's child (``python -m harness.sweep.catalog TYPE...``): a verdict line
    per type, except for the types ``cases`` (bash case arms) handle."""
    fake = tmp_path / "python"
    fake.write_text('#!/bin/bash\nshift 2\nfor t in "$@"; do\n'
                    f'  case "$t" in {cases} esac\n'
                    '  echo "{\\"model_type\\": \\"$t\\", \\"why\\": \\"ok\\"}"\n'
                    'done\n')
    fake.chmod(0o755)
    return fake


def test_all_charges_a_crash_hang_or_exit_to_the_type_and_goes_on(tmp_path, monkeypatch):
    """'boom' kills its process with SIGSEGV, 'stuck' hangs, 'watched' is ended by the
    child's watchdog (faulthandler's message), 'quits' exits 0 early: each is charged with it,
    and every other type gets its verdict, also the ones after them in the batch."""
    from harness.sweep import catalog

    fake = _fake_python(tmp_path, "boom) kill -SEGV $$;; stuck) sleep 600;; "
                                  "watched) echo 'Timeout (0:01:30)!' >&2; exit 1;; quits) exit 0;;")
    monkeypatch.setattr(catalog, "BUILD_TIMEOUT_S", 1.0)
    monkeypatch.setattr(catalog, "_START_S", 1.0)
    built, skipped = catalog.all_models(
        tmp_path, candidates=["a", "boom", "b", "stuck", "c", "watched", "d", "quits", "e"],
        python=str(fake), jobs=1)
    assert built == ["a", "b", "c", "d", "e"]
    assert skipped == [{"model_type": "boom", "why": "building the tiny model crashed (signal 11)"},
                       {"model_type": "stuck", "why": "building the tiny model hung"},
                       {"model_type": "watched", "why": "building the tiny model hung"},
                       {"model_type": "quits", "why": "building the tiny model ended its process (exit 0)"}]


def test_all_stops_when_the_check_cannot_start(tmp_path):
    from harness.errors import HarnessError
    from harness.sweep import catalog

    fake = tmp_path / "python"
    fake.write_text("#!/bin/bash\necho 'ModuleNotFoundError: No module named transformers' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(HarnessError,
                       match=r"failed before trying any type \(exit 1\).*No module named transformers"):
        catalog.all_models(tmp_path, candidates=["a", "b"], python=str(fake))


def test_the_check_runs_on_the_mismatched_set_with_its_padding_mask():
    from harness.port.record import FrontendPort, NumericsCheck
    from harness.sweep.runner import check_inputs

    traced = NumericsCheck("traced", "the traced ids", "verified", 0.0, 0.0, inputs_file="t.npz")
    second = NumericsCheck("second", "other ids, a left-padded mask", "verified", 0.0, 0.0,
                           inputs_file="s.npz", padding_mask=1)
    port = FrontendPort("torchscript", "verified", numerics=[second, traced])
    assert check_inputs(port) == ("t.npz", None)
    second.verdict = "numerics-mismatch"
    assert check_inputs(port) == ("s.npz", 1)
    assert check_inputs(FrontendPort("fx", "fails")) == ("", None)
