"""The port record is typed in memory (enums, floats) and JSON only at the edge: what the sweep,
the board and the fixes read back compares with ``is``, never with strings."""

from __future__ import annotations

import json
import math

import pytest

from harness.compiler.outcomes import Outcome
from harness.errors import HarnessError, InputFileError
from harness.frontends.names import FrontendName
from harness.models.choice import Variant
from harness.models.hf_resolve import SourceKind
from harness.port.record import (
    FrontendPort,
    InputSetName,
    NumericsCheck,
    OutputDiff,
    PortOutcome,
    PortRecord,
    PortStage,
    StageError,
    StageRecord,
    VariantRecord,
    parse_stage_outcome,
)


def _record() -> PortRecord:
    port = FrontendPort(FrontendName.FX, PortOutcome.NUMERICS_MISMATCH, reached=PortStage.EXECUTION)
    port.stages.append(StageRecord(PortStage.EXPORT, True, 1.5))
    port.stages.append(StageRecord(PortStage.FX_TO_TORCH, False, 0.5, Outcome.TIMEOUT))
    port.numerics.append(NumericsCheck(
        InputSetName.SECOND, "padded", PortOutcome.NUMERICS_MISMATCH, math.inf, math.nan,
        outputs=[OutputDiff(0, "last_hidden_state", "f32", [1, 8, 4], math.nan, 0.5, 3, 32, "exact")],
        program_failed=True, excluded_max_abs_diff=2.5))
    return PortRecord("gpt2", SourceKind.TYPE, "gpt2",
                      variants=[VariantRecord(Variant.STOCK, "gpt2", ports=[port])])


def test_the_json_keeps_its_strings_and_reads_back_to_enums():
    data = json.loads(json.dumps(_record().to_json()))  # JSON proper: it has no inf or nan
    port = data["variants"][0]["ports"][0]
    assert (str(data["source"]), str(data["variants"][0]["variant"])) == ("type", "stock")
    assert (port["frontend"], port["outcome"], port["reached"], port["failed_stage"]) == \
        ("fx", "numerics-mismatch", "execution", "")
    assert [s["outcome"] for s in port["stages"]] == ["success", "timeout"]
    check = port["numerics"][0]
    assert (check["max_abs_diff"], check["max_rel_diff"], check["program_max_abs_diff"]) == \
        ("inf", "nan", "error")
    assert "program_failed" not in check

    back = PortRecord.from_json(data)
    read = back.variants[0].ports[0]
    assert back.source is SourceKind.TYPE and back.variants[0].variant is Variant.STOCK
    assert read.frontend is FrontendName.FX and read.outcome is PortOutcome.NUMERICS_MISMATCH
    assert read.reached is PortStage.EXECUTION and read.failed_stage is None
    assert read.stages[1].outcome is Outcome.TIMEOUT
    numbers = read.numerics[0]
    assert numbers.inputs is InputSetName.SECOND and numbers.verdict is PortOutcome.NUMERICS_MISMATCH
    assert numbers.max_abs_diff == math.inf and math.isnan(numbers.max_rel_diff)
    assert numbers.program_failed and numbers.program_max_abs_diff is None
    assert back.to_json() == data


def test_an_assigned_string_becomes_the_enum_and_a_wrong_one_fails_there():
    port = FrontendPort(FrontendName.TORCHSCRIPT, PortOutcome.LOWERED)
    port.failed_stage = "torch-to-linalg"
    port.outcome = "fails"
    assert port.failed_stage is PortStage.TORCH_TO_LINALG and port.outcome is PortOutcome.FAILS
    port.reached = ""
    assert port.reached is None
    with pytest.raises(Exception, match="unknown port outcome 'bogus'"):
        port.outcome = "bogus"


def test_a_record_with_an_unknown_value_is_a_bad_input_file():
    data = _record().to_json()
    data["variants"][0]["ports"][0]["stages"][0]["name"] = "teleport"
    with pytest.raises(InputFileError, match=r"not a valid port record.*unknown port stage 'teleport'"):
        PortRecord.from_json(data)


def test_a_stage_outcome_is_a_compiler_outcome_or_an_error_in_python():
    """One set of values, not a copy: a pipeline stage's outcome is the RunRecord's own."""
    for outcome in Outcome:
        assert parse_stage_outcome(outcome.value) is outcome
    assert parse_stage_outcome("error") is StageError.IN_PYTHON
    assert StageRecord(PortStage.TRACE, False, 0.1, "timeout").outcome is Outcome.TIMEOUT
    with pytest.raises(HarnessError, match="unknown outcome 'teleported'"):
        parse_stage_outcome("teleported")


