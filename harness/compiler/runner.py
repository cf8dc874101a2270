"""Runs torch-mlir-opt as a subprocess and classifies what happened.

A subprocess keeps a crash in the compiler from taking the Python process down (passes can
emit an error without signalling failure, which asserts in-process: upstream #3506), and it
works the same for the wheel's binary and a user's own debug build.

Choices that shape the records:

- ``-mlir-disable-threading`` is passed by default (``RunOptions.disable_threading``). A crash
  on one of MLIR's worker threads loses LLVM's ``Stack dump:`` and ``Program arguments:``
  lines, and two threads crashing at once leave only the banner (tests/data/crashers/README.md),
  so a threaded run gives no frames to group crashes by. The torch-mlir pipelines work on a
  module that is essentially one function after inlining, so threading buys little; turn it
  off with ``disable_threading=False`` for large multi-function modules.
- A crash is read from stderr into ``RunRecord.crash`` (harness.compiler.crash); unnamed frames are
  symbolized offline with llvm-symbolizer. Exit statuses 256-N (the wheel's Python wrapper)
  and 128+N (a shell wrapper) count as signal N when stderr shows LLVM's crash output.
- On a timeout the process group first gets SIGABRT, so LLVM's handler prints where the hung
  run was (the pass and the looping pattern end up in the record), then SIGKILL.
- Core dumps are disabled in the child (crash hunting would litter the working directory).
- A pipeline torch-mlir-opt rejects (unknown pass, bad option, wrong nesting) is a user error:
  it raises PipelineConfigError instead of returning a record.
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import signal as signal_module
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import BinaryError, InputFileError, PipelineConfigError

from . import binary as binary_module
from . import crash as crash_module
from .pipeline_text import parse_pipeline
from .records import (
    Diagnostic,
    Outcome,
    RunRecord,
    parse_diagnostics,
)
from .symbolize import symbolize

DEFAULT_TIMEOUT_S = 600.0
# How long a hung process gets to print its stack dump after SIGABRT before SIGKILL.
TIMEOUT_DUMP_GRACE_S = 10.0


@dataclass(frozen=True)
class RunOptions:
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra_args: tuple[str, ...] = ()
    output_path: str | None = None  # None: discard stdout's IR unless the caller reads it
    emit_bytecode: bool = False
    disable_threading: bool = True   # full stack dumps on a crash (see the module docstring)
    symbolize: bool = True           # name unsymbolized frames with llvm-symbolizer offline
    dump_on_timeout: bool = True     # SIGABRT a hung run for its stack before killing it
    env: Mapping[str, str] | None = None  # extra environment variables for the child
    memory_limit_mb: int | None = None    # RLIMIT_AS of the child (runaway allocation crashes)
    pass_hint: str = ""              # the pass to blame when the stack names none
    max_input_mb: int = 4096         # refuse bigger inputs (0 = no limit): see check_input


# ---------------------------------------------------------------------------------------------
# Textual pipelines

def is_pass_flags(pipeline: str) -> bool:
    """``-canonicalize -cse``: passes given as flags, as torch-mlir-opt's own usage line has it."""
    return pipeline.lstrip().startswith("-")


def single_pass(pipeline: str) -> str:
    """The pass name when ``pipeline`` runs exactly one pass (not a pipeline), else ""."""
    if is_pass_flags(pipeline):
        flags = [f for f in shlex.split(pipeline) if f.startswith("-")]
        return flags[0].lstrip("-").split("=")[0] if len(flags) == 1 else ""
    try:
        passes = parse_pipeline(pipeline)
    except PipelineConfigError:
        return ""
    return passes[0].name if len(passes) == 1 and not passes[0].is_pipeline else ""


# ---------------------------------------------------------------------------------------------
# Classification

# The first error's message when the parser (not a pass) rejected the input.
_PARSE_MESSAGE = re.compile(
    r"^(?:expected |custom op '|Dialect `|unexpected character|use of undeclared SSA value|"
    r"operation being parsed with an unregistered dialect|redefinition of |undefined symbol|"
    r"unbalanced |Failed to parse|could not parse|unknown type|unknown attribute|"
    r"use of value '.*' expects different type)"
)
# The verifier reports through emitOpError: "'dialect.op' op ...".
_VERIFIER_MESSAGE = re.compile(r"^'[\w.$-]+' op ")
# torch-mlir-opt refusing the pipeline itself: a user error, not a compiler result.
_PIPELINE_ERRORS = (
    "MLIR Textual PassPipeline Parser", "does not refer to a registered pass",
    "expected pass pipeline to be wrapped", "<Pass-Options-Parser>", "failed to add `",
    "Can't add pass", "pass manager on '", "Unknown command line argument",
    "for the -pass-pipeline option", "may only occur zero or one times",
)


