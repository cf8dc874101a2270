"""The reducer keeps the op a failure is about: the subject survives every edit."""

from __future__ import annotations

from harness.compiler.records import Diagnostic, Outcome, RunRecord, Severity
from harness.diagnose.reduce import ReduceOptions, reduce_file
from harness.diagnose.reduce.subject import keeps_subject, occurs, subject_ops

# torch-mlir 20261001 canonicalizes aten._int_mm to an aten.mm whose si8 result then crashes
# convert-torch-to-linalg: the binary's own canonicalize (the reducer's cleanup) gives an
# aten.mm that crashes the same way, without the op the bug is about.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
INT_MM = """func.func @int_mm(%arg0: !torch.vtensor<[3,4],si8>, %arg1: !torch.vtensor<[4,3],si8>) -> !torch.vtensor {
  %0 = torch.aten._int_mm %arg0, %arg1 : !torch.vtensor<[3,4],si8>, !torch.vtensor<[4,3],si8> -> !torch.vtensor
  return %0 : !torch.vtensor
}
"""  # noqa: E501
TO_LINALG = ("builtin.module(torch-function-to-torch-backend-pipeline,"
             "torch-backend-to-linalg-on-tensors-backend-pipeline)")


def test_int_mm_keeps_int_mm(tmp_path):
    src = tmp_path / "intmm.mlir"
    src.write_text(INT_MM)
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, TO_LINALG, options=ReduceOptions(output_path=out, budget_s=60))
    assert result.subject == ("torch.aten._int_mm",)
    text = out.read_text()
    assert "torch.aten._int_mm" in text
    assert "torch.aten.mm " not in text
    assert result.signature.startswith("crash: SIGSEGV in ConvertTorchToLinalg")


def _record(file: str, line: int, col: int, message: str, current: str = "") -> RunRecord:
    diag = Diagnostic(Severity.ERROR, message, file, line, col, current_op=current)
    return RunRecord(outcome=Outcome.PASS_FAILURE, command=[], pipeline="p", input_path=file,
                     binary="", returncode=1, elapsed_s=0.1, diagnostics=[diag])


def test_subject_is_the_input_op_at_the_error_location_not_what_the_pass_made_of_it():
    record = _record("/x/intmm.mlir", 2, 8, "unimplemented: something",
                     '%0 = "torch.aten.mm"(%arg0, %arg1) : (...) -> !torch.vtensor')
    assert subject_ops(record, INT_MM, ("/x/intmm.mlir",)) == ("torch.aten._int_mm",)
    # A location outside the input (a Python file): the op the error names, if the input has it.
    record = _record("model.py", 2, 8, "unimplemented: something",
                     '%0 = "torch.aten.mm"(%arg0, %arg1) : (...) -> !torch.vtensor')
    assert subject_ops(record, INT_MM, ("/x/intmm.mlir",)) == ()


def test_occurs_tells_op_names_apart():
    assert occurs("%0 = torch.aten.mm %a", "torch.aten.mm")
    assert not occurs("%0 = torch.aten.mm.out %a", "torch.aten.mm")
    assert not occurs("%0 = torch.aten._int_mm %a", "torch.aten.mm")
    assert occurs('%0 = "torch.aten.mm"(%a)', "torch.aten.mm")
    assert occurs('%0 = torch.operator "aten.fft_fftn"(%a)', 'torch.operator "aten.fft_fftn"')
    assert not occurs('%0 = torch.operator "aten.fft_fft"(%a)', 'torch.operator "aten.fft_fftn"')
    assert keeps_subject("anything", ())
