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
  run was (the pass and the looping pattern end up in the record), then SIGKILL. The child
  never outlives the harness (harness.compiler.process: an exception kills the group, a
  watchdog kills it when the harness dies).
- Core dumps are disabled in the child (crash hunting would litter the working directory).
- A pipeline torch-mlir-opt rejects (unknown pass, bad option, wrong nesting) is a user error:
  it raises PipelineConfigError instead of returning a record. So is an output (``-o``) it
  could not write: OutputError, checked before the run and after it.
- Whether a failure happened before any pass (parse error, verifier error) or in the pipeline
  is asked of torch-mlir-opt itself, not guessed from the message (``_confirm_stage``).
- File names reach the binary as files even when they start with ``-`` (``command_path``).
- ``-o`` is written to a temp file beside it, renamed into place only when the run succeeded
  and wrote something (that parses back, with ``read_back_output``; ``Outcome.BAD_OUTPUT``
  otherwise): a crash, a half-written module or a killed harness never touches the file that
  was there.
- LLVM's temp folder ($TMPDIR) must be writable (``check_temp_dir``): its crash handler writes
  the stack there, and without it a crash reads "IO failure on output stream", not the crash.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness import defaults
from harness.errors import (
    BinaryError,
    HarnessEnvironmentError,
    InputFileError,
    OutputError,
    PipelineConfigError,
)

from . import builds as builds_module
from . import crash as crash_module
from . import process
from .binary import OptBinary
from .capture import KEEP_BYTES
from .irfile import StagedFile
from .process import TIMEOUT_DUMP_GRACE_S, Finished  # noqa: F401  (re-exported)
from .pipeline_text import check_pipeline, parse_pipeline
from .records import (
    Diagnostic,
    Outcome,
    RunRecord,
    Severity,
    parse_diagnostics,
)
from .symbolize import symbolize



@dataclass(frozen=True)
class RunOptions:
    timeout_s: float = defaults.TIMEOUT_S
    extra_args: tuple[str, ...] = ()
    output_path: str | None = None  # None: discard stdout's IR unless the caller reads it
    emit_bytecode: bool = False
    disable_threading: bool = True   # full stack dumps on a crash (see the module docstring)
    symbolize: bool = True           # name unsymbolized frames with llvm-symbolizer offline
    dump_on_timeout: bool = True     # SIGABRT a hung run for its stack before killing it
    env: Mapping[str, str] | None = None  # extra environment variables for the child
    memory_limit_mb: int | None = None    # RLIMIT_AS of the child (runaway allocation crashes)
    pass_hint: str = ""              # the pass to blame when the stack names none
    max_input_mb: int = defaults.MAX_INPUT_MB  # refuse bigger inputs (0 = no limit): see check_input
    keep_output_bytes: int = KEEP_BYTES  # of stdout and stderr, kept at each end (capture.py)
    # Read -o back after a success (one more run): harness run -o does. The tools' own
    # outputs go into their next run, which reads them anyway; an empty -o is always caught.
    read_back_output: bool = False


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
    for raw in stderr.splitlines():
        line = re.sub(r"^(?:<unknown>|\S+?):\d+(?::\d+)?: error: ", "", raw.strip())
        if ((line and any(marker in line for marker in _PIPELINE_ERRORS))
                or line.startswith("torch-mlir-opt:")):
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


# What torch-mlir-opt prints when it cannot write -o: at the start ("cannot open output file
# 'X': Not a directory"), or at the end as a fatal error (a full disk: "IO failure on output
# stream: No space left on device").
_OUTPUT_FAILURE = re.compile(
    r"^(?:LLVM ERROR: )?(?P<msg>(?:cannot open output file|IO failure on output stream)\b.*)$", re.M)


