"""``--numerics`` on bisect, reduce and report: the same tools aimed at wrong numbers (a
lowering that runs but computes other values than the reference evaluator) instead of a
failing pass. Exit status as for a failure: 1 when the wrong numbers are there."""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING

from harness.compiler import jsonfile
from .. import defaults

from ..errors import UsageError
from .common import (
    EXIT_FAILURE,
    EXIT_OK,
    invocation,
    progress,
    random_inputs,
    stderr_progress,
    tolerances,
    value_flags,
)

if TYPE_CHECKING:  # torch: only with --numerics
    from ..diagnose.numerics import NumericsBisectOptions
    from ..execute.inputs import RandomInputs
    from collections.abc import Mapping

    from ..diagnose.report.sections import PathOutcome, PathResult, Provenance
    from ..frontends.names import FrontendName
    from ..knowledge.upstream_src import SourceLookup


def numerics_options(args: argparse.Namespace) -> NumericsBisectOptions | None:
    """The inputs, tolerances and work folder of a --numerics bisect, reduce or report; None
    without --numerics (where its flags are a usage error)."""
    if not args.numerics:
        given = [f for f, v in (("--inputs", args.inputs), ("--tolerance", args.tolerance),
                                ("--function", args.function)) if v]
        if given:
            raise UsageError(f"{', '.join(given)} go with --numerics (wrong numbers); without "
                             "it the command keeps a failure of the pipeline.")
        return None
    from ..diagnose.numerics import NumericsBisectOptions  # torch: only with --numerics

    return NumericsBisectOptions(
        inputs_path=args.inputs, random=random_inputs(args),
        function=args.function, opt=args.opt, tolerances=tolerances(args),
        timeout_s=args.timeout or defaults.TIMEOUT_S, out_dir=getattr(args, "out", None),
        progress=None if getattr(args, "json", False) else stderr_progress())


def numerics_flags(p: argparse.ArgumentParser, what: str) -> None:
    """--numerics and the flags that go with it (as harness check spells them)."""
    p.add_argument("--numerics", action="store_true", help=what)
    p.add_argument("--inputs", metavar="FILE.npz",
                   help="--numerics: the arguments, as arg0, arg1, ... or in order (default: random)")
    value_flags(p, prefix="--numerics: ")


def cmd_bisect_numerics(args: argparse.Namespace) -> int:
    from ..diagnose.numerics import FunctionVerdict, bisect_numerics

    options = numerics_options(args)
    assert options is not None  # called with --numerics only
    result = bisect_numerics(args.file, args.pipeline, options=options)
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    # Wrong numbers (localized or at the torch level) or no lowering at all: 1; verified: 0.
    return EXIT_OK if result.verdict is FunctionVerdict.VERIFIED else EXIT_FAILURE


def cmd_reduce_numerics(args: argparse.Namespace) -> int:
    from ..diagnose.reduce.miscompile import NumericsReduceOptions, reduce_numerics
    from ..errors import NoMiscompileError

    base = numerics_options(args)
    assert base is not None  # called with --numerics only
    fields = {k: getattr(base, k) for k in ("inputs_path", "function", "opt", "tolerances", "timeout_s")}
    try:
        result = reduce_numerics(args.file, args.pipeline, options=NumericsReduceOptions(
            output_path=args.output, budget_s=args.budget_s, max_tries=args.max_tries,
            random=base.random, progress=progress(args), **fields))
    except NoMiscompileError as error:
        if not error.detail.startswith("fails at execution"):
            raise
        return _reduce_runtime(args, base.random, fields)
    print(f"reduced {args.file}: {result.summary()}")
    print(f"  keeps: numerics-mismatch (max abs diff {result.max_abs_diff:.3g}) through "
          f"{result.piece_pipeline} and the RefBackend")
    print(f"  -> {result.output_path} (inputs {result.inputs_path}, expected {result.expected_path})")
    print(f"reproduce: {invocation()} " + shlex.join(["check", result.output_path, "--pipeline",
                                                      result.piece_pipeline, "--inputs", result.inputs_path]))
    if result.culprit:
        print(f"the op that computes wrong: {result.culprit}")
    return EXIT_FAILURE


def _reduce_runtime(args: argparse.Namespace, random: RandomInputs, fields: dict) -> int:
    """``reduce --numerics`` on code that dies when it runs (a port's crashed set): the smallest
    IR whose code still dies the same way, as ``report --numerics`` reduces it for its bundle;
    the printed command reruns it under runtime checks."""
    from ..diagnose.reduce.runtime import RuntimeReduceOptions, reduce_runtime

    result = reduce_runtime(args.file, args.pipeline, options=RuntimeReduceOptions(
        output_path=args.output, budget_s=args.budget_s, max_tries=args.max_tries,
        random=random, progress=progress(args), **fields))
    print(f"reduced {args.file}: {result.summary()}")
    print(f"  keeps: {result.failure} through {result.piece_pipeline} and the RefBackend")
    print(f"  -> {result.output_path} (inputs {result.inputs_path}, expected {result.expected_path})")
    print(f"reproduce: {invocation()} " + shlex.join([
        "check", result.output_path, "--pipeline", result.piece_pipeline, "--inputs",
        result.inputs_path, "--runtime-checks"]))
    return EXIT_FAILURE


