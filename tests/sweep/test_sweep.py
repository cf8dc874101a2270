"""harness sweep end to end: real tiny ports (gpt2, bert), each in its own process, with the
op-level check, one model that leaves no record, reuse, a per-model timeout and --all's
skipped types. The sweep itself runs once (``sweep_run`` in conftest.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path


from conftest import SWEEP_MODELS

from harness.port.record import PortOutcome
from harness.frontends.names import FrontendName
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
        assert [str(p.frontend) for _, p in record.ports()] == ["torchscript", "fx"]
    assert [str(p.outcome) for _, p in gpt2.ports()] == ["verified", "verified"]
    ts = gpt2.variants[0].ports[0]
    assert [f.fix for f in ts.fixes if f.kept] == ["bitwise-and-or"]
    # bert's FX path stops at the importer without fixes (non-persistent buffers): port --fix
    # applies the module fix 'persistent-buffers', exports again and verifies.
    assert [str(p.outcome) for _, p in bert.ports()] == ["verified", "verified"]
    fx = bert.variants[0].ports[1]
    assert [f.fix for f in fx.fixes if f.kept] == ["persistent-buffers"]
    assert isinstance(missing, RunFailure) and str(missing.reason) == "no-record"
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
    assert str(failure.reason) == "timeout" and failure.returncode is None
    assert 3 <= failure.seconds < 30
    assert "crashed (timeout)" in proc.stdout


def test_bad_usage_is_exit_2(tmp_path):
    proc = harness("sweep", "--out", str(tmp_path / "s"), timeout=60)
    assert proc.returncode == 2 and "harness sweep needs MODELs" in proc.stderr
    proc = harness("sweep", "gpt2", "--shard", "3/2", "--out", str(tmp_path / "s"), timeout=60)
    assert proc.returncode == 2 and "--shard expects I/N" in proc.stderr
    proc = harness("sweep", "--merge", str(tmp_path / "nothing"), "--out", str(tmp_path / "m"), timeout=60)
    assert proc.returncode == 2 and "is not a sweep folder" in proc.stderr


def test_all_is_every_transformers_type_with_a_base_model_opt_first():
    """--all's types at the pinned transformers (5.24.0): 622 with a config class and a base
    model; each is ported, none built beforehand."""
    from harness.sweep.catalog import all_types

    types = all_types()
    assert types[0] == "opt" and types.count("opt") == 1
    assert {"gpt2", "bert", "vit", "whisper", "dinat"} <= set(types)
    assert len(types) == len(set(types)) == 622


def test_all_a_type_that_does_not_build_is_refused_by_its_port_and_listed_with_why(tmp_path):
    """dinat needs natten (not installed here): its own port refuses it, an unsupported record
    with the refusal; models.json then lists it as skipped with that why. A type with a port
    record is built; one whose port crashed left no record (failed, with the reason); a type
    with no record yet is in no list."""
    from harness.sweep import catalog
    from harness.sweep.records import UNSUPPORTED, RunFailure, read_result
    from harness.sweep.runner import SweepOptions, run_sweep
    from support.sweep_fakes import port, record, write

    out = tmp_path / "s"
    runs = run_sweep(["dinat"], SweepOptions(out=out, jobs=1, warm=False))
    assert [r.outcome.split(":")[0] for r in runs] == ["unsupported"]
    refused = read_result(out / "records" / "dinat.json")
    assert isinstance(refused, RunFailure) and refused.reason == UNSUPPORTED
    assert "natten" in refused.detail
    write(out, record("gpt2", "text", port("torchscript"), port("fx")),
          RunFailure("bloom", "crash", 1.0, -11, "Segmentation fault", "logs/bloom.log"))
    listed = catalog.write_models_file(out, ["gpt2", "dinat", "bloom", "bert"])
    assert listed.built == ["gpt2"]
    assert listed.skipped == [{"model_type": "dinat", "why": refused.detail}]
    assert listed.failed == [{"model_type": "bloom", "why": "crash"}]
    assert json.loads((out / "models.json").read_text()) == {
        "built": ["gpt2"], "skipped": listed.skipped, "failed": listed.failed}


def test_the_board_lists_a_skipped_type_once(tmp_path):
    """A type refused by its port is an unsupported row; the board's 'Skipped by --all' list
    keeps only the types an older --all listed without a port."""
    from harness.sweep import board, records
    from harness.sweep.records import RunFailure, write_failure

    out = tmp_path / "s"
    write_failure(out, RunFailure("dinat", records.UNSUPPORTED, 3.0, 2, "cannot drive model 'dinat'"))
    (out / "models.json").write_text(json.dumps({"built": [], "skipped": [
        {"model_type": "dinat", "why": "cannot drive model 'dinat'"},
        {"model_type": "bark", "why": "cannot drive model 'bark'"}]}))
    page = board.render(records.load(out))
    listed = page[page.index('<table id="skipped">'):]
    assert "Skipped by --all (1:" in page and "bark" in listed and "dinat" not in listed


def test_the_check_runs_on_the_mismatched_set_with_its_padding_mask():
    from harness.port.record import FrontendPort, NumericsCheck
    from harness.sweep.runner import check_inputs

    traced = NumericsCheck("traced", "the traced ids", "verified", 0.0, 0.0, inputs_file="t.npz")
    second = NumericsCheck("second", "other ids, a left-padded mask", "verified", 0.0, 0.0,
                           inputs_file="s.npz", padding_mask=1)
    port = FrontendPort(FrontendName.TORCHSCRIPT, PortOutcome.VERIFIED, numerics=[second, traced])
    assert check_inputs(port) == ("t.npz", None)
    second.verdict = "numerics-mismatch"
    assert check_inputs(port) == ("s.npz", 1)
    assert check_inputs(FrontendPort(FrontendName.FX, PortOutcome.FAILS)) == ("", None)
    # A set whose run crashed (issue 45): the check runs there, where the crash is.
    second.verdict = "fails"
    assert check_inputs(port) == ("s.npz", 1)


def test_a_crashed_set_has_no_difference_on_the_board():
    """A crashed set's differences are nan (it did not run): the board's worst difference is the
    sets' that ran, not a nan that reads as "differs"."""
    from harness.port.record import FrontendPort, NumericsCheck
    from harness.sweep.status import _worst_diff

    crashed = NumericsCheck("traced", "mask all ones", "fails", float("nan"), float("nan"),
                            error="runtime op verification failed: memref.load out-of-bounds access")
    ran = NumericsCheck("second", "padded", "verified", 2e-6, 1e-4)
    assert _worst_diff(FrontendPort(FrontendName.FX, PortOutcome.FAILS, numerics=[crashed, ran])) == 2e-6


