"""Runs ``harness port MODEL --json FILE`` for each model in its own process, so a crash or a
hang costs one model, and (``--numerics-check``) ``harness check`` on the torch IR of each port
that lowered. What each run leaves is a record file: a later sweep reuses it unless forced.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.irfile import open_fresh, write_atomically
from harness.compiler.targets import target_path
from harness.compiler.process import map_interruptibly, signal_group
from harness.enums import ParsableEnum
from harness.errors import ERROR_PREFIX, HarnessError, UnsupportedModelError
from harness.execute.outcomes import CheckOutcome
from harness.models.hf_config import Size
from harness.models.hf_resolve import library_kind
from harness.port.record import FrontendPort, InputSetName, PortOutcome, PortRecord, PortStage

from .children import CHILDREN, Process, SweepStopped
from .progress import SweepProgress
from .records import (
    CHECK_SCHEMA,
    LOGS,
    PORTS,
    RECORDS,
    UNSUPPORTED,
    FailureReason,
    RunFailure,
    check_path,
    file_name,
    read_check,
    read_result,
    within,
    write_failure,
)
from .warm import WARM, WarmUnavailable

#: Per model: a tiny port takes 20-60 s; the bound is for hangs, not for slow machines.
DEFAULT_MODEL_TIMEOUT_S = 900.0
#: Per stage inside the port: a hung torch-mlir-opt stops there, and the port still writes a record.
DEFAULT_STAGE_TIMEOUT_S = 300.0


class KeepFiles(ParsableEnum):
    """What a sweep keeps of each port's IR files (``--keep-files``): a port's IR carries the
    model's weights (its numbers are checked), 37 GB for 149 tiny models, so a nightly sweep of
    hundreds of models x several builds keeps only the IR someone will open: a failing or
    mismatching port's. The records, inputs and outputs are always kept."""

    FAILING = "failing"   # drop a verified port's IR files once its record and checks are in
    ALL = "all"           # keep every file the ports wrote


#: A nightly sweep keeps what someone will open: the failing ports' IR.
DEFAULT_KEEP_FILES = KeepFiles.FAILING
#: A sweep ports each model at tiny size: a transformers type at its tiny config (the port's own
#: default), a torchvision or timm model built small (``harness port --size tiny``: at 224 px
#: and full width, torchvision's inception_v3 took 584 s of the --all sweep).
DEFAULT_SWEEP_SIZE = Size.TINY


@dataclass(frozen=True)
class SweepOptions:
    out: Path
    fix: bool = True                  # port --fix (--no-fix: the models as they are)
    force: bool = False               # run again even where a record exists
    timeout_s: float = DEFAULT_MODEL_TIMEOUT_S
    stage_timeout_s: float = DEFAULT_STAGE_TIMEOUT_S
    memory_limit_mb: int = defaults.SWEEP_MEMORY_LIMIT_MB  # the port's --memory-limit (0: none)
    jobs: int = 1                     # models ported side by side
    numerics_check: bool = False      # harness check on each lowered port's torch IR
    timelines: bool = False           # harness timeline of each failing pipeline stage
    port_args: tuple[str, ...] = ()   # more 'harness port' flags (--frontend fx, --opt PATH, ...)
    python: str = sys.executable
    cwd: str | None = None            # where the subprocesses start (None: this process's cwd)
    build: str = ""                   # --builds: the named build of this folder (port_args has its --opt)
    warm: bool = True                 # fork the children from one process that imported torch,
                                      # transformers and torch_mlir (.warm); False: a fresh Python each
    keep_files: KeepFiles = DEFAULT_KEEP_FILES
    size: Size = DEFAULT_SWEEP_SIZE


@dataclass
class ModelRun:
    model: str
    outcome: str          # the summary word the progress line shows
    seconds: float
    reused: bool = False
    ok: bool = False


def _summary(result: PortRecord | RunFailure, checks: dict[str, str]) -> tuple[str, bool]:
    if isinstance(result, RunFailure) and result.reason is UNSUPPORTED:
        return f"unsupported: {result.detail}", False
    if isinstance(result, RunFailure):
        code = "" if result.returncode is None else f", exit {result.returncode}"
        return f"crashed ({result.reason}{code})", False
    words, ok = [], bool(result.ports())
    for variant, port in result.ports():
        word = port.outcome.value
        if port.outcome is PortOutcome.FAILS:
            word += f" at {port.failed_stage}"
        check = checks.get(f"{variant.name}.{port.path}")
        if check == CheckOutcome.NUMERICS_MISMATCH.value:
            word, ok = "miscompile (op-level check)", False
        elif check:
            word += f", check {check}"
        name = port.path if len(result.variants) == 1 else f"{variant.name} {port.path}"
        words.append(f"{name} {word}")
        ok = ok and port.outcome in (PortOutcome.VERIFIED, PortOutcome.LOWERED)
    return ", ".join(words) or "no ports", ok


