"""Printed commands paste and run as shown, and nothing else: pipelines that
torch-mlir-opt cannot take as one ``-pass-pipeline`` value or a pass-flag list are refused
before any run; every printed word is shell-quoted."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from harness.compiler.pipeline_text import check_pipeline
from harness.compiler.pipelines import default as default_pipelines
from harness.compiler.runner import RunOptions, repro_command, run_pipeline
from harness.errors import PipelineConfigError
from harness.port.diagnose import harness_command
from harness.diagnose.numerics.result import ChainOp, NumericsBisectResult, FunctionVerdict

from support import CRASHERS, harness

CRASHER = CRASHERS / "A_remainder_int_by_zero.mlir"  # SIGFPE in -canonicalize
OK_IR = "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"

INJECTIONS = ["-canonicalize | touch {m}", "-canonicalize && touch {m}", "-canonicalize ; touch {m}",
              "-canonicalize\ntouch {m}", "-canonicalize `touch {m}`",
              "builtin.module(canonicalize) && touch {m}",
              "builtin.module(canonicalize)\n-cse", "-canonicalize 'unclosed"]


@pytest.mark.parametrize("pipeline", INJECTIONS)
def test_run_refuses_a_pipeline_with_shell_code_before_any_run(tmp_path, pipeline):
    # Was: split into argv, "Too many positional arguments" counted as a pass failure (exit 1),
    # and the printed reproduce line ran `touch` when pasted.
    marker = tmp_path / "PWNED"
    ir = tmp_path / "ok.mlir"
    ir.write_text(OK_IR)
    proc = harness("run", str(ir), "--pipeline=" + pipeline.format(m=marker), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and "reproduce" not in proc.stderr
    error = proc.stderr.strip()
    assert error.startswith("harness: error: ") and "\n" not in error, error
    assert any(w in error for w in ("Write it", "Give only", "Balance"))  # says what to do
    assert not marker.exists()


@pytest.mark.parametrize("pipeline", ["-canonicalize x.mlir", "-canonicalize -", "-canonicalize --",
                                      "-canonicalize\t-cse", "-canonicalize \x1b[2J"])
def test_check_pipeline_refuses_what_is_not_one_flag_list(pipeline):
    with pytest.raises(PipelineConfigError):
        check_pipeline(pipeline)
    with pytest.raises(PipelineConfigError):
        default_pipelines().resolve(pipeline)


@pytest.mark.parametrize("pipeline", ["-canonicalize -cse",
                                      "--canonicalize='max-iterations=3 top-down=false'",
                                      "builtin.module(func.func(canonicalize{max-iterations=3}),cse)",
                                      "  -canonicalize  ", "-pass-pipeline=builtin.module(cse)"])
def test_check_pipeline_keeps_what_torch_mlir_opt_takes(pipeline):
    assert check_pipeline(pipeline) == pipeline


def test_run_pipeline_refuses_before_running(tmp_path):
    # The library entry point too: no process is started for a pipeline with a second input.
    ir = tmp_path / "ok.mlir"
    ir.write_text(OK_IR)
    with pytest.raises(PipelineConfigError):
        run_pipeline(ir, "-canonicalize /etc/passwd", options=RunOptions(timeout_s=30))


def test_pasted_reproduce_line_runs_the_same_crash_and_nothing_else(tmp_path):
    # A flag whose value holds shell code ("$(...)" in double quotes): the reproduce line printed
    # the flags as typed, so pasting it ran `touch`.
    marker = tmp_path / "PWNED"
    pipeline = '-canonicalize --mlir-pass-pipeline-crash-reproducer="$(touch PWNED)"'
    proc = harness("run", str(CRASHER), "--pipeline=" + pipeline, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("reproduce: "))
    assert not marker.exists()
    pasted = subprocess.run(["bash", "-c", line.removeprefix("reproduce: ")], capture_output=True,
                            text=True, cwd=tmp_path, timeout=120)
    assert not marker.exists(), line
    # The same run: the crash, caught by the reproducer flag whose value reached the binary as given.
    assert pasted.returncode == 1 and "reproducer generated at `$(touch PWNED)`" in pasted.stderr, \
        pasted.stderr[-2000:]
    assert (tmp_path / "$(touch PWNED)").is_file()


def test_repro_command_quotes_every_word():
    odd = "/tmp/a b/$(touch x)/it's.mlir"
    flags = repro_command("-canonicalize --mlir-print-op-generic", odd, "/opt/my build/torch-mlir-opt")
    assert shlex.split(flags) == ["/opt/my build/torch-mlir-opt", odd, "-canonicalize",
                                  "--mlir-print-op-generic"]
    textual = repro_command("builtin.module(canonicalize)", odd, "/opt/my build/torch-mlir-opt")
    assert shlex.split(textual) == ["/opt/my build/torch-mlir-opt",
                                    "-pass-pipeline=builtin.module(canonicalize)", odd]


def test_printed_harness_commands_split_back_to_their_words():
    odd = "/tmp/it's $(touch x)/in.mlir"
    line = harness_command("harness", ["explain", odd, "--pipeline", "torch-to-linalg"])
    assert shlex.split(line) == ["harness", "explain", odd, "--pipeline", "torch-to-linalg"]


def test_bisect_numerics_reproduce_line_quotes_the_inputs_path():
    # The inputs path was printed bare.
    odd = "/tmp/a b/$(touch x)"
    result = NumericsBisectResult(input_path=f"{odd}/in.mlir", pipeline="torch-to-linalg",
                                  verdict=FunctionVerdict.LOCALIZED,
                                  chain=[ChainOp(0, "aten.mm", [], wrong=True)],
                                  piece_path=f"{odd}/piece.mlir", piece_inputs=f"{odd}/piece.npz",
                                  piece_expected=f"{odd}/expected.npz")
    line = next(ln for ln in result.render() if "reproduce: " in ln).split("reproduce: ", 1)[1]
    assert shlex.split(line) == ["harness", "check", f"{odd}/piece.mlir", "--pipeline",
                                 "torch-to-linalg", "--inputs", f"{odd}/piece.npz"]


def test_the_command_in_a_binary_error_pastes(tmp_path):
    from harness.compiler.builds import locate
    from harness.errors import BinaryError

    opt = tmp_path / "it's a $(dir)" / "torch-mlir-opt"
    opt.parent.mkdir()
    opt.write_text("#!/bin/sh\n")  # not executable
    with pytest.raises(BinaryError) as info:
        locate(str(opt))
    assert shlex.join(["chmod", "+x", str(opt)]) in str(info.value)


def test_the_command_in_a_lit_error_pastes(tmp_path):
    from harness.errors import UsageError
    from harness.diagnose.diff_targets import run_lit

    suite = tmp_path / "a suite; touch x"
    suite.mkdir()
    (suite / "lit.cfg.py").write_text("raise SystemExit(3)\n")
    with pytest.raises(UsageError) as info:
        run_lit(str(suite), "/opt/my build/torch-mlir-opt")
    assert shlex.join(["lit", str(suite), "--param", "opt=/opt/my build/torch-mlir-opt"]) in str(info.value)
