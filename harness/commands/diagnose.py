"""Subcommands over a failing IR file: run, explain, bisect, reduce, report, and the
pipeline listing they all resolve ``--pipeline`` against."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.compiler import jsonfile
from .. import defaults

from ..errors import HarnessError, UsageError
from . import numerics
from .common import (DEFAULT_OUT, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ir_tool, print_bounded,
                     progress, reproduce, say, seconds, textual_pipeline, tool_opt)


def cmd_run(args: argparse.Namespace) -> int:
    from ..compiler.pipelines import Driver
    from ..diagnose.run import RunFileOptions, run_file

    # Pass flags (--pipeline=-canonicalize) run as given; names and textual pipelines resolve.
    result = run_file(args.file, args.pipeline, textual_pipeline(args.pipeline), RunFileOptions(
        opt=args.opt, driver=Driver.parse(args.driver) if args.driver else None,
        timeout_s=args.timeout, output_path=args.output, max_input_mb=args.max_input_mb,
        blockers=args.blockers, say=lambda line: say(args, line)))
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        from ..compiler.records import render_record

        print(result.headline())
        print_bounded(render_record(result.record))  # the record may be long; the tail is short
        for line in result.tail():
            print(line)
    error = result.input_error()
    if error is not None:  # bad input, not a compiler result: printed as every error is
        raise error
    return EXIT_OK if result.record.ok else EXIT_FAILURE


def cmd_explain(args: argparse.Namespace) -> int:
    from ..diagnose.explain import explain_file

    say(args, f"running {Path(args.file).name}; on a legalization failure each left-over op "
               "alone too (--no-blockers skips that)")
    result = explain_file(args.file, textual_pipeline(args.pipeline), opt=tool_opt(args),
                          context=args.context, timeout_s=args.timeout,
                          blockers=not args.no_blockers)
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        print_bounded(result.render())
    return EXIT_OK if result.record.ok else EXIT_FAILURE


def cmd_bisect(args: argparse.Namespace) -> int:
    if args.builds:
        from .builds import cmd_bisect_builds

        return cmd_bisect_builds(args)
    if args.numerics:
        return numerics.cmd_bisect_numerics(args)
    numerics.numerics_options(args)  # --inputs and friends without --numerics: a usage error
    from ..compiler.outcomes import Outcome
    from ..diagnose.bisect import bisect

    textual = textual_pipeline(args.pipeline)
    say(args, f"running {Path(args.file).name} with MLIR's reproducer, then the failing pass alone")
    result = bisect(args.file, textual, opt=tool_opt(args), out_dir=args.out, timeout_s=args.timeout,
                    blockers=not args.no_blockers)
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        print_bounded(result.render())
    if result.first is not None and result.first.ok:
        return EXIT_OK
    if result.outcome is Outcome.PARSE_ERROR:
        print(f"harness: error: {result.input_path} is not MLIR that torch-mlir-opt can parse; "
              "no pass ran, so there is nothing to bisect.", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_FAILURE


def cmd_reduce(args: argparse.Namespace) -> int:
    if getattr(args, "iree_compile", None):
        return _reduce_iree(args)
    if args.numerics:
        return numerics.cmd_reduce_numerics(args)
    numerics.numerics_options(args)
    from ..errors import NothingToReduceError
    from ..diagnose.reduce import ReduceOptions, reduce_file

    from ..compiler import builds
    from ..diagnose.reduce.split import reduce_each

    opt = tool_opt(args)
    options = ReduceOptions(
        output_path=args.output, budget_s=args.budget_s, max_tries=args.max_tries, opt=opt,
        try_timeout_s=args.timeout, progress=progress(args),
        at_failing_pass="never" if args.each else args.at_failing_pass)
    try:
        results = reduce_each(args.file, args.pipeline, args.output, options=options) if args.each \
            else [reduce_file(args.file, args.pipeline, options=options)]
    except NothingToReduceError as e:
        print(f"nothing to reduce: {e.input_path} passes {e.pipeline}")
        return EXIT_OK
    exe = builds.resolve(opt).path
    for result in results:
        print(f"reduced {args.file}: {result.summary()}")
        print(f"  keeps: {result.signature}" + (f" (subject: {', '.join(result.subject)})"
                                                if args.each and result.subject else ""))
        print(f"  -> {result.output_path}")
        print(f"reproduce: {reproduce(result.pipeline_text or args.pipeline, result.output_path, exe)}")
    return EXIT_FAILURE


def _reduce_iree(args: argparse.Namespace) -> int:
    """``reduce FILE --iree-compile TARGET``: the smallest file iree-compile rejects the same way
    (the same signature, op and location), made by the same reducer with IREE's compile as the
    test; the reproduce line is iree-compile's own command on the reduced file."""
    import shlex

    from ..compiler.targets import Target
    from ..diagnose.reduce import ReduceOptions, reduce_file
    from ..errors import NothingToReduceError
    from ..execute.backend_iree import COMPILE_FLAGS, INPUT_TYPES, compile_test, generic_form, tool
    from ..execute.backends import backend

    if args.numerics or args.each:
        raise UsageError("--iree-compile keeps what iree-compile rejects; --numerics and --each "
                         "reduce torch-mlir-opt's failures. Drop one of them.")
    backend("iree").check()
    target = Target.parse(args.iree_compile)
    label = f"iree-compile ({target.value})"
    options = ReduceOptions(output_path=args.output, budget_s=args.budget_s,
                            max_tries=args.max_tries, opt=args.opt, try_timeout_s=args.timeout,
                            progress=progress(args), runner=compile_test(target))
    try:
        result = reduce_file(args.file, label, options=options)
    except NothingToReduceError as e:
        print(f"nothing to reduce: iree-compile takes {e.input_path} as {target.value}")
        return EXIT_OK
    print(f"reduced {args.file}: {result.summary()}")
    print(f"  keeps: {result.signature}")
    print(f"  -> {result.output_path}")
    given = Path(result.output_path)
    if target is Target.TOSA:  # what IREE's TOSA input parses: the generic form, beside it
        given = generic_form(given, given.with_name(given.stem + ".generic.mlir"),
                             args.timeout or defaults.TIMEOUT_S)
        print(f"  -> {given} (the same in MLIR's generic form, which IREE's TOSA input parses)")
    print("reproduce: " + shlex.join([tool("iree-compile"), *INPUT_TYPES[target], *COMPILE_FLAGS,
                                      str(given), "-o", "/dev/null"]))
    return EXIT_FAILURE


