"""``--memory-limit MB``: each torch-mlir-opt run of a port gets that much address space
(RLIMIT_AS), so a pass that allocates without end crashes early instead of running to the
timeout; ``harness sweep`` gives its ports one by default."""

from __future__ import annotations

import json
from pathlib import Path

from support import harness

from harness import defaults
from harness.sweep.runner import SweepOptions, port_flags


def test_each_stage_runs_under_the_ports_memory_limit(tmp_path: Path):
    # 1 MiB of address space: torch-mlir-opt cannot even start, so the first pipeline stage
    # fails; the same port without the limit lowers (tests/port/test_port_cli.py).
    record = tmp_path / "r.json"
    proc = harness("port", "gpt2", "--frontend", "fx", "--no-numerics", "--memory-limit", "1",
                   "--out", tmp_path, "--json", record)
    assert proc.returncode == 1, proc.stderr[-2000:]
    data = json.loads(record.read_text())
    assert data["options"]["memory_limit_mb"] == 1
    port = data["variants"][0]["ports"][0]
    stages = {s["name"]: s for s in port["stages"]}
    assert stages["import"]["ok"] and not stages["fx-to-torch"]["ok"], port["stages"]


def test_a_negative_memory_limit_is_refused_in_one_paragraph(tmp_path: Path):
    proc = harness("port", "gpt2", "--memory-limit", "-5", "--out", tmp_path)
    assert proc.returncode == 2
    assert "--memory-limit -5" in proc.stderr and "0 for no limit" in proc.stderr
    proc = harness("sweep", "gpt2", "--memory-limit", "-5", "--out", tmp_path / "s")
    assert proc.returncode == 2 and "--memory-limit -5" in proc.stderr
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def test_a_sweep_gives_each_port_its_memory_limit(tmp_path: Path):
    flags = port_flags(SweepOptions(out=tmp_path), "gpt2")
    at = flags.index("--memory-limit")
    assert int(flags[at + 1]) == defaults.SWEEP_MEMORY_LIMIT_MB > 0
    flags = port_flags(SweepOptions(out=tmp_path, memory_limit_mb=0), "gpt2")
    assert flags[flags.index("--memory-limit") + 1] == "0"
