"""``python -m harness.execute.bindings_tool FILE -pass-pipeline=PIPELINE -o OUT``: torch-mlir-opt's
command line over the wheel's MLIR Python bindings.

Why it exists: the RefBackend's lowering to LLVM (pipelines.toml ``linalg-to-llvm``) needs
upstream MLIR's bufferization and LLVM-conversion passes, which torch-mlir-opt does not register
(upstream's tools/torch-mlir-opt registers torch-mlir's passes and a handful of core ones). The
bindings register every pass. Running them in a child process, as the runner runs torch-mlir-opt,
keeps a crash out of the caller and gives a command to paste into a bug report.

It stands in for torch-mlir-opt wherever the tools take a binary (``opt=PATH``: bisect, reduce,
report; the path is ``lowering.bindings_launcher()``, the console script
``harness-bindings-opt``): ``--version`` names what it is (``binary.BINDINGS_STAND_IN``) and the
wheel's LLVM, ``--help-list`` its passes, and it takes the flags those tools pass in
torch-mlir-opt's spelling. The crash reproducer is emulated pass by pass
(``bindings_steps``); a flag it cannot honour is refused in torch-mlir-opt's words ("Unknown
command line argument"), so the runner raises a clear PipelineConfigError instead of recording a
compiler failure.

Diagnostics are written in MLIR's ``FILE:LINE:COL: error: MESSAGE`` form, so
``harness.compiler.records.parse_diagnostics`` reads them. Exit status: 0 success, 1 a parse or
pass failure or a refused command line; a crash dies by its signal (Python's faulthandler
prints where).
"""

from __future__ import annotations

import argparse
import faulthandler
import sys
from typing import IO, TYPE_CHECKING, Any, NoReturn
from collections.abc import Sequence

from harness.compiler.locations import first_file_location

if TYPE_CHECKING:
    from torch_mlir import ir, passmanager

# Not imported from the bindings here: this module must start fast and fail clearly.
EXIT_FAILURE = 1


def _where(location: ir.Location) -> str:
    """``file:line:col`` of the first file location inside ``location`` (named, call-site and
    fused locations wrap one), else ``<unknown>``."""
    found = first_file_location(str(location))
    return str(found) if found is not None else "<unknown>"


def _diagnostic_lines(diag: ir.DiagnosticInfo, severity: str = "error") -> list[str]:
    lines = [f"{_where(diag.location)}: {severity}: {diag.message}"]
    for note in diag.notes:
        lines += _diagnostic_lines(note, "note")
    return lines


def diagnostics_text(error: ir.MLIRError) -> str:
    """An MLIRError's diagnostics as torch-mlir-opt prints them (or its message when it carries
    none), so ``parse_diagnostics`` reads them."""
    diagnostics = getattr(error, "error_diagnostics", None) or []
    lines = [line for diag in diagnostics for line in _diagnostic_lines(diag)]
    return "\n".join(lines or [f"<unknown>:0: error: {str(error).strip()}"])


def _fail(error: ir.MLIRError) -> int:
    print(diagnostics_text(error), file=sys.stderr)
    return EXIT_FAILURE


# Flags the harness's tools pass to torch-mlir-opt that the bindings cannot honour, and why.
_CANNOT_HONOUR = {
    "--mlir-very-unsafe-disable-verifier-on-parsing":
        "the MLIR Python bindings always verify what they parse",
}


