"""The ``harness`` command line: thin wrappers over the library, one paragraph per error."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import traceback
from pathlib import Path
from typing import Sequence

from .errors import HarnessError, UsageError


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


def _invocation() -> str:
    """How the user started this command (``.venv/bin/harness``, ``python -m harness``), so the
    commands we print work when pasted, venv activated or not."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "harness":
        return shlex.quote(argv0)
    return f"{shlex.quote(sys.executable)} -m harness"


def cmd_opt(args: argparse.Namespace) -> int:
    from .port import OptPortOptions, port_opt

    variants = {"stock": ("stock",), "fixed": ("fixed",), "both": ("stock", "fixed")}[args.model]
    outcomes = port_opt(OptPortOptions(
        preset=args.config, overrides=_parse_overrides(args.set), batch=args.batch, seq=args.seq,
        seed=args.seed, variants=variants, torch_only=args.torch_only,
        keep_weights=args.keep_weights, out_dir=args.out_dir, opt=args.opt,
        invocation=_invocation()), say=lambda line: print(line, flush=True))
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
    return 1 if args.strict and not all(o.result.ok for o in outcomes) else 0


def cmd_run(args: argparse.Namespace) -> int:
    from .compiler.records import render_record
    from .compiler.runner import RunOptions, repro_command, run_pipeline, shell_command
    from .execute.lowering import Driver, resolve, run_bindings_pipeline

    # Pass flags (--pipeline=-canonicalize) run as given; names and textual pipelines resolve.
    textual = _textual_pipeline(args.pipeline)
    options = RunOptions(timeout_s=args.timeout, output_path=args.output, max_input_mb=args.max_input_mb)
    on_bindings = resolve(args.pipeline)[1] is Driver.BINDINGS  # linalg-to-llvm: not torch-mlir-opt's
    if on_bindings:
        record = run_bindings_pipeline(args.file, textual, options=options)
    else:
        record = run_pipeline(args.file, textual, opt=args.opt, options=options)
    if args.json:
        print(json.dumps(record.to_json(), indent=2))
    else:
        print(f"{record.outcome.value}: {Path(record.input_path).name} through {textual} "
              f"in {record.elapsed_s:.2f} s{' (' + record.signal + ')' if record.signal else ''}")
        for line in render_record(record):
            print(line)
        if not record.ok:
            print(f"reproduce: {shell_command(record.command) if on_bindings else repro_command(textual, record.input_path)}")
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
        for line in result.render():
            print(line)
    return 0 if result.record.ok else 1


def cmd_bisect(args: argparse.Namespace) -> int:
    if args.builds:
        return cmd_bisect_builds(args)
    if args.numerics:
        return cmd_bisect_numerics(args)
    _numerics_options(args)  # --inputs and friends without --numerics: a usage error
    from .tools.bisect import bisect

    textual = _textual_pipeline(args.pipeline)
    result = bisect(args.file, textual, opt=args.opt, out_dir=args.out, timeout_s=args.timeout)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    if result.first is not None and result.first.ok:
        return 0
    return 0 if result.found and result.reproduced else 1


def _numerics_options(args: argparse.Namespace):
    """The inputs, tolerances and work folder of a --numerics bisect, reduce or report."""
    from .execute.inputs import RandomInputs
    from .execute.numerics import Tolerances
    from .tools.numerics import NumericsBisectOptions

    if not args.numerics:
        given = [f for f, v in (("--inputs", args.inputs), ("--tolerance", args.tolerance),
                                ("--function", args.function)) if v]
        if given:
            raise UsageError(f"{', '.join(given)} go with --numerics (wrong numbers); without "
                             "it the command keeps a failure of the pipeline.")
        return None
    low, high = _int_range(args.int_range)
    return NumericsBisectOptions(
        inputs_path=args.inputs, random=RandomInputs(seed=args.seed, int_low=low, int_high=high),
        function=args.function, opt=args.opt, tolerances=Tolerances().with_overrides(args.tolerance),
        timeout_s=args.timeout or 600.0, out_dir=getattr(args, "out", None),
        progress=None if getattr(args, "json", False) else _stderr_progress())


def cmd_bisect_numerics(args: argparse.Namespace) -> int:
    from .tools.numerics import bisect_numerics

    options = _numerics_options(args)
    result = bisect_numerics(args.file, args.pipeline, options=options)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 1 if result.verdict.value == "fails" else 0


