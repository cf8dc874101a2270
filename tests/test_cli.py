"""The harness command line, run as a user runs it."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from harness import cli
from harness.compiler import binary as binary_module

ROOT = Path(__file__).resolve().parent.parent


def harness(*args, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


def test_opt_tiny_end_to_end(tmp_path):
    """``harness opt``: ``harness port opt`` with the walkthrough's defaults (both variants,
    TorchScript, 7 tokens, weights elided, numbers not checked)."""
    # --opt given: the printed follow-up commands must run that binary too (issue 18 item 8).
    real = binary_module.resolve().path
    proc = harness("opt", "--config", "tiny", "--out-dir", str(tmp_path), "--opt", real)
    assert proc.returncode == 1, proc.stderr  # the stock model fails: exit 1 without --strict
    out = proc.stdout
    # The stock model: the settings it was traced with, then its blocker with the Python line.
    assert "use_cache=False" in out and "return_dict=False" in out
    assert "stages: trace " in out and "torchscript-to-torch " in out
    # It names the blocker, not the literal the error names, and the fix.
    assert ("opt torchscript: fails at torch-to-linalg (legalization-failure): "
            "torch.aten.__and__.Tensor at transformers/masking_utils.py:54 has no lowering "
            "(fix: bitwise-and-or)") in out
    assert ("  blocker: torch.aten.__and__.Tensor (x2) at transformers/masking_utils.py:54, "
            "called from opt/modeling_opt.py:363") in out
    assert ("    the error names torch.vtensor.literal, left only because "
            "torch.aten.__and__.Tensor was not converted") in out
    assert "    lowering: no conversion pass of this pipeline lowers torch.aten.__and__.Tensor" in out
    assert "    fix: bitwise-and-or (torch-ir: aten.__and__.Tensor -> aten.bitwise_and.Tensor" in out
    assert "    hint (bool-and-mask): " in out
    assert f"  reproduce: {real} -pass-pipeline=" in out
    # The fixed model lowers; the signature is the linalg one.
    assert ("lowered to the linalg-on-tensors backend contract: func.func @forward(%arg0: "
            "tensor<1x7xi64>, %arg1: tensor<1x7xi64>) -> tensor<1x7x64xf32>") in out
    assert ("opt-fixed torchscript: lowers through torchscript-to-torch, torch-to-linalg "
            "(numbers not checked)") in out
    written = sorted(p.name for p in tmp_path.glob("opt-tiny-*/*/*.torch.mlir"))
    assert written == ["opt-fixed.torch.mlir", "opt.torch.mlir"]
    # Every printed next step carries --opt, and the explain step runs when pasted.
    steps = [line.strip() for line in out.splitlines() if "--pipeline torch-to-linalg" in line]
    assert len(steps) == 4 and all(step.endswith(f"--opt {shlex.quote(real)}")
                                   or f"--opt {shlex.quote(real)} " in step for step in steps), steps
    [explain] = [step for step in steps if " explain " in step]
    step = subprocess.run(shlex.split(explain), capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert step.returncode == 1, step.stderr
    assert "blocker: torch.aten.__and__.Tensor" in step.stdout
    assert "masking_utils.py:54" in step.stdout and "fix: bitwise-and-or" in step.stdout
    assert "convert-torch-to-linalg lowers the equivalent torch.aten.bitwise_and.Tensor" in step.stdout
    text = next(tmp_path.glob("opt-tiny-*/opt.torchscript/opt.torch.mlir")).read_text()
    assert "modeling_opt.py" in text            # debug locations are on
    # Weights are elided by default: literals keep their resource names, the blobs are dropped.
    assert "dense_resource<model.decoder.embed_tokens.weight>" in text
    assert "dialect_resources" not in text


def test_opt_torch_only_says_which_contract_it_reached(tmp_path, capsys):
    """The label comes from the last pipeline's declared output: stopping at the torch backend
    contract never claims linalg (it did, with a !torch.vtensor signature after it). The
    timeout given reaches the stages (the record says which)."""
    record = tmp_path / "opt.json"
    assert cli.main(["opt", "--config", "tiny", "--model", "fixed", "--torch-only", "--out",
                     str(tmp_path), "--timeout", "123", "--json", str(record)]) == 0
    stdout = capsys.readouterr().out
    assert ("lowered to the torch backend contract: func.func @forward(%arg0: !torch.vtensor<[1,7],si64>, "
            "%arg1: !torch.vtensor<[1,7],si64>) -> !torch.vtensor<[1,7,64],f32>") in stdout
    assert "linalg" not in stdout
    data = json.loads(record.read_text())
    assert data["options"]["timeout_s"] == 123 and data["options"]["torch_only"] is True
    [variant] = data["variants"]
    assert variant["variant"] == "fixed" and variant["ports"][0]["outcome"] == "lowered"


def test_opt_keep_weights_and_strict(tmp_path):
    # the stock model does not lower to linalg at the pinned versions
    assert cli.main(["opt", "--config", "tiny", "--model", "stock", "--keep-weights", "--strict",
                     "--out", str(tmp_path)]) == 1
    text = next(tmp_path.glob("opt-tiny-*/opt.torchscript/opt.torch.mlir")).read_text()
    assert "dialect_resources" in text and '"0x04000000' in text


def test_opt_bad_override_is_one_paragraph(capsys):
    assert cli.main(["opt", "--config", "tiny", "--set", "num_layers=2"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith("harness: error: bad config value num_layers=2 for model 'opt': "
                             "OPTConfig has no field 'num_layers'")
    assert "Traceback" not in stderr


def test_run_json_on_a_legalization_failure(tmp_path):
    ir = tmp_path / "bad.mlir"
    ir.write_text(
        'func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n'
        '  %0 = torch.operator "aten.nonexistent_op"(%arg0) : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>\n'
        '  return %0 : !torch.vtensor<[2],f32>\n}\n')
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--json")
    assert proc.returncode == 1
    record = json.loads(proc.stdout)
    assert record["outcome"] == "legalization-failure"
    diag = record["diagnostics"][0]
    assert diag["line"] == 2 and "failed to legalize operation 'torch.operator'" in diag["message"]
    assert "aten.nonexistent_op" in diag["current_op"]


def test_run_missing_file_and_binary(tmp_path):
    proc = harness("run", str(tmp_path / "absent.mlir"), "--pipeline", "torch-to-linalg")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    ir = tmp_path / "x.mlir"
    ir.write_text("module {}\n")
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", env={"TORCH_MLIR_OPT": "/bin/true"})
    assert proc.returncode == 2 and "does not look like torch-mlir-opt" in proc.stderr
