"""Why a frontend's port stopped: its blockers, ranked, and the commands that dig further.

A pipeline failure is diagnosed by the tools, not here: ``tools.blockers.analyze`` tells the op
whose conversion failed from the ops left over because of it (stock OPT reports the literal
``dense<true>``; the blocker is its user ``aten.__and__.Tensor``) and names the pass that failed
(``tools.bisect`` does when the analysis cannot), ``tools.explain`` the Python line of what MLIR
reported. A failure in Python (trace, export, import) is its exception, located at the innermost
frame of the model's code.
"""

from __future__ import annotations

import os
import re
import shlex
import traceback
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.compiler.irfile import write_atomically
from harness.compiler.locations import file_locations
from harness.compiler.outcomes import Outcome, Signature
from harness.compiler.records import RunRecord
from harness.compiler.text import drop_ssa_names, strip_ansi
from harness.errors import HarnessError
from harness.knowledge import fixes as known_fixes
from harness.knowledge import idioms

from harness.diagnose.onnx_terms import NAME_LOC, no_pattern, onnx_op_name, onnx_opset
from harness.diagnose.source import model_frame, torch_ops_at

from .options import PortOptions
from .record import Blocker, PassSource, PortStage

if TYPE_CHECKING:
    import torch

    from harness.diagnose.blockers import BlockerAnalysis

_TS_FRAME = re.compile(r"^(.+)\((\d+)\): \S+$")  # a TorchScript source range: FILE(LINE): FUNCTION
# Frames of these packages are the machinery, not the model: a Python blocker is located at
# the innermost frame outside them (transformers' own modeling files count as the model).
_MACHINERY = ("/torch/", "/torch_mlir/", "/harness/", "/site-packages/_pytest/", "/contextlib.py",
              "/functools.py")

#: What the harness knows of an import failure, by a fragment of its message.
STATE_MAPPING = "Could not find state mapping for buffer"


def frames_of(location: str) -> list[str]:
    """``FILE:LINE`` of every file location an MLIR location holds, innermost first."""
    return [found.file_line for found in file_locations(location)]


def short_location(location: str) -> str:
    """``transformers/masking_utils.py:54`` for a long path: the file and its folder."""
    path, _, line = location.rpartition(":")
    if not path:
        return location
    parts = Path(path).parts
    return f"{'/'.join(parts[-2:]) if len(parts) > 1 else path}:{line}"


# ---------------------------------------------------------------------------------------------
# Pipeline failures


def pipeline_blockers(record: RunRecord, stage: PortStage, folder: Path,
                      options: PortOptions, analysis: BlockerAnalysis | None = None) -> list[Blocker]:
    """The blockers of a failed pipeline stage, most occurrences first. ``analysis``: the
    blockers of this very run, when ``--fix`` analysed them already (not analysed twice)."""
    from harness.diagnose.blockers import failed_pass
    from harness.diagnose.explain import explain_record

    explained = explain_record(record, context=0).explanations
    first = explained[0] if explained else None
    reported = (record.illegal_ops() or [first.op if first else ""])[0]
    # A crash whose stack names its pass is not run again to be bisected: audioflamingo3's
    # runaway convert-torch-to-linalg took its 56 s to the memory limit a second time.
    crashed_in = record.crash.signature.pass_name if record.crash else ""
    found: list[Blocker] = []
    legalization = options.diagnose and record.outcome is Outcome.LEGALIZATION_FAILURE
    if legalization:
        if analysis is None:  # --fix's analysis of this run, else one now: analysed once
            analysis = _analysis(record, options)
        if analysis is not None:
            found = _analyzed_blockers(record, stage, folder, options, reported, analysis)
    failing_pass = crashed_in
    found_by: PassSource | None = PassSource.CRASH_STACK if crashed_in else None
    dumped = "" if crashed_in else failed_pass(record.stderr)  # the run's own dump (iree-compile's)
    if dumped:
        failing_pass, found_by = dumped, PassSource.AFTER_FAILURE_DUMP
    elif options.diagnose and not crashed_in:
        # The analysis's after-failure dump names the pass already: a bisect would be one more
        # whole run of the pipeline (30 s on glm5_next) for the same name.
        if legalization and analysis is not None and analysis.failing_pass:
            failing_pass, found_by = analysis.failing_pass, PassSource.AFTER_FAILURE_DUMP
        else:
            failing_pass = _failing_pass(record, folder, options)
            found_by = PassSource.BISECT if failing_pass else None
    if not found:
        frames = [f"{f.file}:{f.line}" for f in first.frames] if first else []
        hints = first.hints if first else []
        found = [_torch_op_behind(Blocker(
            rank=1, stage=stage, signature=str(record.signature), op=reported,
            count=len([d for d in record.errors() if d.op == reported]) if reported else 0,
            location=frames[0] if frames else "", frames=frames,
            message=one_line(first.message if first else str(record.signature)),
            hint=_hint(hints[0]) if hints else "", fixes=_fixes(hints)), Path(record.input_path))]
        if reported.startswith('torch.operator "') and not reported.startswith('torch.operator "onnx.'):
            found = _each_generic_op(found[0], Path(record.input_path))
    found = [_onnx_op(b, record) if b.op.startswith('torch.operator "onnx.') else b for b in found]
    return [replace(b, failing_pass=failing_pass, failing_pass_from=found_by,
                    called_from=b.called_from or model_line(b.frames)) for b in found]