def classify(returncode: int | None, stderr: str, crash: crash_module.CrashInfo | None,
             diagnostics: Sequence[Diagnostic], *, timed_out: bool = False) -> Outcome:
    """The Outcome kind of a finished run (pipeline rejections are raised before this)."""
    if timed_out:
        return Outcome.TIMEOUT
    if crash is not None and (crash.signal or crash.has_stack_dump or crash.fatal_error):
        return Outcome.ASSERTION if crash.assertion else Outcome.CRASH
    if returncode == 0:
        return Outcome.SUCCESS
    if any(d.illegal_op for d in diagnostics if d.is_error):
        return Outcome.LEGALIZATION_FAILURE
    errors = [d for d in diagnostics if d.is_error and not d.is_reproducer_summary]
    first = errors[0].message if errors else ""
    if _PARSE_MESSAGE.match(first):
        return Outcome.PARSE_ERROR
    if _VERIFIER_MESSAGE.match(first) or "verification failed" in stderr.lower():
        return Outcome.VERIFIER_ERROR
    return Outcome.PASS_FAILURE


def _pipeline_rejection(stderr: str) -> str:
    if not any(marker in stderr for marker in _PIPELINE_ERRORS):
        return ""
    messages = []
    for line in stderr.splitlines():
        line = re.sub(r"^(?:<unknown>|\S+?):\d+(?::\d+)?: error: ", "", line.strip())
        if line and any(marker in line for marker in _PIPELINE_ERRORS) or line.startswith("torch-mlir-opt:"):
            messages.append(line if line[-1] in ".?!" else line + ".")
    return " ".join(messages[:3])[:600]


# ---------------------------------------------------------------------------------------------
# Running

def check_input(input_path: str | os.PathLike, max_input_mb: int = 0) -> Path:
    """A readable, non-empty file of a sane size. OPT-125m with its weights as hex text is ~1 GB;
    a file several times that is almost always text IR with weights of a much larger model,
    which torch-mlir-opt would spend minutes parsing before doing anything useful."""
    path = Path(input_path)
    if not path.is_file():
        raise InputFileError(f"input IR file {path} does not exist or is not a file. Check the path.")
    if not os.access(path, os.R_OK):
        raise InputFileError(f"input IR file {path} is not readable. Check its permissions.")
    if path.stat().st_size == 0:
        raise InputFileError(f"input IR file {path} is empty. Regenerate it (e.g. harness opt).")
    size_mb = path.stat().st_size / 2**20
    if max_input_mb and size_mb > max_input_mb:
        raise InputFileError(
            f"input IR file {path} is {size_mb / 1024:.1f} GiB, over the {max_input_mb} MiB limit. "
            "Write it with weights elided (harness emit/opt do by default) or as bytecode "
            "(--emit-bytecode), or raise the limit (RunOptions.max_input_mb, --max-input-mb)."
        )
    return path


def build_command(binary: str, pipeline: str, input_path: str, options: RunOptions) -> list[str]:
    if is_pass_flags(pipeline):
        cmd = [binary, input_path, *shlex.split(pipeline)]
    else:
        cmd = [binary, f"-pass-pipeline={pipeline}", input_path]
    if options.emit_bytecode:
        cmd.append("--emit-bytecode")
    cmd += ["-o", options.output_path or os.devnull]
    if options.disable_threading and "-mlir-disable-threading" not in options.extra_args \
            and "--mlir-disable-threading" not in options.extra_args:
        cmd.append("-mlir-disable-threading")
    cmd += list(options.extra_args)
    return cmd


@dataclass
class _Finished:
    returncode: int | None
    stdout: str
    stderr: str
    elapsed_s: float
    timed_out: bool


def _child_limits(memory_limit_mb: int | None):
    def setup() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit_mb:
            limit = memory_limit_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return setup


