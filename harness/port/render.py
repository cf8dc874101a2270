"""A port record as people read it: the model, each frontend's stages, blockers and numbers,
then one result line per port and the commands to dig further."""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING

from harness.compiler.outcomes import Outcome
from harness.compiler.targets import DEFAULT_TARGETS
from harness.execute.backend_names import DEFAULT_BACKENDS
from harness.execute.closeness import NOISE_FACTOR, WORST_FACTOR
from harness.frontends.names import FrontendName

if TYPE_CHECKING:
    from harness.frontends.base import Frontend
from harness.knowledge.fixes import FIXES
from harness.models.choice import Variant
from harness.models.hf_resolve import SourceKind
from harness.diagnose.registry import unregistered_op
from harness.diagnose.source import excerpt

from .diagnose import short_location
from .record import (
    PIPELINE_STAGES,
    Blocker,
    DynamicDims,
    FrontendPort,
    NumericsCheck,
    OutputDiff,
    PassSource,
    PortOutcome,
    PortRecord,
    PortStage,
    StageError,
    VariantRecord,
)

def _frontend(name: FrontendName) -> Frontend:
    """The frontend's table entry (imported when a port is rendered: torch is loaded by then)."""
    from harness.frontends.base import frontend

    return frontend(name)


def render(record: PortRecord) -> list[str]:
    lines: list[str] = []
    for variant in record.variants:
        lines += _variant_lines(record, variant)
        for port in variant.ports:
            lines += ["", *_port_lines(variant, port)]
        lines.append("")
    return lines + summary(record)


def _variant_lines(record: PortRecord, variant: VariantRecord) -> list[str]:
    lines = [f"== {variant.name} ({record.model}, {variant.variant}): built in "
             f"{variant.build_seconds:.2f} s =="]
    lines += [f"  - {s}" for s in variant.sentences]
    binary = record.versions.get("torch-mlir-opt", "")
    if binary:
        lines.append(f"  - torch-mlir {record.versions.get('torch-mlir', '?')}; torch-mlir-opt: {binary}.")
    return lines


def dynamic_summary(dims: DynamicDims) -> str:
    """``--dynamic`` in one line: asked, still ``?`` in linalg, static, frozen lines."""
    parts = [f"asked {', '.join(dims.asked)}"]
    if dims.linalg:
        parts.append(f"still dynamic in the linalg signature: {', '.join(dims.linalg)}")
    if dims.static:
        parts.append(f"static: {', '.join(dims.static)}")
    parts += [f"frozen at {f}" for f in dims.frozen[:3]]
    return "; ".join(parts)


def _through(port: FrontendPort) -> str:
    """``fx``, with ``to tosa`` and ``on iree`` where the target or backend is not the default."""
    words = [port.frontend.value]
    if port.target is not DEFAULT_TARGETS[0]:
        words.append(f"to {port.target.value}")
    if port.backend is not DEFAULT_BACKENDS[0]:
        words.append(f"on {port.backend.value}")
    return " ".join(words)


def _port_lines(variant: VariantRecord, port: FrontendPort) -> list[str]:
    lines = [f"== {variant.name} through {_through(port)}: {outcome_text(port)} =="]
    lines.append("  stages: " + ", ".join(
        f"{s.name} {'' if s.ok else ('TIMEOUT ' if s.outcome is Outcome.TIMEOUT else 'FAILED ')}"
        f"{s.seconds:.2f} s"
        for s in port.stages))
    if port.signature and port.contract:
        stopped = port.failed_stage is not None and port.failed_stage in PIPELINE_STAGES
        verb = "reached" if stopped else "lowered to"
        lines.append(f"  {verb} the {port.contract}: {port.signature}")
    if port.dynamic is not None:
        lines.append(f"  dynamic: {dynamic_summary(port.dynamic)}")
    if port.testcase:
        lines.append(f"  {port.backend.value} test case, run by its own tools alone: "
                     + shlex.join(["sh", port.testcase]))
    heading = _frontend(port.frontend).notes_heading
    if port.notes and heading:
        lines.append(f"  {heading}:")
        lines += [f"    - {n}" for n in port.notes]
    for blocker in port.blockers:
        lines += _blocker_lines(blocker, len(port.blockers))
    if port.reproduce:
        lines.append(f"  reproduce: {port.reproduce}")
    if port.numerics:
        lines.append(f"  numerics: {port.backend.said} against eager PyTorch")
        for check in port.numerics:
            lines += _numerics_lines(check, port.frontend)
    return lines


def outcome_text(port: FrontendPort) -> str:
    outcome = port.outcome
    if outcome is PortOutcome.FAILS:
        failed = next((s for s in port.stages if s.name is port.failed_stage), None)
        why = (f" ({failed.outcome})" if failed is not None
               and failed.outcome not in (StageError.IN_PYTHON, Outcome.SUCCESS) else "")
        return f"fails at {port.failed_stage}{why}"
    if outcome is PortOutcome.LOWERED:
        lowered = [s.name.value for s in port.stages if s.name in PIPELINE_STAGES]
        if port.unrun:  # compiled for a device this machine lacks: no number claimed
            return f"lowers through {', '.join(lowered)}; {port.unrun} (numbers not checked)"
        return f"lowers through {', '.join(lowered)} (numbers not checked)"
    if outcome is PortOutcome.PARTIAL:
        return "partial (not verified: a part of the model never ran)"
    return outcome.value