def _onnx_op(blocker: Blocker, record: RunRecord) -> Blocker:
    """An ONNX op the conversion left (``torch.operator "onnx.Softsign"``): said in ONNX's
    terms, with its node's name (the name location MLIR's error is at) and the file's opset."""
    name = onnx_op_name(blocker.op)
    said = next((f"{d.message} {d.current_op}" for d in record.errors()
                 if f'"onnx.{name}"' in f"{d.message} {d.current_op}"), blocker.message)
    node = NAME_LOC.search(said)
    return replace(blocker, count=max(blocker.count, 1), explanation=" ".join(filter(None, (
        blocker.explanation,
        no_pattern(name, onnx_opset(record.input_path), node.group(1) if node else "")))))


def _each_generic_op(reported: Blocker, torch_ir: Path) -> list[Blocker]:
    """A stage that stops at the first generic ``torch.operator`` (an op the importer could not
    map to a registered one) names only it; the others wait behind it. One blocker per distinct
    generic op of the stage's input, with its count, most frequent first (issue 45 item 3)."""
    from harness.diagnose.registry import generic_ops

    found = []
    for rank, generic in enumerate(generic_ops(torch_ir), start=1):
        if generic.label == reported.op:
            found.append(replace(reported, rank=rank, count=generic.count))
            continue
        frames = frames_of(generic.location)
        found.append(Blocker(
            rank=rank, stage=reported.stage,
            signature=str(Signature(Outcome.LEGALIZATION_FAILURE, op=generic.label)),
            op=generic.label, count=generic.count, location=frames[0] if frames else "",
            frames=frames, message=f"imported as the generic {generic.label} too, behind the "
                                   f"first: {reported.op} stopped the stage before it"))
    return sorted(found, key=lambda b: b.rank) if any(b.op == reported.op for b in found) else [reported]


def model_line(frames: list[str]) -> str:
    """The model's own line that reached a blocker placed in library code (``torch/_tensor.py``,
    ``nn/functional.py``): the innermost frame of the model's code; "" when the blocker's own
    line is the model's, or no frame is."""
    at = model_frame([f.rpartition(":")[0] for f in frames])
    return frames[at] if at else ""


def _torch_op_behind(blocker: Blocker, torch_ir: Path) -> Blocker:
    """An op of a lower dialect (``arith.fptosi`` failing the verifier) is a symptom: the
    blocker is the torch op whose lowering made it, found in the stage's torch input at the
    same Python stack (issue 45: DPT's ``posemb.size(0) ** 0.5``, an si64 tensor to a float
    power, named ``arith.fptosi at torch/_tensor.py:39``)."""
    if not blocker.op or blocker.op.startswith("torch.") or not blocker.frames:
        return blocker
    ops = torch_ops_at(torch_ir, blocker.frames)
    if not ops:
        return blocker
    also = f" (the same line also holds {', '.join(ops[1:])})" if len(ops) > 1 else ""
    return replace(blocker, op=ops[0], reported_op=blocker.op, explanation=(
        f"the error names {blocker.op}, which the lowering of {ops[0]} made: it is the torch "
        f"op at this Python stack in the stage's input{also}."))


