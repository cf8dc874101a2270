"""What every subcommand shares: exit codes, progress lines, how to print a command
that reruns what failed, and the arguments of the tools over an IR file."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from typing import Sequence

from ..errors import HarnessError, UsageError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def parse_overrides(items: Sequence[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(
                f"--set expects FIELD=VALUE (e.g. --set num_hidden_layers=2), got {item!r}."
            )
        try:
            value: object = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key.strip()] = value
    return out


def invocation() -> str:
    """How the user started this command (``.venv/bin/harness``, ``python -m harness``), so the
    commands we print work when pasted, venv activated or not."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "harness":
        return shlex.quote(argv0)
    return f"{shlex.quote(sys.executable)} -m harness"


def progress(args: argparse.Namespace):
    """A line printer on stderr, or None: ``--progress``/``--no-progress``, else on when stderr
    is a terminal (quiet when piped or captured)."""
    wanted = getattr(args, "progress", None)
    if wanted is None:
        wanted = sys.stderr.isatty()
    if not wanted:
        return None
    return lambda line: print(f"  {line}", file=sys.stderr, flush=True)


def say(args: argparse.Namespace, line: str) -> None:
    say = progress(args)
    if say is not None:
        say(line)


def stderr_progress(quiet: bool = False):
    return None if quiet else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))


def reproduce(pipeline: str, input_path: str, binary: str) -> str:
    """The command that reruns a record: the binary that ran, so it pastes into any shell."""
    from ..compiler.runner import repro_command

    return repro_command(pipeline, input_path, shlex.quote(binary))


def textual_pipeline(spec: str) -> str:
    from ..compiler import pipelines

    return pipelines.default().resolve(spec)


def pipeline_names() -> str:
    try:
        from ..compiler import pipelines

        return ", ".join(pipelines.default().pipelines)
    except HarnessError:  # a broken pipelines.toml is reported when a pipeline is resolved
        return "see 'harness pipelines'"


def ir_tool(sub, name: str, help: str, *, timeout: float | None = 600.0,
             timeout_help: str = "seconds per torch-mlir-opt run before it counts as a hang "
                                 "(default: 600)",
             json_help: str = "") -> argparse.ArgumentParser:
    """A subcommand over an IR file and a pipeline: the arguments every such tool shares."""
    p = sub.add_parser(name, help=help)
    p.add_argument("file")
    p.add_argument("--pipeline", required=True,
                   help=f"a pipeline name ({pipeline_names()}; 'harness pipelines' shows what "
                        "each runs), an upstream pipeline name, a textual pipeline, or pass "
                        "flags as --pipeline=-canonicalize")
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    if json_help:
        p.add_argument("--json", action="store_true", help=json_help)
    return p
