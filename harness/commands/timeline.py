"""``harness timeline FILE --pipeline P``: one run, and a page of what each pass did."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.compiler import jsonfile
from .. import defaults
from ..errors import InputFileError, UsageError
from .common import (
    EXIT_FAILURE,
    EXIT_OK,
    pipeline_names,
    pipeline_or_target,
    say,
    seconds,
    textual_pipeline,
)


def cmd_timeline(args: argparse.Namespace) -> int:
    from ..compiler.irfile import unique_dir
    from ..compiler.outcomes import Outcome
    from ..compiler.runner import check_input
    from ..execute.lowering import Driver, driver_for
    from ..sweep import timeline_page
    from ..diagnose.timeline import TimelineOptions, run_timeline
    from ..diagnose.timeline_record import Follow

    check_input(args.file)
    follow = Follow.parse(args.follow) if args.follow is not None else None
    textual = textual_pipeline(args.pipeline)
    if textual.lstrip().startswith("-"):
        raise UsageError(f"harness timeline takes a pipeline, not pass flags ({args.pipeline!r}): "
                         "write it as a textual pipeline, e.g. 'builtin.module(canonicalize,cse)'.")
    if driver_for(args.pipeline) is Driver.BINDINGS:
        raise UsageError(f"pipeline {args.pipeline!r} runs on the MLIR Python bindings, which "
                         "print no per-pass IR for a timeline; give a torch-mlir-opt pipeline "
                         "(see 'harness pipelines').")
    out = Path(args.out) if args.out else unique_dir("harness-timeline-")
    say(args, f"running {textual} once with -mlir-print-ir-after-all and -mlir-timing")
    timeline = run_timeline(args.file, textual, out, opt=args.opt,
                            options=TimelineOptions(timeout_s=args.timeout, follow=follow))
    if timeline.outcome is Outcome.PARSE_ERROR:
        raise InputFileError(f"{args.file} is not MLIR that torch-mlir-opt can parse; no pass ran. "
                             "Give the IR file that failed (harness opt and harness emit write them).")
    page = timeline_page.write(timeline, out)
    if args.json:
        print(jsonfile.dumps(timeline.to_json(), indent=2))
    else:
        failing = timeline.failing
        print(f"{timeline.outcome.value}: {len(timeline.rows)} passes, {len(timeline.changed)} changed "
              f"the module, in {timeline.elapsed_s:.2f} s")
        if failing is not None:
            print(f"failing pass: #{failing.index} {failing.pass_name} on {failing.anchor or '?'}")
        for said in timeline.onnx:
            print(f"onnx: {said}")
        if timeline.lost_dumps:
            print(f"incomplete: {timeline.error.splitlines()[-1]}")
        print(f"page: {page}")
        print(f"record: {out / 'timeline.json'}")
    return EXIT_OK if timeline.ok else EXIT_FAILURE


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("timeline", help="run a pipeline once and write a page of what each pass "
                                        "did: changed or not, time, ops, diff (exits 1 when it fails)")
    p.add_argument("file")
    pipeline_or_target(p, f"a pipeline name ({pipeline_names()}), an upstream pipeline name, or "
                          "a textual pipeline")
    p.add_argument("--out", help="folder of index.html, timeline.json and ir/ (default: a new "
                                 "folder in the temp dir)")
    p.add_argument("--follow", metavar="OP|FILE:LINE",
                   help="count, after each pass, the ops of this name (torch.aten.mm, aten.mm) or "
                        "at this Python line (modeling_opt.py:339)")
    p.add_argument("--opt", help="torch-mlir-opt binary or build name (default: $TORCH_MLIR_OPT, "
                                 "then the wheel's)")
    p.add_argument("--timeout", type=seconds, default=defaults.TIMEOUT_S,
                   help="seconds before the run counts as a hang (default %(default)g)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.set_defaults(fn=cmd_timeline)
