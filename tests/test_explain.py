"""``harness explain`` on real failures of the pinned torch-mlir-opt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compiler import pipelines
from harness.emit import emit
from harness.models import seed
from harness.tools.explain import explain_file

ROOT = Path(__file__).resolve().parent.parent
CRASHERS = ROOT / "tests" / "data" / "crashers"
LINALG = pipelines.default().get("torch-to-linalg").textual()
TORCHSCRIPT = pipelines.default().get("torchscript-to-torch").textual()

BOOL_MASK_IR = """\
func.func @forward(%arg0: !torch.vtensor<[1,1,7,7],i1>) -> !torch.vtensor<[1,1,7,7],i1> {{
  %0 = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> {loc}
  %1 = torch.aten.__and__.Tensor %0, %arg0 : !torch.vtensor<[],i1>, !torch.vtensor<[1,1,7,7],i1> -> !torch.vtensor<[1,1,7,7],i1>
  return %1 : !torch.vtensor<[1,1,7,7],i1>
}}
"""


@pytest.fixture
def model_files(tmp_path):
    """A "library" file under site-packages/ and the user's model that calls it."""
    lib = tmp_path / "site-packages" / "masks.py"
    lib.parent.mkdir()
    lib.write_text("def and_mask(q):\n    ones = q.new_ones((), dtype=bool)\n    return ones\n")
    model = tmp_path / "model.py"
    model.write_text("import masks\n\nmask = masks.and_mask(q)  # the user's line\n")
    return lib, model


def test_bool_literal_maps_to_the_users_line_with_a_hint(tmp_path, model_files):
    lib, model = model_files
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=f'loc(callsite("{lib}":2:4 at "{model}":3:0))'))
    result = explain_file(ir, LINALG)
    assert not result.record.ok
    [exp] = result.explanations
    assert exp.op == "torch.vtensor.literal"
    assert [(Path(f.file).name, f.line, f.library) for f in exp.frames] == [
        ("masks.py", 2, True), ("model.py", 3, False)]
    assert exp.user_frame().file == str(model)
    assert exp.user_frame().lines[2] == ">     3 | mask = masks.and_mask(q)  # the user's line"
    assert exp.hints[0].name == "bool-literal-mask"
    text = "\n".join(result.render())
    assert f"called from {model}:3:0 (your code)" in text
    assert "hint (known idiom 'bool-literal-mask'" in text
    assert "reproduce: torch-mlir-opt -pass-pipeline=" in text


def test_ir_without_python_locations_says_so(tmp_path):
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=""))
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
    lib, model = model_files
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=f'loc("{model}":3:0)'))
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
    assert [h.name for h in result.crash_hints] == ["tuple-of-views"]
    text = "\n".join(result.render())
    assert "crash: " in text and "possibly related (seed idiom 'tuple-of-views'" in text


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "harness", "explain", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_cli_exit_status_and_json(tmp_path):
    ir = tmp_path / "mask.mlir"
    ir.write_text(BOOL_MASK_IR.format(loc=""))
    proc = _cli(str(ir), "--pipeline", "torch-to-linalg", "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "legalization-failure"
    assert data["errors"][0]["op"] == "torch.vtensor.literal"
    ok = tmp_path / "ok.mlir"
    ok.write_text("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
                  "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")
    proc = _cli(str(ok), "--pipeline", "torch-to-linalg")
    assert proc.returncode == 0 and proc.stdout.startswith("nothing to explain:"), proc.stdout
