"""Crash capture: the stack-dump parser on printed text, and on real crashes of the pinned binary.

The real-binary tests run tests/data/crashers/*.mlir (each crashes the wheel's torch-mlir-opt
with the pass its README names); nothing here fakes the binary's output. The hand-written text
is in the format an assertions build prints, which the release binary cannot produce.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.compiler import symbolize as symbolize_module
from harness.compiler.builds import resolve
from harness.compiler.crash import (
    Frame,
    canonical_pass_name,
    decode_exit_status,
    function_name,
    parse_crash,
    parse_frames,
)
from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import RunOptions, run_pipeline
from harness.compiler.symbolize import symbolize

from support import CRASHERS, harness


# ---------------------------------------------------------------------------------------------
# Names

@pytest.mark.parametrize("demangled, name", [
    ("(anonymous namespace)::Canonicalizer::runOnOperation()",
     "(anonymous namespace)::Canonicalizer::runOnOperation"),
    ("mlir::Type::getContext() const", "mlir::Type::getContext"),
    ("report_size_overflow(unsigned long, unsigned long) (.constprop.0)", "report_size_overflow"),
    ("decltype(auto) llvm::cast<mlir::RankedTensorType, mlir::Type>(mlir::Type const&)",
     "llvm::cast<mlir::RankedTensorType, mlir::Type>"),
    ("llvm::LogicalResult llvm::function_ref<llvm::LogicalResult (int)>::callback_fn<X>(long, int)",
     "llvm::function_ref<llvm::LogicalResult (int)>::callback_fn<X>"),
    (("std::_Function_handler<long (long, long), mlir::torch::Torch::AtenRemainderIntOp::fold("
      "mlir::torch::Torch::AtenRemainderIntOpGenericAdaptor<llvm::ArrayRef<mlir::Attribute> >)"
      "::'lambda'(long, long)>::_M_invoke(std::_Any_data const&, long&&, long&&)"),
     ("std::_Function_handler<long (long, long), mlir::torch::Torch::AtenRemainderIntOp::fold"
      "::'lambda'>::_M_invoke")),
    ("foo::Bar::operator()(int) const", "foo::Bar::operator()"),
    ("main", "main"),
])
def test_function_name_drops_return_type_parameters_and_suffixes(demangled, name):
    assert function_name(demangled) == name


def test_pass_names_from_notes_frames_and_lines_meet():
    # MLIR's reproducer note prints getName(); the stack has the class.
    assert canonical_pass_name("CanonicalizerPass") == canonical_pass_name("Canonicalizer") == "Canonicalizer"
    assert canonical_pass_name("mlir::torch::Torch::(anonymous namespace)::DecomposeComplexOpsPass") \
        == canonical_pass_name("DecomposeComplexOps")
    assert canonical_pass_name("ConvertTorchToLinalg") == "ConvertTorchToLinalg"


@pytest.mark.parametrize("status, stderr, expected", [
    (-11, "", "SIGSEGV"),
    (-8, "", "SIGFPE"),
    (245, "Stack dump:\n", "SIGSEGV"),      # the wheel's Python wrapper: 256 - 11
    (248, "PLEASE submit a bug report", "SIGFPE"),
    (250, "LLVM ERROR: x\n", "SIGABRT"),
    (139, "Stack dump:\n", "SIGSEGV"),      # a shell wrapper: 128 + 11
    (245, "error: something\n", ""),        # without crash output it is an ordinary status
    (1, "Stack dump:\n", ""),
    (0, "", ""),
    (None, "", ""),
])
def test_exit_status_decoding(status, stderr, expected):
    assert decode_exit_status(status, stderr) == expected


# ---------------------------------------------------------------------------------------------
# The parser on printed text

# What an assertions build of torch-mlir-opt prints for the 2022 view crash (walkthrough):
# glibc's assertion line, the banner, LLVM's pretty stack with a "Running pass" entry, frames
# symbolized with DWARF line numbers.
# The crash text below is torch-mlir-opt's stderr verbatim, so its long lines stay (noqa: E501
# where the string closes).
ASSERTIONS_BUILD_STDERR = """\
torch-mlir-opt: /src/llvm-project/llvm/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(const From &) [To = mlir::RankedTensorType, From = mlir::Type]: Assertion `isa<To>(Val) && "cast<Ty>() argument of incompatible type!"' failed.
PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.
Stack dump:
0.\tProgram arguments: build/bin/torch-mlir-opt view.mlir -pass-pipeline=builtin.module(func.func(convert-torch-to-linalg))
1.\tRunning pass 'ConvertTorchToLinalg' on operation 'func.func' @forward
 #0 0x000055d0c1a0545a llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) /src/llvm-project/llvm/lib/Support/Unix/Signals.inc:723:13
 #1 0x000055d0c1a024c6 llvm::sys::RunSignalHandlers() /src/llvm-project/llvm/lib/Support/Signals.cpp:106:18
 #2 0x000055d0c1a024c6 SignalHandler(int, siginfo_t*, void*) /src/llvm-project/llvm/lib/Support/Unix/Signals.inc:413:1
 #3 0x00007f02f1f7a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)
 #4 0x00007f02f1f88eec __pthread_kill_implementation ./nptl/pthread_kill.c:44:76
 #5 0x00007f02f1f39fb2 raise ./signal/../sysdeps/posix/raise.c:27:6
 #6 0x00007f02f1f24472 abort ./stdlib/abort.c:81:7
 #7 0x00007f02f1f24395 _nl_load_domain ./intl/loadmsgcat.c:1177:9
 #8 0x00007f02f1f32eb2 (/lib/x86_64-linux-gnu/libc.so.6+0x32eb2)
 #9 0x000055d0c0887aa1 decltype(auto) llvm::cast<mlir::RankedTensorType, mlir::Type>(mlir::Type const&) /src/llvm-project/llvm/include/llvm/Support/Casting.h:566:3
#10 0x000055d0c088726a (anonymous namespace)::ConvertAtenViewOp::matchAndRewrite(mlir::torch::Torch::AtenViewOp, mlir::torch::Torch::AtenViewOpAdaptor, mlir::ConversionPatternRewriter&) const /src/torch-mlir/lib/Conversion/TorchToLinalg/DataMovement.cpp:103:20
#11 0x000055d0c086fcb1 mlir::OpConversionPattern<mlir::torch::Torch::AtenViewOp>::matchAndRewrite(mlir::Operation*, llvm::ArrayRef<mlir::ValueRange>, mlir::ConversionPatternRewriter&) const /src/llvm-project/mlir/include/mlir/Transforms/DialectConversion.h:545:12
#12 0x000055d0c082d2f6 mlir::torch::(anonymous namespace)::ConvertTorchToLinalg::runOnOperation() /src/torch-mlir/lib/Conversion/TorchToLinalg/TorchToLinalg.cpp:94:16
#13 0x000055d0c14ec1b2 mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, unsigned int) /src/llvm-project/mlir/lib/Pass/Pass.cpp:535:17
"""  # noqa: E501


def test_assertions_build_dump():
    info = parse_crash(ASSERTIONS_BUILD_STDERR, returncode=-6)
    assert info is not None and info.outcome is Outcome.ASSERTION and info.signal == "SIGABRT"
    a = info.assertion
    assert a.condition == 'isa<To>(Val) && "cast<Ty>() argument of incompatible type!"'
    assert a.file == "/src/llvm-project/llvm/include/llvm/Support/Casting.h" and a.line == 566
    assert a.function.startswith("decltype(auto) llvm::cast(const From &)")
    assert info.program_arguments.startswith("build/bin/torch-mlir-opt view.mlir")
    assert info.running_passes == ["ConvertTorchToLinalg"]
    assert info.pass_name == "ConvertTorchToLinalg" and str(info.pass_source) == "running-pass-line"
    assert [f.index for f in info.frames] == list(range(14))
    view = info.frames[10]
    assert view.file == "/src/torch-mlir/lib/Conversion/TorchToLinalg/DataMovement.cpp"
    assert (view.line, view.column) == (103, 20)
    assert view.name == "(anonymous namespace)::ConvertAtenViewOp::matchAndRewrite"
    assert info.frames[3].module == "/lib/x86_64-linux-gnu/libc.so.6" and info.frames[3].offset == 0x3c050
    # Below the handler: past abort and glibc's assertion helpers; the top frame skips llvm::cast.
    assert info.below_handler()[0].name == "llvm::cast<mlir::RankedTensorType, mlir::Type>"
    assert info.top_frame() is view
    record = RunRecord(Outcome.ASSERTION, [], "p", "view.mlir", "opt", -6, 0.1, crash=info)
    assert str(record.signature) == ("assertion: `isa<To>(Val) && \"cast<Ty>() argument of incompatible "
                                "type!\"' in ConvertTorchToLinalg at "
                                "(anonymous namespace)::ConvertAtenViewOp::matchAndRewrite")


