"""A port whose compiled code crashes on one input set (issue 45, item 6): wav2vec2 on FX dies at
``hidden_states[~mask] = 0`` when the traced attention mask is all ones (the boolean mask selects
nothing). The other set still runs, under the same runtime checks; the record keeps both sets'
results, the blocker says which set triggers the crash, and the printed commands are public
harness commands that paste and run (no internal ``jit_child``)."""

from __future__ import annotations

import json
import shlex
import subprocess

import numpy as np
import pytest

from harness.port.record import CheckedRun, PortOutcome, PortRecord

from support import harness


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    out = tmp_path_factory.mktemp("w2v")
    done = harness("port", "wav2vec2", "--frontend", "fx", "--out", out, "--json", out / "w2v.json")
    assert done.returncode == 1, done.stdout + done.stderr
    record = json.loads((out / "w2v.json").read_text())
    return done, record


def test_the_record_keeps_both_sets_and_which_one_crashes(crashed):
    _, raw = crashed
    [port] = raw["variants"][0]["ports"]
    assert port["outcome"] == "fails" and port["failed_stage"] == "execution"
    traced, second = port["numerics"]
    # The sets themselves: the traced mask is all ones, the second pads (read from their files).
    with np.load(traced["inputs_file"]) as t, np.load(second["inputs_file"]) as s:
        assert (t["arg1"] == 1).all() and (s["arg1"] == 0).any()
    assert traced["inputs"] == "traced" and traced["verdict"] == "fails"
    assert "memref.load out-of-bounds access" in traced["error"]
    assert traced["runtime_checks"] == "failed"
    assert second["inputs"] == "second" and second["verdict"] == "verified"
    assert second["runtime_checks"] == "passed" and not second["error"]
    [blocker] = port["blockers"]
    assert blocker["op"] == "memref.load"
    assert blocker["inputs"] == ("crashes on the traced inputs (attention mask all ones), runs on "
                                 "the second (padded) under the same runtime checks: verified")
    # Read back, the closed sets are enums again.
    read = PortRecord.from_json(raw)
    checks = read.variants[0].ports[0].numerics
    assert [c.verdict for c in checks] == [PortOutcome.FAILS, PortOutcome.VERIFIED]
    assert [c.runtime_checks for c in checks] == [CheckedRun.FAILED, CheckedRun.PASSED]


def test_the_printed_commands_are_public_and_reproduce_the_crash(crashed):
    done, raw = crashed
    [port] = raw["variants"][0]["ports"]
    assert "jit_child" not in done.stdout
    tools = [shlex.split(c) for c in port["commands"]]
    assert [words[words.index("harness") + 1] for words in tools] == ["check", "reduce", "report"]
    traced = port["numerics"][0]["inputs_file"]
    assert all(words[words.index("--inputs") + 1] == traced for words in tools)
    for command in port["commands"]:
        assert command in done.stdout  # printed as recorded
    check = tools[0]
    assert "--runtime-checks" in check
    ran = subprocess.run(check, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stdout.startswith("fails at execution")
    assert "memref.load" in ran.stdout and "out-of-bounds access" in ran.stdout


def test_which_set_crashes_is_said_from_the_sets_and_their_checked_runs():
    """The blocker's ``inputs``: the sets a crash happens on, each with what sets it apart (a mask
    of ones, padding), and how the others ran: under the same checks, without them (what the
    checked run did then), or with no qualifier where the backend has no checks (IREE)."""
    import math

    import torch

    from harness.models.hf_inputs import InputSet
    from harness.port.record import InputSetName, NumericsCheck
    from harness.port.verify import crash_inputs

    ids = torch.tensor([[5, 6, 7, 8]])
    ones = InputSet(("input_ids", "attention_mask"), (ids, torch.ones(1, 4, dtype=torch.int64)), "ids")
    padded = InputSet(("input_ids", "attention_mask"), (ids, torch.tensor([[0, 1, 1, 1]])), "left-padded")
    sets = ((InputSetName.TRACED, ones), (InputSetName.SECOND, padded))

    def check(which, verdict, checked=None):
        return NumericsCheck(which, "", verdict, math.nan, math.nan, runtime_checks=checked)

    crashed = check("traced", "fails", "failed")
    assert crash_inputs(sets, [crashed, check("second", "numerics-mismatch", "passed")]) == (
        "crashes on the traced inputs (attention mask all ones), runs on the second (padded) under "
        "the same runtime checks: numerics-mismatch")
    assert crash_inputs(sets, [crashed, check("second", "verified", "crashed")]) == (
        "crashes on the traced inputs (attention mask all ones), runs on the second (padded) "
        "without runtime checks (with them it crashed): verified")
    assert crash_inputs(sets, [check("traced", "verified"), check("second", "fails")]) == (
        "crashes on the second inputs (padded), runs on the traced (attention mask all ones): verified")
    assert crash_inputs(sets, [crashed, check("second", "fails", "failed")]) == (
        "crashes on the traced inputs (attention mask all ones) and the second inputs (padded): "
        "every input set")