def _spawn(cmd: Sequence[str], options: RunOptions, env: Mapping[str, str] | None) -> subprocess.Popen:
    """Popen with core dumps off (and the memory limit) in the child.

    A ``preexec_fn`` makes Popen fork() instead of vfork(), and fork() of a parent holding a
    model (the tests, ``harness opt``, a reduction started from Python) costs ~0.1 s per GB,
    per run. So the core limit is set right after exec with prlimit (a crash in the
    microseconds before would be the only one to dump core); an exact memory limit, asked for
    explicitly, still pays for the fork.
    """
    exact = bool(options.memory_limit_mb) or not hasattr(resource, "prlimit")
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", env=env,
                            start_new_session=True,
                            # Only setrlimit runs there (async-signal-safe enough).
                            preexec_fn=_child_limits(options.memory_limit_mb) if exact else None)  # noqa: PLW1509
    if not exact:
        try:
            resource.prlimit(proc.pid, resource.RLIMIT_CORE, (0, 0))
        except OSError:  # already gone, or not ours to limit: nothing to dump then
            pass
    return proc


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def execute(cmd: Sequence[str], options: RunOptions) -> _Finished:
    """Runs ``cmd`` in its own session; on timeout SIGABRT (for the stack), then SIGKILL, the group."""
    env = {**os.environ, **options.env} if options.env else None
    start = time.monotonic()
    try:
        proc = _spawn(cmd, options, env)
    except OSError as e:
        raise BinaryError(
            f"could not start {cmd[0]}: {e.strerror or e}. Name a working torch-mlir-opt binary "
            "with --opt or $TORCH_MLIR_OPT."
        ) from None
    try:
        out, err = proc.communicate(timeout=options.timeout_s)
        return _Finished(proc.returncode, out, err, time.monotonic() - start, False)
    except subprocess.TimeoutExpired:
        pass
    except BaseException:
        _signal_group(proc.pid, signal_module.SIGKILL)
        proc.wait()
        raise
    elapsed = time.monotonic() - start
    out = err = ""
    if options.dump_on_timeout:
        # The leader is not reaped yet, so the group id still names our processes only.
        _signal_group(proc.pid, signal_module.SIGABRT)
        try:
            out, err = proc.communicate(timeout=TIMEOUT_DUMP_GRACE_S)
            return _Finished(proc.returncode, out, err, elapsed, True)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc.pid, signal_module.SIGKILL)
    out, err = proc.communicate()
    return _Finished(proc.returncode, out, err, elapsed, True)


def run_pipeline(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
                 options: RunOptions = RunOptions()) -> RunRecord:
    """Runs ``torch-mlir-opt -pass-pipeline=PIPELINE INPUT`` and returns its record.

    ``pipeline`` is a textual pipeline, or pass flags (``-canonicalize``) run as given.
    """
    path = check_input(input_path, options.max_input_mb)
    exe = binary_module.resolve(opt)
    cmd = build_command(exe.path, pipeline, str(path), options)
    done = execute(cmd, options)
    if not done.timed_out and done.returncode == 1:
        rejection = _pipeline_rejection(done.stderr)
        if rejection:
            raise PipelineConfigError(
                f"torch-mlir-opt rejected the pipeline {pipeline!r}: {rejection} Check the pass "
                "names and options against 'torch-mlir-opt --help', and nest function passes "
                "as 'builtin.module(func.func(PASS))'."
            )
    diagnostics = parse_diagnostics(done.stderr)
    hint = options.pass_hint or single_pass(pipeline)
    crash = crash_module.parse_crash(done.stderr, returncode=done.returncode, pass_hint=hint,
                                     at_timeout=done.timed_out)
    if done.timed_out and crash is not None and not crash.has_stack_dump:
        crash = None
    if crash is not None and options.symbolize and not crash.symbolized and crash.frames:
        crash = symbolize(crash, _crashed_binary(crash, exe.path))
    outcome = classify(done.returncode, done.stderr, crash, diagnostics, timed_out=done.timed_out)
    if outcome not in (Outcome.CRASH, Outcome.ASSERTION, Outcome.TIMEOUT):
        crash = None
    return RunRecord(
        outcome=outcome, command=cmd, pipeline=pipeline, input_path=str(path), binary=exe.path,
        returncode=done.returncode, elapsed_s=done.elapsed_s, stderr=done.stderr,
        output_path=options.output_path or "",
        signal=crash.signal if crash is not None and not crash.at_timeout else "",
        diagnostics=diagnostics, crash=crash,
    )


def _crashed_binary(crash: crash_module.CrashInfo, fallback: str) -> str:
    """The ELF that crashed: the dump's argv[0] (the real binary behind a wrapper), if it exists."""
    if crash.program_arguments:
        first = crash.program_arguments.split()[0]
        if os.path.isfile(first):
            return first
    return fallback


def shell_command(cmd: Sequence[str]) -> str:
    """A command line a user can paste into a POSIX shell."""
    return " ".join(shlex.quote(c) for c in cmd)


def repro_command(pipeline: str, input_path: str | os.PathLike, binary_name: str = "torch-mlir-opt") -> str:
    """``torch-mlir-opt -pass-pipeline='...' FILE``, the form users paste from bug reports."""
    if is_pass_flags(pipeline):
        return f"{binary_name} {shlex.quote(os.fspath(input_path))} {pipeline.strip()}"
    return f"{binary_name} -pass-pipeline={shlex.quote(pipeline)} {shlex.quote(os.fspath(input_path))}"