def test_unreachable_and_multiline_llvm_error():
    text = ("LLVM ERROR: Failed to infer result type(s):\n"
            "\"stablehlo.pad\"(...) {} : (tensor<2x3xf32>) -> ( ??? )\n"
            "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/\n")
    info = parse_crash(text, returncode=-6)
    assert info.fatal_error == ('Failed to infer result type(s):\n'
                                '"stablehlo.pad"(...) {} : (tensor<2x3xf32>) -> ( ??? )')
    assert not info.has_stack_dump and info.frames == []
    assert info.signature.summary == "SIGABRT: LLVM ERROR: Failed to infer result type(s):"
    info = parse_crash("unknown scalar type\nUNREACHABLE executed at /src/Foo.cpp:42!\n", returncode=-6)
    assert info.assertion.condition == "UNREACHABLE: unknown scalar type"
    assert (str(info.assertion.file), info.assertion.line) == ("/src/Foo.cpp", 42)


def test_no_crash_text_and_no_signal_is_no_crash():
    assert parse_crash("x.mlir:1:1: error: failed to legalize operation 'torch.foo'\n", returncode=1) is None


@pytest.mark.parametrize("stem, status, signal, pass_name, top, fatal", [
    ("A_remainder_int_by_zero", -8, "SIGFPE", "Canonicalizer",
     "mlir::torch::Torch::AtenRemainderIntOp::fold", ""),
    ("J_flatten_end_dim_oob", -6, "SIGABRT", "DecomposeComplexOps",
     "mlir::torch::Torch::(anonymous namespace)::DecomposeAtenFlattenUsingIntsOp::matchAndRewrite",
     ("SmallVector unable to grow. Requested capacity (18446744073709551609) is larger than maximum "
      "value for size type (4294967295)")),
])
def test_captured_release_dumps(stem, status, signal, pass_name, top, fatal):
    text = (CRASHERS / f"{stem}.release-stderr.txt").read_text()
    info = parse_crash(text, returncode=status)
    assert info.signal == signal and info.fatal_error == fatal and info.has_stack_dump
    flag = "-canonicalize" if stem[0] == "A" else "-torch-decompose-complex-ops"
    assert info.program_arguments.endswith(f"torch-mlir-opt {stem}.mlir {flag}")
    assert info.running_passes == []                   # the release build prints none
    assert info.pass_name == pass_name and str(info.pass_source) == "frame"
    assert info.frames[0].name == "llvm::sys::PrintStackTrace"
    assert info.frames[1].name == "SignalHandler" and info.frames[1].file == "Signals.cpp"
    assert info.frames[-1].name == "_start"
    assert info.top_frame().name == top
    assert info.signature.summary == f"{signal} in {pass_name} at {top}"
    assert "0x" not in str(info.signature)


