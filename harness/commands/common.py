"""What every subcommand shares: exit codes, progress lines, how to print a command
that reruns what failed, and the arguments of the tools over an IR file."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import defaults

from ..errors import HarnessError, UsageError

if TYPE_CHECKING:  # numpy: the commands import nothing heavy at start
    from ..execute.closeness import Tolerances
    from ..execute.inputs import RandomInputs


def seconds(text: str) -> float:
    """An argparse type for a time limit: a finite number of seconds above 0 (nan, inf, 0 and
    negative limits were a traceback, a limit that never ends, or a false 'timeout')."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expects a number of seconds above 0 (e.g. 60), got {text!r}")
    return value


def count(text: str) -> int:
    """An argparse type for a count of workers: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expects a whole number of at least 1 (e.g. 2), got {text!r}")
    return value

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

# Where bisect, check and fix put the folder of files they print (as port does): under the run's
# own output folder, never a /tmp folder that outlives the run.
DEFAULT_OUT = "harness-out"

# What a command prints to the terminal at most: the first lines, each cut to a width; the
# rest is in --json (10 MB of stderr or 200,000 diagnostics would otherwise all be printed).
MAX_PRINTED_LINES = 200
MAX_PRINTED_CHARS = 2000


def print_bounded(lines: Sequence[str]) -> None:
    from ..compiler.text import clip_lines

    shown, hidden = clip_lines(lines, max_lines=MAX_PRINTED_LINES, max_chars=MAX_PRINTED_CHARS)
    for line in shown:
        print(line)
    if hidden:
        print(f"... {hidden:,} more lines (all of them in --json)")


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


def progress(args: argparse.Namespace) -> Callable[[str], None] | None:
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


def stderr_progress(quiet: bool = False) -> Callable[[str], None] | None:
    return None if quiet else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))


def reproduce(pipeline: str, input_path: str, binary: str) -> str:
    """The command that reruns a record: the binary that ran, so it pastes into any shell."""
    from ..compiler.runner import repro_command

    return repro_command(pipeline, input_path, binary)


def tool_opt(args: argparse.Namespace) -> str | None:
    """``--opt`` as the tools take it: the bindings tool's launcher for a bindings pipeline."""
    from ..diagnose.tool_choice import tool_for

    return tool_for(args.pipeline, args.opt, getattr(args, "driver", None))


def textual_pipeline(spec: str) -> str:
    from ..compiler import pipelines

    return pipelines.default().resolve(spec)


def pipeline_names() -> str:
    try:
        from ..compiler import pipelines

        return ", ".join(pipelines.default().pipelines)
    except HarnessError:  # a broken pipelines.toml is reported when a pipeline is resolved
        return "see 'harness pipelines'"


class TargetPipeline(argparse.Action):
    """``--target T``: the pipeline of backend contract T (harness.compiler.targets), stored
    as ``--pipeline``: its lowering alone, or (``whole``) its stages on to linalg-on-tensors,
    for a tool that runs the result."""

    def __init__(self, option_strings: Sequence[str], dest: str, whole: bool = False,
                 **kwargs: Any) -> None:
        self.whole = whole
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 value: Any, option_string: str | None = None) -> None:
        # value: the one string given (nargs unset); Action's own signature allows more
        from harness.compiler.targets import Target, target_path

        try:
            path = target_path(Target.parse(value))
        except HarnessError as e:
            parser.error(f"--target: {e}")  # exits
            raise
        setattr(namespace, self.dest, ",".join(path.stages) if self.whole else path.lowering)


def pipeline_or_target(p: argparse.ArgumentParser, pipeline_help: str, *, whole: bool = False,
                       default: str | None = None, iree: bool = False) -> None:
    """``--pipeline`` or ``--target`` (one of them required unless there is a default); with
    ``iree``, or ``--iree-compile TARGET``: IREE's compile of the file as that contract."""
    group = p.add_mutually_exclusive_group(required=default is None)
    group.add_argument("--pipeline", default=default, help=pipeline_help)
    if iree:
        group.add_argument("--iree-compile", choices=("linalg", "tosa", "stablehlo"),
                           metavar="linalg|tosa|stablehlo",
                           help="instead of --pipeline: the file is that backend contract and the "
                                "failure is iree-compile's (llvm-cpu; the [iree] extra), as a port "
                                "on --backend iree meets it")
    group.add_argument("--target", dest="pipeline", action=TargetPipeline, whole=whole,
                       metavar="linalg|tosa|stablehlo",
                       help="instead of --pipeline: the file at the torch backend contract, "
                            + ("lowered to this backend contract and on to linalg-on-tensors (TOSA "
                               "and StableHLO as torch-mlir's e2e suite does)" if whole else
                               "lowered to this backend contract (torch-to-linalg, "
                               "torch-to-tosa, torch-to-stablehlo)"))