def cmd_report(args: argparse.Namespace) -> int:
    if args.numerics and args.module:
        raise UsageError("--module tries the FX path against a failure of the pipeline; a "
                         "--numerics report takes --reproduces-through instead.")
    if args.numerics:
        return numerics.cmd_report_numerics(args)
    numerics.numerics_options(args)
    from ..diagnose.report import Refusal, ReportOptions, make_report, make_reports_each

    say_progress = None if args.json else progress(args)
    fx_try = None
    if args.module:
        if args.reproduces_through:
            raise UsageError("--module and --reproduces-through both say which frontends reach "
                             "the failure: give --module to have the report try the FX path, "
                             "or --reproduces-through to state what a port showed.")
        from ..port.fx_try import try_fx

        fx_try = try_fx(args.module, args.pipeline, opt=args.opt, timeout_s=args.timeout,
                        say=say_progress or (lambda _line: None))
    options = ReportOptions(
        out_dir=args.out, opt=args.opt, driver=args.driver, keep_weights=args.keep_weights,
        redact=not args.no_redact, reduce=not args.no_reduce, budget_s=args.budget_s,
        timeout_s=args.timeout, progress=say_progress, search_upstream=args.search_upstream,
        provenance=numerics.provenance_of(args),
        port_evidence=numerics.port_evidence(args.port_record), fx_try=fx_try,
        lookup=numerics.lookup_of(args), title=args.title or "",
        **({"at_failing_pass": args.at_failing_pass} if args.at_failing_pass else {}))
    try:
        if args.each:
            results = make_reports_each(args.file, args.pipeline, options=options)
        else:
            results = [make_report(args.file, args.pipeline, options=options)]
    except HarnessError as e:
        if getattr(e, "reason", None) is Refusal.PASSES:
            print(str(e))
            return EXIT_OK
        raise
    if args.json:
        found = [result.to_json() for result in results]
        print(jsonfile.dumps(found if args.each else found[0], indent=2))
    else:
        for result in results:
            for line in result.render():
                print(line)
    return EXIT_FAILURE