#: The thread pools a port's libraries size from the environment: torch's intra-op pool
#: (OpenMP), MKL's, numpy's OpenBLAS. Dask's nanny sets the same three for its workers.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_env(jobs: int) -> dict[str, str]:
    """Each of ``jobs`` ports at a time sizes its thread pools to its share of this machine's
    CPUs (at least 1), unless this process's environment already says. A pool as large as the
    machine in each port makes the ports' idle OpenMP threads spin against each other: tiny
    llama and mistral side by side on 2 cores took 2.98 and 3.01 s with 2 threads each, 2.60 and
    2.68 s with 1 (each port's own CPU 1.59-1.68 s against 1.26-1.30 s; alone 2.53 against 2.56)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    share = str(max(1, cpus // max(1, jobs)))
    return {name: share for name in THREAD_VARIABLES if name not in os.environ}


def run_logged(argv: list[str], log: Path, timeout_s: float, cwd: str | None,
               stdout: Path | None = None,
               env: Mapping[str, str] | None = None) -> tuple[int | None, bool, float]:
    """Runs ``argv`` in its own process group, output to ``log`` (stdout to ``stdout`` when
    given), with ``env`` added to this process's environment: (exit code, timed out, seconds).
    On timeout the whole group goes, torch-mlir-opt children included; a stop signal or the
    sweep's death ends it too (:mod:`.children`), and :class:`~.children.SweepStopped` is raised
    when the sweep stopped it."""
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open_fresh(log, "w", encoding="utf-8") as out, \
            (open_fresh(stdout, "w", encoding="utf-8") if stdout else
             open(os.devnull, "w", encoding="utf-8")) as result:
        out.write("$ " + shlex.join(argv) + "\n")
        out.flush()
        env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        process = _start_warm(argv, (result if stdout else out).fileno(), out.fileno(), cwd, env)
        if process is None:
            process = CHILDREN.start(argv, stdout=result if stdout else out,
                                     stderr=subprocess.STDOUT if not stdout else out, cwd=cwd,
                                     env=env)
        try:
            code, timed_out = process.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            signal_group(process.pid, signal.SIGKILL)
            process.wait()
            code, timed_out = None, True
        except BaseException:  # a stop signal in the main thread (--reports runs there)
            CHILDREN.stop()
            raise
        finally:
            CHILDREN.finished(process)
    if CHILDREN.stopping:
        raise SweepStopped(shlex.join(argv))
    return code, timed_out, time.monotonic() - start


def _start_warm(argv: list[str], stdout: int, stderr: int, cwd: str | None,
                env: dict[str, str]) -> Process | None:
    """``argv`` forked from the sweep's warm server (:mod:`.warm`) when one serves it; None
    when it must start cold (no server, or the server is gone: said once)."""
    server = WARM.for_argv(argv)
    if server is None:
        return None
    if server.wait_ready():  # outside CHILDREN's lock: a stop must not wait for the imports
        try:
            return CHILDREN.start(argv, spawn=lambda: server.spawn(argv, stdout, stderr, cwd, env))
        except WarmUnavailable:
            pass
    WARM.unavailable(server, server.failure)
    return None


def _tail(log: Path, lines: int = 6) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])[:600]


def port_model(model: str, options: SweepOptions) -> tuple[PortRecord | RunFailure, bool, float]:
    """The model's record, reused when present (unless forced): (record, reused, seconds)."""
    root = options.out
    record_path = root / RECORDS / f"{file_name(model)}.json"
    if record_path.is_file() and not options.force:
        return read_result(record_path), True, 0.0
    record_path.unlink(missing_ok=True)
    log = root / LOGS / f"{file_name(model)}.log"
    argv = [options.python, "-m", "harness", "--no-progress", "port", model,
            "--json", str(record_path), "--out", str(root / PORTS), *port_flags(options, model)]
    code, timed_out, seconds = run_logged(argv, log, options.timeout_s, options.cwd,
                                          env=thread_env(options.jobs))
    if not timed_out and code in (0, 1) and record_path.is_file():
        return read_result(record_path), False, seconds
    written = record_path.read_text(encoding="utf-8", errors="replace") if record_path.is_file() else ""
    failure = run_failure(model, code, timed_out, seconds, log, options, refusal=recorded_refusal(written))
    write_failure(root, failure)
    return failure, False, seconds