def ir_tool(sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str, *,
             timeout: float | None = defaults.TIMEOUT_S,
             timeout_help: str = "seconds per torch-mlir-opt run before it counts as a hang "
                                 f"(default: {defaults.TIMEOUT_S:g})",
             json_help: str = "", whole_target: bool = False,
             iree: bool = False) -> argparse.ArgumentParser:
    """A subcommand over an IR file and a pipeline: the arguments every such tool shares."""
    p = sub.add_parser(name, help=help)
    p.add_argument("file")
    pipeline_or_target(p, f"a pipeline name ({pipeline_names()}; 'harness pipelines' shows what "
                          "each runs), an upstream pipeline name, a textual pipeline, or pass "
                          "flags as --pipeline=-canonicalize", whole=whole_target, iree=iree)
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--driver", choices=["torch-mlir-opt", "bindings"],
                   help="the tool that runs the pipeline (default: a named pipeline's own, "
                        "torch-mlir-opt for a textual one); 'bindings' runs upstream MLIR passes "
                        "torch-mlir-opt does not register (python -m harness.execute.bindings_tool)")
    p.add_argument("--timeout", type=seconds, default=timeout, help=timeout_help)
    if json_help:
        p.add_argument("--json", action="store_true", help=json_help)
    return p


def backend_flag(p: argparse.ArgumentParser, *, many: bool) -> None:
    """``--backend``, defined once for every command that runs a lowered module: the port's list
    (``many``: backends separated by commas, parsed by ``parse_backends``; None leaves the
    port's own default) or check's and fix's one backend (choices: the registry's names). The
    default is the library's, ``backend_names.DEFAULT_BACKEND``, in both."""
    from ..execute.backend_names import DEFAULT_BACKEND, BackendName

    names = [n.value for n in BackendName]  # the keys of backends.BACKENDS (without numpy)
    about = (f"{DEFAULT_BACKEND.value} (the default: torch-mlir's test backend, in the wheel) and iree "
             "(iree-compile for llvm-cpu and iree-run-module; pip install -e '.[iree]')")
    if many:
        p.add_argument("--backend", metavar="LIST",
                       help=f"what compiles and runs each target's module, separated by commas: {about}, "
                            "which takes linalg and StableHLO as printed, TOSA in generic form")
    else:
        p.add_argument("--backend", choices=names, default=DEFAULT_BACKEND.value,
                       help=f"what compiles and runs the linalg file: {about}")


def device_flags(p: argparse.ArgumentParser) -> None:
    """``--device`` and ``--cuda-target``, defined once for the port and the sweep (which passes
    them to each port); None leaves the library's default (``backend_names.DEFAULT_DEVICE``)."""
    from ..execute.backend_names import DEFAULT_DEVICE, Device

    p.add_argument("--device", choices=[d.value for d in Device],
                   help=f"where the backend runs the compiled module: {DEFAULT_DEVICE.value} (the "
                        "default), or cuda: IREE compiles for a CUDA GPU and runs on it (--backend "
                        "iree); on a machine without one it compiles, writes --iree-testcase, and says "
                        "that it did not run (no number is claimed)")
    p.add_argument("--cuda-target", metavar="sm_XX",
                   help="with --device cuda: the GPU's compute capability (sm_80, sm_86, sm_89); "
                        "default: the GPU's own (nvidia-smi), at most sm_89, the newest IREE 3.13 "
                        "compiles; sm_80 when there is no GPU")


def value_flags(p: argparse.ArgumentParser, *, prefix: str = "", tolerance_help: str = "") -> None:
    """--seed, --int-range, --function and --tolerance: the random inputs and tolerances of a
    numbers check, spelled alike by check, fix and the --numerics tools (read with
    ``random_inputs`` and ``tolerances``)."""
    p.add_argument("--seed", type=int, default=0, help=f"{prefix}seed of the random inputs (default 0)")
    p.add_argument("--int-range", default="0,2", metavar="LOW,HIGH",
                   help=f"{prefix}random integers are drawn from [LOW, HIGH) (default 0,2)")
    p.add_argument("--function", help=f"{prefix}the entry function (default: the only public one)")
    p.add_argument("--tolerance", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help=f"{prefix}tolerance of one dtype, e.g. f32=1e-3,1e-5 (repeatable"
                        f"{'; ' + tolerance_help if tolerance_help else ''})")


def random_inputs(args: argparse.Namespace) -> RandomInputs:
    """The RandomInputs of ``value_flags``."""
    from ..execute.inputs import RandomInputs

    low, high = int_range(args.int_range)
    return RandomInputs(seed=args.seed, int_low=low, int_high=high)


def tolerances(args: argparse.Namespace) -> Tolerances:
    """The Tolerances of ``value_flags``: the defaults with each --tolerance over them."""
    from ..execute.closeness import Tolerances

    return Tolerances().with_overrides(args.tolerance)


def int_range(text: str) -> tuple[int, int]:
    low, sep, high = text.partition(",")
    try:
        if not sep or int(low) >= int(high):
            raise ValueError
        return int(low), int(high)
    except ValueError:
        raise UsageError(f"--int-range expects LOW,HIGH with LOW < HIGH (e.g. 0,100), "
                           f"got {text!r}.") from None
