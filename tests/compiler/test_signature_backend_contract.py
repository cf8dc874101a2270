"""The backend contract's failure names its op only in MLIR's "see current operation" note: the
signature (the grouping key, the report's title and folder) must carry it, or every op the
contract rejects reads as one bug ("found an op that was marked as backend illegal")."""

from __future__ import annotations

from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord, parse_diagnostics


def _record(op: str) -> RunRecord:
    stderr = (
        'm.mlir:3:10: error: found an op that was marked as backend illegal\n'
        f'm.mlir:3:10: note: see current operation: %0 = "{op}"(%arg0) : '
        '(!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>\n'
        "m.mlir:3:10: note: this is likely due to DecomposeComplexOps being unable to decompose this op\n")
    return RunRecord(outcome=Outcome.PASS_FAILURE, command=[], pipeline="torch-lower-to-backend-contract",
                     input_path="m.mlir", binary="torch-mlir-opt", returncode=1, elapsed_s=0.1,
                     stderr=stderr, diagnostics=parse_diagnostics(stderr))


def test_the_signature_names_the_op_the_contract_rejects():
    sig = _record("torch.aten.convolution_backward").signature
    assert sig.op == "torch.aten.convolution_backward"
    assert str(sig) == ("pass-failure: found an op that was marked as backend illegal: "
                        "'torch.aten.convolution_backward'")
    assert "convolution-backward" in sig.slug(100)


def test_two_rejected_ops_are_two_bugs():
    assert _record("torch.aten.rms_norm").signature != _record("torch.aten.matmul").signature


def test_a_legalization_signature_reads_as_before():
    from harness.compiler.outcomes import Signature

    assert Signature(Outcome.LEGALIZATION_FAILURE, op="torch.aten.erfinv").summary == \
        "failed to legalize operation 'torch.aten.erfinv'"