def test_merged_shards_of_all_list_a_refused_type_as_skipped_not_built(tmp_path):
    """Each --all shard writes its models.json; the merge's joins the shards' lists: the
    refused types once, as skipped, though each has a record (its unsupported row), and only
    the types a shard ported as built (not a library model of the sweep)."""
    from harness.sweep import catalog
    from harness.sweep.merge import merge
    from harness.sweep.records import UNSUPPORTED
    from support.sweep_fakes import port, record, write

    shards = [tmp_path / "1", tmp_path / "2"]
    write(shards[0], record("gpt2", "text", port("torchscript"), port("fx")),
          record("timm:resnet18", "vision", port("torchscript"), port("fx")),
          RunFailure("dinat", UNSUPPORTED, 0.2, 2, "cannot drive model 'dinat'"))
    write(shards[1], RunFailure("bark", UNSUPPORTED, 0.2, 2, "cannot drive model 'bark'"))
    catalog.write_models_file(shards[0], ["gpt2", "dinat"])
    catalog.write_models_file(shards[1], ["bark"])
    merge(shards, tmp_path / "all")
    saved = json.loads((tmp_path / "all" / "models.json").read_text())
    assert saved["built"] == ["gpt2"]
    assert [s["model_type"] for s in saved["skipped"]] == ["bark", "dinat"]