def test_unsymbolized_frame_forms():
    llvm_raw = ("Stack dump without symbol names (ensure you have llvm-symbolizer in your PATH):\n"
                "0  torch-mlir-opt 0x0000000001a0545a\n"
                "2  libc.so.6      0x00007f8f55b6a050\n"
                "22 libc.so.6      0x00007f8f55b65305 __libc_start_main + 133\n")
    frames = parse_frames(llvm_raw.splitlines())
    assert frames == [Frame(0, 0x1a0545a, module="torch-mlir-opt"),
                      Frame(2, 0x7f8f55b6a050, module="libc.so.6"),
                      Frame(22, 0x7f8f55b65305, "__libc_start_main", module="libc.so.6")]
    glibc = ("/opt/bin/torch-mlir-opt(+0x5e8f28) [0x55d0c05e8f28]\n"
             "/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x85) [0x7f8f55b65305]\n")
    frames = parse_frames(glibc.splitlines())
    assert frames[0] == Frame(0, 0x55d0c05e8f28, module="/opt/bin/torch-mlir-opt", offset=0x5e8f28)
    assert frames[1].function == "__libc_start_main" and frames[1].offset is None


# ---------------------------------------------------------------------------------------------
# Real crashes of the pinned binary

# (file, pipeline as `harness run --pipeline` takes it, signal, pass, a function on the stack)
REAL = [
    ("A_remainder_int_by_zero", "builtin.module(func.func(canonicalize))", "SIGFPE", "Canonicalizer",
     "mlir::torch::Torch::AtenRemainderIntOp::fold"),
    ("D_group_norm_zero_groups", "-torch-decompose-complex-ops", "SIGFPE", "DecomposeComplexOps",
     "mlir::torch::Torch::(anonymous namespace)::DecomposeAtenNativeGroupNormOp::matchAndRewrite"),
    ("F_view_zero_numel", "builtin.module(func.func(convert-torch-to-linalg))", "SIGFPE",
     "ConvertTorchToLinalg", "(anonymous namespace)::ConvertAtenViewOp::matchAndRewrite"),
    ("L_to_dtype_99_linalg", "-convert-torch-to-linalg", "SIGABRT", "ConvertTorchToLinalg",
     "mlir::torch::torch_to_linalg::getBackendTypeForScalarType"),
    ("N_item_unranked_to_tensor", "builtin.module(func.func(convert-torch-to-tensor))", "SIGSEGV",
     "ConvertTorchToTensor", "mlir::torch::(anonymous namespace)::ConvertAtenItemOp::matchAndRewrite"),
    # A model using a @torch.jit.script class, through the whole TorchScript pipeline.
    ("T_jit_script_class_call_method", "builtin.module(torchscript-module-to-torch-backend-pipeline)",
     "SIGSEGV", "PrepareForGlobalizeObjectGraph",
     "mlir::torch::Torch::(anonymous namespace)::ConvertPrimCallMethodToCall::matchAndRewrite"),
]


