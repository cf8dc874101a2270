"""``python -m harness.execute.bindings_opt FILE -pass-pipeline=PIPELINE -o OUT``: torch-mlir-opt's
command line over the wheel's MLIR Python bindings.

Why it exists: the RefBackend's lowering to LLVM (pipelines.toml ``linalg-to-llvm``) needs
upstream MLIR's bufferization and LLVM-conversion passes, which torch-mlir-opt does not register
(upstream's tools/torch-mlir-opt registers torch-mlir's passes and a handful of core ones). The
bindings register every pass. Running them in a child process, as the runner runs torch-mlir-opt,
keeps a crash out of the caller and gives a command to paste into a bug report.

It takes the flags the runner passes to torch-mlir-opt and writes diagnostics in MLIR's
``FILE:LINE:COL: error: MESSAGE`` form, so ``harness.compiler.records.parse_diagnostics`` reads
them. Exit status: 0 success, 1 a parse or pass failure; a crash dies by its signal (Python's
faulthandler prints where).
"""

from __future__ import annotations

import argparse
import faulthandler
import re
import sys
from typing import Sequence

# Not imported from the bindings here: this module must start fast and fail clearly.
EXIT_FAILURE = 1

_FILE_LOC = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def _where(location) -> str:
    """``file:line:col`` of the first file location inside ``location`` (named, call-site and
    fused locations wrap one), else ``<unknown>``."""
    m = _FILE_LOC.search(str(location))
    if not m:
        return "<unknown>"
    return f"{m.group('file')}:{m.group('line')}:{m.group('col')}"


def _diagnostic_lines(diag, severity: str = "error") -> list[str]:
    lines = [f"{_where(diag.location)}: {severity}: {diag.message}"]
    for note in diag.notes:
        lines += _diagnostic_lines(note, "note")
    return lines


def diagnostics_text(error) -> str:
    """An MLIRError's diagnostics as torch-mlir-opt prints them (or its message when it carries
    none), so ``parse_diagnostics`` reads them."""
    diagnostics = getattr(error, "error_diagnostics", None) or []
    lines = [line for diag in diagnostics for line in _diagnostic_lines(diag)]
    return "\n".join(lines or [f"<unknown>:0: error: {str(error).strip()}"])


def _fail(error) -> int:
    print(diagnostics_text(error), file=sys.stderr)
    return EXIT_FAILURE


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m harness.execute.bindings_opt",
        description="Run a pass pipeline with the torch-mlir wheel's MLIR Python bindings "
                    "(torch-mlir-opt's flags).")
    p.add_argument("input", help="IR file (text or bytecode)")
    p.add_argument("-pass-pipeline", "--pass-pipeline", dest="pipeline", required=True,
                   help="textual pipeline, e.g. 'builtin.module(canonicalize)'")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' = stdout)")
    p.add_argument("-emit-bytecode", "--emit-bytecode", action="store_true")
    p.add_argument("-mlir-disable-threading", "--mlir-disable-threading", action="store_true")
    p.add_argument("-mlir-print-debuginfo", "--mlir-print-debuginfo", action="store_true")
    p.add_argument("-mlir-print-ir-after-failure", "--mlir-print-ir-after-failure", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    faulthandler.enable()
    from torch_mlir import ir, passmanager

    from harness.compiler.irfile import write_atomically
    from harness.errors import HarnessError

    from .context import bindings_context

    context = bindings_context(threading=not args.mlir_disable_threading)
    with context:
        try:
            pm = passmanager.PassManager.parse(args.pipeline)
        except ValueError as e:  # the bindings raise the textual parser's message as ValueError
            print(f"<unknown>:0: error: {str(e).strip()}", file=sys.stderr)
            return EXIT_FAILURE
        try:
            module = ir.Module.parseFile(args.input)
        except ir.MLIRError as e:
            return _fail(e)
        except OSError as e:  # parseFile reports an unreadable file as a plain error
            print(f"<unknown>:0: error: cannot read {args.input}: {e}", file=sys.stderr)
            return EXIT_FAILURE
        pm.enable_verifier(True)
        if args.mlir_print_ir_after_failure:
            pm.enable_ir_printing(print_after_all=False, print_after_failure=True,
                                  enable_debug_info=args.mlir_print_debuginfo)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            return _fail(e)

        def write(f) -> None:
            if args.emit_bytecode:
                module.operation.write_bytecode(f)
            else:
                module.operation.print(file=f, enable_debug_info=args.mlir_print_debuginfo,
                                       assume_verified=True)

        if args.output == "-":
            if args.emit_bytecode:
                write(sys.stdout.buffer)
            else:
                write(sys.stdout)
            return 0
        try:
            write_atomically(args.output, write, binary=args.emit_bytecode)
        except HarnessError as e:
            print(f"<unknown>:0: error: {e}", file=sys.stderr)
            return EXIT_FAILURE
    return 0


if __name__ == "__main__":
    sys.exit(main())
