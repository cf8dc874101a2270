"""What the report says the bug is: the title, the summary's diagnosis, "Expected behaviour"
and "possibly known upstream", all from the blocker (the op whose conversion failed,
``harness.diagnose.blockers``) when there is one, not from the op the error happens to name.

Plain strings here; issue.py redacts and quotes them for markdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.knowledge import fixes, upstream

from ..blockers import BlockerAnalysis, IllegalOp
from ..onnx_terms import no_pattern, node_of, onnx_op_name, onnx_opset


@dataclass(frozen=True)
class Diagnosis:
    """The blocker a report is about, and what is known of it."""

    blocker: IllegalOp
    reported: str                  # the op the error names ("" when it is the blocker)
    symptoms: tuple[IllegalOp, ...]
    pipeline_label: str            # the pipeline's name, for prose
    upstream: tuple[upstream.UpstreamReport, ...] = field(default=())
    onnx: str = ""                 # an ONNX op left generic, in ONNX's terms (onnx_terms' wording)

    @classmethod
    def of(cls, analysis: BlockerAnalysis | None, record: RunRecord, pipeline_label: str,
           lines: Mapping[str, str] | None = None) -> Diagnosis | None:
        """``lines``: op -> the model's Python line behind it, as an ONNX port's record has it
        (the dynamo exporter's stack of the node); the IR of an ONNX import holds none."""
        if analysis is None or not analysis.blockers:
            return None
        blocker = next((b for b in analysis.blockers if b.reproduces_alone), analysis.blockers[0])
        named = record.illegal_ops()
        reported = named[0] if named and named[0] != blocker.name else ""
        name = onnx_op_name(blocker.name)
        onnx = (no_pattern(name, onnx_opset(record.input_path), node_of(blocker.location),
                           (lines or {}).get(blocker.name, ""))
                if name and not blocker.converted_by else "")
        return cls(blocker, reported, tuple(analysis.explained_by(blocker.name)), pipeline_label,
                   tuple(upstream.matching(blocker.name, reported or blocker.name)), onnx)

    @property
    def op(self) -> str:
        return self.blocker.name

    @property
    def fix(self) -> str:
        """The harness fix that works around it (by name), "" when none is known."""
        eq = self.blocker.equivalent
        return eq.fix if eq is not None else ""

    @property
    def responsible_pass(self) -> str:
        """The conversion that should lower the blocker, from the replays ("" when none)."""
        eq = self.blocker.equivalent
        return (self.blocker.converted_by or (eq.converted_by if eq is not None else []) or [""])[0]

    def where(self) -> str:
        """``masking_utils.py:54``: the file name and line of the blocker's location."""
        diag = self.blocker.diagnostic
        return f"{Path(diag.file).name}:{diag.line}" if diag is not None and diag.file else ""

    def title(self) -> str:
        """What a maintainer would title it: the conversion that should lower the op."""
        b, eq = self.blocker, self.blocker.equivalent
        if b.converted_by:
            return (f"failed to legalize operation '{b.name}' in {self.pipeline_label} "
                    f"({b.converted_by[0]} lowers it alone)")
        if eq is not None and eq.converted_by:
            return f"{eq.converted_by[0]} does not lower '{b.name}' (it lowers '{eq.op}')"
        return f"failed to legalize operation '{b.name}': no conversion in {self.pipeline_label} lowers it"

    def sentences(self) -> list[str]:
        """The diagnosis part of the summary, one sentence each."""
        b, eq = self.blocker, self.blocker.equivalent
        many = f"{b.count} in the input" if b.count > 1 else "1 in the input"
        at = f", from {self.where()}" if self.where() else ""
        if b.converted_by:
            out = [f"`{b.name}` ({many}{at}) is left unconverted, although `{b.converted_by[0]}` "
                   "lowers it alone, as a one-op function."]
        else:
            out = [f"No conversion pass of the pipeline lowers `{b.name}` ({many}{at}), operand "
                   f"and result types `{b.signature}`."]
        if self.onnx:
            out.append(self.onnx)
        if self.reported:
            by = next((s.converted_by[0] for s in self.symptoms
                       if s.name == self.reported and s.converted_by), "")
            lowers = f" (alone, `{by}` lowers it)" if by else ""
            out.append(f"The error names `{self.reported}`, an operand left only because its user "
                       f"`{b.name}` was not converted{lowers}.")
        if eq is not None and eq.converted_by:
            fix = fixes.FIXES.get(eq.fix)
            why = f" ({fix.why})" if fix is not None else ""
            passes = " and the whole pipeline passes with it" if eq.lowers else ""
            out.append(f"`{eq.converted_by[0]}` lowers the equivalent `{eq.op}`{why}{passes}; "
                       f"until it lowers `{b.name}` too, rewriting it to `{eq.op}` in the torch IR "
                       "works around it.")
        return out

    def expected(self) -> str:
        b, eq = self.blocker, self.blocker.equivalent
        if eq is not None and eq.converted_by:
            text = (f"`{eq.converted_by[0]}` lowers `{b.name}` as it lowers `{eq.op}`, and the "
                    "pipeline passes on the one-op function above. Checked here: the same "
                    f"function with `{eq.op}` in its place "
                    f"{'passes' if eq.lowers else 'is converted by'} this pipeline.")
        else:
            text = (f"A conversion pass of the pipeline lowers `{b.name}` with these operand "
                    "types, or the pass that cannot lower it says so, naming it, instead of "
                    "leaving it for the final type conversion to report.")
        if self.reported:
            text += (f" Failing that, the error names `{b.name}`, the op whose conversion "
                     f"failed, rather than `{self.reported}`, which lowers alone.")
        return text


def expected_without_blocker(record: RunRecord) -> str:
    """Expected behaviour for a failure without a blocker analysis (crashes, hangs, others)."""
    if record.outcome is Outcome.TIMEOUT:
        return ("`torch-mlir-opt` finishes: it lowers the input, or reports an error naming the "
                "op it cannot handle.")
    if record.outcome in (Outcome.CRASH, Outcome.ASSERTION):
        what = "hit an assertion" if record.outcome is Outcome.ASSERTION else "crash"
        return (f"`torch-mlir-opt` does not {what}: it lowers the input, or reports an error "
                "naming the op it cannot handle.")
    if record.outcome is Outcome.LEGALIZATION_FAILURE:
        return ("A conversion pass of the pipeline lowers the op the error names, or the pass "
                "that cannot lower it says so.")
    return "The pipeline lowers the input, or its error names the op and what is unsupported."