def _numerics_flags(p: argparse.ArgumentParser, what: str) -> None:
    """--numerics and the flags that go with it (as harness check spells them)."""
    p.add_argument("--numerics", action="store_true", help=what)
    p.add_argument("--inputs", metavar="FILE.npz",
                   help="--numerics: the arguments, as arg0, arg1, ... or in order (default: random)")
    p.add_argument("--seed", type=int, default=0, help="--numerics: seed of random inputs (default 0)")
    p.add_argument("--int-range", default="0,2", metavar="LOW,HIGH",
                   help="--numerics: random integers are drawn from [LOW, HIGH) (default 0,2)")
    p.add_argument("--function", help="--numerics: the function (default: the only public one)")
    p.add_argument("--tolerance", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="--numerics: tolerance of one dtype, as harness check takes it")


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


def cmd_reduce_numerics(args: argparse.Namespace) -> int:
    from .tools.reduce.numerics import NumericsReduceOptions, reduce_numerics

    base = _numerics_options(args)
    fields = {k: getattr(base, k) for k in ("inputs_path", "function", "opt", "tolerances", "timeout_s")}
    progress = (lambda line: print(f"  {line}", file=sys.stderr, flush=True)) if args.progress else None
    result = reduce_numerics(args.file, args.pipeline, options=NumericsReduceOptions(
        output_path=args.output, budget_s=args.budget_s, max_tries=args.max_tries,
        random=base.random, progress=progress, **fields))
    print(f"reduced {args.file}: {result.summary()}")
    print(f"  keeps: numerics-mismatch (max abs diff {result.max_abs_diff:.3g}) through "
          f"{result.piece_pipeline} and the RefBackend")
    print(f"  -> {result.output_path} (inputs {result.inputs_path}, expected {result.expected_path})")
    print(f"reproduce: {_invocation()} check {shlex.quote(result.output_path)} --pipeline "
          f"{shlex.quote(result.piece_pipeline)} --inputs {shlex.quote(result.inputs_path)}")
    return 0


def cmd_reduce(args: argparse.Namespace) -> int:
    if args.numerics:
        return cmd_reduce_numerics(args)
    _numerics_options(args)  # --inputs and friends without --numerics: a usage error
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


def cmd_report_numerics(args: argparse.Namespace) -> int:
    from .tools.report.numerics import NumericsReportOptions, make_numerics_report

    base = _numerics_options(args)
    progress = None if args.json else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    result = make_numerics_report(args.file, args.pipeline, options=NumericsReportOptions(
        out_dir=args.out, opt=args.opt, inputs_path=base.inputs_path, random=base.random,
        function=base.function, tolerances=base.tolerances, redact=not args.no_redact,
        reduce=not args.no_reduce, budget_s=args.budget_s, timeout_s=base.timeout_s,
        progress=progress))
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 0 if result.reproduced else 1


def cmd_report(args: argparse.Namespace) -> int:
    if args.numerics:
        return cmd_report_numerics(args)
    _numerics_options(args)  # --inputs and friends without --numerics: a usage error
    from .tools.report import ReportOptions, make_report

    progress = None if args.json else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))
    result = make_report(args.file, args.pipeline, options=ReportOptions(
        out_dir=args.out, opt=args.opt, keep_weights=args.keep_weights, redact=not args.no_redact,
        reduce=not args.no_reduce, budget_s=args.budget_s, timeout_s=args.timeout,
        progress=progress))
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 0 if result.reproduced else 1


def cmd_check(args: argparse.Namespace) -> int:
    from .execute.check import CheckOptions, check_file
    from .execute.inputs import RandomInputs
    from .execute.numerics import Tolerances
    from .execute.refbackend import RefBackendOptions

    low, high = _int_range(args.int_range)
    result = check_file(args.file, CheckOptions(
        pipeline=args.pipeline, function=args.function, inputs_path=args.inputs,
        random=RandomInputs(seed=args.seed, int_low=low, int_high=high),
        tolerances=Tolerances().with_overrides(args.tolerance), opt=args.opt,
        timeout_s=args.timeout, out_dir=args.out,
        refbackend=RefBackendOptions(isolate=not args.in_process, opt_level=args.opt_level)))
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 0 if result.ok else 1


def _int_range(text: str) -> tuple[int, int]:
    low, sep, high = text.partition(",")
    try:
        if not sep or int(low) >= int(high):
            raise ValueError
        return int(low), int(high)
    except ValueError:
        raise HarnessError(f"--int-range expects LOW,HIGH with LOW < HIGH (e.g. 0,100), got {text!r}.") from None


