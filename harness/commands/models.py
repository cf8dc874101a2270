"""Subcommands that start from a model: ``port`` (any model end to end, both frontends, numbers
checked), ``opt`` (``port opt`` with the 2022 walkthrough's defaults) and ``emit`` (a named
model's imported IR)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import UsageError
from .common import EXIT_FAILURE, EXIT_OK, backend_flag, device_flags, invocation, parse_overrides, seconds

if TYPE_CHECKING:
    from ..port.options import PortOptions
    from ..port.record import PortRecord


def _port_options(args: argparse.Namespace, base: PortOptions) -> PortOptions:
    """``base`` (the library's defaults) with the options the user gave on the command line."""
    from dataclasses import replace

    from ..models.dynamic import parse_dynamic
    from ..models.hf_config import Size
    from ..compiler.targets import parse_targets
    from ..execute.backend_names import Device, parse_backends
    from ..port.options import parse_frontends

    if (getattr(args, "memory_limit", None) or 0) < 0:
        raise UsageError(f"--memory-limit {args.memory_limit}: give MiB of address space per "
                         "torch-mlir-opt run, or 0 for no limit.")
    given = {
        "size": Size.parse(args.size) if args.size else None,
        "overrides": parse_overrides(args.set) or None,
        "batch": args.batch, "seq": args.seq, "seed": args.seed,
        "inputs": tuple(getattr(args, "input", None) or ()) or None,
        "variants": args.variants, "frontends": parse_frontends(args.frontend) if args.frontend else None,
        "targets": parse_targets(args.target) if getattr(args, "target", None) else None,
        "backends": parse_backends(args.backend) if getattr(args, "backend", None) else None,
        "testcase_dir": getattr(args, "iree_testcase", None),
        "device": Device.parse(args.device) if getattr(args, "device", None) else None,
        "cuda_target": getattr(args, "cuda_target", None),
        "numerics": False if args.no_numerics else None,
        "torch_only": args.torch_only or None, "keep_weights": args.keep_weights or None,
        "tolerances": tuple(args.tolerance) or None, "out": args.out, "opt": args.opt,
        "timeout_s": args.timeout, "record_path": args.json,
        "memory_limit_mb": getattr(args, "memory_limit", None),
        "fix": getattr(args, "fix", False) or None,
        "dynamic": parse_dynamic(args.dynamic) if getattr(args, "dynamic", None) is not None else None,
    }
    return replace(base, invocation=invocation(),
                   **{k: v for k, v in given.items() if v is not None})


def _port(args: argparse.Namespace, model: str, options: PortOptions, *, building: str) -> int:
    """Ports ``model``, prints the report; exit 0 when every port verified (or lowered, where
    numbers were not asked for), 1 when one did not."""
    from ..port import Progress, port_model
    from ..port.render import render

    progress = Progress(enabled=getattr(args, "progress", None))
    # Said at once: importing torch and building the model take seconds before the first stage.
    progress.note(f"  loading torch and transformers, building {building} (a few seconds)")
    record = port_model(model, options, progress=progress)
    lines = render(record)
    at = lines.index("== result ==")  # what --fix answered goes just before the outcome
    for line in lines[:at] + _fixes_answered(record) + lines[at:]:
        print(line, flush=True)
    return EXIT_OK if record.ok else EXIT_FAILURE


def _fixes_answered(record: PortRecord) -> list[str]:
    """Each fix ``--fix`` kept, with the blocker it answered and that blocker's Python line: a
    port that ends verified still shows what stopped the stock model and why it now lowers."""
    from ..fixes.catalog import CATALOG
    from ..knowledge.fixes import FIXES
    from ..port.diagnose import short_location
    from ..diagnose.source import excerpt

    lines: list[str] = []
    for variant, port in record.ports():
        for step in port.fixes:
            if not step.kept:
                continue
            answers, stage = step.answers, step.answers.stage
            changed = step.application.changed if step.application is not None else []
            where = next((c.location for c in changed if c.location), "")
            if answers.op:  # a blocker op: where it is in Python, the stage it stopped
                at = f" at {short_location(where)}" if where else ""
                known = {f.name: f for f in CATALOG}.get(step.fix)
                verb = ("lowers with wrong numbers in" if known and answers.op in known.miscompiles
                        else "stopped")
                lines.append(f"{variant.name} {port.path}: {answers.op}{at}"
                             f"{f' {verb} {stage}' if stage else ''}")
            else:  # an error (a module fix's): the stage, the module, the error's start
                message = answers.message
                message = message if len(message) <= 160 else message[:160] + "…"
                lines.append(f"{variant.name} {port.path}: {stage or 'a stage'} stopped"
                             f"{f' (in {where})' if where else ''}: {message or 'a known miscompile'}")
            path, _, line = where.rpartition(":")
            lines += [f"    {s}" for s in excerpt(path, int(line) if line.isdigit() else 0, 0)]
            fix = FIXES.get(step.fix)
            lines.append(f"  fix kept: {fix.describe() if fix else step.fix}"
                         f"{f', {len(changed)} changes' if len(changed) > 1 else ''}")
    return ["== what --fix answered ==", *lines, ""] if lines else []


def cmd_port(args: argparse.Namespace) -> int:
    if args.list:
        from ..models.hf_list import ListDepth, list_model_types

        for row in list_model_types(ListDepth.parse(args.list)):
            print(f"{row.model_type:32s} {row.model_class:40s} {row.tiny}".rstrip())
        return EXIT_OK
    if not args.model:
        raise UsageError("harness port needs a MODEL: a transformers model type (gpt2, llama, "
                         "bert, ...), a folder with a config.json, or opt. 'harness port --list' "
                         "lists the model types.")
    from ..port.options import PortOptions

    return _port(args, args.model, _port_options(args, PortOptions()), building=args.model)


#: ``harness opt --config`` names: harness.models.opt.PRESETS (a test keeps them equal; the
#: parser does not import torch to list them).
OPT_PRESETS = ("125m", "tiny", "350m", "1.3b")


def cmd_opt(args: argparse.Namespace) -> int:
    """``harness port opt`` with the 2022 walkthrough's defaults (``OPT_DEFAULTS``); with
    ``--fix``, numbers checked too."""
    from dataclasses import replace

    from ..port.options import OPT_DEFAULTS

    args.size = {"tiny": "tiny", None: None}.get(args.config, "default")
    if args.config in ("350m", "1.3b"):  # the published shapes: the preset's fields, then --set
        import json

        from ..models.opt import PRESETS

        args.set = [f"{k}={json.dumps(v)}" for k, v in PRESETS[args.config].items()] + list(args.set)
    args.variants = None if args.model in (None, "both") else (args.model,)
    # --fix keeps a fix for numbers that stay the same: check them, so the port ends verified.
    base = replace(OPT_DEFAULTS, numerics=True) if args.fix else OPT_DEFAULTS
    return _port(args, "opt", _port_options(args, base), building="OPT")


def cmd_emit(args: argparse.Namespace) -> int:
    if args.list:
        from ..models import catalog

        for name, entry in sorted(catalog.entries().items()):
            print(f"{name:34s} {entry.description}")
        return 0
    if not args.name or not args.output:
        raise UsageError("harness emit needs a model NAME and -o PATH (or --list to see the names).")
    from ..port.emit import EmitOptions, emit

    result = emit(args.name, args.output, EmitOptions(importer=args.importer,
                                                      keep_weights=args.keep_weights,
                                                      cache_dir=args.cache))
    if not args.quiet:
        print(f"{result.name} ({result.importer}) -> {result.output_path}"
              f"{' (from the cache)' if result.cached else ''} in {result.seconds:.2f} s", file=sys.stderr)
    return 0


def _port_flags(p: argparse.ArgumentParser, *, seq_help: str) -> None:
    """The options ``port`` and ``opt`` share; the defaults are the library's (harness.port)."""
    from ..port.options import PortOptions

    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="set a config field, e.g. --set num_hidden_layers=3 (repeatable)")
    p.add_argument("--batch", type=int, help="batch size of the example inputs (default: 1)")
    p.add_argument("--seq", type=int, help=seq_help)
    p.add_argument("--seed", type=int, help="seed of the random weights and inputs (default: "
                                            f"{PortOptions.seed})")
    p.add_argument("--torch-only", action="store_true", help="stop at the torch backend contract")
    p.add_argument("--keep-weights", action="store_true",
                   help="keep the weights in the imported IR (kept anyway when numbers are checked)")
    p.add_argument("--out", help=f"parent of the port's unique folder (default: {PortOptions.out})")
    p.add_argument("--out-dir", dest="out", help=argparse.SUPPRESS)  # the old spelling
    p.add_argument("--json", metavar="FILE", help="also write the port record (JSON) to FILE")
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--fix", action="store_true",
                   help="apply the fixes of 'harness fix --list' whose blocker (or known "
                        "miscompile) appears: module fixes before tracing or export, torch IR "
                        "fixes where a stage fails; each checked, then run again; the record "
                        "lists them")
    p.add_argument("--dynamic", metavar="DIMS",
                   help="keep these input dimensions dynamic: batch, seq, height, width, each "
                        "optionally NAME=MIN..MAX, or INPUT.AXIS=MIN..MAX; the second input set "
                        "is larger along them, so one compiled module runs at two shapes")
    p.add_argument("--timeout", type=seconds,
                   help=f"seconds per stage before it counts as a hang (default: {PortOptions.timeout_s:g})")
    p.add_argument("--memory-limit", type=int, metavar="MB",
                   help="address space each torch-mlir-opt run may take, in MiB (default: "
                        f"{PortOptions.memory_limit_mb}, no limit); a pass that allocates without "
                        "end then crashes with 'LLVM ERROR: out of memory' instead of running "
                        "to the timeout")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("port", help="port a Hugging Face model through both frontends to linalg "
                                    "and check its numbers on the RefBackend against eager")
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help="a transformers model type (gpt2, llama, bert, t5:encoder, ...), a "
                        "folder with config.json (and weights), or opt")
    p.add_argument("--list", nargs="?", const="names", choices=("names", "config", "build"),
                   help="list the model types (with 'config' or 'build': whether each tiny "
                        "config or model builds)")
    p.add_argument("--size", choices=("tiny", "default"),
                   help="tiny (2 layers, hidden 64: the default for a type; a torchvision or "
                        "timm model built small, at the smallest image it takes) or the config's "
                        "own sizes (the default for a folder and for a library model)")
    p.add_argument("--frontend", metavar="LIST",
                   help="the frontends, separated by commas: torchscript (trace + the project's "
                        "importer), fx (torch.export + the wheel's fx_importer), onnx "
                        "(torch.export + torch.onnx.export + the wheel's onnx_importer; the "
                        "[onnx] extra); 'both' (the default) is torchscript,fx")
    p.add_argument("--target", metavar="LIST",
                   help="the backend contracts to lower to and check, separated by commas: "
                        "linalg (the default: what the RefBackend and IREE take as it is), tosa, "
                        "stablehlo. TOSA and StableHLO go on to linalg-on-tensors and the "
                        "RefBackend, as torch-mlir's e2e suite checks them; each frontend "
                        "imports once for all of them")
    backend_flag(p, many=True)
    device_flags(p)
    p.add_argument("--iree-testcase", metavar="DIR",
                   help="with --backend iree: write each IREE port's test case to "
                        "DIR/MODEL.PORT/ (the module, inputs and eager's expected outputs as "
                        ".npy, iree-run-module flag files, run.sh): IREE's tools alone run it, "
                        "exit 1 on a mismatch")
    p.add_argument("--variant", dest="variants", action="append", choices=("stock", "fixed", "all"),
                   help="which of the model's variants (opt has stock and fixed; default: all)")
    p.add_argument("--no-numerics", action="store_true",
                   help="stop at linalg: do not run the RefBackend against eager")
    p.add_argument("--input", action="append", default=[], metavar="NAME=SHAPE[:DTYPE]",
                   help="give a forward input the planner cannot make (or another shape for "
                        "one it makes), e.g. --input pixel_values=1x3x64x64 or --input "
                        "image_grid_thw=1x3:int64; floats random, integers ones (repeatable)")
    p.add_argument("--tolerance", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="tolerance of one dtype, e.g. f32=1e-3,1e-5 (default f32 1e-4,1e-5)")
    _port_flags(p, seq_help="sequence length of the inputs (default: 8)")
    p.set_defaults(fn=cmd_port)

    p = sub.add_parser("opt", help="port Hugging Face OPT-125m and the project's FixedOPT as the "
                                   "2022 walkthrough did: 'harness port opt' with its defaults")
    p.add_argument("--config", choices=OPT_PRESETS,
                   help="125m (the default OPTConfig), tiny (a 2-layer model for quick runs), or "
                        "the published shapes of 350m and 1.3b (random weights; 1.3b is 5.3 GB)")
    p.add_argument("--model", choices=("both", "stock", "fixed"),
                   help="port the stock HF OPTModel, the project's static-structure rewrite "
                        "(FixedOPT), or both (default)")
    p.add_argument("--strict", action="store_true", help=argparse.SUPPRESS)  # exit 1 is the default now
    p.add_argument("--frontend", metavar="LIST",
                   help="frontends, separated by commas: torchscript (the walkthrough's, the "
                        "default), fx, onnx")
    p.set_defaults(fn=cmd_opt, no_numerics=False, tolerance=[])
    _port_flags(p, seq_help="sequence length of the inputs (default: 7, the seed's prompt)")

    p = sub.add_parser("emit", help="write a named model's imported IR (OPT, FixedOPT, seed idioms)")
    p.add_argument("name", nargs="?", help="model name; --list shows them")
    p.add_argument("-o", "--output", help="IR file to write")
    p.add_argument("--importer", choices=("torchscript", "fx", "onnx"), default="torchscript",
                   help="the project's TorchScript importer on a trace (default), the wheel's "
                        "FX importer on torch.export, or its ONNX importer on torch.onnx.export "
                        "of that export (the [onnx] extra)")
    p.add_argument("--cache", help="cache folder: reuse IR emitted before for the same name, "
                                   "importer and versions (lit passes %%harness-ir-cache)")
    p.add_argument("--keep-weights", action="store_true", help="write weights instead of eliding them")
    p.add_argument("--list", action="store_true", help="list the model names")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_emit)
