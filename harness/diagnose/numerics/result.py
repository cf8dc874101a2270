"""What a numerics bisection found, as a record: the chain, its ops' Python lines, the runs it
took, the pass choices and the verdict; rendered for ``harness bisect --numerics`` and as JSON."""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field

from harness.compiler import jsonfile
from harness.compiler.locations import SourceLocation
from harness.compiler.targets import LINALG_LOWERING
from harness.enums import ParsableEnum

from ..source import excerpt, is_library, model_frame
from .blame import Blame
from .culprit import OneOpResult

SCHEMA = "harness.numerics-bisect/1"


class FunctionVerdict(ParsableEnum):
    """What the whole function did before any search."""

    LOCALIZED = "localized"          # wrong numbers, and where they start
    VERIFIED = "verified"            # the lowered function gives the reference's values
    TORCH_LEVEL = "torch-level"      # the torch-level passes changed the values themselves
    FAILS = "fails"                  # it does not lower or run: not a miscompile


def render_frame(frame: SourceLocation) -> str:
    """``file:line:col``, marked when the file is installed code rather than the user's."""
    return f"{frame}{' (library)' if is_library(frame.file) else ''}"


@dataclass
class ChainOp:
    """An op of the chain that goes wrong together."""

    position: int         # in the contract-level function's body
    name: str             # aten.mm
    frames: list[SourceLocation]  # innermost first (``locations.file_locations``)
    wrong: bool = False   # its value is one the chain returns wrong

    def where(self) -> str:
        return render_frame(self.frames[0]) if self.frames else "no location"

    def to_json(self) -> dict:
        return {"position": self.position, "op": self.name, "wrong": self.wrong,
                "frames": [{**jsonfile.plain(asdict(f)), "library": is_library(f.file)} for f in self.frames]}


@dataclass
class NumericsBisectResult:
    input_path: str
    pipeline: str
    verdict: FunctionVerdict
    function: str = ""
    inputs: str = ""
    ops: int = 0                          # of the contract-level function
    runs: int = 0                         # RefBackend runs of the localization
    bound: float = 0.0                    # 2 * log2(ops)
    chain: list[ChainOp] = field(default_factory=list)
    start: int = -1                       # the chain starts after this op (-1: the start)
    piece_path: str = ""                  # the chain as a program of its own
    piece_inputs: str = ""                # its inputs (.npz)
    piece_expected: str = ""              # the reference's values of what it returns (.npz)
    piece_pipeline: str = LINALG_LOWERING  # what lowers the piece (the pipeline's to-linalg part)
    max_abs_diff: float = 0.0             # of the chain's wrong values
    probes: list[str] = field(default_factory=list)
    blame: Blame | None = None
    detail: str = ""                      # what the whole function gave when not localized
    work_dir: str = ""
    seconds: float = 0.0
    literal_args: bool = True
    one_op: OneOpResult | None = None     # the one op that computes wrong

    @property
    def found(self) -> bool:
        return self.verdict is FunctionVerdict.LOCALIZED

    def chain_text(self) -> str:
        return " -> ".join(c.name for c in self.chain)

    def first_wrong(self) -> ChainOp | None:
        return next((c for c in self.chain if c.wrong), self.chain[-1] if self.chain else None)

    def render(self, *, context: int = 1) -> list[str]:
        lines = [f"bisect --numerics: {self.input_path} through {self.pipeline}"]
        if self.inputs:
            lines.append(f"  inputs: {self.inputs}")
        if not self.found:
            lines.append(f"{self.verdict.value}: {self.detail}")
            lines += self._blame_lines()
            return lines
        first = self.first_wrong()
        assert first is not None
        lines.append(f"first wrong value: {first.name} at {first.where()} "
                     f"(max abs diff {self.max_abs_diff:.3g})")
        lines += ["    " + s for s in _source(first, context)]
        lines.append(f"goes wrong together: {self.chain_text()} (fed the reference's values "
                     "before it, this chain computes wrong values; starting one op later, or "
                     "ending one op earlier, it does not)")
        for op in self.chain:
            lines.append(f"  {op.position:5d}  {op.name:32s} {op.where()}")
            for caller in op.frames[1:]:
                lines.append(f"  {'':5s}  {'':32s} called from {render_frame(caller)}")
        lines.append(f"localization: {self.runs} RefBackend runs for {self.ops} ops "
                     f"(at most 2*log2(ops) = {self.bound:.1f})")
        for probe in self.probes:
            lines.append(f"  {probe}")
        lines += self._blame_lines()
        if self.one_op is not None:
            lines += self.one_op.render()
        lines.append(f"the chain alone: {self.piece_path}")
        lines.append(f"  inputs {self.piece_inputs}, expected {self.piece_expected}")
        lines.append("  reproduce: " + shlex.join(["harness", "check", self.piece_path, "--pipeline",
                                                  self.piece_pipeline, "--inputs", self.piece_inputs]))
        return lines

    def _blame_lines(self) -> list[str]:
        if self.blame is None:
            return []
        lines = [f"at fault: {self.blame.fault.value}: {self.blame.reason}"]
        if self.blame.choices:
            lines.append(f"pass choices replayed on the chain ({self.blame.runs} RefBackend runs, "
                         f"{self.blame.variants_lowered} RefBackend pipelines lowered):")
            for choice in self.blame.choices:
                lines.append(f"  {choice.describe()}")
        return lines

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "input_path": self.input_path, "pipeline": self.pipeline,
                "verdict": self.verdict.value, "function": self.function, "inputs": self.inputs,
                "ops": self.ops, "runs": self.runs, "bound": self.bound,
                "chain": [c.to_json() for c in self.chain], "start": self.start,
                "piece_path": self.piece_path, "piece_inputs": self.piece_inputs,
                "piece_expected": self.piece_expected, "piece_pipeline": self.piece_pipeline,
                "max_abs_diff": self.max_abs_diff,
                "probes": list(self.probes), "blame": self.blame.to_json() if self.blame else None,
                "detail": self.detail, "work_dir": self.work_dir, "seconds": self.seconds,
                "literal_args": self.literal_args,
                "one_op": self.one_op.to_json() if self.one_op else None}


def _source(op: ChainOp, context: int) -> list[str]:
    found = model_frame([f.file for f in op.frames])
    frame = op.frames[found if found is not None else 0] if op.frames else None
    if frame is None:
        return []
    return excerpt(frame.file, frame.line, context)
