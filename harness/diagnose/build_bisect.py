"""``harness bisect --builds A..B``: the first build, in release order, whose outcome on a file
differs from A's, and what changed.

- ``A..B`` with two releases of one family (``belfort-2026.7.1..belfort-2026.10.9``): the
  releases between them on PyPI (``pip index versions``) and in the build cache, oldest first;
- ``A,B,C``: builds in the order given (``wheel``, a user's added build, a path).

Binary search, as ``git bisect``: A and B are run first; when they agree nothing changed in
between (a change undone within the range is not seen). Otherwise each probe halves the range
between the last build that behaves like A and the first that does not, so five releases need
at most four runs and fetches (a release is fetched, ~80 MB, only when a probe needs it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from collections.abc import Callable

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler import builds as builds_module
from harness.compiler.builds import Build, BuildCache
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import BuildError, UsageError

from .diff import Change, Side, classify_change

BUILD_BISECT_SCHEMA = "harness.build-bisect/1"


@dataclass(frozen=True)
class BuildProbe:
    """One build's run in the search."""

    build: Build
    side: Side
    same_as_first: bool


@dataclass
class BuildBisectResult:
    input_path: str
    pipeline: str
    order: list[str]                       # the builds searched, in order
    probes: list[BuildProbe] = field(default_factory=list)   # in the order they ran
    last_same: BuildProbe | None = None         # the last build that behaves like the first
    first_different: BuildProbe | None = None   # the build right after it, which does not
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.first_different is not None

    @property
    def change(self) -> Change:
        if self.last_same is None or self.first_different is None:
            return Change.UNCHANGED
        return classify_change(self.last_same.side, self.first_different.side)

    def to_json(self) -> dict:
        def probe(p: BuildProbe | None) -> dict | None:
            return None if p is None else {"build": p.build.to_json(), "side": p.side.to_json(),
                                           "same_as_first": p.same_as_first}
        return {"schema": BUILD_BISECT_SCHEMA, "input": self.input_path, "pipeline": self.pipeline,
                "order": self.order, "change": self.change.value,
                "last_same": probe(self.last_same), "first_different": probe(self.first_different),
                "probes": [probe(p) for p in self.probes], "notes": self.notes}

    def render(self) -> list[str]:
        first = self.probes[0] if self.probes else None
        lines = [f"builds, in order: {', '.join(self.order)}"]
        width = max(len(p.build.name or p.build.path) for p in self.probes) if self.probes else 0
        for i, p in enumerate(self.probes):
            mark = "first" if i == 0 else ("same" if p.same_as_first else "differs")
            lines.append(f"  {p.build.name or p.build.path:{width}s} {mark:7s} "
                         f"{p.side.elapsed_s:6.2f} s  {_outcome(p.side)}")
        if not self.found:
            sig = _outcome(first.side) if first else "?"
            lines.append(f"no change: the first and the last build agree ({sig}); builds between "
                         "them were not run")
        else:
            assert self.last_same is not None and self.first_different is not None
            lines.append(f"first build that differs from {self.order[0]}: "
                         f"{self.first_different.build.name or self.first_different.build.path} "
                         f"({self.change.value}, right after "
                         f"{self.last_same.build.name or self.last_same.build.path})")
            lines.append(f"  before: {_outcome(self.last_same.side)}")
            lines.append(f"  after:  {_outcome(self.first_different.side)}")
            for label, p in (("before", self.last_same), ("after", self.first_different)):
                error = p.side.record.first_error() if p.side.record is not None else None
                if error is not None:
                    lines.append(f"  {label} first error: {error.location}: {error.message[:200]}")
        lines += [f"note: {n}" for n in self.notes]
        return lines


def _outcome(side: Side) -> str:
    return "success" if side.ok else side.signature


def build_order(spec: str, cache: BuildCache | None = None,
                say: Callable[[str], None] | None = None) -> list[str]:
    """The builds named by ``A..B`` (a release range) or ``A,B,C`` (an explicit order)."""
    cache = cache or BuildCache()
    if "," in spec:
        order = [s.strip() for s in spec.split(",") if s.strip()]
        if len(order) < 2:
            raise UsageError(f"--builds {spec!r} names fewer than two builds.")
        return order
    first, sep, last = spec.partition("..")
    rel_a, rel_b = builds_module.release_of(first), builds_module.release_of(last)
    if not sep or rel_a is None or rel_b is None or rel_a[0] != rel_b[0]:
        raise UsageError(
            f"--builds {spec!r}: a range A..B needs two releases of one family (e.g. "
            "belfort-2026.7.1..belfort-2026.10.9); for other builds give the order as A,B,C "
            "(e.g. belfort-2026.10.9,wheel,my-debug).")
    distribution = rel_a[0]
    prefix = first[: -len(rel_a[1]) - 1]
    lo, hi = builds_module.version_key(rel_a[1]), builds_module.version_key(rel_b[1])
    if lo > hi:
        raise UsageError(f"--builds {spec!r}: {first} is newer than {last}; write the older first.")
    versions = {rel_a[1], rel_b[1]}
    try:
        versions |= set(builds_module.published_releases(distribution))
    except BuildError as e:
        if say:
            say(f"only cached releases are searched: {e}")
    for name in cache.names():
        rel = builds_module.release_of(name)
        if rel and rel[0] == distribution:
            versions.add(rel[1])
    inside = [v for v in versions if lo <= builds_module.version_key(v) <= hi]
    return [f"{prefix}-{v}" for v in sorted(inside, key=builds_module.version_key)]


def bisect_builds(input_path: str, pipeline: str, order: list[str], *,
                  timeout_s: float = defaults.TIMEOUT_S, cache: BuildCache | None = None,
                  say: Callable[[str], None] | None = None) -> BuildBisectResult:
    """Binary search over ``order`` for the first build whose signature differs from the first's."""
    cache = cache or BuildCache()
    say = say or (lambda _line: None)
    result = BuildBisectResult(input_path=str(input_path), pipeline=pipeline, order=list(order))
    if len(order) < 2:
        raise UsageError("bisect --builds needs at least two builds.")
    runs: dict[int, BuildProbe] = {}

    def probe(i: int) -> BuildProbe:
        if i not in runs:
            build = builds_module.ensure(order[i], cache, say)
            say(f"running on {order[i]}")
            record = run_pipeline(input_path, pipeline, opt=build.path,
                                  options=RunOptions(timeout_s=timeout_s))
            side = Side.of_record(record)
            same = i == 0 or side.signature == runs[0].side.signature
            runs[i] = BuildProbe(build, side, same)
            result.probes.append(runs[i])
        return runs[i]

    probe(0)
    lo, hi = 0, len(order) - 1
    if probe(hi).same_as_first:
        return result
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid).same_as_first:
            lo = mid
        else:
            hi = mid
    result.last_same, result.first_different = runs[lo], runs[hi]
    return result


def write_json(result: BuildBisectResult, path: str | os.PathLike) -> None:
    from harness.compiler.irfile import write_atomically

    write_atomically(path, jsonfile.dumps(result.to_json(), indent=2) + "\n")