class _OptArgumentParser(argparse.ArgumentParser):
    """Errors in torch-mlir-opt's words (exit 1, "Unknown command line argument"), so the runner
    reports them as a rejected command line, not as a compiler failure."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_FAILURE)


def build_parser() -> argparse.ArgumentParser:
    p = _OptArgumentParser(
        prog="python -m harness.execute.bindings_tool", allow_abbrev=False,
        description="Run a pass pipeline with the torch-mlir wheel's MLIR Python bindings "
                    "(torch-mlir-opt's flags).")
    p.add_argument("input", help="IR file (text or bytecode)")
    p.add_argument("-pass-pipeline", "--pass-pipeline", dest="pipeline", default="",
                   help="textual pipeline, e.g. 'builtin.module(canonicalize)' (none: parse, "
                        "verify and print)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' = stdout)")
    p.add_argument("-emit-bytecode", "--emit-bytecode", action="store_true")
    p.add_argument("-mlir-disable-threading", "--mlir-disable-threading", action="store_true")
    p.add_argument("-mlir-print-debuginfo", "--mlir-print-debuginfo", action="store_true")
    p.add_argument("-mlir-print-ir-after-failure", "--mlir-print-ir-after-failure", action="store_true")
    p.add_argument("-mlir-elide-elementsattrs-if-larger", "--mlir-elide-elementsattrs-if-larger",
                   type=int, dest="elide_elements")
    p.add_argument("-mlir-elide-resource-strings-if-larger", "--mlir-elide-resource-strings-if-larger",
                   type=int, dest="elide_resources")
    p.add_argument("-print-op-stats", "--print-op-stats", choices=["json"], dest="op_stats",
                   help="op counts as JSON on stderr (only the json form)")
    p.add_argument("-dump-pass-pipeline", "--dump-pass-pipeline", action="store_true")
    p.add_argument("-mlir-timing", "--mlir-timing", action="store_true")
    p.add_argument("-mlir-timing-display", "--mlir-timing-display", choices=["tree"], default="tree")
    p.add_argument("-mlir-pass-pipeline-crash-reproducer", "--mlir-pass-pipeline-crash-reproducer",
                   dest="reproducer", default="",
                   help="run pass by pass; on a failure write the IR before the failing pass "
                        "and that pass, and name it in MLIR's note")
    p.add_argument("-mlir-pass-pipeline-local-reproducer", "--mlir-pass-pipeline-local-reproducer",
                   action="store_true", dest="local_reproducer",
                   help="accepted: the reproducer is always the failing pass alone")
    return p


def version_text() -> str:
    """``--version``: what this is (harness.compiler.binary.BINDINGS_STAND_IN), then the LLVM
    build of the wheel whose bindings it runs, as that wheel's torch-mlir-opt reports it."""
    import subprocess
    from importlib import metadata

    from harness.compiler.binary import BINDINGS_STAND_IN, wheel_binary

    try:
        wheel = f"torch-mlir {metadata.version('torch-mlir')}"
    except metadata.PackageNotFoundError:
        wheel = "torch-mlir (version unknown)"
    llvm = "LLVM (version unknown: the wheel's torch-mlir-opt was not found)"
    binary = wheel_binary()
    if binary is not None:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                              check=False)
        llvm = (done.stdout + done.stderr).strip() or llvm
    return (f"harness.execute.bindings_tool: {BINDINGS_STAND_IN} of {wheel}\n"
            f"(the LLVM build below is that wheel's, as its torch-mlir-opt reports it)\n{llvm}")


HELP_LIST = """\
USAGE: python -m harness.execute.bindings_tool FILE -pass-pipeline=PIPELINE [-o OUT] [options]

Passes: every pass the torch-mlir wheel's MLIR Python bindings register: upstream MLIR's
(bufferization, linalg, LLVM conversions...) and torch-mlir's (torch-*, refback-*, tm-tensor-*).
Give them as -pass-pipeline='builtin.module(...)'; pass flags (-canonicalize) are not taken.

Options (torch-mlir-opt's spelling):
  -o, --emit-bytecode, -mlir-disable-threading, -mlir-print-debuginfo,
  -mlir-print-ir-after-failure, --mlir-elide-elementsattrs-if-larger=N,
  --mlir-elide-resource-strings-if-larger=N, --print-op-stats=json, --dump-pass-pipeline,
  -mlir-timing, -mlir-timing-display=tree, --mlir-pass-pipeline-crash-reproducer=FILE,
  --mlir-pass-pipeline-local-reproducer
"""


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    for arg in unknown:
        why = _CANNOT_HONOUR.get(arg.split("=")[0])
        hint = (f" ({why})" if why else
                ": give passes as -pass-pipeline='builtin.module(...)'" if arg.startswith("-")
                else ": one input file only")
        print(f"{parser.prog}: Unknown command line argument '{arg}'{hint}.", file=sys.stderr)
    if unknown:
        sys.exit(EXIT_FAILURE)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"]:
        print(version_text())
        return 0
    if argv[:1] in (["--help-list"], ["--help-list-hidden"]):
        print(HELP_LIST, end="")
        return 0
    args = _parse_args(argv)
    faulthandler.enable()
    from .context import bindings_context

    with bindings_context(threading=not args.mlir_disable_threading):
        return _compile(args)


def _compile(args: argparse.Namespace) -> int:
    """Parse the input, run the pipeline, write the result: 0, or the exit status of the first
    failure (its diagnostics printed)."""
    from torch_mlir import ir, passmanager

    pm = None
    if args.pipeline:
        try:
            pm = passmanager.PassManager.parse(args.pipeline)
        except ValueError as e:  # the bindings raise the textual parser's message as ValueError
            print(f"<unknown>:0: error: {str(e).strip()}", file=sys.stderr)
            return EXIT_FAILURE
    if args.dump_pass_pipeline:
        print(f"Pass Manager with 1 passes:\n{pm or 'builtin.module()'}\n", file=sys.stderr)
    try:
        module = ir.Module.parseFile(args.input)
    except ir.MLIRError as e:
        return _fail(e)
    except OSError as e:  # parseFile reports an unreadable file as a plain error
        print(f"<unknown>:0: error: cannot read {args.input}: {e}", file=sys.stderr)
        return EXIT_FAILURE
    status = _run(pm, module, args) if pm is not None else 0
    if status:
        return status
    if args.op_stats:
        print(_op_stats_json(module.operation), file=sys.stderr)
    return _write(module, args)