def _blocker_lines(b: Blocker, total: int) -> list[str]:
    what = b.op or b.message
    count = f" (x{b.count})" if b.count > 1 else ""
    where = f" at {short_location(b.location)}" if b.location else ""
    if b.called_from:
        where += f", called from {short_location(b.called_from)}"
    rank = f"blocker {b.rank} of {total}" if total > 1 else "blocker"
    lines = [f"  {rank}: {what}{count}{where}"]
    if b.location:
        path, _, line = b.location.rpartition(":")
        lines += [f"      {s}" for s in excerpt(path, int(line) if line.isdigit() else 0, 2)]
    if b.called_from:
        path, _, line = b.called_from.rpartition(":")
        lines += [f"      {s}" for s in excerpt(path, int(line) if line.isdigit() else 0, 0)]
    if b.op and b.message:
        lines.append(f"    error: {b.message}")
    if b.reported_op and b.reported_op in b.symptoms:
        lines.append(f"    the error names {b.reported_op}, left only because {b.op} was not converted")
    others = [s for s in b.symptoms if s != b.reported_op]
    if others:
        lines.append(f"    also left over because of it: {', '.join(others)}")
    if b.lowering:
        lines.append(f"    lowering: {b.lowering}")
    if b.failing_pass:
        # A record written before failing_pass_from had only these two sources.
        found_by = b.failing_pass_from or (PassSource.CRASH_STACK if b.signature.startswith("crash")
                                           else PassSource.BISECT)
        lines.append(f"    failing pass ({found_by.said}): {b.failing_pass}")
    if b.reproducer:
        lowered = (f"lowered alone by {', '.join(b.converted_by)}" if b.converted_by
                   else "no conversion pass of the pipeline lowers it")
        lines.append(f"    alone it still fails ({lowered}); one-op reproducer: {b.reproducer}")
    for name in b.fixes:
        fix = FIXES.get(name)
        lines.append(f"    fix: {fix.describe() if fix else name}" + (f"; {fix.why}" if fix else ""))
    if b.hint:
        name, _, text = b.hint.partition(": ")
        lines.append(f"    hint ({name}): {text}")
    lines += [f"    {key}: {text}" for key, text in (("why", b.explanation), ("inputs", b.inputs)) if text]
    lines.append(f"    signature: {b.signature}")
    return lines


def _output_state(o: OutputDiff, added_up: bool = False) -> str:
    """One output: the flat filter's numbers, then the float64 rule's, which decide when present
    (``added_up``: its set was verified as rounding that added up, no op being off)."""
    flat = f"max abs {_num(o.max_abs_diff)}, max rel {_num(o.max_rel_diff)} ({o.tolerance}"
    if o.problem:
        return f"{flat}) MISMATCH: {o.problem}"
    flat += f": {o.mismatched} of {o.total} elements off)" if o.mismatched else ")"
    if o.float64_ratio is None or o.float64_worst_ratio is None:  # flat decided (or an old record)
        return f"{flat} {'ok' if not o.mismatched else 'MISMATCH'}"
    within = o.float64_ratio <= NOISE_FACTOR and o.float64_worst_ratio <= WORST_FACTOR
    state = ("ok" if not o.mismatched else "float32 rounding") if within else \
        "rounding that added up" if added_up else "MISMATCH"
    return (f"{flat} {state} (against float64 eager: {_times(o.float64_ratio)} float32 eager's own "
            f"error in rms ({_num(o.float64_rms)} to {_num(o.eager_float64_rms)}), "
            f"{_times(o.float64_worst_ratio)} at the worst element ({_num(o.float64_max_abs_diff)} to "
            f"{_num(o.eager_float64_max_abs_diff)}); at most {NOISE_FACTOR:g}x and {WORST_FACTOR:g}x "
            f"pass; scale {_num(o.float64_scale_max)})")


def _times(x: float) -> str:
    return f"{x:.2f}x" if math.isfinite(x) else "inf x"


