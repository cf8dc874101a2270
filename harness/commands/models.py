"""Subcommands that start from a model: ``opt`` (the OPT port end to end) and ``emit``
(a named model's imported IR)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from .common import EXIT_FAILURE, EXIT_OK, invocation, parse_overrides, say


def cmd_opt(args: argparse.Namespace) -> int:
    say(args, "loading torch and transformers, building OPT (a few seconds)")
    from ..port import OptPortOptions, port_opt

    variants = {"stock": ("stock",), "fixed": ("fixed",), "both": ("stock", "fixed")}[args.model]
    outcomes = port_opt(OptPortOptions(
        preset=args.config, overrides=parse_overrides(args.set), batch=args.batch, seq=args.seq,
        seed=args.seed, variants=variants, torch_only=args.torch_only,
        keep_weights=args.keep_weights, out_dir=args.out_dir, opt=args.opt,
        invocation=invocation()), say=lambda line: print(line, flush=True))
    print("\n== result ==")
    for outcome in outcomes:
        print(f"{outcome.stem}: {outcome.summary}")
    if args.model == "stock" and not outcomes[0].result.ok:
        print("hint: 'harness opt --model fixed' ports the project's static-structure rewrite of OPT.")
    next_steps = [step for outcome in outcomes for step in outcome.next_steps]
    if next_steps:
        print("\nto dig into the failure (the Python line and the fix, the failing pass, a minimal "
              "IR file, an upstream bug report):")
        for step in next_steps:
            print(f"  {step}")
    return EXIT_OK if all(o.result.ok for o in outcomes) else EXIT_FAILURE


def cmd_emit(args: argparse.Namespace) -> int:
    if args.list:
        from ..models import catalog

        for name, entry in sorted(catalog.entries().items()):
            print(f"{name:34s} {entry.description}")
        return 0
    if not args.name or not args.output:
        raise UsageError("harness emit needs a model NAME and -o PATH (or --list to see the names).")
    from ..emit import EmitOptions, emit

    result = emit(args.name, args.output, EmitOptions(importer=args.importer,
                                                      keep_weights=args.keep_weights,
                                                      cache_dir=args.cache))
    if not args.quiet:
        print(f"{result.name} ({result.importer}) -> {result.output_path}"
              f"{' (from the cache)' if result.cached else ''} in {result.seconds:.2f} s", file=sys.stderr)
    return 0


def register(sub) -> None:
    p = sub.add_parser("opt", help="port Hugging Face OPT end to end (build, trace, import, lower)")
    p.add_argument("--config", default="125m", help="preset: 125m (default OPTConfig) or tiny")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override an OPTConfig field, e.g. --set num_hidden_layers=2 (repeatable)")
    p.add_argument("--batch", type=int, default=1, help="batch size of the example inputs (default 1)")
    p.add_argument("--seq", type=int, default=7, help="sequence length (default 7, the seed's prompt)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    p.add_argument("--model", choices=("both", "stock", "fixed"), default="both",
                   help="port the stock HF OPTModel, the project's static-structure rewrite "
                        "(FixedOPT), or both (default)")
    p.add_argument("--keep-weights", action="store_true",
                   help="write weights into opt.torch.mlir as hex blobs (large) instead of eliding them")
    p.add_argument("--torch-only", action="store_true", help="stop after the torch backend pipeline")
    p.add_argument("--out-dir", default="harness-out", help="parent of the unique output folder")
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)  # exit 1 is the default now
    p.set_defaults(fn=cmd_opt)

    p = sub.add_parser("emit", help="write a named model's imported IR (OPT, FixedOPT, seed idioms)")
    p.add_argument("name", nargs="?", help="model name; --list shows them")
    p.add_argument("-o", "--output", help="IR file to write")
    p.add_argument("--importer", choices=("torchscript", "fx"), default="torchscript",
                   help="the project's TorchScript importer on a trace (default) or the wheel's "
                        "FX importer on torch.export")
    p.add_argument("--cache", help="cache folder: reuse IR emitted before for the same name, "
                                   "importer and versions (lit passes %%harness-ir-cache)")
    p.add_argument("--keep-weights", action="store_true", help="write weights instead of eliding them")
    p.add_argument("--list", action="store_true", help="list the model names")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_emit)
