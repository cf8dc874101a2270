"""The harness command line, run as a user runs it."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from harness import cli
from harness.compiler import builds as builds_module

from support import ROOT, harness


def test_opt_tiny_end_to_end(tmp_path):
    """``harness opt``: ``harness port opt`` with the walkthrough's defaults (both variants,
    TorchScript, 7 tokens, weights elided, numbers not checked)."""
    # --opt given: the printed follow-up commands must run that binary too.
    real = builds_module.resolve().path
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
    assert len(steps) == 5 and all(step.endswith(f"--opt {shlex.quote(real)}")
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


def test_opt_fix_shows_the_blocker_its_line_and_the_fix_then_ends_verified(tmp_path, capsys):
    """The README's first command: ``harness opt --fix`` exits 0 on a healthy install and still
    tells the story: stock OPT's blocker, its Python line and the fix kept, then the numbers
    checked against eager (verified)."""
    assert cli.main(["opt", "--config", "tiny", "--model", "stock", "--fix", "--out",
                     str(tmp_path)]) == 0
    out = capsys.readouterr().out
    story = out[out.index("== what --fix answered ==\n"):].splitlines()
    assert story[1] == ("opt torchscript: torch.aten.__and__.Tensor at transformers/masking_utils.py:54 "
                        "stopped torch-to-linalg")
    assert story[2].startswith("    >    54 |") and "result = result & mask(" in story[2]
    assert story[3].startswith("  fix kept: bitwise-and-or (torch-ir: aten.__and__.Tensor -> "
                               "aten.bitwise_and.Tensor")
    assert story[5] == "== result =="
    assert story[6].startswith("opt torchscript: verified on 2 input sets (max abs diff ")


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
        '  %0 = torch.operator "aten.nonexistent_op"(%arg0) : (!torch.vtensor<[2],f32>)'
        ' -> !torch.vtensor<[2],f32>\n'
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


def _loud_opt(tmp_path: Path, body: str) -> str:
    """A stand-in binary that passes the identity check, reads its input fine without a
    pipeline (the runner's validity check), and with one prints ``body``'s output and fails."""
    script = tmp_path / "loud-torch-mlir-opt"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        'case "$*" in *-pass-pipeline=*) ;; *) exit 0;; esac\n' + body + "exit 1\n")
    script.chmod(0o755)
    return str(script)


def test_run_prints_the_first_lines_of_200000_diagnostics(tmp_path):
    ir = tmp_path / "x.mlir"
    ir.write_text("module {}\n")
    opt = _loud_opt(tmp_path, "yes 'x.mlir:2:8: error: failed to legalize operation' | head -n 200000 >&2\n")
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", opt)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) < 210 and len(proc.stdout) < 100_000
    assert lines[1] == "x.mlir:2:8: error: failed to legalize operation"
    hidden = 200_000 + 1 - 200  # the diagnostics and the signature line, less those shown
    assert f"... {hidden:,} more lines (all of them in --json)" in lines
    assert lines[-1].startswith("reproduce: ")
    # --json has them all (2,000 here: 200,000 take the JSON encoder seconds).
    opt = _loud_opt(tmp_path, "yes 'x.mlir:2:8: error: failed to legalize operation' | head -n 2000 >&2\n")
    record = json.loads(harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", opt,
                                "--json").stdout)
    assert len(record["diagnostics"]) == 2000


def test_run_cuts_10_mb_of_stderr(tmp_path):
    ir = tmp_path / "x.mlir"
    ir.write_text("module {}\n")
    opt = _loud_opt(tmp_path, "head -c 10000000 /dev/zero | tr '\\0' a >&2\n")
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", opt)
    assert proc.returncode == 1 and len(proc.stdout) < 10_000
    assert "a" * 2000 + " ... (9,998,000 more characters)" in proc.stdout


def test_run_output_errors_exit_2_before_running(tmp_path):
    ir = tmp_path / "x.mlir"
    ir.write_text("func.func @f() {\n  return\n}\n")
    for output, says in ((tmp_path, "is a folder"), ("/dev/full", "No space left on device")):
        proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "-o", str(output))
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.startswith("harness: error: ") and says in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_run_timeout_covers_a_binary_that_hangs_on_version(tmp_path):
    ir = tmp_path / "x.mlir"
    ir.write_text("module {}\n")
    opt = tmp_path / "hangs"
    opt.write_text("#!/bin/sh\nexec sleep 1000\n")
    opt.chmod(0o755)
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", str(opt),
                   "--timeout", "2", timeout=30)
    assert proc.returncode == 2 and "did not answer --version within 2 s" in proc.stderr