def cmd_bisect_builds(args: argparse.Namespace) -> int:
    from .compiler.builds import BuildCache
    from .tools.build_bisect import bisect_builds, build_order

    if args.opt:
        raise UsageError("bisect --builds runs the builds it names: drop --opt.")
    say = _stderr_progress(args.json)
    cache = BuildCache()
    order = build_order(args.builds, cache, say=say)
    result = bisect_builds(args.file, _textual_pipeline(args.pipeline), order,
                           timeout_s=args.timeout, cache=cache, say=say)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 1 if result.found else 0


def _stderr_progress(quiet: bool = False):
    return None if quiet else (lambda line: print(f"  {line}", file=sys.stderr, flush=True))


def cmd_builds(args: argparse.Namespace) -> int:
    from .compiler import builds

    cache = builds.BuildCache()
    if args.action == "list":
        return _builds_list(cache, args)
    if args.action == "fetch":
        if not args.names:
            raise UsageError("harness builds fetch needs a release name, e.g. belfort-2026.7.1 "
                             "('harness builds list --available' shows them).")
        for name in args.names:
            build, fetched = cache.fetch(name, force=args.force, say=_stderr_progress())
            print(f"{'fetched' if fetched else 'cached'}: {build.describe()}")
        return 0
    if args.action == "add":
        if len(args.names) != 1 or "=" not in args.names[0]:
            raise UsageError("harness builds add takes one NAME=PATH, e.g. "
                             "my-debug=$HOME/torch-mlir/build/bin/torch-mlir-opt.")
        name, _, path = args.names[0].partition("=")
        print(f"added: {cache.add(name.strip(), path.strip()).describe()}")
        return 0
    if not args.names:
        raise UsageError("harness builds remove needs the NAME of a build.")
    for name in args.names:
        cache.remove(name)
        print(f"removed: {name}")
    return 0


def _builds_list(cache, args: argparse.Namespace) -> int:
    rows = cache.listing()
    note = lambda line: print(f"harness: note: {line}", file=sys.stderr)  # noqa: E731
    available = cache.unfetched_releases(note) if args.available else []
    if args.json:
        print(json.dumps({"cache": str(cache.root), "available": available, "builds": [
            {"name": name, "ok": build is not None, "problem": problem,
             "build": build.to_json() if build is not None else None}
            for name, build, problem in rows]}, indent=2))
        return 0
    print(f"build cache: {cache.root}")
    for name, build, problem in rows:
        if build is None:
            print(f"  {name:24s} BROKEN   {problem}")
            continue
        what = f"{build.release + ', ' if build.release else ''}LLVM {build.llvm_version or 'unknown'}"
        print(f"  {name:24s} {build.kind.value:8s} {what:44s} {build.path}")
    for name in available:
        print(f"  {name:24s} (on PyPI: 'harness builds fetch {name}')")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from .compiler.builds import BuildCache, ensure
    from .tools.diff import DiffOptions, diff_builds, write_json
    from .tools.diff_targets import collect_targets

    if not args.opt or len(args.opt) != 2:
        raise UsageError("harness diff compares two builds: give --opt A --opt B (build names "
                         "such as wheel or belfort-2026.7.1, or paths).")
    targets = collect_targets(args.targets, args.pipeline)
    say = _stderr_progress(args.json)
    cache = BuildCache()
    a, b = (ensure(spec, cache, say) for spec in args.opt)
    lit_args = ("--filter", args.lit_filter) if args.lit_filter else ()
    result = diff_builds(a, b, targets, DiffOptions(timeout_s=args.timeout, lit_args=lit_args,
                                                    progress=say))
    if args.output:
        write_json(result, args.output)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
        if args.output:
            print(f"json: {args.output}")
    return 1 if result.changed else 0