def _numerics_lines(check: NumericsCheck, frontend: FrontendName) -> list[str]:
    checked = "" if check.runtime_checks is None else f" (with runtime checks: {check.runtime_checks})"
    if check.verdict is PortOutcome.FAILS:
        return [f"    {check.inputs} inputs ({check.description}): crashed{checked}: {check.error}"]
    lines = [f"    {check.inputs} inputs ({check.description}): {check.verdict}, max abs diff "
             f"{_num(check.max_abs_diff)}, max rel diff {_num(check.max_rel_diff)}{checked}"]
    if check.problem:
        lines.append(f"      {check.problem}")
    if check.excluded:
        lines.append(f"      left out: {check.excluded} (max abs diff there "
                     f"{_num(check.excluded_max_abs_diff)})")
    added_up = check.verdict is PortOutcome.VERIFIED and check.float_noise.startswith("rounding adding up")
    if added_up:
        lines.append(f"      verified: {check.float_noise}")
    elif check.float_noise:
        lines.append("      verified by float64 eager: off the elementwise tolerance only as far as "
                     "float32 eager itself is (float32 rounding of large values)"
                     if check.verdict is PortOutcome.VERIFIED else
                     "      a mismatch by float64 eager, within the elementwise tolerance: further "
                     "from float64 eager than float32 eager is (a wrong constant, or a wrong "
                     "result smaller than the tolerance)")
    for o in check.outputs:
        lines.append(f"      output {o.index}{' ' + o.name if o.name else ''} "
                     f"{o.dtype}[{','.join(str(d) for d in o.shape)}]: {_output_state(o, added_up)}")
    if check.verdict is not PortOutcome.VERIFIED and (check.program_failed
                                                      or check.program_max_abs_diff is not None):
        chosen = _frontend(frontend)
        program = chosen.program_name
        diff = check.program_max_abs_diff
        if check.program_failed or diff is None:
            lines.append(f"      the {program} itself does not run on these inputs in PyTorch")
        elif check.program_ok is False or (check.program_ok is None and not diff <= 0):  # nan too
            lines.append(f"      the {program} itself differs from eager by {_num(diff)} here"
                         f"{chosen.program_blame}")
        else:
            lines.append(f"      the {program} itself matches eager here: the difference comes "
                         "from the lowering or the RefBackend (run the 'check' command below)")
    if check.culprit:
        lines.append(f"      the op that computes wrong: {check.culprit}")
        lines += [f"        {line}" for line in check.culprit_detail]
    return lines


def summary(record: PortRecord) -> list[str]:
    lines = ["== result =="]
    for variant, port in record.ports():
        lines.append(f"{variant.name} {_through(port)}: {_result(port)}")
    if (record.source is SourceKind.OPT and [v.variant for v in record.variants] == [Variant.STOCK]
            and not record.ok):
        lines.append("hint: the project's static-structure rewrite of OPT (FixedOPT) lowers: "
                     "'--model fixed' (harness opt), '--variant fixed' (harness port opt).")
    lines.append(f"files in {record.folder} (the record: record.json)")
    if record.startup_seconds:
        lines.append(f"took {record.seconds:.1f} s, after {record.startup_seconds:.1f} s of "
                     "start-up (importing torch, transformers and torch-mlir)")
    dig = [(v, p) for v, p in record.ports() if p.commands]
    for variant, port in dig:
        what = ("mismatch (the same IR against the reference evaluator)"
                if port.outcome is PortOutcome.NUMERICS_MISMATCH else
                "crash (the same IR under runtime checks, a minimal IR file that still crashes, "
                "an upstream bug report)" if port.failed_stage is PortStage.EXECUTION
                and len(port.commands) > 1 else
                "failure (the Python line and the fix, the failing pass, a minimal IR file, "
                "an upstream bug report)" if len(port.commands) > 1 else "failure")
        lines += ["", f"to dig into the {variant.name} {_through(port)} {what}:"]
        lines += [f"  {c}" for c in port.commands]
    return lines


def _result(port: FrontendPort) -> str:
    text = outcome_text(port)
    if port.outcome is PortOutcome.FAILS and port.blockers:
        first = port.blockers[0]
        text += f": {first.op or first.message}"
        if first.location:
            text += f" at {short_location(first.location)}"
        if first.op and unregistered_op(first.op) is not None:
            text += " is not registered in torch-mlir's dialect"
        elif first.op and not first.converted_by and first.lowering:
            text += " has no lowering"
        if first.fixes:
            text += f" (fix: {', '.join(first.fixes)})"
        if len(port.blockers) > 1:
            text += f" (+{len(port.blockers) - 1} more blocker{'s' if len(port.blockers) > 2 else ''})"
        dies = [c.inputs.value for c in port.numerics if c.verdict is PortOutcome.FAILS]
        if dies and len(dies) < len(port.numerics):
            text += f" (crashes on the {' and '.join(dies)} inputs only)"
    elif port.numerics:
        worst = max(port.numerics, key=lambda c: _worst_first(c.max_abs_diff))
        if port.outcome is PortOutcome.PARTIAL:
            text += (f": the numbers match on {len(port.numerics)} input sets, but only for what "
                     f"ran: {port.not_run}")
        elif port.outcome is PortOutcome.VERIFIED:
            text += f" on {len(port.numerics)} input sets (max abs diff {_num(worst.max_abs_diff)}"
            text += (", float32 rounding by float64 eager)" if any(c.float_noise for c in port.numerics)
                     else ")")
        else:
            bad = [c.inputs.value for c in port.numerics if c.verdict is not PortOutcome.VERIFIED]
            text += f" on the {' and '.join(bad)} inputs (max abs diff {_num(worst.max_abs_diff)})"
    return text


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _worst_first(x: float) -> float:
    """A difference's rank: nan counts as the worst."""
    return math.inf if math.isnan(x) else x
