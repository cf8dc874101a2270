"""Where the numbers go wrong: two binary searches over cuts of the contract-level function.

Each probe is a program of ``programs`` lowered and run once on the RefBackend worker, fed the
reference's values, and compared with the reference's values of what it returns.

1. The start: the last cut ``j`` such that the rest of the function, fed right values at
   ``j``, still computes wrong ones. The whole function (the first probe) is one; the pieces
   after the last computing op are not. So the ops after ``j`` hold the miscompile, and the
   ones up to ``j`` do not matter to it.
2. The end: the first cut ``k`` after ``j`` such that the piece ``(j, k]`` returns wrong
   values; the end of the function is one. Ops ``j+1 .. k`` are the chain that goes wrong
   together, and a value the piece returns at ``k`` is the first wrong one.

Observing a value changes what the compiler does (a value returned has one more use, and
``linalg-fuse-elementwise-ops`` fuses only producers with one use), which is why the pieces
return only what crosses their end: the cut program uses each value as the whole function does.
Without a first run of the whole function (``confirm_first=False``: the caller has seen it
go wrong), the searches take ``ceil(log2(c + 1)) + ceil(log2(e))`` runs for ``c`` cuts before
the last computing op and ``e`` ends after the start: about 2 * log2(ops), the information a
pair (start, end) holds. A first run of the whole function costs one more and answers a right
function in one run: what a sweep wants (``check_ops``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.execute.probe import ProbeOptions, ProbeResult, run_program
from harness.execute.backend import SearchRunner

from .diffs import program_terms
from .programs import END, CutProgram
from .subject import NumericsSubject


@dataclass
class Probe:
    """One RefBackend run of the search: the piece ``(start, end]`` and what it gave."""

    start: int
    end: int
    ops: int
    outcome: str
    seconds: float

    def render(self, subject: NumericsSubject) -> str:
        def cut(c: int) -> str:
            return "start" if c < 0 else "end" if c == END else f"{c}:{subject.cuts.label(c)}"
        return f"({cut(self.start)}, {cut(self.end)}] {self.ops} ops: {self.outcome} ({self.seconds:.1f} s)"

    def to_json(self) -> dict:
        return {"start": self.start, "end": None if self.end == END else self.end, "ops": self.ops,
                "outcome": self.outcome, "seconds": self.seconds}


@dataclass
class Localization:
    start: int                  # the chain starts after this cut (-1: the function's start)
    end: int                    # and ends at this one (END: the function's end)
    program: CutProgram            # the piece (start, end]
    result: ProbeResult         # its run: a mismatch
    probes: list[Probe] = field(default_factory=list)
    literal_args: bool = True   # weights were fed as arguments
    cut_short: bool = False     # the search stopped at its deadline: a shorter chain may exist

    @property
    def chain(self) -> list[int]:
        """Positions of the computing ops of the piece, in order."""
        return self.program.ops

    def wrong(self) -> list[int]:
        """Positions of the ops whose returned values are wrong (first wrong values)."""
        return sorted({self.program.results[i].op for i in self.result.wrong_outputs()
                       if self.program.results[i].op >= 0})


class Searcher:
    """Runs pieces of ``subject``'s function and remembers what each gave."""

    def __init__(self, subject: NumericsSubject, worker: SearchRunner, options: ProbeOptions,
                 say: Callable[[str], None] | None = None, deadline: float | None = None):
        self.subject = subject
        self.deadline = deadline  # time.monotonic() past which the search takes the chain it has
        self.worker = worker
        self.options = options
        self.say = say or (lambda _line: None)
        self.probes: list[Probe] = []
        self.literal_args = True
        self._cache: dict[tuple[int, int, bool], tuple[CutProgram, ProbeResult]] = {}
        self._folder = subject.work_dir / "pieces"
        self._folder.mkdir(exist_ok=True)

    def spent(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def run(self, start: int, end: int) -> tuple[CutProgram, ProbeResult]:
        """The piece's run; a piece built before (the same text) is not run again."""
        key = (start, end, self.literal_args)
        if key in self._cache:
            return self._cache[key]
        program = self.subject.cuts.build(start, end, literal_args=self.literal_args)
        same = next((v for v in self._cache.values() if v[0].text == program.text), None)
        if same is not None:
            self._cache[key] = same
            return same
        name = f"piece{len(self.probes)}_{max(start, -1) + 1}_{'end' if end == END else end}"
        path = self._folder / f"{name}.mlir"
        path.write_text(program.text)
        folder = self._folder / name
        folder.mkdir(exist_ok=True)
        began = time.perf_counter()
        result = run_program(path, program.inputs(self.subject.values),
                             program.expected(self.subject.values), program.signature,
                             worker=self.worker, options=self.options, work_dir=folder,
                             wide=self.subject.program_wide(program),
                             # each output rounds as the longest sum behind it in the piece
                             # does (the float64 rule's floor): a matmul's, then a bias add
                             terms=program_terms(self.subject, program))
        probe = Probe(start, end, len(program.ops), result.describe(), time.perf_counter() - began)
        self.probes.append(probe)
        self.say(f"probe {len(self.probes)}: {probe.render(self.subject)}")
        self._cache[key] = (program, result)
        return program, result


def localize(searcher: Searcher, *, confirm_first: bool = True) -> Localization | ProbeResult:
    """The chain (a Localization), or the whole function's result when it is not a mismatch.

    ``confirm_first=False`` skips the run of the whole function (also the costliest) when the
    caller has seen it mismatch: the searches assume it, and it runs only if the chain they
    end on gives right values after all."""
    cuts = searcher.subject.cuts
    computing = cuts.computing()
    if not computing:
        return searcher.run(-1, END)[1]
    if confirm_first:
        whole = _confirm(searcher)
        if not whole.mismatch:
            return whole
    found = _search(searcher, computing[-1])
    if not found.result.mismatch and not confirm_first:
        return localize(searcher, confirm_first=True)
    return found


def _confirm(searcher: Searcher) -> ProbeResult:
    """The whole function's run; weights as arguments may hide a miscompile, so without a
    mismatch it runs once more with the literals in place."""
    _, whole = searcher.run(-1, END)
    if not whole.mismatch:
        searcher.literal_args = False
        _, kept = searcher.run(-1, END)
        if kept.mismatch:
            return kept
        searcher.literal_args = True
    return whole


def _search(searcher: Searcher, last: int) -> Localization:
    cuts = searcher.subject.cuts
    starts = [-1] + [c for c in cuts.valid if c < last]
    lo, hi = 0, len(starts)  # starts[lo] goes wrong; starts[hi] is past the last
    short = False
    while hi - lo > 1:
        if short := searcher.spent():  # each bound so far holds: the chain is longer, not wrong
            break
        mid = (lo + hi) // 2
        if searcher.run(starts[mid], END)[1].mismatch:
            lo = mid
        else:
            hi = mid
    start = starts[lo]
    ends = [c for c in cuts.valid if start < c < last] + [END]
    lo, hi = -1, len(ends) - 1  # ends[hi] goes wrong (the end of the function does)
    while hi - lo > 1:
        if short := short or searcher.spent():
            break
        mid = (lo + hi + 1) // 2  # the later half first: a chain tends to end where it shows
        if searcher.run(start, ends[mid])[1].mismatch:
            hi = mid
        else:
            lo = mid
    program, result = searcher.run(start, ends[hi])
    return Localization(start, ends[hi], program, result, list(searcher.probes), searcher.literal_args,
                        cut_short=short)


def run_bound(ops: int) -> float:
    """The most RefBackend runs a localization of ``ops`` ops may take: 2 * log2(ops)."""
    return 2 * math.log2(ops) if ops > 1 else 1.0

