"""``harness explain`` on real failures of the pinned torch-mlir-opt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compiler import pipelines
from harness.port.emit import emit
from harness.errors import InputFileError
from harness.models import seed
from harness.diagnose.explain import explain_file

from support import CRASHERS, ROOT, harness

LINALG = pipelines.default().get("torch-to-linalg").textual()
TORCHSCRIPT = pipelines.default().get("torchscript-to-torch").textual()

# Stock OPT's mask: a bool literal and'ed with a mask; each op at its own line of the library,
# called from the user's model.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
BOOL_MASK_IR = """\
func.func @forward(%arg0: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,1,7,7],i1> {{
  %0 = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> {loc}
  %1 = torch.aten.__and__.Tensor %0, %arg0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1> -> !torch.vtensor<[1,1,7,7],i1> {and_loc}
  return %1 : !torch.vtensor<[1,1,7,7],i1>
}}
"""  # noqa: E501


@pytest.fixture
def model_files(tmp_path):
    """A "library" file under site-packages/ and the user's model that calls it."""
    lib = tmp_path / "site-packages" / "masks.py"
    lib.parent.mkdir()
    lib.write_text("def and_mask(q, m):\n    ones = q.new_ones((), dtype=bool)\n    return ones & m\n")
    model = tmp_path / "model.py"
    model.write_text("import masks\n\nmask = masks.and_mask(q, m)  # the user's line\n")
    return lib, model


def _mask_ir(tmp_path, lib, model) -> Path:
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=f'loc(callsite("{lib}":2:4 at "{model}":3:0))',
                                      and_loc=f'loc(callsite("{lib}":3:11 at "{model}":3:0))'))
    return ir


def test_explain_labels_the_harness_wrapper_as_the_harness_not_your_code(tmp_path, model_files):
    """The forward ``harness port`` traces is the harness's wrapper (models/generic.py): it is in the
    call chain of every op, but it is not the user's code, so it reads "(harness)"; the user's
    own line between it and the library still reads "(your code)" and is the one shown."""
    lib, model = model_files
    wrapper = ROOT / "harness" / "models" / "generic.py"
    line = next(n for n, text in enumerate(wrapper.read_text().splitlines(), 1)
                if "self.model(**" in text)
    at_wrapper = f'at "{wrapper}":{line}:0'
    only_harness = tmp_path / "only-harness.mlir"  # transformers called by the wrapper: no user line
    only_harness.write_text(BOOL_MASK_IR.format(loc=f'loc(callsite("{lib}":2:4 {at_wrapper}))',
                                                and_loc=f'loc(callsite("{lib}":3:11 {at_wrapper}))'))
    text = "\n".join(explain_file(only_harness, LINALG).render())
    assert f"  called from {wrapper}:{line}:0 (harness)\n" in text
    assert "(your code)" not in text

    nested = tmp_path / "nested.mlir"  # the wrapper calls the user's model, which calls the library
    nested.write_text(BOOL_MASK_IR.format(
        loc=f'loc(callsite("{lib}":2:4 at callsite("{model}":3:0 {at_wrapper})))',
        and_loc=f'loc(callsite("{lib}":3:11 at callsite("{model}":3:0 {at_wrapper})))'))
    result = explain_file(nested, LINALG)
    [b] = result.blockers
    assert [(Path(f.file).name, f.library, f.harness) for f in b.frames] == [
        ("masks.py", True, False), ("model.py", False, False), ("generic.py", False, True)]
    assert b.user_frame().file == str(model)
    text = "\n".join(result.render())
    assert f"called from {model}:3:0 (your code)" in text
    assert f"called from {wrapper}:{line}:0 (harness)" in text


def test_explain_names_the_blocker_not_the_literal_the_error_names(tmp_path, model_files):
    """Issue 12/18: the error names the literal; explain names aten.__and__.Tensor, its Python
    line through the "called from" chain, the symptom it explains, the pass that lowers the
    equivalent op and the fix by name."""
    lib, model = model_files
    result = explain_file(_mask_ir(tmp_path, lib, model), LINALG)
    assert result.record.illegal_ops() == ["torch.vtensor.literal"]  # what MLIR says
    assert str(result.record.signature) == ("legalization-failure: failed to legalize operation "
                                            "'torch.aten.__and__.Tensor'")
    [b] = result.blockers
    assert b.op == "torch.aten.__and__.Tensor"
    assert [(Path(f.file).name, f.line, f.library) for f in b.frames] == [
        ("masks.py", 3, True), ("model.py", 3, False)]
    assert b.user_frame().lines[2] == ">     3 | mask = masks.and_mask(q, m)  # the user's line"
    assert [str(s.op) for s in b.symptoms] == ["torch.vtensor.literal"]
    assert b.symptoms[0].converted_by == ["convert-torch-to-arith"]
    assert b.converted_alone_by == [] and b.equivalent.op == "torch.aten.bitwise_and.Tensor"
    assert b.equivalent.converted_by == ["convert-torch-to-linalg"] and b.equivalent.lowers
    assert [str(f.name) for f in b.fixes] == ["bitwise-and-or"]
    assert [str(h.name) for h in b.hints] == ["bool-and-mask"]
    assert [str(u.ref) for u in b.upstream] == ["llvm/torch-mlir#4749", "llvm/torch-mlir#4625"]
    [exp] = result.explanations
    assert exp.op == "torch.vtensor.literal" and exp.symptom_of == ["torch.aten.__and__.Tensor"]
    assert exp.hints == []  # no idiom is read from the symptom
    text = "\n".join(result.render())
    assert ("the error names torch.vtensor.literal, but the op whose conversion failed is "
            "torch.aten.__and__.Tensor") in text
    assert "blocker: torch.aten.__and__.Tensor: it fails alone" in text
    assert "no conversion pass of this pipeline lowers torch.aten.__and__.Tensor" in text
    assert "convert-torch-to-linalg lowers the equivalent torch.aten.bitwise_and.Tensor" in text
    assert f"  at {lib}:3:11 (library)" in text and f"called from {model}:3:0 (your code)" in text
    assert ("explains: torch.vtensor.literal (left only because its user torch.aten.__and__.Tensor "
            "was not converted; convert-torch-to-arith lowers it alone)") in text
    assert "  fix: bitwise-and-or (torch-ir: aten.__and__.Tensor -> aten.bitwise_and.Tensor" in text
    assert "possibly known upstream: llvm/torch-mlir#4749" in text
    assert "op: torch.vtensor.literal (a symptom of torch.aten.__and__.Tensor: it lowers alone)" in text
    assert "bool-literal-mask" not in text
    # The command names the binary that ran: it pastes without a venv.
    assert f"reproduce: {result.record.binary} -pass-pipeline=" in text