def cmd_pipelines(args: argparse.Namespace) -> int:
    from ..compiler import pipelines

    found = pipelines.default()
    if args.json:
        print(jsonfile.dumps({name: {"pass": p.pass_name, "textual": p.textual(), "input": p.input,
                                 "output": p.output} for name, p in found.pipelines.items()},
                         indent=2))
        return EXIT_OK
    for name, p in found.pipelines.items():
        print(f"{name:22s} {p.textual()}")
        print(f"{'':22s}   {p.input} -> {p.output}")
    print("\n--pipeline also takes an upstream pipeline name, a textual pipeline "
          "('builtin.module(canonicalize)') or pass flags (--pipeline=-canonicalize).")
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    _register_run(sub)
    _register_explain(sub)
    _register_bisect(sub)
    _register_reduce(sub)
    _register_report(sub)
    _register_pipelines(sub)


def _register_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness run``: one pipeline on a file, its outcome classified."""
    p = ir_tool(sub, "run", "run a pipeline on an IR file and classify the outcome",
                 json_help="print the record as JSON")
    p.add_argument("-o", "--output", help="write the output IR here")
    p.add_argument("--max-input-mb", type=int, default=defaults.MAX_INPUT_MB,
                   help=f"refuse larger input files (default {defaults.MAX_INPUT_MB}; 0 = no limit)")
    p.add_argument("--blockers", action="store_true",
                   help="on a legalization failure, also find the ops whose conversion failed "
                        "(each left-over op alone: ~15 small runs)")
    p.set_defaults(fn=cmd_run)


def _register_explain(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness explain``: each error traced back to its Python line."""
    p = ir_tool(sub, "explain", "for each error: the Python line of its op, the source around "
                                 "it, and the fix when it matches a known idiom",
                 json_help="print the explanation as JSON")
    p.add_argument("--context", type=int, default=2, help="source lines shown around each location")
    p.add_argument("--no-blockers", action="store_true",
                   help="skip finding the op whose conversion failed (each left-over op alone)")
    p.set_defaults(fn=cmd_explain)