def _fix_steps() -> list:
    from harness.fixes.base import Application, BlockerSeen, RefusedSite, Site
    from harness.fixes.outcomes import StepOutcome
    from harness.fixes.steps import FixStep, FixVerdict, Method, Verification
    from harness.knowledge.fixes import FixLevel

    kept = FixStep("bitwise-and-or", FixLevel.TORCH_IR,
                   BlockerSeen(op="torch.aten.__and__.Tensor", stage="torch-to-linalg"),
                   "torch-to-linalg", StepOutcome.KEPT, input_path="a.mlir", output_path="b.mlir",
                   application=Application("bitwise-and-or", FixLevel.TORCH_IR,
                                           changed=[Site("__and__ -> bitwise_and", "m.py:3")],
                                           refused=[RefusedSite("__or__", "m.py:4", "float")]),
                   verification=Verification(Method.REFERENCE, FixVerdict.CHANGED, math.inf))
    module = FixStep("persistent-buffers", FixLevel.MODULE,
                     BlockerSeen(message="Could not find state mapping for buffer", stage="import"),
                     "import", StepOutcome.ROLLED_BACK)
    return [kept, module]


def test_a_ports_fixes_are_fix_steps_both_ways():
    """Issue 41 item 4: the record's ``fixes`` were dicts read with ``.get("outcome")``; they are
    FixSteps in memory (level, outcome, verdict enums; inf a float), values in the JSON."""
    from harness.fixes.outcomes import StepOutcome
    from harness.fixes.steps import FixStep, FixVerdict
    from harness.knowledge.fixes import FixLevel

    record = _record()
    record.variants[0].ports[0].fixes = _fix_steps()
    data = json.loads(json.dumps(record.to_json(), allow_nan=False))
    written = data["variants"][0]["ports"][0]["fixes"]
    assert [(f["level"], f["outcome"]) for f in written] == [("torch-ir", "kept"),
                                                             ("nn-module", "rolled-back")]
    assert written[0]["verification"]["max_abs_diff"] == "inf"
    read = PortRecord.from_json(data).variants[0].ports[0].fixes
    assert all(isinstance(f, FixStep) for f in read)
    assert read == _fix_steps()
    assert read[0].level is FixLevel.TORCH_IR and read[0].outcome is StepOutcome.KEPT and read[0].kept
    assert read[0].verification is not None and read[0].verification.verdict is FixVerdict.CHANGED
    assert read[0].verification.max_abs_diff == math.inf
    assert read[1].level is FixLevel.MODULE and not read[1].kept


def test_a_fix_step_kept_in_a_record_drops_the_fixed_module():
    """A module fix's step holds the fixed module and its undo; the record's copy does not (the
    record outlives them, and the JSON never held them)."""
    from harness.fixes.steps import FixStep

    step = _fix_steps()[0]
    assert step.application is not None
    step.application.module, step.application.undo = object(), lambda: None
    recorded = step.recorded()
    assert recorded.application is not None and recorded.application.module is None
    assert recorded.application.undo is None and step.application.module is not None
    assert FixStep.from_json(step.to_json()) == recorded


def test_an_older_records_fixes_read_as_fix_steps():
    """A harness.port/1 record (before 1.1's target and backend) wrote the same steps; the sweep's
    --merge and --baseline read them typed."""
    from harness.fixes.outcomes import StepOutcome

    data = _record().to_json()
    data["schema"] = "harness.port/1"
    port = data["variants"][0]["ports"][0]
    del port["target"], port["backend"]
    port["fixes"] = [{"fix": "bitwise-and-or", "level": "torch-ir",
                      "answers": {"op": "torch.aten.__and__.Tensor", "message": "",
                                  "stage": "torch-to-linalg"},
                      "stage": "torch-to-linalg", "outcome": "kept", "input_path": "a.mlir",
                      "output_path": "b.mlir", "application": None,
                      "verification": {"method": "reference", "verdict": "unverified",
                                       "max_abs_diff": 0.0, "detail": "weights elided", "seconds": 0.1}}]
    [step] = PortRecord.from_json(data).variants[0].ports[0].fixes
    assert step.outcome is StepOutcome.KEPT and step.output_path == "b.mlir"
    assert step.answers.op == "torch.aten.__and__.Tensor"


def test_a_fix_step_of_an_unknown_level_is_a_bad_input_file():
    data = _record().to_json()
    step = _fix_steps()[1].to_json()
    data["variants"][0]["ports"][0]["fixes"] = [{**step, "level": "wishful"}]
    with pytest.raises(InputFileError, match="unknown fix level 'wishful'"):
        PortRecord.from_json(data)