def _failing_pass(record: RunRecord, folder: Path, options: PortOptions) -> str:
    from harness.diagnose.bisect import Replay, bisect

    try:  # only the pass's name is read: no blocker analysis (the caller's), no replay
        result = bisect(record.input_path, record.pipeline, opt=options.opt, out_dir=folder,
                        timeout_s=options.timeout_s, blockers=False, replay=Replay.NONE,
                        memory_limit_mb=options.memory_limit_mb or None)
    except (HarnessError, OSError):  # a second opinion: a refusal or a full disk costs only it
        return ""
    return result.failing_pass


def _analysis(record: RunRecord, options: PortOptions) -> BlockerAnalysis | None:
    """``tools.blockers.analyze`` of the failed run; None when it refuses (a second opinion: a
    refusal or a full disk costs only it)."""
    from harness.diagnose import blockers

    try:
        return blockers.analyze(record.input_path, record.pipeline, opt=options.opt,
                                timeout_s=options.timeout_s)
    except (HarnessError, OSError):
        return None


def _analyzed_blockers(record: RunRecord, stage: PortStage, folder: Path, options: PortOptions,
                       reported: str, analysis: BlockerAnalysis) -> list[Blocker]:
    """The blockers as ``harness explain`` names them (tools.blockers' one-op runs): each with
    its fixes (knowledge.fixes), idiom, symptoms and the conversion that would lower it."""
    from harness.diagnose.blockers import with_replays
    from harness.diagnose.explain import explain_record

    analysis = with_replays(analysis)  # --fix's analysis left its conversion replays for here
    explained = {b.op: b for b in explain_record(record, context=0, analysis=analysis).blockers}
    found = []
    ranked = sorted(analysis.blockers, key=lambda b: (-b.count, b.name))
    for rank, illegal in enumerate(ranked, start=1):
        told = explained.get(illegal.name)
        frames = frames_of(illegal.location)
        if told is not None and told.frames and not told.ir_only:
            frames = [f"{f.file}:{f.line}" for f in told.frames]
        reproducer = ""
        if illegal.isolated_ir:
            reproducer = str(write_atomically(folder / f"blocker-{rank}.mlir", illegal.isolated_ir))
        found.append(Blocker(
            rank=rank, stage=stage,
            signature=str(Signature(Outcome.LEGALIZATION_FAILURE, op=illegal.name)),
            op=illegal.name, count=illegal.count, location=frames[0] if frames else "",
            frames=frames,
            message=f"failed to legalize operation '{illegal.name}' {illegal.signature}",
            reported_op=reported if reported != illegal.name else "",
            symptoms=[s.op for s in told.symptoms] if told else [],
            converted_by=list(illegal.converted_by),
            hint=_hint(told.hints[0]) if told and told.hints else "",
            fixes=[f.name for f in told.fixes] if told else [],
            lowering=told.lowering_line() if told else "",
            reproducer=reproducer))
    return found


def _hint(idiom: idioms.KnownIdiom) -> str:
    return f"{idiom.name}: {idiom.hint}"


def _fixes(hints: list[idioms.KnownIdiom]) -> list[str]:
    """The named fixes (knowledge.fixes) the matched idioms point at."""
    return list(dict.fromkeys(h.fix for h in hints if h.fix in known_fixes.FIXES))


def pipeline_commands(record: RunRecord, stage: str, folder: Path, options: PortOptions) -> list[str]:
    """``harness explain|bisect|reduce|report|timeline`` on the failing stage's input, ready to
    paste: the same binary (``--opt``) and pipeline as the port. The report gets the port's
    record (``record.json`` beside the port folders, written when the port ends): without it
    the bundle cannot say which frontends reproduce the failure or what it blocks."""
    given = ["--opt", opt_argument(options.opt)] if options.opt else []

    def command(tool: str, *more: str) -> str:
        return harness_command(options.invocation,
                               [tool, record.input_path, "--pipeline", stage, *given, *more])

    return [command("explain"), command("bisect"),
            command("reduce", "-o", str(folder / "reduced.mlir")),
            command("report", "--out", str(folder / "report"),
                    "--port-record", str(folder.parent / "record.json")),
            command("timeline", "--out", str(folder / "timeline"))]


def harness_command(invocation: str, words: list[str]) -> str:
    """``invocation`` (already quoted: ``common.invocation``) and ``words``, each quoted, so the
    line pastes and runs as shown whatever the paths and pipeline hold."""
    return f"{invocation} {shlex.join(words)}"


