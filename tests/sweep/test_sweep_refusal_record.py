"""A port that refuses its model writes the refusal in its record (``--json``), and the sweep
reads it from there: a log whose last line is something else (a warning printed after the
error, a worker's note) does not lose the reason. The log is read only when no record was
written (a port that died first)."""

from __future__ import annotations

import json

from support import harness

from harness.errors import ERROR_PREFIX, UnsupportedModelError
from harness.port.record import PortRecord
from harness.sweep.records import UNSUPPORTED
from harness.sweep.runner import SweepOptions, recorded_refusal, run_failure

REFUSAL = str(UnsupportedModelError("bark", "BarkModel.forward names no inputs"))


def _refused_record() -> str:
    record = PortRecord(model="bark", source="type", model_type="bark", unsupported=REFUSAL)
    return json.dumps(record.to_json())


def test_the_port_writes_its_refusal_in_the_record(tmp_path):
    record = tmp_path / "bark.json"
    proc = harness("--no-progress", "port", "bark", "--json", record, "--out", tmp_path / "out",
                   "--no-numerics")
    assert proc.returncode == UnsupportedModelError.exit_code, proc.stderr
    read = PortRecord.read(record)
    assert read.unsupported.startswith("cannot drive model 'bark': BarkModel.forward names no inputs")
    assert read.variants == [] and not read.ok
    assert f"{ERROR_PREFIX}{read.unsupported}" in proc.stderr  # the same paragraph as printed


def test_the_sweep_reads_the_refusal_from_the_record_not_the_log(tmp_path):
    log = tmp_path / "logs" / "bark.log"
    log.parent.mkdir()
    log.write_text(f"$ harness port bark\n{ERROR_PREFIX}{REFUSAL}\nsome warning printed at exit\n")
    options = SweepOptions(out=tmp_path)
    failure = run_failure("bark", UnsupportedModelError.exit_code, False, 1.0, log, options,
                          refusal=recorded_refusal(_refused_record()))
    assert failure.reason == UNSUPPORTED and failure.detail == REFUSAL
    # Without a record the log's last line is all there is: here it is not the refusal.
    blind = run_failure("bark", UnsupportedModelError.exit_code, False, 1.0, log, options)
    assert str(blind.reason) == "no-record"


def test_the_log_still_serves_a_port_that_died_before_its_record(tmp_path):
    log = tmp_path / "bark.log"
    log.write_text(f"$ harness port bark\n{ERROR_PREFIX}{REFUSAL}\n")
    failure = run_failure("bark", UnsupportedModelError.exit_code, False, 1.0, log,
                          SweepOptions(out=tmp_path), refusal=recorded_refusal(""))
    assert failure.reason == UNSUPPORTED and failure.detail == REFUSAL


def test_a_record_that_refused_nothing_or_does_not_read_gives_no_refusal():
    ok = PortRecord(model="gpt2", source="type", model_type="gpt2")
    assert recorded_refusal(json.dumps(ok.to_json())) == ""
    assert recorded_refusal("{not json") == "" and recorded_refusal('{"schema": "x/9"}') == ""