def check_output(output_path: str | os.PathLike) -> Path:
    """Fails before the run when ``-o`` cannot be written; otherwise the failed write would come
    back as the run's outcome (a pass failure for a missing folder, a "crash" for a full disk)."""
    path = Path(output_path)
    hint = "Choose a writable output location (-o)."
    if path.is_dir():
        raise OutputError(f"the output {path} is a folder. Name a file in it (-o), e.g. {path / 'out.mlir'}.")
    if path.exists() and not path.is_file():
        return path  # /dev/stdout, a fifo: written as they are
    ancestor = next((a for a in path.parents if a.exists()), None)
    if ancestor is not None and not ancestor.is_dir():
        raise OutputError(f"cannot write the output IR {path}: {ancestor} is a file, not a folder. {hint}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
        fs = os.statvfs(path.parent)
    except OSError as e:
        raise OutputError(f"cannot write the output IR {path}: {e.strerror or e}. {hint}") from None
    if (fs.f_bfree if os.geteuid() == 0 else fs.f_bavail) == 0:
        raise OutputError(f"cannot write the output IR {path}: its file system is full. "
                          f"Free some space or {hint[0].lower()}{hint[1:]}")
    return path


# LLVM's temp folder: the first of these that is set, taken as it is (no fallback, unlike
# Python's tempfile), else /tmp (llvm::sys::path::system_temp_directory).
LLVM_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")


def check_temp_dir(env: Mapping[str, str] | None = None) -> Path:
    """The temp folder torch-mlir-opt will use, checked writable with free space.

    LLVM's crash handler writes the stack's addresses to a temp file for llvm-symbolizer and
    does not check that it could: in an unwritable folder every crash ends in "LLVM ERROR: IO
    failure on output stream" instead, which was reported as a torch-mlir bug that did not
    reproduce. Costs a file created and removed per run."""
    env = os.environ if env is None else env
    variable = next((v for v in LLVM_TEMP_VARIABLES if v in env), "")
    folder = Path(env[variable]) if variable else Path("/tmp")
    named = f"${variable} ({folder})" if variable else f"{folder} (no $TMPDIR is set)"
    remedy = ("torch-mlir-opt writes its crash stack there, so a crash would read as 'IO failure "
              "on output stream'. This is the machine's set-up, not a torch-mlir bug: point "
              "TMPDIR at a writable folder with free space (export TMPDIR=/tmp), then run again.")
    try:
        fd, probe = tempfile.mkstemp(prefix=".harness-tmp-check-", dir=folder)
        try:
            os.write(fd, b"\n")
            fs = os.fstatvfs(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise HarnessEnvironmentError(
            f"the temp folder {named} cannot be written: {e.strerror or e}. {remedy}") from None
    if (fs.f_bfree if os.geteuid() == 0 else fs.f_bavail) == 0:
        raise HarnessEnvironmentError(f"the temp folder {named} is on a full file system. {remedy}")
    return folder


def command_path(path: str | os.PathLike) -> str:
    """``path`` as an argument torch-mlir-opt reads as a file name: ``./-o.mlir``, not the
    option ``-o``; ``./-``, not stdin."""
    text = os.fspath(path)
    return f"./{text}" if text.startswith("-") else text


def build_command(binary: str, pipeline: str, input_path: str, options: RunOptions) -> list[str]:
    source = command_path(input_path)
    if is_pass_flags(pipeline):
        cmd = [binary, source, *shlex.split(pipeline)]
    else:
        cmd = [binary, f"-pass-pipeline={pipeline}", source]
    if options.emit_bytecode:
        cmd.append("--emit-bytecode")
    cmd += ["-o", command_path(options.output_path) if options.output_path else os.devnull]
    if options.disable_threading and "-mlir-disable-threading" not in options.extra_args \
            and "--mlir-disable-threading" not in options.extra_args:
        cmd.append("-mlir-disable-threading")
    cmd += list(options.extra_args)
    return cmd


def execute(cmd: Sequence[str], options: RunOptions) -> Finished:
    """Runs ``cmd`` in its own session; on timeout SIGABRT (for the stack), then SIGKILL, the
    group; on any exception the group is killed first (harness.compiler.process)."""
    env = {**os.environ, **options.env} if options.env else None
    check_temp_dir(env)
    try:
        return process.execute(cmd, timeout_s=options.timeout_s, env=env,
                               memory_limit_mb=options.memory_limit_mb,
                               dump_on_timeout=options.dump_on_timeout,
                               keep_bytes=options.keep_output_bytes)
    except OSError as e:
        raise BinaryError(
            f"could not start {cmd[0]}: {e.strerror or e}. Name a working torch-mlir-opt binary "
            "with --opt or $TORCH_MLIR_OPT."
        ) from None


def run_pipeline(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
                 options: RunOptions = RunOptions()) -> RunRecord:
    """Runs ``torch-mlir-opt -pass-pipeline=PIPELINE INPUT`` and returns its record.

    ``pipeline`` is a textual pipeline, or pass flags (``-canonicalize``) run as given.
    """
    check_pipeline(pipeline)
    path = check_input(input_path, options.max_input_mb)
    if options.output_path:
        check_output(options.output_path)
    exe = builds_module.resolve(opt, timeout_s=options.timeout_s)
    cmd = build_command(exe.path, pipeline, str(path), options)  # as recorded: -o the target
    if not options.output_path:
        return _run(exe, cmd, pipeline, path, options, None)
    with StagedFile(options.output_path, hint="Choose a writable output location (-o).") as staged:
        record = _run(exe, build_command(exe.path, pipeline, str(path),
                                         replace(options, output_path=str(staged.path))),
                      pipeline, path, options, staged)
        if record.ok:
            staged.commit()
        return replace(record, command=cmd)


def _run(exe: OptBinary, cmd: list[str], pipeline: str, path: Path,
         options: RunOptions, staged: StagedFile | None) -> RunRecord:
    """``cmd`` run and classified; ``staged``: where its ``-o`` goes, checked on success."""
    done = execute(cmd, options)
    failed_write = _OUTPUT_FAILURE.search(done.stderr) if staged is not None else None
    if staged is not None and failed_write:
        said = failed_write.group("msg").strip().rstrip(".").replace(str(staged.path), str(staged.target))
        raise OutputError(
            f"torch-mlir-opt could not write the output IR {options.output_path}: "
            f"{said}. Choose a writable output location with free space (-o)."
        )
    if not done.timed_out and done.returncode == 1:
        rejection = _pipeline_rejection(done.stderr)
        if rejection:
            raise PipelineConfigError(
                f"{exe.tool_name} rejected the pipeline {pipeline!r}: {rejection} Check the pass "
                f"names and options against '{exe.tool_name} --help', and nest function passes "
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
    if outcome in _NEEDS_STAGE:
        outcome = _confirm_stage(outcome, exe.path, command_path(path), options)
    if outcome not in (Outcome.CRASH, Outcome.ASSERTION, Outcome.TIMEOUT):
        crash = None
    if outcome is Outcome.SUCCESS and staged is not None and staged.staged:
        problem = _bad_output(exe.path, staged.path, options)
        if problem:
            outcome = Outcome.BAD_OUTPUT
            diagnostics = [*diagnostics, Diagnostic(Severity.ERROR, problem)]
    return RunRecord(
        outcome=outcome, command=cmd, pipeline=pipeline, input_path=str(path), binary=exe.path,
        returncode=done.returncode, elapsed_s=done.elapsed_s, stderr=done.stderr,
        output_path=options.output_path or "",
        signal=crash.signal if crash is not None and not crash.at_timeout else "",
        diagnostics=diagnostics, crash=crash,
    )


def _bad_output(binary: str, written: Path, options: RunOptions) -> str:
    """Why what a run that exited 0 wrote is not IR, or "" when it is: a wrapper that lost
    ``-o``, a binary that wrote half a module. Read back by the same binary (it knows the
    dialects it printed), with the verifier off: the run verified it already; what is asked
    is whether it was all written. One parse of the output, when ``options.read_back_output``;
    "" when that run cannot tell."""
    try:
        if written.stat().st_size == 0:
            return "exited 0 but wrote nothing to its output file (-o)"
    except OSError:
        return "exited 0 but its output file (-o) is gone"
    if not options.read_back_output:
        return ""
    done = _reading(binary, command_path(written), options, verify=False)
    if done is None or done.returncode == 0:
        return ""
    first = next((d for d in parse_diagnostics(done.stderr) if d.is_error), None)
    said = first.message if first else (done.stderr.strip().splitlines() or ["no message"])[0][:300]
    return f"exited 0 but its output (-o) does not parse back: {said}"


# Outcomes the first error's wording cannot settle: whether the input failed before any pass.
_NEEDS_STAGE = (Outcome.PARSE_ERROR, Outcome.VERIFIER_ERROR, Outcome.PASS_FAILURE)
# The extra arguments that change how torch-mlir-opt reads its input (the rest are about
# passes and printing, and some refuse to run without a pipeline).
_READING_FLAGS = {"allow-unregistered-dialect", "no-implicit-module", "split-input-file"}


def _confirm_stage(outcome: Outcome, binary: str, source: str, options: RunOptions) -> Outcome:
    """``outcome`` checked by asking torch-mlir-opt whether the input is valid without passes.

    Messages alone miss parser errors ("invalid size -2 for !torch.tensor type" was a pass
    failure) and a pass can word an error like the parser ("expected ..."). A valid input
    failed in the pipeline (never a parse error); an invalid one failed in the parser, or in
    the verifier if it parses with the verifier off. A check that crashes or hangs leaves the
    outcome as the wording said. Costs one fast run (two for an invalid input), on these
    outcomes only.
    """
    valid = _parses(binary, source, options, verify=True)
    if valid is None:
        return outcome
    if valid:
        return Outcome.PASS_FAILURE if outcome is Outcome.PARSE_ERROR else outcome
    syntax = _parses(binary, source, options, verify=False)
    if syntax is None:
        return outcome
    return Outcome.VERIFIER_ERROR if syntax else Outcome.PARSE_ERROR


def _parses(binary: str, source: str, options: RunOptions, *, verify: bool) -> bool | None:
    """Whether torch-mlir-opt reads ``source`` without error and no pass (None: it crashed or
    hung, so it cannot tell)."""
    done = _reading(binary, source, options, verify=verify)
    return None if done is None else done.returncode == 0


def _reading(binary: str, source: str, options: RunOptions, *, verify: bool) -> Finished | None:
    """torch-mlir-opt reading ``source`` with no pass; None when it crashed or hung."""
    reading = [a for a in options.extra_args if a.lstrip("-").split("=")[0] in _READING_FLAGS]
    cmd = [binary, source, "--emit-bytecode", "-o", os.devnull, *reading]
    if not verify:
        cmd.append("--mlir-very-unsafe-disable-verifier-on-parsing")
    done = execute(cmd, replace(options, dump_on_timeout=False))
    if done.timed_out or done.returncode is None or done.returncode < 0 or \
            crash_module.has_crash_text(done.stderr) or _pipeline_rejection(done.stderr):
        return None
    return done


def _crashed_binary(crash: crash_module.CrashInfo, fallback: str) -> str:
    """The ELF that crashed: the dump's argv[0] (the real binary behind a wrapper), if it exists."""
    if crash.program_arguments:
        first = crash.program_arguments.split()[0]
        if os.path.isfile(first):
            return first
    return fallback


def shell_command(cmd: Sequence[str]) -> str:
    """A command line a user can paste into a POSIX shell: every word quoted."""
    return shlex.join(cmd)


def repro_command(pipeline: str, input_path: str | os.PathLike, binary: str = "torch-mlir-opt") -> str:
    """``torch-mlir-opt -pass-pipeline='...' FILE``, the form users paste from bug reports.

    ``binary`` is the path as it is (quoted here); pass flags are split as the run splits them
    and each flag quoted, so a pasted line runs the same argv and nothing else."""
    source = command_path(input_path)
    if is_pass_flags(pipeline):
        return shell_command([binary, source, *shlex.split(pipeline)])
    return f"{shlex.quote(binary)} -pass-pipeline={shlex.quote(pipeline)} {shlex.quote(source)}"


# MLIR's own printer flags that keep weights out of printed IR: a literal or resource of over 16
# elements is printed as an elided placeholder (what is read by a person or parsed back for ops).
ELIDE_PRINTED_WEIGHTS = ("--mlir-elide-elementsattrs-if-larger=16",
                         "--mlir-elide-resource-strings-if-larger=16")

# --print-op-stats=json's block: one `"op.name" : N` per line (other stderr lines may hold braces).
_OP_STATS = re.compile(r'^\{\n(?:\s*"[^"\n]+" : \d+,?\n)*\}$', re.MULTILINE)


def count_file_ops(input_path: str | os.PathLike, *, opt: str | None = None,
                   timeout_s: float = defaults.TIMEOUT_S) -> int | None:
    """Ops in a file's module but the module itself, counted by torch-mlir-opt's own
    ``--print-op-stats`` (text or bytecode, any dialect it has, weights never copied into this
    process). None when it cannot read the file."""
    path = check_input(input_path)
    exe = builds_module.resolve(opt, timeout_s=timeout_s)
    done = execute([exe.path, command_path(path), "--print-op-stats=json", "-o", os.devnull,
                    *ELIDE_PRINTED_WEIGHTS],
                   RunOptions(timeout_s=timeout_s, dump_on_timeout=False))
    if done.timed_out or done.returncode != 0:
        return None
    block = _OP_STATS.search(done.stderr)
    try:
        counts = json.loads(block.group(0)) if block else None
    except ValueError:
        counts = None
    if not isinstance(counts, dict) or not all(isinstance(n, int) for n in counts.values()):
        return None
    return sum(counts.values()) - 1
