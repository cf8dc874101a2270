"""The record's start-up (issue 45, item 7): a port's ``seconds`` starts after the process has
imported torch, transformers and torch-mlir, 20-30 s a user also waits for on a cold machine;
the record keeps that apart as ``startup_seconds`` and the summary says it."""

from __future__ import annotations

import json
import subprocess
import sys

from harness.models.hf_resolve import SourceKind
from harness.port.progress import process_age
from harness.port.record import PortRecord
from harness.port.render import summary


def test_process_age_counts_from_the_process_start_not_from_the_call():
    code = ("import time; time.sleep(1.5); from harness.port.progress import process_age; "
            "print(process_age())")
    age = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               check=True, timeout=120).stdout)
    assert 1.4 <= age < 60
    assert process_age() > 0  # this process started before the test


def test_the_record_keeps_the_start_up_and_the_summary_says_it():
    record = PortRecord(model="gpt2", source=SourceKind.TYPE, model_type="gpt2", folder="/x",
                        seconds=12.0, startup_seconds=21.5)
    assert json.loads(json.dumps(record.to_json()))["startup_seconds"] == 21.5
    assert PortRecord.from_json(record.to_json()).startup_seconds == 21.5
    assert "took 12.0 s, after 21.5 s of start-up" in "\n".join(summary(record))
    record.startup_seconds = 0.0  # a record of an older version, or no /proc
    assert not any("start-up" in line for line in summary(record))