def _register_bisect(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness bisect``: the first failing pass (or build, or numbers that go wrong)."""
    p = ir_tool(sub, "bisect", "name the first pass of a pipeline that fails or crashes, and "
                                "write the IR just before it (2 torch-mlir-opt runs)",
                 json_help="print the result as JSON")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"parent folder of the unique output folder (default: {DEFAULT_OUT})")
    p.add_argument("--builds", metavar="A..B|A,B,C",
                   help="instead of passes, bisect builds: the first build (releases from A to B "
                        "in order, or the builds listed) whose outcome differs from A's; exits "
                        "1 when one does")
    p.add_argument("--no-blockers", action="store_true",
                   help="skip replaying each left-over op alone through the conversion passes")
    numerics.numerics_flags(p, "instead of a failing pass, find where a lowering's numbers go wrong: "
                               "the chain of ops whose lowered values first differ from the reference "
                               "evaluator's, their Python lines, and the pass choices that make it right")
    p.set_defaults(fn=cmd_bisect)


def _register_reduce(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness reduce``: a smaller file that fails the same way."""
    p = ir_tool(sub, "reduce", "shrink a failing IR file while it keeps failing the same way",
                 timeout=None, timeout_help="seconds per candidate before it counts as a hang "
                                            "(default: from the original run)", iree=True)
    p.add_argument("-o", "--output", required=True,
                   help="write the reduced IR here (atomically); with --each, a folder")
    p.add_argument("--budget-s", type=seconds, default=defaults.REDUCE_BUDGET_S,
                   help="wall-clock seconds to search (default %(default)g); the best file so far is kept")
    p.add_argument("--max-tries", type=int, default=defaults.REDUCE_MAX_TRIES,
                   help="most runs of torch-mlir-opt on candidates")
    p.add_argument("--at-failing-pass", choices=["never", "object-graph", "always"],
                   default="object-graph",
                   help="reduce the IR just before the failing pass (from bisect) through that pass "
                        "alone: for TorchScript object-graph input (default), always, or never; "
                        "the printed reproduce command then runs that pass")
    p.add_argument("--each", action="store_true",
                   help="one reduced case per distinct failure: -o names a folder, which gets "
                        "reduced-1.mlir, reduced-2.mlir, ... in the order the pipeline meets them")
    numerics.numerics_flags(p, "keep wrong numbers instead of a failure: the reference evaluator on "
                               "each candidate is the oracle; writes OUT, OUT's .inputs.npz and "
                               ".expected.npz")
    p.set_defaults(fn=cmd_reduce)


def _register_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness report``: an upstream bug-report bundle."""
    p = ir_tool(sub, "report", "write an upstream bug-report bundle (issue.md, repro.sh, "
                                "input/reduced IR, backtrace, record) and its .tar.gz",
                 json_help="print the result as JSON")
    p.add_argument("--out", required=True, help="parent folder of the unique report folder")
    p.add_argument("--keep-weights", action="store_true",
                   help="keep resource blobs in input.mlir (default: elided when that keeps the failure)")
    p.add_argument("--no-redact", action="store_true",
                   help="keep the home folder, user name and absolute paths in the bundle")
    p.add_argument("--budget-s", type=seconds, default=defaults.REDUCE_BUDGET_S,
                   help=f"seconds to reduce (default {defaults.REDUCE_BUDGET_S:g})")
    p.add_argument("--no-reduce", action="store_true", help="skip the reduction; repro.sh runs input.mlir")
    p.add_argument("--search-upstream", action="store_true",
                   help="also ask GitHub's issue search for the op and pass (said when offline)")
    p.add_argument("--title", metavar="TEXT",
                   help="the bug in one line, as the project found it (issue.md's title, after "
                        "the repository and triage labels; default: from the failure's signature)")
    p.add_argument("--path", action="append", default=[], metavar="FRONTEND=OUTCOME[:DETAIL]",
                   help="one frontend's result for this failure, as a port or upstream's e2e "
                        "config showed it (repeatable; OUTCOME: hits, passes, fails-otherwise, "
                        "not-tried): issue.md's Reproduces through lists every frontend, "
                        "upstream's supported paths (FX, ONNX) first")
    p.add_argument("--torch-mlir-src", metavar="DIR",
                   help="a clone of llvm/torch-mlir (bare works): issue.md's Upstream then says "
                        "which of upstream's e2e configs already expect the --blocks tests to "
                        "fail (xfail_sets.py, read, never run) and, with --root-cause-code, "
                        "which commit introduced the faulty line")
    p.add_argument("--root-cause-code", metavar="TEXT",
                   help="a line of torch-mlir's source at the root cause (e.g. 'OpFoldResult "
                        "AtenToDtypeOp::fold'): its file and line, the commit that added it "
                        "(git log -S) and the one that last changed it (git blame)")
    p.add_argument("--blocks", action="append", default=[], metavar="NAME",
                   help="a model, e2e test or lit test the failure stops (repeatable; issue.md's Blocks)")
    p.add_argument("--port-record", action="append", default=[], metavar="PATH",
                   help="a port record (harness port's record.json) or a sweep folder: the "
                        "frontends that hit the failure and the models it blocks (repeatable)")
    p.add_argument("--root-cause", metavar="TEXT",
                   help="the cause as the project found it by hand (source, lit tests), which the "
                        "tools cannot find: issue.md's Root cause quotes it, marked as given")
    p.add_argument("--each", action="store_true",
                   help="one bundle per distinct failure (each failure found with the ones before "
                        "it knocked out), in the order the pipeline meets them; --json prints a list")
    p.add_argument("--at-failing-pass", choices=["never", "object-graph", "always"],
                   help="reduce the IR just before the failing pass through that pass alone: for "
                        "TorchScript object-graph input (ReportOptions' default), always, or never; "
                        "repro.sh then runs that pass")
    p.add_argument("--reproduces-through", choices=["torchscript-only", "fx-only", "both"],
                   help="the frontends that reach it, when a port of the PyTorch source showed it "
                        "(default: not determined for a bare IR file)")
    p.add_argument("--module", metavar="FILE.py:CLASS",
                   help="the PyTorch source of the IR: the report tries the FX path itself "
                        "(torch.export + fx_importer, then the stages to where --pipeline ends) "
                        "and says in Reproduces through whether FX hits the same failure; FILE "
                        "defines CLASS (built with no arguments) and example_inputs()")
    numerics.numerics_flags(p, "a miscompile bundle instead: the reduced IR that lowers and runs but "
                               "computes wrong values, its inputs and expected values (.npz), and a "
                               "repro.sh that exits 1 exactly when the numbers are wrong")
    p.set_defaults(fn=cmd_report)


def _register_pipelines(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``harness pipelines``: the pipeline names --pipeline takes."""
    p = sub.add_parser("pipelines", help="list the pipeline names --pipeline takes, and what each runs")
    p.add_argument("--json", action="store_true", help="print them as JSON")
    p.set_defaults(fn=cmd_pipelines)
