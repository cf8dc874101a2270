"""The runner: outcome classification, timeouts, pipelines, and bad inputs, on the real binary."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from harness.compiler.builds import resolve
from harness.compiler.pipeline_text import PassRef, parse_pipeline
from harness.compiler.records import Outcome, render_record
from harness.compiler.runner import (
    RunOptions,
    build_command,
    count_file_ops,
    repro_command,
    run_pipeline,
    single_pass,
)
from harness.errors import (
    BinaryError,
    HarnessError,
    InputFileError,
    OutputError,
    PipelineConfigError,
)

from support import CRASHERS
from support.processes import processes_mentioning

LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


NONZERO = """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64>
  return %0 : !torch.vtensor<[?,1],si64>
}
"""


# ---------------------------------------------------------------------------------------------
# Outcomes

def test_success(tmp_path):
    ir = write(tmp_path, "ok.mlir",
               "func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
               "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")
    out = tmp_path / "out.mlir"
    record = run_pipeline(ir, LINALG, options=RunOptions(output_path=str(out)))
    assert record.ok and str(record.signature) == "success" and record.crash is None
    assert "func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32>" in out.read_text()


def test_legalization_failure(tmp_path):
    record = run_pipeline(write(tmp_path, "nz.mlir", NONZERO), LINALG)
    assert record.outcome is Outcome.LEGALIZATION_FAILURE and record.returncode == 1
    assert record.crash is None and record.signal == ""
    assert record.first_error().line == 2
    # The op left, not its operands or types: what reduce must keep.
    assert str(record.signature) == "legalization-failure: failed to legalize operation 'torch.aten.nonzero'"


def test_parse_errors(tmp_path):
    for text, message in [("garbage\n", "custom op 'garbage' is unknown"),
                          ("func.func @f( {\n", "expected non-function type"),
                          ("func.func @f() { return %x : i32 }\n", "use of undeclared SSA value name")]:
        record = run_pipeline(write(tmp_path, "bad.mlir", text), LINALG)
        assert record.outcome is Outcome.PARSE_ERROR, (text, record.stderr)
        assert message in record.first_error().message


def test_a_type_the_parser_rejects_is_a_parse_error(tmp_path):
    # Found by the property test on mutated crashers: the parser's wording ("invalid size -2 for
    # !torch.tensor type") is on no list, and the run was recorded as a pass failure. Whether the
    # input fails before any pass is now asked of torch-mlir-opt.
    neg = write(tmp_path, "neg.mlir",
                "func.func @f() -> !torch.vtensor<[-2],si64> {\n"
                "  %0 = torch.vtensor.literal(dense<1> : tensor<2xsi64>) : !torch.vtensor<[2],si64>\n"
                "  return %0 : !torch.vtensor<[2],si64>\n}\n")
    record = run_pipeline(neg, "-canonicalize")
    assert record.outcome is Outcome.PARSE_ERROR
    assert record.first_error().message == "invalid size -2 for !torch.tensor type"


def test_verifier_error_while_parsing(tmp_path):
    record = run_pipeline(write(tmp_path, "v.mlir", "func.func @f() -> i32 {\n  return\n}\n"), LINALG)
    assert record.outcome is Outcome.VERIFIER_ERROR
    assert str(record.signature) == ("verifier-error: 'func.return' op has 0 operands, but enclosing "
                                "function (@f) returns 1")


def test_pass_failure(tmp_path):
    # A non-value tensor is not the torch backend contract: the pass reports it and fails.
    ir = write(tmp_path, "nv.mlir", "func.func @f(%arg0: !torch.tensor) -> !torch.tensor {\n"
                                    "  return %arg0 : !torch.tensor\n}\n")
    record = run_pipeline(ir, "builtin.module(torch-verify-backend-contract-no-decompositions)")
    assert record.outcome is Outcome.PASS_FAILURE, record.stderr
    assert str(record.signature) == "pass-failure: unsupported by backend contract: non-value tensor type"
    assert "MaximizeValueSemantics" in record.first_error().notes[-1].message


def test_contract_check_reports_left_ops_as_legalization(tmp_path):
    ir = write(tmp_path, "t.mlir", NONZERO)
    record = run_pipeline(ir, "builtin.module(torch-verify-linalg-on-tensors-backend-contract)")
    assert record.outcome is Outcome.LEGALIZATION_FAILURE
    assert str(record.signature) == "legalization-failure: failed to legalize operation 'func.func'"


def test_crash_classification_and_threading_default():
    record = run_pipeline(CRASHERS / "E_unflatten_zero_size.mlir", "-torch-decompose-complex-ops")
    assert record.outcome is Outcome.CRASH and record.signal == "SIGFPE"
    assert record.command.count("-mlir-disable-threading") == 1
    assert record.crash.pass_name == "DecomposeComplexOps"
    again = run_pipeline(CRASHERS / "E_unflatten_zero_size.mlir", "-torch-decompose-complex-ops",
                         options=RunOptions(extra_args=("-mlir-disable-threading",)))
    assert again.command.count("-mlir-disable-threading") == 1 and again.signature == record.signature
    threaded = build_command("opt", LINALG, "x.mlir", RunOptions(disable_threading=False))
    assert "-mlir-disable-threading" not in threaded


def test_timeout_kills_the_hung_run_and_keeps_where_it_was():
    start = time.monotonic()
    record = run_pipeline(CRASHERS / "P_softmax_dim_oob_HANG.mlir", "-torch-decompose-complex-ops",
                          options=RunOptions(timeout_s=0.5))
    assert time.monotonic() - start < 15
    assert record.outcome is Outcome.TIMEOUT and record.returncode == -signal.SIGABRT
    assert record.signal == ""                       # the harness sent it, the compiler did not
    assert record.crash is not None and record.crash.at_timeout
    assert record.crash.pass_name == "DecomposeComplexOps"
    assert str(record.signature) == "timeout: hang in DecomposeComplexOps"


def test_timeout_kills_the_whole_process_group(tmp_path):
    # The wheel's Python wrapper runs the real binary as its child: both must go.
    wrapper = Path(sys.executable).with_name("torch-mlir-opt")
    if not wrapper.is_file():
        pytest.skip("no bin/torch-mlir-opt wrapper in this venv")
    hang = write(tmp_path, "hang-unique-name.mlir", (CRASHERS / "P_softmax_dim_oob_HANG.mlir").read_text())
    record = run_pipeline(hang, "-torch-decompose-complex-ops", opt=str(wrapper),
                          options=RunOptions(timeout_s=1.5, dump_on_timeout=False))
    assert record.outcome is Outcome.TIMEOUT and record.crash is None
    time.sleep(0.2)
    assert processes_mentioning(str(hang)) == []


# ---------------------------------------------------------------------------------------------
# Pipelines

def test_parse_pipeline_textual_and_dumped():
    passes = parse_pipeline("builtin.module(func.func(cse, canonicalize{max-iterations=3  top-down=true}),"
                            "torch-func-backend-type-conversion)")
    assert passes == [PassRef("cse", "", ("builtin.module", "func.func")),
                      PassRef("canonicalize", "max-iterations=3 top-down=true",
                              ("builtin.module", "func.func")),
                      PassRef("torch-func-backend-type-conversion", "", ("builtin.module",))]
    assert passes[1].textual() == "builtin.module(func.func(canonicalize{max-iterations=3 top-down=true}))"
    dumped = parse_pipeline("Pass Manager with 2 passes:\nbuiltin.module(\n  func.func(\n    cse\n  ),\n"
                            "  torch-verify-linalg-on-tensors-backend-contract\n)\n")
    assert [str(p.name) for p in dumped] == ["cse", "torch-verify-linalg-on-tensors-backend-contract"]
    with pytest.raises(PipelineConfigError, match="is not closed"):
        parse_pipeline("builtin.module(func.func(cse)")


def test_single_pass():
    assert single_pass("builtin.module(func.func(canonicalize{a=1}))") == "canonicalize"
    assert single_pass("-canonicalize") == "canonicalize"
    assert single_pass("builtin.module(cse,canonicalize)") == ""
    assert single_pass(LINALG) == ""               # a registered pipeline, not one pass


@pytest.mark.parametrize("pipeline, says", [
    ("builtin.module(nosuchpass)", "'nosuchpass' does not refer to a registered pass"),
    ("builtin.module(canonicalize{bogus=1})", "no such option bogus"),
    ("builtin.module(convert-torch-to-linalg)", "did you intend to nest?"),
    ("-no-such-flag", "Unknown command line argument '-no-such-flag'"),
])
def test_rejected_pipeline_is_a_config_error(tmp_path, pipeline, says):
    ir = write(tmp_path, "nz.mlir", NONZERO)
    with pytest.raises(PipelineConfigError) as info:
        run_pipeline(ir, pipeline)
    message = str(info.value)
    assert says in message and pipeline in message and "\n" not in message


# ---------------------------------------------------------------------------------------------
# Bad input: one-paragraph HarnessErrors naming the input

def _one_paragraph(error: HarnessError, *mentions: str) -> None:
    text = str(error)
    assert "\n" not in text and text.endswith((".", ")"))
    for m in mentions:
        assert m in text


def test_missing_and_empty_input(tmp_path):
    with pytest.raises(InputFileError) as info:
        run_pipeline(tmp_path / "absent.mlir", LINALG)
    _one_paragraph(info.value, "absent.mlir", "does not exist")
    with pytest.raises(InputFileError) as info:
        run_pipeline(tmp_path, LINALG)
    _one_paragraph(info.value, "is not a file")
    with pytest.raises(InputFileError) as info:
        run_pipeline(write(tmp_path, "empty.mlir", ""), LINALG)
    _one_paragraph(info.value, "empty.mlir", "is empty")


def test_huge_input_is_refused_before_running(tmp_path):
    huge = tmp_path / "huge.mlir"
    with open(huge, "wb") as f:  # sparse: no disk used
        f.truncate(5 * 2**30)
    with pytest.raises(InputFileError) as info:
        run_pipeline(huge, LINALG)
    _one_paragraph(info.value, "huge.mlir", "5.0 GiB", "over the 4096 MiB limit", "bytecode")
    # The limit is an option (0 = none). Past it torch-mlir-opt would parse 5 GiB of NUL bytes
    # for ~40 s and report success on an empty module.
    padded = write(tmp_path, "padded.mlir", NONZERO + "\n" + "// padding\n" * 200_000)
    with pytest.raises(InputFileError, match="over the 1 MiB limit"):
        run_pipeline(padded, LINALG, options=RunOptions(max_input_mb=1))
    assert not run_pipeline(padded, LINALG, options=RunOptions(max_input_mb=0)).ok


def test_bad_binaries(tmp_path):
    ir = write(tmp_path, "nz.mlir", NONZERO)
    with pytest.raises(BinaryError) as info:
        run_pipeline(ir, LINALG, opt=str(tmp_path / "nope"))
    _one_paragraph(info.value, "nope", "does not exist")
    plain = write(tmp_path, "not-executable", "#!/bin/sh\n")
    with pytest.raises(BinaryError) as info:
        run_pipeline(ir, LINALG, opt=str(plain))
    _one_paragraph(info.value, "not-executable", "not an executable file")
    with pytest.raises(BinaryError) as info:
        run_pipeline(ir, LINALG, opt="/bin/true")
    _one_paragraph(info.value, "/bin/true", "does not look like torch-mlir-opt")
    script = write(tmp_path, "fake-opt", "#!/bin/sh\necho 'LLVM version 99'\n")
    script.chmod(0o755)
    with pytest.raises(BinaryError) as info:
        run_pipeline(ir, LINALG, opt=str(script))
    _one_paragraph(info.value, "fake-opt", "without the torch dialect")


def test_the_real_binary_is_release():
    exe = resolve()
    assert exe.optimized and not exe.assertions and exe.path.endswith("_mlir_libs/torch-mlir-opt")


def _fake_opt(tmp_path: Path, body: str) -> str:
    """A stand-in binary that passes the identity check and then does ``body``."""
    script = write(tmp_path, "fake-torch-mlir-opt", (
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        + body))
    script.chmod(0o755)
    return str(script)


def test_non_utf8_stderr_is_read_not_raised(tmp_path):
    # It fails only when given a pipeline: without one (the runner's check that the input is
    # valid) it reads the input fine, so the failure is the pipeline's.
    opt = _fake_opt(tmp_path, 'case "$*" in *-pass-pipeline=*) '
                              "printf 'x.mlir:3:1: error: bad \\377\\376 name\\n' >&2; exit 1;; esac\n")
    record = run_pipeline(write(tmp_path, "nz.mlir", NONZERO), LINALG, opt=opt)
    assert record.outcome is Outcome.PASS_FAILURE
    assert record.first_error().line == 3 and record.first_error().message == "bad \ufffd\ufffd name"


def test_signal_without_any_output_is_a_crash_without_frames(tmp_path):
    # What a SIGKILL from the OOM killer, or a crash on a worker thread, leaves: a status only.
    opt = _fake_opt(tmp_path, "kill -SEGV $$\n")
    record = run_pipeline(write(tmp_path, "nz.mlir", NONZERO), LINALG, opt=opt)
    assert record.outcome is Outcome.CRASH and record.stderr == ""
    assert record.crash.signal == "SIGSEGV" and not record.crash.has_stack_dump
    assert record.crash.frames == [] and record.crash.top_frame() is None
    assert str(record.signature) == "crash: SIGSEGV"
    assert any("no 'Stack dump:' was printed" in line for line in render_record(record))


# ---------------------------------------------------------------------------------------------
# The output place, file names that look like options, and a binary that hangs

OK_IR = "func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n" \
        "  return %arg0 : !torch.vtensor<[2],f32>\n}\n"


@pytest.mark.parametrize("output, says", [
    ("{tmp}/a-file/out.mlir", "a-file is a file"),   # torch-mlir-opt said so as a pass failure
    ("/sys/harness-out.mlir", "Permission denied"),  # unwritable even for root
    ("{tmp}", "is a folder"),
    ("/dev/full", "No space left on device"),        # a full disk: was an LLVM ERROR "crash"
])
def test_an_unwritable_output_is_an_output_error_not_an_outcome(tmp_path, output, says):
    write(tmp_path, "a-file", "")
    ir = write(tmp_path, "ok.mlir", OK_IR)
    with pytest.raises(OutputError) as info:
        run_pipeline(ir, LINALG, options=RunOptions(output_path=output.format(tmp=tmp_path)))
    _one_paragraph(info.value, says, "(-o)")


def test_a_missing_output_folder_is_created(tmp_path):
    out = tmp_path / "new" / "deeper" / "out.mlir"
    record = run_pipeline(write(tmp_path, "ok.mlir", OK_IR), LINALG,
                          options=RunOptions(output_path=str(out)))
    assert record.ok and "tensor<2xf32>" in out.read_text()


@pytest.mark.parametrize("name", ["-o.mlir", "--version.mlir", "-"])
def test_file_names_that_look_like_options_are_read_as_files(tmp_path, monkeypatch, name):
    # They reached torch-mlir-opt as options ("-o.mlir": an output file; "--version.mlir": an
    # unknown option blamed on the pipeline; "-": stdin).
    monkeypatch.chdir(tmp_path)
    write(tmp_path, name, NONZERO)
    record = run_pipeline(name, LINALG, options=RunOptions(output_path=f"-{name}.out"))
    assert record.outcome is Outcome.LEGALIZATION_FAILURE, record.stderr
    assert f"./{name}" in record.command and f"./-{name}.out" in record.command
    assert repro_command(LINALG, name).endswith(f" ./{name}")
    ok = write(tmp_path, "ok.mlir", OK_IR)
    assert run_pipeline(ok, LINALG, options=RunOptions(output_path=f"-{name}.out")).ok
    assert "tensor<2xf32>" in (tmp_path / f"-{name}.out").read_text()


def test_a_binary_that_hangs_on_version_is_given_up_within_the_timeout(tmp_path):
    # Identifying the binary waited 60 s whatever --timeout said; and subprocess.run left a
    # wrapper's children (the sleep below) running.
    marker = "1000.0" + str(time.monotonic_ns())[-6:]
    opt = write(tmp_path, "hangs-on-version", f"#!/bin/sh\nsleep {marker}\n")
    opt.chmod(0o755)
    start = time.monotonic()
    with pytest.raises(BinaryError) as info:
        run_pipeline(write(tmp_path, "ok.mlir", OK_IR), LINALG, opt=str(opt),
                     options=RunOptions(timeout_s=1.0))
    assert time.monotonic() - start < 10
    _one_paragraph(info.value, "did not answer --version within 1 s", "--timeout")
    time.sleep(0.2)
    assert processes_mentioning(marker) == []


def test_count_file_ops_counts_every_nested_op_but_the_module(tmp_path):
    # func.func, 2 x torch.constant.int, the add, func.return; tm_tensor (which the bindings
    # cannot parse) in a second function: its op, its region's op and its terminator.
    # Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
    # where the string closes).
    path = write(tmp_path, "count.mlir", """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %0 = torch.aten.add.Tensor %arg0, %arg0, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
func.func @g(%a: tensor<4xf32>, %o: tensor<4xf32>, %c: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%a : tensor<4xf32>) outs(%o, %c : tensor<4xf32>, tensor<f32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    tm_tensor.yield %s : f32
  } -> tensor<4xf32>, tensor<f32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<f32>
}
""")  # noqa: E501
    assert count_file_ops(path) == 5 + 5


def test_count_file_ops_is_none_for_a_file_that_does_not_parse(tmp_path):
    assert count_file_ops(write(tmp_path, "bad.mlir", "func.func @f( {\n")) is None
