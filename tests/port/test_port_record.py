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
