"""Subcommands over torch-mlir-opt builds: the named build cache, ``diff`` of two builds,
``bisect --builds``, and the note that says which build runs."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from harness.compiler import jsonfile
from .. import defaults

from ..errors import HarnessError, UsageError
from .common import seconds, stderr_progress, textual_pipeline

if TYPE_CHECKING:
    from ..compiler.builds import BuildCache
    from ..diagnose.diff_targets import DiffTarget


def cmd_builds(args: argparse.Namespace) -> int:
    from ..compiler import builds

    cache = builds.BuildCache()
    if args.action == "list":
        return _builds_list(cache, args)
    if args.action == "fetch":
        if not args.names:
            raise UsageError("harness builds fetch needs a release name, e.g. belfort-2026.7.1 "
                             "('harness builds list --available' shows them).")
        for name in args.names:
            build, fetched = cache.fetch(name, force=args.force, say=stderr_progress())
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


def _builds_list(cache: BuildCache, args: argparse.Namespace) -> int:
    rows = cache.listing()
    note = lambda line: print(f"harness: note: {line}", file=sys.stderr)  # noqa: E731
    available = cache.unfetched_releases(note) if args.available else []
    if args.json:
        print(jsonfile.dumps({"cache": str(cache.root), "available": available, "builds": [
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
    from ..compiler.builds import BuildCache, ensure
    from ..diagnose.diff import DiffOptions, diff_builds, write_json
    from ..diagnose.diff_targets import TargetKind, collect_targets

    if (not args.opt or len(args.opt) != 2) and not _all_timelines(args.targets):
        raise UsageError("harness diff compares two builds: give --opt A --opt B (build names "
                         "such as wheel or belfort-2026.7.1, or paths).")
    targets = collect_targets(args.targets, args.pipeline, lit=args.lit)
    if any(t.kind is TargetKind.TIMELINE for t in targets):
        return _diff_timelines(args, targets)
    say = stderr_progress(args.json)
    cache = BuildCache()
    a, b = (ensure(spec, cache, say) for spec in args.opt)
    lit_args = ("--filter", args.lit_filter) if args.lit_filter else ()
    result = diff_builds(a, b, targets, DiffOptions(timeout_s=args.timeout, lit_args=lit_args,
                                                    progress=say))
    if args.output:
        write_json(result, args.output)
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
        if args.output:
            print(f"json: {args.output}")
    return 1 if result.changed else 0


def _all_timelines(paths: list[str]) -> bool:
    from pathlib import Path

    from ..diagnose.timeline_record import RECORD_NAME, is_timeline_record

    return bool(paths) and all(is_timeline_record(Path(p) / RECORD_NAME if Path(p).is_dir() else Path(p))
                               for p in paths)


def _diff_timelines(args: argparse.Namespace, targets: list[DiffTarget]) -> int:
    """Two timeline records compared as they are, or one run again on each of two builds."""
    from pathlib import Path

    from ..compiler.builds import BuildCache, ensure
    from ..compiler.irfile import unique_dir
    from ..sweep import timeline_page
    from ..diagnose.diff_targets import TargetKind
    from ..diagnose.timeline import TimelineOptions, run_timeline
    from ..diagnose.timeline_diff import first_difference
    from ..diagnose.timeline_record import load

    folders = [Path(t.id) for t in targets]
    if any(t.kind is not TargetKind.TIMELINE for t in targets) or len(targets) > 2:
        raise UsageError("harness diff compares timelines with timelines: give two timeline "
                         "folders (or their timeline.json), or one with --opt A --opt B.")
    if len(targets) == 2 and not args.opt:
        a, b = (load(f) for f in folders)
    elif len(targets) == 1 and args.opt and len(args.opt) == 2:
        first = load(folders[0])
        say = stderr_progress(args.json)
        cache = BuildCache()
        builds_ab = [ensure(spec, cache, say) for spec in args.opt]
        folders = [unique_dir(f"harness-timeline-{side}-") for side in "ab"]
        a, b = (run_timeline(first.input_path, first.pipeline, folder, opt=build.path,
                             options=TimelineOptions(timeout_s=args.timeout, follow=first.follow))
                for build, folder in zip(builds_ab, folders, strict=False))
        for timeline, folder in zip((a, b), folders, strict=True):
            timeline_page.write(timeline, folder)
    else:
        raise UsageError("harness diff of timelines takes two timeline folders without --opt, or "
                         "one timeline folder with --opt A --opt B (it is run again on each).")
    found = first_difference(a, b, folders[0], folders[1])
    if args.json:
        print(jsonfile.dumps({"a": str(folders[0]), "b": str(folders[1]),
                          "difference": found.to_json() if found else None}, indent=2))
    else:
        print(f"A: {folders[0]} ({len(a.rows)} passes, {a.outcome.value})")
        print(f"B: {folders[1]} ({len(b.rows)} passes, {b.outcome.value})")
        for line in found.render() if found else ["no difference: the same passes, the same IR after each"]:
            print(line)
    return 1 if found else 0


def cmd_bisect_builds(args: argparse.Namespace) -> int:
    from ..compiler.builds import BuildCache
    from ..diagnose.build_bisect import bisect_builds, build_order

    if args.opt:
        raise UsageError("bisect --builds runs the builds it names: drop --opt.")
    say = stderr_progress(args.json)
    cache = BuildCache()
    order = build_order(args.builds, cache, say=say)
    result = bisect_builds(args.file, textual_pipeline(args.pipeline), order,
                           timeout_s=args.timeout, cache=cache, say=say)
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 1 if result.found else 0


def announce_binary(args: argparse.Namespace) -> None:
    """Says once, on stderr, which binary runs when it is not the wheel's."""
    from ..compiler import binary, builds

    chosen = getattr(args, "opt", None)
    if not isinstance(chosen, str):
        chosen = None
    if not chosen and not os.environ.get(binary.ENV_VAR):
        return
    try:
        # The command's --timeout bounds identifying the binary too (one that hangs on --version).
        timeout = min(getattr(args, "timeout", None) or binary.IDENTIFY_TIMEOUT_S, binary.IDENTIFY_TIMEOUT_S)
        exe = builds.resolve(chosen, timeout_s=timeout)
        build = builds.origin_of(exe.path, timeout_s=timeout)
    except HarnessError:
        return  # the command itself reports a bad binary, with its remedy
    if build.kind is builds.BuildKind.WHEEL:
        return
    source = "--opt" if chosen else f"${binary.ENV_VAR}"
    print(f"harness: torch-mlir-opt from {source}: {build.describe()} "
          f"[{exe.build_kind} build]", file=sys.stderr, flush=True)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
                        "(a sweep), a lit folder, or timelines (two, or one with --opt twice)")
    p.add_argument("--opt", action="append", metavar="BUILD",
                   help="a build name or torch-mlir-opt path; give it twice: A, then B")
    p.add_argument("--pipeline", help="the pipeline for IR files (name, upstream name or text)")
    p.add_argument("--timeout", type=seconds, default=defaults.TIMEOUT_S,
                   help="seconds per torch-mlir-opt run before it counts as a hang (default %(default)g)")
    p.add_argument("--lit", action="store_true",
                   help="folder targets are lit suites, or folders inside one (lit finds the "
                        "config above them); without it only a folder holding lit.cfg.py is")
    p.add_argument("--lit-filter", metavar="REGEX",
                   help="lit folders: run only the tests whose name matches (lit's --filter)")
    p.add_argument("-o", "--output", help="write the diff as JSON (schema harness.diff/1) here")
    p.add_argument("--json", action="store_true", help="print the diff as JSON")
    # diff names each of its builds itself; the one-binary announcement does not apply.
    p.set_defaults(fn=cmd_diff, announce_binary=False)