def _write(module: ir.Module, args: argparse.Namespace) -> int:
    """``module`` to ``-o`` (stdout for ``-``), as text or bytecode: 0, or 1 with the error."""
    from harness.compiler.irfile import write_atomically
    from harness.errors import HarnessError

    def write(f: IO[Any]) -> None:
        if args.emit_bytecode:
            module.operation.write_bytecode(f)
        else:
            module.operation.print(file=f, enable_debug_info=args.mlir_print_debuginfo,
                                   large_elements_limit=args.elide_elements,
                                   large_resource_limit=args.elide_resources,
                                   assume_verified=True)

    if args.output == "-":
        write(sys.stdout.buffer if args.emit_bytecode else sys.stdout)
        return 0
    try:
        # /dev/null or a fifo is written in place (write_atomically never renames over it)
        write_atomically(args.output, write, binary=args.emit_bytecode)
    except OSError as e:
        print(f"<unknown>:0: error: cannot open output file '{args.output}': "
              f"{e.strerror or e}", file=sys.stderr)
        return EXIT_FAILURE
    except HarnessError as e:
        print(f"<unknown>:0: error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    return 0


def _run(pm: passmanager.PassManager, module: ir.Module, args: argparse.Namespace) -> int:
    """The pipeline on ``module``: in one PassManager, or pass by pass for a local reproducer
    (harness.execute.bindings_steps); 0, or the exit status of a failure."""
    from torch_mlir import ir

    if args.reproducer:  # always the local form: the failing pass alone, the IR before it
        return _run_stepwise(module, args)
    pm.enable_verifier(True)
    if args.mlir_timing:
        pm.enable_timing()
    if args.mlir_print_ir_after_failure:
        pm.enable_ir_printing(print_after_all=False, print_after_failure=True,
                              enable_debug_info=args.mlir_print_debuginfo)
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        return _fail(e)
    return 0


def _run_stepwise(module: ir.Module, args: argparse.Namespace) -> int:
    from .bindings_steps import run_in_steps

    stepped = run_in_steps(module, args.pipeline, keep_before=True)
    if args.mlir_timing:
        print(stepped.timing_report(), file=sys.stderr)
    failed = stepped.failed
    if failed is None:
        return 0
    status = _fail(stepped.error)
    anchor = failed.ref.anchors[-1] if failed.ref.anchors else "builtin.module"
    _write_reproducer(args, stepped.before, failed.ref.textual(), failed.name, anchor)
    return status


def _write_reproducer(args: argparse.Namespace, before: ir.Operation, pipeline: str, pass_name: str,
                      anchor: str) -> None:
    """The IR before the failing pass with the pass to rerun, and MLIR's note naming both."""
    from harness.compiler.irfile import write_atomically
    from harness.compiler.records import REPRODUCER_SUMMARY

    from .bindings_steps import reproducer_text

    text = reproducer_text(_printed(before, args.mlir_print_debuginfo), pipeline)
    write_atomically(args.reproducer, text)
    print(f"<unknown>:0: error: {REPRODUCER_SUMMARY}", file=sys.stderr)
    print(f"<unknown>:0: note: Pipeline failed while executing [`{pass_name}` on '{anchor}' "
          f"operation]: reproducer generated at `{args.reproducer}`", file=sys.stderr)


def _printed(op: ir.Operation, debug_info: bool) -> str:
    import io

    buf = io.StringIO()
    op.print(file=buf, enable_debug_info=debug_info, assume_verified=True)
    return buf.getvalue()


def _op_stats_json(op: ir.Operation) -> str:
    """``--print-op-stats=json``'s block: each op name and its count, the module included."""
    counts: dict[str, int] = {}

    def visit(o: ir.Operation) -> None:
        for region in o.regions:
            for block in region.blocks:
                for inner in block.operations:
                    name = inner.operation.name
                    counts[name] = counts.get(name, 0) + 1
                    visit(inner.operation)

    counts[op.operation.name] = 1
    visit(op)
    rows = [f'  "{name}" : {n}' for name, n in sorted(counts.items())]
    return "{\n" + ",\n".join(rows) + "\n}"


def entry_point() -> None:
    """The ``harness-bindings-opt`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