@pytest.fixture(scope="module")
def real_records():
    """Each crasher run twice: signatures must be stable, and different between crashers."""
    return {stem: [run_pipeline(CRASHERS / f"{stem}.mlir", pipeline) for _ in range(2)]
            for stem, pipeline, *_ in REAL}


@pytest.mark.parametrize("stem, pipeline, signal, pass_name, function", REAL, ids=[r[0] for r in REAL])
def test_real_crash(real_records, stem, pipeline, signal, pass_name, function):
    first, second = real_records[stem]
    assert first.outcome is Outcome.CRASH, first.stderr
    assert first.signal == signal == first.crash.signal
    assert first.returncode == -getattr(__import__("signal"), signal)
    assert first.crash.pass_name == pass_name and str(first.crash.pass_source) == "frame"
    assert first.crash.has_stack_dump and first.crash.symbolized
    assert first.crash.top_frame().name == function
    names = [f.name for f in first.crash.frames]
    assert "llvm::sys::PrintStackTrace" in names and "mlir::PassManager::run" in names
    assert str(first.signature) == f"crash: {signal} in {pass_name} at {function}"
    assert second.signature == first.signature
    assert "-mlir-disable-threading" in first.command


def test_different_crashers_have_different_signatures(real_records):
    signatures = {records[0].signature for records in real_records.values()}
    assert len(signatures) == len(REAL)


def test_llvm_error_is_captured(real_records):
    crash = real_records["L_to_dtype_99_linalg"][0].crash
    assert crash.fatal_error == "unhandled type for getTypeForScalarType"


def test_record_json_round_trip(real_records):
    record = real_records["A_remainder_int_by_zero"][0]
    data = json.loads(json.dumps(record.to_json()))
    assert data["signature"] == str(record.signature) and data["crash"]["signal"] == "SIGFPE"
    again = RunRecord.from_json(data)
    assert again == record and again.signature == record.signature


