"""Runs a pipeline of pipelines.toml with the tool that can run it, and returns the runner's record.

torch-mlir-opt pipelines go to ``harness.compiler.runner.run_pipeline``; ``driver = "bindings"``
ones (the RefBackend's ``linalg-to-llvm``) to a child ``python -m harness.execute.bindings_tool``
run through the same process hygiene (own process group, SIGABRT then SIGKILL on timeout) and read
into the same ``RunRecord``, so every stage of ``harness check`` fails the same typed way.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from harness.compiler import pipelines as pipelines_module
from harness.compiler.crash import parse_crash
from harness.compiler.pipeline_text import parse_pipeline
from harness.compiler.targets import TARGETS
from harness.compiler.records import Outcome, RunRecord, parse_diagnostics
from harness.compiler.runner import (
    RunOptions,
    check_input,
    classify,
    execute,
    run_pipeline,
    single_pass,
)
from harness.errors import PipelineConfigError

Driver = pipelines_module.Driver

#: The RefBackend's lowering of linalg-on-tensors to LLVM, by its name in pipelines.toml.
LLVM_PIPELINE = "linalg-to-llvm"
BINDINGS_MODULE = "harness.execute.bindings_tool"


def resolve(spec: str) -> tuple[str, Driver]:
    """The textual pipeline of ``spec`` (a name of ours, an upstream name, or textual) and the
    tool that runs it: a pipeline of ours says; a textual one that holds a pass only the
    bindings run (a bindings pipeline's, such as TOSA's tosa-to-linalg: the numbers search's
    lowering of a TOSA cut) runs there; anything else is torch-mlir-opt's."""
    pipelines = pipelines_module.default()
    textual = pipelines.resolve(spec)
    stripped = spec.strip()
    if stripped in pipelines.pipelines:
        return textual, pipelines.pipelines[stripped].driver
    if pipelines_module.is_textual(stripped) and not stripped.startswith("-"):
        try:
            names = {p.name for p in parse_pipeline(textual)}
        except PipelineConfigError:
            names = set()
        if names & _bindings_only_passes():
            return textual, Driver.BINDINGS
    return textual, Driver.TORCH_MLIR_OPT


def _bindings_only_passes() -> frozenset[str]:
    """The passes of a target's way on to linalg that only the bindings run (TOSA's
    tosa-to-*, which torch-mlir-opt does not register). The RefBackend's own lowering is not
    among them: its generic passes (inline, canonicalize) are torch-mlir-opt's too, and a
    textual pipeline of them keeps running there unless --driver says otherwise."""
    pipelines = pipelines_module.default()
    found: set[str] = set()
    for path in TARGETS.values():
        pipeline = pipelines.get(path.to_linalg) if path.to_linalg else None
        if pipeline is not None and pipeline.driver is Driver.BINDINGS:
            found |= {p.name for p in parse_pipeline(pipeline.textual())}
    return frozenset(found)


def driver_for(spec: str, driver: Driver | str | None = None) -> Driver:
    """The tool that runs ``spec``: ``driver`` when given (``--driver``), else ``resolve``'s."""
    return Driver.parse(driver) if driver else resolve(spec)[1]


def bindings_command(input_path: str, pipeline: str, options: RunOptions,
                     python: str = sys.executable) -> list[str]:
    """The child's command line: torch-mlir-opt's flags after ``python -m ...bindings_tool``."""
    cmd = [python, "-m", BINDINGS_MODULE, input_path, f"-pass-pipeline={pipeline}",
           "-o", options.output_path or os.devnull]
    if options.emit_bytecode:
        cmd.append("--emit-bytecode")
    if options.disable_threading:
        cmd.append("-mlir-disable-threading")
    return cmd + list(options.extra_args)


def bindings_launcher(python: str = sys.executable) -> Path:
    """An executable that runs ``python -m harness.execute.bindings_tool "$@"`` with this source
    tree importable: a path the tools can take as ``opt`` (``binary.identify`` asks it
    ``--version`` and ``--help-list``; it answers as a torch-mlir-opt stand-in), so bisect,
    reduce and report run a bindings pipeline through the runner unchanged.

    Written once per (Python, source tree) under ``$XDG_CACHE_HOME/torch-mlir-harness/``
    (atomically; its name holds a hash of its text, so two checkouts never share one).
    """
    src_root = str(Path(__file__).resolve().parents[2])
    text = ("#!/bin/sh\n# torch-mlir-opt's command line over the torch-mlir wheel's MLIR Python "
            "bindings (harness.execute.bindings_tool)\n"
            f"PYTHONPATH={shlex.quote(src_root)}${{PYTHONPATH:+:$PYTHONPATH}} "
            f"exec {shlex.quote(python)} -m {BINDINGS_MODULE} \"$@\"\n")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "torch-mlir-harness" / f"bindings-opt-{digest}"
    path = folder / "bindings-opt"
    if path.is_file() and os.access(path, os.X_OK) and path.read_text() == text:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bindings-opt.", dir=folder)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return path


def run_bindings_pipeline(input_path: str | os.PathLike, pipeline: str, *,
                          options: RunOptions = RunOptions()) -> RunRecord:
    """``pipeline`` (textual) on the bindings in a child process, as a RunRecord."""
    path = check_input(input_path, options.max_input_mb)
    cmd = bindings_command(str(path), pipeline, options)
    src_root = str(Path(__file__).resolve().parents[2])
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [src_root, os.environ.get("PYTHONPATH")]))}
    done = execute(cmd, replace(options, env={**(options.env or {}), **env}))
    if not done.timed_out and done.returncode == 1 and _rejected(done.stderr):
        raise PipelineConfigError(
            f"the MLIR Python bindings rejected the pipeline {pipeline!r}: "
            f"{done.stderr.strip().splitlines()[0][:400]} Check the pass names and options."
        )
    diagnostics = parse_diagnostics(done.stderr)
    crash = parse_crash(done.stderr, returncode=done.returncode,
                        pass_hint=options.pass_hint or single_pass(pipeline), at_timeout=done.timed_out)
    outcome = classify(done.returncode, done.stderr, crash, diagnostics, timed_out=done.timed_out)
    if outcome not in (Outcome.CRASH, Outcome.ASSERTION, Outcome.TIMEOUT):
        crash = None
    return RunRecord(
        outcome=outcome, command=cmd, pipeline=pipeline, input_path=str(path), binary=cmd[0],
        returncode=done.returncode, elapsed_s=done.elapsed_s, stderr=done.stderr,
        output_path=options.output_path or "",
        signal=crash.signal if crash is not None and not crash.at_timeout else "",
        diagnostics=diagnostics, crash=crash,
    )


def _rejected(stderr: str) -> bool:
    return "MLIR Textual PassPipeline Parser" in stderr or "does not refer to a registered pass" in stderr


def run_stage(input_path: str | os.PathLike, spec: str, *, output_path: str | os.PathLike,
              opt: str | None = None, options: RunOptions = RunOptions(),
              driver: Driver | None = None) -> RunRecord:
    """One pipeline (by name or textual) on ``input_path``, written to ``output_path``, by
    ``driver`` (default: the pipeline's own; torch-mlir-opt for a textual one)."""
    textual, own = resolve(spec)
    driver = driver or own
    options = replace(options, output_path=os.fspath(output_path))
    if driver is Driver.BINDINGS:
        return run_bindings_pipeline(input_path, textual, options=options)
    return run_pipeline(input_path, textual, opt=opt, options=options)