def crash_commands(invocation: str, ir_file: str, pipeline: str, inputs_file: str, folder: Path,
                   opt: str | None, port_record: Path | None = None) -> list[str]:
    """A RefBackend run that crashed, as the harness's public commands (one rule for ``port`` and
    ``check``, never the internal child process that ran it): the same IR and inputs checked
    again under runtime checks (the op and what it found), reduced to a minimal file that still
    crashes, and reported (``--numerics``); files in ``folder``."""
    given = ["--opt", opt_argument(opt)] if opt else []
    on = [ir_file, "--pipeline", pipeline, "--inputs", inputs_file]
    record = ["--port-record", str(port_record)] if port_record else []
    return [harness_command(invocation, words) for words in (
        ["check", *on, "--runtime-checks", *given],
        ["reduce", *on, "--numerics", "-o", str(folder / "crash.reduced.mlir"), *given],
        ["report", *on, "--numerics", "--out", str(folder / "report"), *record, *given])]


def opt_argument(opt: str) -> str:
    """``--opt`` as the printed commands pass it: a binary's absolute path (the commands paste
    into any folder), a build's name as given."""
    return os.path.abspath(opt) if os.sep in opt or os.path.exists(opt) else opt


def reproduce_command(record: RunRecord) -> str:
    """The failing stage rerun by the binary that ran, ready to paste."""
    from harness.compiler.runner import repro_command

    return repro_command(record.pipeline, record.input_path, record.binary)


def with_trace_stacks(found: list[Blocker], script: torch.jit.ScriptModule | None) -> list[Blocker]:
    """Blockers with the whole Python stack of their op, from the trace.

    The importer's locations hold the innermost frame only (``masking_utils.py:54``); the
    traced graph keeps each node's whole stack, which says which line of the model reached
    it (``modeling_gpt2.py:583``)."""
    stacks = _node_stacks(script) if script is not None and any(b.location for b in found) else {}
    out = []
    for blocker in found:
        stack = stacks.get(blocker.location)
        if not stack:
            out.append(blocker)
            continue
        at = model_frame([f.rpartition(":")[0] for f in stack[1:]])
        caller = stack[1 + at] if at is not None else ""
        out.append(replace(blocker, frames=stack[:12], called_from=caller))
    return out


#: A frame of the dynamo exporter's stack trace (outermost first, as Python prints them).
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def with_onnx_stacks(found: list[Blocker], onnx_path: Path | None,
                     converted: Path | None = None) -> list[Blocker]:
    """Blockers of an ONNX port with the Python line behind their op: the onnx_importer names
    each op's location after its ONNX node (``loc("node_unsqueeze")``), and the dynamo exporter
    records each node's stack in its metadata (``pkg.torch.onnx.stack_trace``). A blocker that
    has a file location already, or a node without a stack, stays as it is. ``converted``: the
    port's onnx-to-torch output (text), which says what torch ops the node became (a run-time
    check at the node names none of them: the lowering of one of those is at fault)."""
    if onnx_path is None or not onnx_path.is_file() or all(b.location for b in found):
        return found
    from harness.frontends.onnx import node_stack, node_types

    stacks, types = node_stack(onnx_path), node_types(onnx_path)
    out = []
    for blocker in found:
        named = NAME_LOC.search(f"{blocker.message} {blocker.signature}")
        stack = stacks.get(named.group(1), "") if named and not blocker.location else ""
        frames = [f"{f}:{n}" for f, n in _PY_FRAME.findall(stack)][::-1]  # innermost first
        if not frames:
            out.append(blocker)
            continue
        node = named.group(1) if named else ""
        at = model_frame([f.rpartition(":")[0] for f in frames])
        where = frames[at] if at is not None else frames[0]
        made = _converted_ops(converted, node)
        out.append(replace(blocker, location=where, frames=frames[:12], explanation=" ".join(filter(None, (
            blocker.explanation, f"ONNX node {node} ({types.get(node, '?')}), exported from {where}"
            + (f"; onnx-to-torch made it {', '.join(made)}." if made else "."))))))
    return out


def _converted_ops(converted: Path | None, node: str) -> list[str]:
    """The torch ops the onnx-to-torch output locates at ``node`` ([] for bytecode or none)."""
    from harness.diagnose.onnx_terms import node_ops

    if converted is None or not node or converted.suffix != ".mlir" or not converted.is_file():
        return []
    try:
        return node_ops(converted.read_text(errors="replace"), node)[:12]
    except OSError:
        return []