def lookup_of(args: argparse.Namespace) -> SourceLookup:
    """``--torch-mlir-src`` and ``--root-cause-code``: what the report asks of a checkout."""
    from ..knowledge.upstream_src import SourceLookup, UpstreamSource

    if args.root_cause_code and not args.torch_mlir_src:
        raise UsageError("--root-cause-code is looked up in a torch-mlir checkout: give "
                         "--torch-mlir-src DIR too (a clone of llvm/torch-mlir).")
    source = UpstreamSource(args.torch_mlir_src) if args.torch_mlir_src else None
    return SourceLookup(source, args.root_cause_code or "")


def provenance_of(args: argparse.Namespace) -> Provenance:
    """issue.md's Reproduces through and Blocks from report's flags."""
    from ..diagnose.report.sections import Provenance, Through

    from ..diagnose.onnx_terms import onnx_opset
    from ..diagnose.report.sections import PathOutcome
    from ..frontends.names import FrontendName

    # An input the onnx_importer wrote (its functions record the ONNX opset) came through the
    # ONNX path: that path hits the failure, with no port record or --path to say so.
    opset = onnx_opset(args.file) if getattr(args, "file", None) else None
    seen = {FrontendName.ONNX: (PathOutcome.HITS, f"the input is the onnx_importer's output "
                                                  f"(opset {opset})")} if opset is not None else {}
    return Provenance(through=Through.parse(args.reproduces_through or "not-determined"),
                      how="as given (--reproduces-through)" if args.reproduces_through else "",
                      blocks=tuple(args.blocks), finding=(args.root_cause or "").strip(),
                      paths=path_results(args.path, seen))


def path_results(given: list[str], seen: Mapping[FrontendName, tuple[PathOutcome, str]] | None = None
                 ) -> tuple[PathResult, ...]:
    """``--path FRONTEND=OUTCOME[:DETAIL]``, each frontend's path named from the frontends'
    table, every frontend listed (one not given: ``seen``'s, else not tried, which port records
    may fill)."""
    from ..diagnose.report.sections import PathOutcome, PathResult
    from ..frontends.names import PATHS, FrontendName

    found: dict[FrontendName, tuple[PathOutcome, str]] = dict(seen or {})
    for text in given:
        name, _, rest = text.partition("=")
        outcome, _, detail = rest.partition(":")
        try:
            found[FrontendName.parse(name.strip())] = (PathOutcome.parse(outcome.strip()), detail.strip())
        except (ValueError, UsageError):
            raise UsageError(
                f"--path {text!r}: give FRONTEND=OUTCOME[:DETAIL], FRONTEND one of "
                f"{', '.join(f.value for f in FrontendName)} and OUTCOME one of "
                f"{', '.join(o.value for o in PathOutcome)} (e.g. --path 'fx=passes:upstream's "
                "fx_importer config passes it').") from None
    return tuple(PathResult(f.value, info.label, info.upstream_ci, *found.get(f, (PathOutcome.NOT_TRIED, "")),
                            note=info.note) for f, info in PATHS.items())


def port_evidence(paths: list[str]) -> tuple:
    """``--port-record``: each port record file, or a sweep folder's ``records/*.json``, as the
    report's ``PortEvidence`` (one per frontend port of each variant)."""
    from pathlib import Path

    from ..errors import InputFileError
    from ..port.record import PIPELINE_STAGES, PortOutcome, PortRecord, PortStage
    from ..diagnose.report.sections import PathOutcome, PathResult, PortEvidence
    from ..frontends.names import PATHS

    files: list[Path] = []
    for given in paths:
        path = Path(given)
        files += sorted((path / "records").glob("*.json")) if path.is_dir() else [path]
    past_import = PIPELINE_STAGES | {PortStage.REFBACKEND_LOWERING, PortStage.EXECUTION}
    out = []
    for file in files:
        try:
            record = PortRecord.read(file)
        except (InputFileError, KeyError, ValueError, TypeError):
            if str(file) in paths:
                raise InputFileError(f"--port-record {file}: not a port record (harness.port/1); "
                                     "give the record.json of 'harness port' or a sweep folder.") from None
            continue  # a sweep folder's failure note
        for variant in record.variants:
            for port in variant.ports:
                ops = tuple(x for b in port.blockers for x in (b.op, b.reported_op, b.signature) if x)
                info = PATHS[port.frontend]
                out.append(PortEvidence(
                    model=f"{record.model} ({variant.name})", frontend=port.frontend.value, ops=ops,
                    reached_pipelines=(port.outcome is not PortOutcome.FAILS
                                       or port.failed_stage in past_import),
                    path=PathResult(port.frontend.value, info.label, info.upstream_ci,
                                    PathOutcome.NOT_TRIED, note=info.note),
                    locations=tuple((b.op, b.location) for b in port.blockers if b.location)))
    return tuple(out)


def cmd_report_numerics(args: argparse.Namespace) -> int:
    from ..diagnose.report.miscompile import NumericsReportOptions, make_numerics_report

    base = numerics_options(args)
    assert base is not None  # called with --numerics only
    result = make_numerics_report(args.file, args.pipeline, options=NumericsReportOptions(
        out_dir=args.out, opt=args.opt, inputs_path=base.inputs_path, random=base.random,
        function=base.function, tolerances=base.tolerances, redact=not args.no_redact,
        reduce=not args.no_reduce, budget_s=args.budget_s, timeout_s=base.timeout_s,
        progress=None if args.json else progress(args), search_upstream=args.search_upstream,
        provenance=provenance_of(args), port_evidence=port_evidence(args.port_record),
        lookup=lookup_of(args), title=args.title or ""))
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return EXIT_FAILURE if result.reproduced else EXIT_OK