def port_flags(options: SweepOptions, model: str) -> list[str]:
    """The ``harness port`` flags ``model`` gets from the sweep (after MODEL, --json, --out).
    ``--size``: a library model always gets the sweep's (a port's own default for one is its
    library's sizes); a model type only ``default`` (tiny is already a port's default for it),
    and so does a folder (whose only size is its own)."""
    library = library_kind(model) is not None
    size = (["--size", options.size.value] if library or options.size is Size.DEFAULT else [])
    return ["--timeout", f"{options.stage_timeout_s:g}", "--memory-limit", str(options.memory_limit_mb),
            *(["--fix"] if options.fix else []), *size,
            *options.port_args]


def run_failure(model: str, code: int | None, timed_out: bool, seconds: float, log: Path,
                options: SweepOptions, *, refusal: str = "") -> RunFailure:
    """What stands for a port that left no record of a port: why, from its exit and its log's
    tail; a model the harness cannot drive is ``unsupported``, with its whole refusal:
    ``refusal``, what the port wrote in its record (:func:`recorded_refusal`), else the log's last
    line (a port that died before it wrote one)."""
    crashed = (code is not None and code < 0) or code == 3
    reason = (FailureReason.TIMEOUT if timed_out
              else FailureReason.CRASH if crashed else FailureReason.NO_RECORD)
    detail = (f"no result after {options.timeout_s:g} s; the process group was killed" if timed_out
              else _tail(log))
    if not refusal and code == UnsupportedModelError.exit_code:
        refusal = _refusal(log)
    if refusal:
        reason, detail = UNSUPPORTED, refusal
    return RunFailure(model, reason, round(seconds, 2), code, detail,
                      str(log.relative_to(options.out)), build=options.build)


def recorded_refusal(text: str) -> str:
    """The refusal a port wrote in its record (``PortRecord.unsupported``) before it exited;
    "" for no record, another record, or one that does not read."""
    try:
        record = PortRecord.from_json(jsonfile.loads(text)) if text.strip() else None
    except (ValueError, HarnessError):
        return ""
    return record.unsupported if record is not None else ""


