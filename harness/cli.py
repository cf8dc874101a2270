"""The ``harness`` command line: thin wrappers over the library, one paragraph per error.

Exit status, the same for every subcommand (README, "Exit status"):

- 0: success: the pipeline passes, the port lowers, the listing was printed, nothing to do;
- 1: the failure you asked about is there (the file fails the pipeline: run, explain, bisect,
  reduce and report did their job on it), or a port failed;
- 2: bad usage or input (an unknown option or pipeline, a missing file, a file that is not
  MLIR, an unusable binary or output folder);
- 3: an internal error of the harness (a bug: ``--verbose`` shows the traceback); 130: Ctrl-C.

Progress goes to stderr, on by default when stderr is a terminal and off when it is piped
(``--progress`` / ``--no-progress`` decide). ``--verbose`` and those two are accepted before or
after the subcommand.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence

from .commands import builds, check, diagnose, fix, models, sweep, timeline
from .commands.common import EXIT_FAILURE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE  # noqa: F401 (the convention's names)
from .errors import ERROR_PREFIX, HarnessError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Import PyTorch models into torch-mlir, run its pipelines, and find out why they fail.",
    )
    parser.add_argument("--verbose", action="store_true", help="print tracebacks on errors")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress lines on stderr (default: on when stderr is a terminal)")
    parser.epilog = ("exit status: 0 success (passes, lowers, nothing to do); 1 the failure "
                     "asked about is there, or a port failed; 2 bad usage or input; 3 an "
                     "internal error")
    sub = parser.add_subparsers(dest="command", required=True)

    models.register(sub)
    diagnose.register(sub)
    builds.register(sub)
    check.register(sub)
    fix.register(sub)
    sweep.register(sub)
    timeline.register(sub)

    _common_options(sub)
    return parser


def _common_options(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``--verbose`` and ``--progress`` after any subcommand too (also ones added later):
    unset there, they leave the value given before the subcommand."""
    for p in sub.choices.values():
        known = {o for a in p._actions for o in a.option_strings}
        if "--verbose" not in known:
            p.add_argument("--verbose", action="store_true", default=argparse.SUPPRESS,
                           help="print tracebacks on errors")
        if "--progress" not in known:
            p.add_argument("--progress", action=argparse.BooleanOptionalAction,
                           default=argparse.SUPPRESS,
                           help="progress lines on stderr (default: on when stderr is a terminal)")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command. Ctrl-C, SIGTERM and SIGHUP stop it the same way: the running
    torch-mlir-opt's process group is killed, partial output removed, exit 128+N."""
    from .compiler.process import Terminated, stop_on_signals

    parser = build_parser()
    args = None
    # The stop signals are caught outside the ``with``: one that lands while its handlers are
    # being installed or restored (between the ``with`` and its body's ``try``) stops the
    # command quietly too, instead of escaping as an uncaught KeyboardInterrupt (exit -2).
    try:
        with stop_on_signals():
            try:
                args = parser.parse_args(argv)
                if hasattr(args, "opt"):  # it runs torch-mlir-opt: before any model is built
                    from .compiler.runner import check_temp_dir

                    _import_mlir_uninterrupted()

                    check_temp_dir()
                if hasattr(args, "opt") and getattr(args, "announce_binary", True) \
                        and not getattr(args, "builds", None):
                    builds.announce_binary(args)
                return args.fn(args)
            except HarnessError as e:
                if args is not None and args.verbose:
                    traceback.print_exc()
                _last_line(f"{ERROR_PREFIX}{e}")
                return e.exit_code
            except BrokenPipeError:
                os._exit(1)
            except Exception as e:  # a bug in the harness, not in the input: keep exit 1 free
                if args is not None and args.verbose:
                    traceback.print_exc()
                _last_line(f"harness: internal error: {type(e).__name__}: {e}. This is a bug in "
                           "the harness; rerun with --verbose for the traceback and report it.")
                return EXIT_INTERNAL
    except Terminated as e:
        _last_line(f"harness: stopped by {signal.Signals(e.signum).name}")
        return 128 + e.signum
    except KeyboardInterrupt:
        _last_line("harness: interrupted")
        return 128 + signal.SIGINT


def _import_mlir_uninterrupted() -> None:
    """Imports the MLIR bindings with the stop signals held until it is done: a Ctrl-C inside
    their C extension's initialization (``torch_mlir._mlir_libs``) segfaulted the process
    (exit -11, seen in tests/compiler/test_signals.py's Ctrl-C test at 0.1 s) instead of
    stopping it; held, the signal arrives right after, at a point where it stops cleanly."""
    from .compiler.process import STOP_SIGNALS

    before = signal.pthread_sigmask(signal.SIG_BLOCK, set(STOP_SIGNALS))
    try:
        import torch_mlir.ir  # noqa: F401  (0.13 s; every command that runs torch-mlir-opt needs it)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _last_line(message: str) -> None:
    """A last line on stderr, which may be gone (a closed terminal sends SIGHUP)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
