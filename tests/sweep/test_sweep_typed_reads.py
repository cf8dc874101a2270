"""The sweep reads a port record's closed sets as enums (``is``), not as strings: a record read
back from its JSON gives the same answers as the one built in memory."""

from __future__ import annotations

import json

import pytest

from harness.fixes.base import BlockerSeen
from harness.fixes.outcomes import StepOutcome
from harness.fixes.steps import FixStep
from harness.frontends.names import FrontendName
from harness.knowledge.fixes import FixLevel
from harness.models.choice import Variant
from harness.port.record import (
    FrontendPort,
    InputSetName,
    NumericsCheck,
    PortOutcome,
    PortRecord,
    PortStage,
    SourceKind,
    StageRecord,
    VariantRecord,
)
from harness.sweep.runner import _summary, check_inputs, torch_ir


def _record() -> PortRecord:
    fails = FrontendPort(FrontendName.TORCHSCRIPT, PortOutcome.FAILS, failed_stage=PortStage.TORCH_TO_LINALG)
    fails.stages = [StageRecord(PortStage.TRACE, True, 1.0, output="a.pt"),
                    StageRecord(PortStage.TORCHSCRIPT_TO_TORCH, True, 1.0, output="torch.mlir"),
                    StageRecord(PortStage.TORCH_TO_LINALG, False, 1.0, "legalization-failure")]
    fixed = FrontendPort(FrontendName.FX, PortOutcome.NUMERICS_MISMATCH)
    fixed.fixes = [FixStep("a", FixLevel.TORCH_IR, BlockerSeen(), "torch-to-linalg",
                           StepOutcome.ROLLED_BACK, output_path="no.mlir"),
                   FixStep("b", FixLevel.TORCH_IR, BlockerSeen(), "torch-to-linalg",
                           StepOutcome.KEPT, output_path="fixed.mlir")]
    fixed.numerics = [NumericsCheck(InputSetName.TRACED, "", PortOutcome.VERIFIED, 0.0, 0.0,
                                    inputs_file="t.npz"),
                      NumericsCheck(InputSetName.SECOND, "", PortOutcome.NUMERICS_MISMATCH, 1.0, 1.0,
                                    inputs_file="s.npz")]
    variant = VariantRecord("stock", "gpt2", ports=[fails, fixed])
    return PortRecord(model="gpt2", source="type", model_type="gpt2", variants=[variant])


def test_built_and_read_back_records_read_the_same():
    built = _record()
    read = PortRecord.from_json(json.loads(json.dumps(built.to_json())))
    for record in (built, read):
        fails, fixed = record.variants[0].ports
        assert torch_ir(fails) == "torch.mlir"     # the output of the stage before torch-to-linalg
        assert torch_ir(fixed) == "fixed.mlir"     # the last kept fix's output
        assert check_inputs(fixed) == ("s.npz", None)  # the mismatched set first
        words, ok = _summary(record, {"gpt2.fx": "numerics-mismatch"})
        assert words == "torchscript fails at torch-to-linalg, fx miscompile (op-level check)"
        assert not ok


def test_a_failure_record_is_typed_and_a_forged_reason_names_the_file(tmp_path):
    """RunFailure.reason is a closed set (issue 41 item 4); a record with another reason is one
    paragraph naming the file (issue 45 item 9), not an internal error."""
    import json

    from harness.errors import InputFileError
    from harness.sweep import records

    good = records.RunFailure("gpt2", "timeout", 1.0)
    assert good.reason is records.FailureReason.TIMEOUT
    path = tmp_path / "gpt2.json"
    records.write_failure(tmp_path, good)
    written = next((tmp_path / "records").glob("*.json"))
    assert json.loads(written.read_text())["reason"] == "timeout"
    assert records.read_result(written).reason is records.FailureReason.TIMEOUT
    forged = {**json.loads(written.read_text()), "reason": "exploded"}
    path.write_text(json.dumps(forged))
    with pytest.raises(InputFileError, match=r"gpt2.json is not a valid sweep failure record.*"
                                             r"unknown failure reason 'exploded'"):
        records.read_result(path)


@pytest.mark.parametrize(("forge", "said"), [
    (lambda d: d.update(model=["a"]), "PortRecord.model is list ['a'], not str"),
    (lambda d: d.update(seconds="fast"), "PortRecord.seconds is str 'fast', not float"),
    (lambda d: d.update(variants="x"), "not a valid port record"),
    (lambda d: d["variants"][0]["ports"][0].update(stages={"a": 1}), "not a valid port record"),
    (lambda d: d["variants"][0]["ports"][0].update(numerics="bad"), "not a valid port record"),
    (lambda d: d["variants"][0]["ports"][0].update(blockers=[1, 2]), "not a valid port record"),
    (lambda d: d["variants"][0]["ports"][0].update(fixes=[{"fix": "a", "level": "torch-ir",
                                                          "outcome": "maybe"}]),
     "unknown step outcome 'maybe'"),
    (lambda d: d["variants"][0]["ports"][0].update(fixes=["a"]), "not a valid port record"),
])
def test_a_forged_port_record_in_a_merge_is_one_paragraph_naming_the_file(tmp_path, forge, said):
    """Issue 45 item 9: wrong field types in a record --merge reads were internal errors (exit 3)
    or taken as they were; each is an InputFileError (exit 2) that names the file."""
    import json

    from harness.errors import InputFileError
    from harness.sweep import records

    record = PortRecord("gpt2", SourceKind.TYPE, "gpt2", variants=[VariantRecord(
        Variant.STOCK, "gpt2", ports=[FrontendPort(FrontendName.FX, PortOutcome.VERIFIED)])])
    path = tmp_path / "gpt2.json"
    record.write(path)
    data = json.loads(path.read_text())
    forge(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=r"gpt2\.json") as raised:
        records.read_result(path)
    assert said in str(raised.value)


def test_a_failure_record_with_a_field_of_another_type_names_the_file(tmp_path):
    """The run failure's other fields are checked as the port record's are ("fast" seconds
    crashed the board's formatting, exit 3); "inf" reads back as the float."""
    import json

    from harness.errors import InputFileError
    from harness.sweep import records

    path = records.write_failure(tmp_path, records.RunFailure("gpt2", "timeout", float("inf")))
    assert records.read_result(path).seconds == float("inf")
    path.write_text(json.dumps({**json.loads(path.read_text()), "seconds": "fast"}))
    with pytest.raises(InputFileError, match=r"gpt2\.json.*RunFailure\.seconds is str 'fast'"):
        records.read_result(path)