def test_without_blockers_explain_reads_only_the_error(tmp_path, model_files):
    lib, model = model_files
    result = explain_file(_mask_ir(tmp_path, lib, model), LINALG, blockers=False)
    assert result.blockers == [] and result.analysis is None
    assert result.explanations[0].op == "torch.vtensor.literal"


def test_a_file_that_is_not_mlir_is_bad_input_not_missing_debug_info(tmp_path):
    """Issue 18 item 6: a parse error is no failure to explain, and no advice on locations."""
    for name, text in (("model.py", "import torch\nx = torch.ones(3)\n"), ("log.mlir", "error: boom\n")):
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(InputFileError) as info:
            explain_file(path, LINALG)
        assert f"{path} is not MLIR that torch-mlir-opt can parse" in str(info.value)
        assert "debuginfo" not in str(info.value)
        proc = _cli(str(path), "--pipeline", "torch-to-linalg")
        assert proc.returncode == 2 and "--mlir-print-debuginfo" not in proc.stdout + proc.stderr
        assert proc.stderr.startswith(f"harness: error: {path} is not MLIR"), proc.stderr


def test_ir_without_python_locations_says_so(tmp_path):
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc="", and_loc=""))
    [exp] = explain_file(ir, LINALG).explanations
    assert exp.ir_only
    assert exp.frames[0].file == str(ir) and exp.frames[0].line == 2
    assert "torch.vtensor.literal(dense<true>" in exp.frames[0].lines[1]


def test_seed_tuple_of_views_points_at_the_idiom_line(tmp_path):
    ir = tmp_path / "tuple.mlir"
    emit("seed-tuple-of-views", ir)
    result = explain_file(ir, TORCHSCRIPT)
    exp = result.explanations[0]
    assert exp.message == "unsupported by backend contract: non-value tensor type"
    mine = exp.user_frame()
    # The failing op is the key projection's output (torch's linear.py); its real caller is the
    # line that calls the projection, next to the idiom's view.
    source = Path(seed.__file__).read_text().splitlines()
    calls_k = next(i for i, line in enumerate(source, 1) if "self._shape(self.k(hidden)" in line)
    assert (Path(mine.file).name, mine.line) == ("seed.py", calls_k)
    assert not mine.stale
    assert exp.hints[0].name == "tuple-of-views"


def test_source_edited_after_the_ir_is_flagged(tmp_path, model_files):
    _lib, model = model_files
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=f'loc("{model}":3:0)', and_loc=f'loc("{model}":3:0)'))
    model.touch()
    import os
    os.utime(ir, (0, 1))  # the IR is older than the model file
    [exp] = explain_file(ir, LINALG).explanations
    assert exp.frames[0].stale
    assert "edited since the IR was written" in "\n".join(explain_file(ir, LINALG).render())


def test_crash_gets_its_signature_and_related_idioms():
    result = explain_file(CRASHERS / "F_view_zero_numel.mlir", LINALG)
    assert result.record.crash is not None
    assert "ConvertAtenViewOp" in str(result.record.signature)
    assert [str(h.name) for h in result.crash_hints] == ["tuple-of-views"]
    text = "\n".join(result.render())
    assert "crash: " in text and "possibly related (seed idiom 'tuple-of-views'" in text


def _cli(*args):
    return harness("explain", *args, timeout=300)


def test_cli_exit_status_and_json(tmp_path):
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc="", and_loc=""))
    proc = _cli(str(ir), "--pipeline", "torch-to-linalg", "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "legalization-failure"
    assert data["errors"][0]["op"] == "torch.vtensor.literal"
    assert data["blockers"][0]["op"] == "torch.aten.__and__.Tensor"
    assert data["blockers"][0]["fixes"] == ["bitwise-and-or"]
    ok = tmp_path / "ok.mlir"
    ok.write_text("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
                  "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")
    proc = _cli(str(ok), "--pipeline", "torch-to-linalg")
    assert proc.returncode == 0 and proc.stdout.startswith("nothing to explain:"), proc.stdout
