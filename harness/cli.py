"""The ``harness`` command line: thin wrappers over the library, one paragraph per error."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import traceback
from pathlib import Path
from typing import Sequence

from .errors import HarnessError, UsageError

# What a command prints to the terminal at most: the first lines, each cut to a width; the
# rest is in --json (10 MB of stderr or 200,000 diagnostics would otherwise all be printed).
MAX_PRINTED_LINES = 200
MAX_PRINTED_CHARS = 2000


def _parse_overrides(items: Sequence[str]) -> dict[str, object]:
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


def _print_bounded(lines: Sequence[str]) -> None:
    from .compiler.text import clip_lines

    shown, hidden = clip_lines(lines, max_lines=MAX_PRINTED_LINES, max_chars=MAX_PRINTED_CHARS)
    for line in shown:
        print(line)
    if hidden:
        print(f"... {hidden:,} more lines (all of them in --json)")


def _invocation() -> str:
    """How the user started this command (``.venv/bin/harness``, ``python -m harness``), so the
    commands we print work when pasted, venv activated or not."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "harness":
        return shlex.quote(argv0)
    return f"{shlex.quote(sys.executable)} -m harness"


def cmd_opt(args: argparse.Namespace) -> int:
    from .compiler.irfile import unique_dir
    from .models import opt as opt_driver
    from .models import opt_fixed
    from .port import port, render

    overrides = _parse_overrides(args.set)
    config = opt_driver.make_config(args.config, overrides)
    print(f"OPT port: preset '{args.config}'"
          + (f" with {', '.join(f'{k}={v}' for k, v in overrides.items())}" if overrides else "")
          + f": {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
          f"{config.num_attention_heads} heads, ffn {config.ffn_dim}, vocab {config.vocab_size}; "
          f"batch {args.batch}, sequence {args.seq}; random weights (seed {args.seed})", flush=True)
    model = opt_driver.build_opt(args.config, overrides, seed=args.seed)
    inputs = opt_driver.example_inputs(config, args.batch, args.seq)
    variants = {"stock": ("stock",), "fixed": ("fixed",), "both": ("stock", "fixed")}[args.model]
    stages = ("torchscript-to-torch",) if args.torch_only else ("torchscript-to-torch", "torch-to-linalg")
    outcomes: list[tuple[str, bool, str]] = []
    next_steps: list[str] = []
    for variant in variants:
        if variant == "fixed":
            traced = opt_fixed.trace_fixed(opt_fixed.FixedOPT.from_hf(model), inputs)
            stem, title = "opt-fixed", "the project's rewrite of OPT with static structure (FixedOPT)"
        else:
            traced = opt_driver.trace_opt(model, inputs)
            stem, title = "opt", "stock Hugging Face OPTModel"
        print(f"\n== {title} ==")
        print("settings:")
        for sentence in traced.settings.sentences():
            print(f"  - {sentence}")
        counts = traced.warning_counts()
        if counts:
            print("  - Warnings while tracing: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        out_dir = unique_dir(f"{stem}-{args.config}-", parent=args.out_dir)
        result = port(traced.module, inputs, out_dir, stem=stem, stages=stages,
                      keep_weights=args.keep_weights, opt=args.opt,
                      debug_module_name="FixedOPT" if variant == "fixed" else "OPTModel")
        for line in render(result):
            print(line)
        if result.ok:
            summary = f"lowers through {' and '.join(stages)}"
        else:
            failed = result.failed_stage()
            diag = failed.record.first_error()
            summary = f"fails in {failed.name} ({failed.record.outcome.value})"
            if diag is not None:
                summary += f" at {Path(diag.file).name}:{diag.line}"
            from .tools.explain import explain_record

            for exp in explain_record(failed.record).explanations[:1]:
                for hint in exp.hints[:1]:
                    print(f"  hint ({hint.name}): {hint.hint}")
            failing = shlex.quote(failed.record.input_path)
            next_steps += [f"{_invocation()} {tool} {failing} --pipeline {failed.name}{extra}"
                           for tool, extra in (("explain", ""), ("bisect", ""),
                                               ("reduce", f" -o {shlex.quote(str(out_dir / 'reduced.mlir'))}"),
                                               ("report", f" --out {shlex.quote(str(out_dir / 'report'))}"))]
        outcomes.append((stem, result.ok, f"{summary}; files in {out_dir}"))
    print("\n== result ==")
    for stem, _, summary in outcomes:
        print(f"{stem}: {summary}")
    if args.model == "stock" and not outcomes[0][1]:
        print("hint: 'harness opt --model fixed' ports the project's static-structure rewrite of OPT.")
    if next_steps:
        print("\nto dig into the failure (the Python line and the fix, the failing pass, a minimal "
              "IR file, an upstream bug report):")
        for step in next_steps:
            print(f"  {step}")
    return 1 if args.strict and not all(ok for _, ok, _ in outcomes) else 0


def cmd_run(args: argparse.Namespace) -> int:
    from .compiler.records import render_record
    from .compiler.runner import RunOptions, repro_command, run_pipeline

    # Pass flags (--pipeline=-canonicalize) run as given; names and textual pipelines resolve.
    textual = _textual_pipeline(args.pipeline)
    record = run_pipeline(args.file, textual, opt=args.opt,
                          options=RunOptions(timeout_s=args.timeout, output_path=args.output,
                                             max_input_mb=args.max_input_mb))
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        print(f"{record.outcome.value}: {Path(record.input_path).name} through {textual} "
              f"in {record.elapsed_s:.2f} s{' (' + record.signal + ')' if record.signal else ''}")
        _print_bounded(render_record(record))
        if not record.ok:
            print(f"reproduce: {repro_command(textual, record.input_path)}")
    return 0 if record.ok else 1


def _textual_pipeline(spec: str) -> str:
    from .compiler import pipelines

    return pipelines.default().resolve(spec)


def cmd_explain(args: argparse.Namespace) -> int:
    from .tools.explain import explain_file

    result = explain_file(args.file, _textual_pipeline(args.pipeline), opt=args.opt,
                          context=args.context, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        _print_bounded(result.render())
    return 0 if result.record.ok else 1


def cmd_bisect(args: argparse.Namespace) -> int:
    from .tools.bisect import bisect

    textual = _textual_pipeline(args.pipeline)
    result = bisect(args.file, textual, opt=args.opt, out_dir=args.out, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        _print_bounded(result.render())
    if result.first is not None and result.first.ok:
        return 0
    return 0 if result.found and result.reproduced else 1


def cmd_emit(args: argparse.Namespace) -> int:
    if args.list:
        from .models import catalog

        for name, entry in sorted(catalog.entries().items()):
            print(f"{name:34s} {entry.description}")
        return 0
    if not args.name or not args.output:
        raise UsageError("harness emit needs a model NAME and -o PATH (or --list to see the names).")
    from .emit import EmitOptions, emit

    result = emit(args.name, args.output, EmitOptions(importer=args.importer,
                                                      keep_weights=args.keep_weights,
                                                      cache_dir=args.cache))
    if not args.quiet:
        print(f"{result.name} ({result.importer}) -> {result.output_path}"
              f"{' (from the cache)' if result.cached else ''} in {result.seconds:.2f} s", file=sys.stderr)
    return 0


def cmd_reduce(args: argparse.Namespace) -> int:
    from .compiler.runner import repro_command
    from .tools.reduce import ReduceOptions, reduce_file

    progress = (lambda line: print(f"  {line}", file=sys.stderr, flush=True)) if args.progress else None
    result = reduce_file(args.file, args.pipeline, options=ReduceOptions(
        output_path=args.output, budget_s=args.budget_s, max_tries=args.max_tries, opt=args.opt,
        try_timeout_s=args.timeout, progress=progress))
    print(f"reduced {args.file}: {result.summary()}")
    print(f"  keeps: {result.signature}")
    print(f"  -> {result.output_path}")
    print(f"reproduce: {repro_command(result.pipeline_text or args.pipeline, result.output_path)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from .tools.report import ReportOptions, make_report

    progress = None if args.json else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    result = make_report(args.file, args.pipeline, options=ReportOptions(
        out_dir=args.out, opt=args.opt, keep_weights=args.keep_weights, redact=not args.no_redact,
        reduce=not args.no_reduce, budget_s=args.budget_s, timeout_s=args.timeout,
        progress=progress))
    if args.json:
        print(json.dumps({**asdict(result), "reproduced": result.reproduced}, indent=2))
    else:
        for line in result.render():
            print(line)
    return 0 if result.reproduced else 1


def _ir_tool(sub, name: str, help: str, *, timeout: float | None = 600.0,
             timeout_help: str = "seconds per torch-mlir-opt run before it counts as a hang",
             json_help: str = "") -> argparse.ArgumentParser:
    """A subcommand over an IR file and a pipeline: the arguments every such tool shares."""
    p = sub.add_parser(name, help=help)
    p.add_argument("file")
    p.add_argument("--pipeline", required=True,
                   help="a name from pipelines/, an upstream pipeline name, a textual pipeline, "
                        "or pass flags as --pipeline=-canonicalize")
    p.add_argument("--opt", help="torch-mlir-opt binary (default: $TORCH_MLIR_OPT, then the wheel's)")
    p.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    if json_help:
        p.add_argument("--json", action="store_true", help=json_help)
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="harness",
        description="Import PyTorch models into torch-mlir, run its pipelines, and find out why they fail.",
    )
    parser.add_argument("--verbose", action="store_true", help="print tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("opt", help="port Hugging Face OPT end to end (build, trace, import, lower)")
    p.add_argument("--config", default="125m", help="preset: 125m (default OPTConfig) or tiny")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override an OPTConfig field, e.g. --set num_hidden_layers=2 (repeatable)")
    p.add_argument("--batch", type=int, default=1)
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
    p.add_argument("--strict", action="store_true", help="exit 1 when a pipeline fails")
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

    p = _ir_tool(sub, "run", "run a pipeline on an IR file and classify the outcome",
                 json_help="print the record as JSON")
    p.add_argument("-o", "--output", help="write the output IR here")
    p.add_argument("--max-input-mb", type=int, default=4096,
                   help="refuse larger input files (default 4096; 0 = no limit)")
    p.set_defaults(fn=cmd_run)

    p = _ir_tool(sub, "explain", "for each error: the Python line of its op, the source around "
                                 "it, and the fix when it matches a known idiom",
                 json_help="print the explanation as JSON")
    p.add_argument("--context", type=int, default=2, help="source lines shown around each location")
    p.set_defaults(fn=cmd_explain)

    p = _ir_tool(sub, "bisect", "name the first pass of a pipeline that fails or crashes, and "
                                "write the IR just before it (2 torch-mlir-opt runs)",
                 json_help="print the result as JSON")
    p.add_argument("--out", help="parent folder of the unique output folder (default: the temp dir)")
    p.set_defaults(fn=cmd_bisect)

    p = _ir_tool(sub, "reduce", "shrink a failing IR file while it keeps failing the same way",
                 timeout=None, timeout_help="seconds per candidate before it counts as a hang "
                                            "(default: from the original run)")
    p.add_argument("-o", "--output", required=True, help="write the reduced IR here (atomically)")
    p.add_argument("--budget-s", type=float, default=60.0,
                   help="wall-clock seconds to search (default 60); the best file so far is kept")
    p.add_argument("--max-tries", type=int, default=10_000, help="most runs of torch-mlir-opt on candidates")
    p.add_argument("--progress", action="store_true", help="print each kept reduction to stderr")
    p.set_defaults(fn=cmd_reduce)

    p = _ir_tool(sub, "report", "write an upstream bug-report bundle (issue.md, repro.sh, "
                                "input/reduced IR, backtrace, record) and its .tar.gz",
                 json_help="print the result as JSON")
    p.add_argument("--out", required=True, help="parent folder of the unique report folder")
    p.add_argument("--keep-weights", action="store_true",
                   help="keep resource blobs in input.mlir (default: elided when that keeps the failure)")
    p.add_argument("--no-redact", action="store_true",
                   help="keep the home folder, user name and absolute paths in the bundle")
    p.add_argument("--budget-s", type=float, default=60.0, help="seconds to reduce (default 60)")
    p.add_argument("--no-reduce", action="store_true", help="skip the reduction; repro.sh runs input.mlir")
    p.set_defaults(fn=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command. Ctrl-C, SIGTERM and SIGHUP stop it the same way: the running
    torch-mlir-opt's process group is killed, partial output removed, exit 128+N."""
    from .compiler.process import Terminated, stop_on_signals

    args = None
    with stop_on_signals():
        try:
            args = build_parser().parse_args(argv)
            return args.fn(args)
        except HarnessError as e:
            if args is not None and args.verbose:
                traceback.print_exc()
            print(f"harness: error: {e}", file=sys.stderr)
            return e.exit_code
        except Terminated as e:
            _say(f"harness: stopped by {signal.Signals(e.signum).name}")
            return 128 + e.signum
        except KeyboardInterrupt:
            _say("harness: interrupted")
            return 128 + signal.SIGINT
        except BrokenPipeError:
            os._exit(1)


def _say(message: str) -> None:
    """A last line on stderr, which may be gone (a closed terminal sends SIGHUP)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