def _refusal(log: Path) -> str:
    """The port's refusal (:class:`UnsupportedModelError`) from its log's last line, or "": for
    a port that died before it wrote its record."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    prefix = f"{ERROR_PREFIX}{UnsupportedModelError.PREFIX}"
    last = lines[-1].strip() if lines else ""
    return last.removeprefix(ERROR_PREFIX) if last.startswith(prefix) else ""


def torch_ir(port: FrontendPort) -> str:
    """The torch-dialect file the port's target lowering took: the last kept fix's output, else
    the output of the stage before that lowering (torch-to-linalg, torch-to-tosa, ...)."""
    kept = [f for f in port.fixes if f.kept and f.output_path]
    if kept:
        return kept[-1].output_path
    lowering = PortStage.parse(target_path(port.target).lowering)
    before = ""
    for stage in port.stages:
        if stage.name is lowering:
            return before
        before = stage.output
    return ""


def check_inputs(port: FrontendPort) -> tuple[str, int | None]:
    """The input set to check on: where the port's numbers differed from eager or its run
    crashed, else the traced one; with its attention mask's argument index when the set pads
    (``--padding-mask``)."""
    sets = sorted((n for n in port.numerics if n.inputs_file),
                  key=lambda n: (n.verdict is PortOutcome.VERIFIED,
                                 n.inputs is not InputSetName.TRACED))
    return (sets[0].inputs_file, sets[0].padding_mask) if sets else ("", None)


def check_port(model: str, variant: str, port: FrontendPort, options: SweepOptions) -> str:
    """``harness check`` (the op-level reference check) on a port that lowered, on the inputs
    where its numbers differed from eager (else its traced inputs); its JSON lands in
    ``DIR/checks``. Returns the check's outcome ("" when not run)."""
    from harness.execute.backends import backend

    if port.outcome is PortOutcome.FAILS or not backend(port.backend).searchable:
        return ""  # the check runs on the RefBackend: it does not speak for another backend
    path = check_path(options.out, model, variant, port.path)
    old = None if options.force else read_check(path)
    if old is not None:
        return str(old.get("outcome", ""))
    # Records are input: the IR and inputs they name are checked only inside the sweep's folder.
    source = str(within(torch_ir(port), [options.out]) or "")
    inputs, mask = check_inputs(port)
    inputs = str(within(inputs, [options.out]) or "")
    if not source or not Path(source).is_file():
        return ""
    log = options.out / LOGS / f"{file_name(model)}.{file_name(variant)}.{port.path}.check.log"
    out_json = path.with_suffix(".out")
    argv = [options.python, "-m", "harness", "--no-progress", "check", source,
            "--pipeline", ",".join(target_path(port.target).stages), "--json", "--out", str(path.parent),
            "--timeout", f"{options.stage_timeout_s:g}",
            *(["--inputs", inputs, *(["--padding-mask", str(mask)] if mask is not None else [])]
              if inputs and Path(inputs).is_file() else ["--random-inputs"])]
    path.parent.mkdir(parents=True, exist_ok=True)
    code, timed_out, seconds = run_logged(argv, log, options.timeout_s, options.cwd, stdout=out_json,
                                          env=thread_env(options.jobs))
    try:
        data = jsonfile.loads(out_json.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if not isinstance(data, dict):
        data = {"schema": CHECK_SCHEMA, "outcome": CheckOutcome.ERROR.value, "input_path": source,
                "error": "timed out" if timed_out else f"exit {code}: {_tail(log)}"}
    data["seconds_total"] = round(seconds, 2)
    write_atomically(path, jsonfile.dumps(data, indent=1) + "\n")
    out_json.unlink(missing_ok=True)
    return str(data.get("outcome", ""))


def timeline_port(model: str, port: FrontendPort, options: SweepOptions) -> None:
    """``--timelines``: the failing stage's timeline, written to ``FOLDER/timeline/`` beside the
    port's other outputs (the board links it). The command is built here from the input and
    pipeline the port's printed one names, each checked to lie in the sweep, and run by the
    sweep's Python with its ``--opt``: a record is input, its commands are never run as given."""
    argv = timeline_command(port, options)
    if argv is None:
        return
    if options.force or not (Path(argv[-1]) / "index.html").is_file():
        log = options.out / LOGS / f"{file_name(model)}.{port.path}.timeline.log"
        run_logged(argv, log, options.timeout_s, options.cwd, env=thread_env(options.jobs))


def timeline_command(port: FrontendPort, options: SweepOptions) -> list[str] | None:
    """``harness timeline FILE --pipeline P --out FOLDER/timeline`` for the port's printed one;
    None when it names none, or a file or folder outside the sweep."""
    return rebuilt_command("timeline", port.commands, port.folder, options)


def rebuilt_command(tool: str, commands: Sequence[str], folder: str, options: SweepOptions,
                    carry: Sequence[str] = ()) -> list[str] | None:
    """``harness TOOL FILE --pipeline P [extra] --out FOLDER/TOOL``, built from the first printed
    command of ``tool``'s input and pipeline, each checked (the input and ``folder`` inside the
    sweep, the pipeline not a flag), run by the sweep's Python with its ``--opt`` and the
    ``carry`` flags the printed one holds: a record is input, its commands are never run as
    given. None when there is no such command."""
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        if tool not in words[:4]:
            continue
        rest = words[words.index(tool) + 1:]
        pipeline = rest[rest.index("--pipeline") + 1] if "--pipeline" in rest[:-1] else ""
        source = within(rest[0], [options.out]) if rest else None
        port = within(folder, [options.out])
        if source is None or port is None or not pipeline or pipeline.startswith("-"):
            return None
        opt = list(options.port_args[options.port_args.index("--opt"):][:2]) \
            if "--opt" in options.port_args else []
        kept = [flag for flag in carry if flag in rest]
        return [options.python, "-m", "harness", "--no-progress", tool, str(source),
                "--pipeline", pipeline, *opt, *kept, "--out", str(port / tool)]
    return None


def sweep_one(model: str, options: SweepOptions) -> ModelRun:
    """Ports one model and checks its ports; the seconds count both."""
    start = time.monotonic()
    result, reused, _ = port_model(model, options)
    return finish(model, result, reused, options, start)


def finish(model: str, result: PortRecord | RunFailure, reused: bool, options: SweepOptions,
           start: float) -> ModelRun:
    """A model's record in hand (ported here or on a cluster): its checks, and its summary."""
    checks: dict[str, str] = {}
    if options.numerics_check and isinstance(result, PortRecord):
        for variant, port in result.ports():
            outcome = check_port(model, variant.name, port, options)
            if outcome:
                checks[f"{variant.name}.{port.path}"] = outcome
    if options.timelines and isinstance(result, PortRecord):
        for _, port in result.ports():
            if port.outcome == PortOutcome.FAILS:
                timeline_port(model, port, options)
    if drops_verified_ir(options) and isinstance(result, PortRecord) and not reused:
        for folder in verified_folders(result, checks):
            drop_ir_files(folder, options.out / PORTS)
    word, ok = _summary(result, checks)
    return ModelRun(model, word, time.monotonic() - start, reused, ok)


def drops_verified_ir(options: SweepOptions) -> bool:
    """Whether a verified port's IR files go once its record is in (``--keep-files failing``);
    with ``--numerics-check``, a port whose op-level check mismatched keeps them, so they must
    reach the check first."""
    return options.keep_files is KeepFiles.FAILING


def verified_folders(record: PortRecord, checks: dict[str, str] | None = None) -> list[str]:
    """The port folders whose IR may go: a frontend's ports share its import and torch backend
    contract (in its first target's folder) and a target's backends share its folder, so a
    frontend's folders go only when every one of its ports verified (and its op-level check,
    in ``checks``, found no miscompile)."""
    kept: set[tuple[str, str]] = set()
    for variant, port in record.ports():
        check = (checks or {}).get(f"{variant.name}.{port.path}")
        if port.outcome is not PortOutcome.VERIFIED or check == CheckOutcome.NUMERICS_MISMATCH.value:
            kept.add((variant.name, port.frontend.value))
    return list(dict.fromkeys(p.folder for v, p in record.ports()
                              if (v.name, p.frontend.value) not in kept))


def drops_before_checks(options: SweepOptions) -> bool:
    """Whether a verified port's IR may go before the sweep's own checks read it (a cluster
    task drops it on the worker, unsent): nothing of the sweep reads it then."""
    return drops_verified_ir(options) and not options.numerics_check


#: The IR files a port writes: text, and bytecode (where the weights are kept: numbers checked).
IR_SUFFIXES = (".mlir", ".mlirbc", ".vmfb")  # .vmfb: IREE's module, the weights inside


def drop_ir_files(folder: str, ports: Path) -> int:
    """Removes the IR files (``.mlir``, ``.mlirbc``) under a verified port's ``folder`` (``--keep-files
    failing``); the bytes freed. ``folder`` comes from a record, so it is used only inside the
    sweep's ports folder, and links are removed, never followed."""
    root = within(folder, [ports])
    if root is None or not root.is_dir():
        return 0
    freed = 0
    for parent, _, names in os.walk(root):  # does not descend into linked folders
        for name in names:
            path = Path(parent) / name
            if name.endswith(IR_SUFFIXES):
                try:
                    freed += path.lstat().st_size
                    path.unlink()
                except OSError:
                    pass
    return freed


def run_sweep(models: Sequence[str], options: SweepOptions,
              say: Callable[[str], None] | None = None) -> list[ModelRun]:
    """Every model, ``options.jobs`` at a time; one progress line as each finishes."""
    progress = SweepProgress(len(models), say, options.jobs)
    (options.out / RECORDS).mkdir(parents=True, exist_ok=True)

    def one(model: str) -> ModelRun:
        run = sweep_one(model, options)
        progress.finished(model, run.outcome, run.seconds, run.reused)
        return run

    warm = WARM.serving(options.python, options.cwd, options.out / LOGS / "warm-server.log",
                        say, env=thread_env(options.jobs)) if options.warm else nullcontext()
    # The server closes before the pool waits for its workers: one still waiting for the
    # server's imports then goes cold, or stops when the sweep is stopping.
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool, warm, \
            CHILDREN.stopped_on_exit(pool):
        return map_interruptibly(pool, one, models)


@dataclass
class Shard:
    index: int   # 1-based
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        from harness.errors import UsageError

        i, sep, n = text.partition("/")
        try:
            shard = cls(int(i), int(n))
        except ValueError:
            shard = None
        if not sep or shard is None or not 1 <= shard.index <= shard.count:
            raise UsageError(f"--shard expects I/N with 1 <= I <= N (e.g. --shard 2/4), got {text!r}.")
        return shard

    def select(self, models: Sequence[str]) -> list[str]:
        """Every N-th model from the I-th, in the order given: the shards of one list are
        disjoint and together cover it."""
        return [m for k, m in enumerate(models) if k % self.count == self.index - 1]

