"""The one-op reproducer's linalg as lowered, and after ``canonicalize``: what the op's lowering
computes. An op whose linalg folds away (the function returns its input) or into a copy is the
bug shown in two small files, which a root cause can name (a padding op whose lowering returned
``%arg0``: the numbers said only "wrong")."""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from harness.compiler import jsonfile
from harness.compiler.runner import RunOptions
from harness.execute.lowering import run_stage

CANONICALIZE = "builtin.module(canonicalize)"
#: Ops that move or reshape values without computing any.
MOVES = frozenset({"linalg.copy", "linalg.transpose", "linalg.broadcast", "linalg.fill", "linalg.generic",
                   "linalg.yield", "linalg.index", "tensor.cast", "tensor.expand_shape",
                   "tensor.collapse_shape", "tensor.extract_slice", "tensor.insert_slice", "tensor.pad",
                   "tensor.reshape", "tensor.extract", "tensor.insert", "tensor.yield", "tensor.concat"})
#: Ops that hold no computation at all.
STRUCTURE = frozenset({"func.func", "func.return", "arith.constant", "tensor.empty", "builtin.module",
                       "ml_program.global"})
_OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"?([a-z_]+\.[a-z_.0-9]+)', re.MULTILINE)


class Computes(Enum):
    COMPUTES = "computes"     # arithmetic or a named linalg op is left
    COPIES = "copies"         # only moves, reshapes or fills are left
    VANISHES = "vanishes"     # nothing is left: the function returns its input or a constant


@dataclass
class LoweredView:
    linalg_path: str          # the op's linalg as the pipeline lowered it
    canonical_path: str       # that, after canonicalize
    left: list[str] = field(default_factory=list)  # op names left after canonicalize
    computes: Computes = Computes.COMPUTES

    def sentence(self, op: str) -> str:
        """One line for the verdict and the bundle's root cause ("" when the op computes)."""
        if self.computes is Computes.VANISHES:
            return (f"{op}'s linalg computes nothing: after canonicalize the one-op function returns "
                    f"its input or a constant ({self.canonical_path}; as lowered: {self.linalg_path})")
        if self.computes is Computes.COPIES:
            return (f"{op}'s linalg only moves values: after canonicalize it is "
                    f"{', '.join(sorted(set(self.left)))} ({self.canonical_path}; as lowered: "
                    f"{self.linalg_path})")
        return ""

    def finding(self, op: str) -> str:
        """The bundle's root cause: the same in words and the canonicalized IR ("" when the op
        computes), no local paths."""
        if self.computes is Computes.COMPUTES:
            return ""
        what = ("computes nothing: after `canonicalize` the one-op function returns its input "
                "or a constant" if self.computes is Computes.VANISHES else
                f"only moves values: after `canonicalize` it is {', '.join(sorted(set(self.left)))}")
        text = Path(self.canonical_path).read_text().strip() if Path(self.canonical_path).is_file() else ""
        shown = f"\n\nThe op's linalg after `canonicalize`:\n\n```mlir\n{text}\n```" if text else ""
        return (f"The lowering of `{op}` {what}, and its values differ from eager PyTorch's for "
                f"the same op on the same operands.{shown}")

    def to_json(self) -> dict:
        return {**jsonfile.plain(asdict(self)), "computes": self.computes.value}


def computes(text: str) -> tuple[Computes, list[str]]:
    """What a linalg module's functions compute, read from its op names."""
    names = [n for n in _OP.findall(text) if n not in STRUCTURE]
    if not names:
        return Computes.VANISHES, []
    if all(n in MOVES for n in names):
        return Computes.COPIES, names
    return Computes.COMPUTES, names


def lowered_view(linalg: Path, folder: Path, stem: str, *, opt: str | None,
                 timeout_s: float) -> LoweredView | None:
    """``linalg`` kept as ``STEM.linalg.mlir`` in ``folder`` and canonicalized beside it; None
    when there is no linalg or canonicalize fails (the verdict stands without it)."""
    if not linalg.is_file():
        return None
    kept = folder / f"{stem}.linalg.mlir"
    shutil.copyfile(linalg, kept)
    canonical = folder / f"{stem}.canonical.mlir"
    record = run_stage(kept, CANONICALIZE, output_path=canonical, opt=opt,
                       options=RunOptions(timeout_s=timeout_s))
    if not record.ok or not canonical.is_file():
        return None
    found, left = computes(canonical.read_text())
    return LoweredView(str(kept), str(canonical), left, found)