def _announce_binary(args: argparse.Namespace) -> None:
    """Says once, on stderr, which binary runs when it is not the wheel's (issue 18, item 12)."""
    from .compiler import binary, builds

    chosen = getattr(args, "opt", None)
    if not isinstance(chosen, str):
        chosen = None
    if not chosen and not os.environ.get(binary.ENV_VAR):
        return
    try:
        exe = binary.resolve(chosen)
        build = builds.origin_of(exe.path)
    except HarnessError:
        return  # the command itself reports a bad binary, with its remedy
    if build.kind is builds.BuildKind.WHEEL:
        return
    source = "--opt" if chosen else f"${binary.ENV_VAR}"
    print(f"harness: torch-mlir-opt from {source}: {build.describe()} "
          f"[{exe.build_kind} build]", file=sys.stderr, flush=True)


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
    p.add_argument("--builds", metavar="A..B|A,B,C",
                   help="instead of passes, bisect builds: the first build (releases from A to B "
                        "in order, or the builds listed) whose outcome differs from A's; exits "
                        "1 when one does")
    _numerics_flags(p, "instead of a failing pass, find where a lowering's numbers go wrong: "
                       "the chain of ops whose lowered values first differ from the reference "
                       "evaluator's, their Python lines, and the pass choices that make it right")
    p.set_defaults(fn=cmd_bisect)

    p = _ir_tool(sub, "reduce", "shrink a failing IR file while it keeps failing the same way",
                 timeout=None, timeout_help="seconds per candidate before it counts as a hang "
                                            "(default: from the original run)")
    p.add_argument("-o", "--output", required=True, help="write the reduced IR here (atomically)")
    p.add_argument("--budget-s", type=float, default=60.0,
                   help="wall-clock seconds to search (default 60); the best file so far is kept")
    p.add_argument("--max-tries", type=int, default=10_000, help="most runs of torch-mlir-opt on candidates")
    p.add_argument("--progress", action="store_true", help="print each kept reduction to stderr")
    _numerics_flags(p, "keep wrong numbers instead of a failure: the reference evaluator on each "
                       "candidate is the oracle; writes OUT, OUT's .inputs.npz and .expected.npz")
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
    _numerics_flags(p, "a miscompile bundle instead: the reduced IR that lowers and runs but "
                       "computes wrong values, its inputs and expected values (.npz), and a "
                       "repro.sh that exits 1 exactly when the numbers are wrong")
    p.set_defaults(fn=cmd_report)

    p = sub.add_parser("builds", help="named torch-mlir-opt builds: list, fetch releases from "
                                      "PyPI, add your own (use a name wherever --opt is taken)")
    p.add_argument("action", choices=("list", "fetch", "add", "remove"))
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="fetch: release names (belfort-2026.7.1, torch-mlir-20261001); "
                        "add: NAME=PATH; remove: names")
    p.add_argument("--force", action="store_true", help="fetch again even when cached")
    p.add_argument("--available", action="store_true",
                   help="list: also the releases on PyPI that are not fetched yet")
    p.add_argument("--json", action="store_true", help="list: print JSON")
    p.set_defaults(fn=cmd_builds)

    p = sub.add_parser("diff", help="run targets on two builds and list what changed "
                                    "(exits 1 when something did)")
    p.add_argument("targets", nargs="+", metavar="TARGET",
                   help="IR files (with --pipeline), run records (.json), a folder of records "
                        "(a sweep), or a lit folder")
    p.add_argument("--opt", action="append", metavar="BUILD",
                   help="a build name or torch-mlir-opt path; give it twice: A, then B")
    p.add_argument("--pipeline", help="the pipeline for IR files (name, upstream name or text)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds per torch-mlir-opt run before it counts as a hang (default 600)")
    p.add_argument("--lit-filter", metavar="REGEX",
                   help="lit folders: run only the tests whose name matches (lit's --filter)")
    p.add_argument("-o", "--output", help="write the diff as JSON (format harness-diff/1) here")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    p.set_defaults(fn=cmd_diff)

    p = _ir_tool(sub, "check", "lower a torch-dialect file, run it on the RefBackend and compare "
                               "with the reference evaluator (eager PyTorch, op by op)",
                 json_help="print the result as JSON")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="FILE.npz",
                        help="the arguments, as arg0, arg1, ... or in order (np.savez)")
    source.add_argument("--random-inputs", action="store_true",
                        help="random arguments from the signature (the default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--int-range", default="0,2", metavar="LOW,HIGH",
                   help="random integers are drawn from [LOW, HIGH) (default 0,2)")
    p.add_argument("--function", help="the function to check (default: the only public one)")
    p.add_argument("--tolerance", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="tolerance of one dtype, e.g. f32=1e-3,1e-5 (repeatable; default f32 "
                        "1e-4,1e-5, f16 1e-2,1e-3, f64 1e-7,1e-9, integers and bool exact)")
    p.add_argument("--out", help="parent folder of the unique folder of files (default: the temp dir)")
    p.add_argument("--in-process", action="store_true",
                   help="run the compiled code in this process (faster; a crash ends harness)")
    p.add_argument("--opt-level", type=int, default=0, choices=range(4),
                   help="LLVM optimization level of the ExecutionEngine (default 0: compiles fastest)")
    p.set_defaults(fn=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if hasattr(args, "opt") and args.fn is not cmd_diff and not getattr(args, "builds", None):
            _announce_binary(args)
        return args.fn(args)
    except HarnessError as e:
        if args.verbose:
            traceback.print_exc()
        print(f"harness: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("harness: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os._exit(1)