def test_offline_symbolization_of_an_unsymbolized_dump(real_records):
    # A bogus LLVM_SYMBOLIZER_PATH makes the binary print raw `N  torch-mlir-opt 0xADDR` frames.
    raw = run_pipeline(CRASHERS / "A_remainder_int_by_zero.mlir", "builtin.module(func.func(canonicalize))",
                       options=RunOptions(env={"LLVM_SYMBOLIZER_PATH": "/nonexistent/llvm-symbolizer"},
                                          symbolize=False))
    assert "Stack dump without symbol names" in raw.stderr
    assert raw.outcome is Outcome.CRASH and not raw.crash.symbolized
    assert all(f.module in ("torch-mlir-opt", "libc.so.6") for f in raw.crash.frames)
    # Unnamed, the pass is unknown and the top frame falls back to a module offset.
    assert raw.crash.pass_name == "canonicalize" and str(raw.crash.pass_source) == "caller"
    assert "torch-mlir-opt+0x" in str(raw.crash.signature)

    done = symbolize(raw.crash, resolve().path)
    assert done.symbolizer and done.symbolized
    assert done.pass_name == "Canonicalizer" and str(done.pass_source) == "frame"
    in_process = real_records["A_remainder_int_by_zero"][0].crash
    assert done.signature == in_process.signature
    # Non-PIE: the same return addresses in both runs, named alike offline and in-process.
    by_address = {f.address: f.name for f in in_process.frames}
    binary_frames = [f for f in done.frames if f.module == "torch-mlir-opt"]
    assert len(binary_frames) > 15
    assert [by_address.get(f.address) for f in binary_frames] == [f.name for f in binary_frames]

    # The runner does the same by default.
    auto = run_pipeline(CRASHERS / "A_remainder_int_by_zero.mlir", "builtin.module(func.func(canonicalize))",
                        options=RunOptions(env={"LLVM_SYMBOLIZER_PATH": "/nonexistent/llvm-symbolizer"}))
    assert auto.crash.symbolizer and auto.signature == real_records["A_remainder_int_by_zero"][0].signature


def test_symbolization_degrades_without_a_symbolizer(real_records, monkeypatch):
    raw = run_pipeline(CRASHERS / "F_view_zero_numel.mlir",
                       "builtin.module(func.func(convert-torch-to-linalg))",
                       options=RunOptions(env={"LLVM_SYMBOLIZER_PATH": "/nonexistent/llvm-symbolizer"},
                                          symbolize=False))
    monkeypatch.setattr(symbolize_module, "find_symbolizer", lambda binary=None: None)
    same = symbolize(raw.crash, resolve().path)
    assert not same.symbolized and "no llvm-symbolizer found" in same.symbolizer_note
    assert same.frames == raw.crash.frames


def test_wheel_wrapper_exit_status_counts_as_a_crash():
    # bin/torch-mlir-opt is a Python wrapper: SIGFPE in the real binary exits 248 there.
    wrapper = Path(sys.executable).with_name("torch-mlir-opt")
    if not wrapper.is_file():
        pytest.skip("no bin/torch-mlir-opt wrapper in this venv")
    record = run_pipeline(CRASHERS / "A_remainder_int_by_zero.mlir",
                          "builtin.module(func.func(canonicalize))", opt=str(wrapper))
    assert record.returncode == 248
    assert record.outcome is Outcome.CRASH and record.signal == "SIGFPE"
    assert record.crash.pass_name == "Canonicalizer"
    assert str(record.signature) == ("crash: SIGFPE in Canonicalizer at "
                                     "mlir::torch::Torch::AtenRemainderIntOp::fold")


def test_harness_run_prints_the_crash(tmp_path):
    proc = harness("run", str(CRASHERS / "L_to_dtype_99_linalg.mlir"), "--pipeline=-convert-torch-to-linalg",
                   timeout=120)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert out.startswith("crash: L_to_dtype_99_linalg.mlir through -convert-torch-to-linalg")
    assert "  signal:    SIGABRT (exit status -6)" in out
    assert "  LLVM ERROR: unhandled type for getTypeForScalarType" in out
    assert "  pass:      ConvertTorchToLinalg (from its runOnOperation frame)" in out
    assert ("  signature: crash: SIGABRT in ConvertTorchToLinalg at "
            "mlir::torch::torch_to_linalg::getBackendTypeForScalarType") in out
    frames = [ln for ln in out.splitlines() if ln.startswith(("    #", "  > #"))]
    assert 1 <= len(frames) <= 10
    assert any(ln.startswith("  > #") and "getBackendTypeForScalarType" in ln for ln in frames)
    assert f"reproduce: {resolve().path} " in out  # the binary that ran

    proc = harness("run", str(CRASHERS / "L_to_dtype_99_linalg.mlir"), "--pipeline=-convert-torch-to-linalg",
                   "--json", timeout=120)
    data = json.loads(proc.stdout)
    assert data["outcome"] == "crash"
    assert data["crash"]["fatal_error"] == "unhandled type for getTypeForScalarType"
    assert data["crash"]["frames"][0]["function"].startswith("llvm::sys::PrintStackTrace")