def _node_stacks(script: torch.jit.ScriptModule) -> dict[str, list[str]]:
    """Innermost FILE:LINE -> the first traced node's stack there (machinery frames dropped)."""
    found: dict[str, list[str]] = {}

    def visit(block: torch._C.Block | torch._C.Graph) -> None:
        for node in block.nodes():
            frames = []
            for line in str(node.sourceRange()).splitlines():
                m = _TS_FRAME.match(line)
                if m and not any(part in m.group(1) for part in _MACHINERY):
                    frames.append(f"{m.group(1)}:{m.group(2)}")
            if frames and frames[0] not in found:
                found[frames[0]] = frames
            for inner in node.blocks():
                visit(inner)

    visit(script.inlined_graph)
    return found


# ---------------------------------------------------------------------------------------------
# Failures in Python: trace, export, import


def exception_blocker(stage: PortStage, error: BaseException, explanation: str = "") -> Blocker:
    """The blocker a Python exception makes: its type and first line, located at the innermost
    frame of the model's code (a wrapper's cause when it has one)."""
    cause = error.__cause__ if error.__cause__ is not None else error
    text = one_line(strip_ansi(str(cause))) or "(no message)"
    message = f"{type(cause).__name__}: {text}"
    frames = [f"{f.filename}:{f.lineno}" for f in reversed(traceback.extract_tb(cause.__traceback__))]
    own = next((f for f in frames if not any(m in f for m in _MACHINERY)), frames[0] if frames else "")
    hints = idioms.matches("", message)
    return Blocker(rank=1, stage=stage, signature=f"{stage}: {drop_ssa_names(_normalize(message))}",
                   location=own, frames=frames[:8], message=message, explanation=explanation,
                   hint=_hint(hints[0]) if hints else "", fixes=_fixes(hints))


def conversion_blocker(stage: PortStage, error: BaseException) -> Blocker | None:
    """A program conversion's failure on one node (torch.onnx.export with no ONNX function for an
    op): the op, located at the model's line that made the node (its stack in the torch.export
    program), said to be the exporter's. None for any other error (the exception's blocker)."""
    from harness.frontends.onnx import ExportFailed

    node = error.untranslated if isinstance(error, ExportFailed) else None
    if node is None:
        return None
    frames = [f"{f}:{n}" for f, n in _PY_FRAME.findall(node.stack)][::-1]  # innermost first
    at = model_frame([f.rpartition(":")[0] for f in frames])
    where = frames[at] if at is not None else frames[0] if frames else ""
    message = f"torch.onnx.export cannot translate {node.op} (node %{node.node}): {node.reason}"
    return Blocker(rank=1, stage=stage, op=node.op,
                   signature=f"{stage}: no ONNX translation of {node.op}", location=where,
                   frames=frames[:12], message=message,
                   explanation=(f"The ONNX exporter (torch.onnx, torch's dynamo exporter) has no "
                                f"translation of {node.op}"
                                + (f", which the model calls at {where}" if where else "")
                                + ": the exporter's gap, before torch-mlir sees anything. The FX "
                                "frontend imports the same torch.export program without it."))


def timeout_blocker(stage: PortStage, seconds: float) -> Blocker:
    return Blocker(rank=1, stage=stage, signature=f"{stage}: timeout",
                   message=f"timed out after {seconds:g} s (--timeout)")


def missing_buffers_explanation(exported: torch.export.ExportedProgram) -> str:
    """The FX blocker of non-persistent buffers, with the buffers that cause it."""
    from harness.versions import installed

    missing = [name for name in exported.graph_signature.buffers if name not in exported.state_dict]
    version = installed()
    return (f"torch.export in torch {version['torch']} keeps non-persistent buffers "
            f"({', '.join(missing) or 'none found'}) among the exported program's constants, and "
            f"the fx_importer of torch-mlir {version['torch-mlir']} looks buffers up in the state_dict only. "
            "The model is not at fault. Work around it by registering those buffers with "
            "persistent=True before export, or port through the TorchScript frontend.")


def _normalize(text: str) -> str:
    """Numbers and addresses out of a grouping key: the same error on another model matches."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    return re.sub(r"\b\d+\b", "N", text)[:300]


def one_line(text: str) -> str:
    """The first non-blank line, at most 400 characters: for records and titles."""
    first = next((line.strip() for line in text.strip().splitlines() if line.strip()), "")
    return first[:400]
