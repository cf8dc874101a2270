"""``-mlir-timing -mlir-timing-display=tree`` read back: the one reader of its lines
(:func:`timing_nodes`, which bisect reads too), each pass instance's total, and which instance
each printed IR dump belongs to. Text only (the JSON output format nests a pipeline a pass runs
itself beside the pass, like the text does, and is no easier to read)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .timeline_record import Timer

# Reading the timing tree

_TIMING_LINE = re.compile(r"^\s+(?P<s>-?\d+\.\d+) \(\s*-?[\d.]+%\)  (?P<indent> *)(?P<name>\S.*?)\s*$")
NOT_PASSES = ("Parser", "Output", "Rest", "Total")  # the report's own rows, at depth 0


def timing_nodes(stderr: str) -> list[tuple[int, str, float]]:
    """(depth, name, wall seconds) of each row of the last timing tree in ``stderr``."""
    at = stderr.rfind("----Name----")
    if at < 0:
        return []
    nodes = []
    for line in stderr[at:].splitlines()[1:]:
        m = _TIMING_LINE.match(line)
        if not m:
            break
        nodes.append((len(m["indent"]) // 2, m["name"], float(m["s"])))
    return nodes


@dataclass
class Instance:
    """A pass instance of the timing tree, where a dump is matched."""

    timer: Timer
    name: str
    anchor: str


def read_timing(stderr: str) -> tuple[list[Timer], list[Instance]]:
    """The pass instances of ``-mlir-timing-display=tree``, in pipeline order. MLIR prints a
    pipeline a pass runs itself beside the pass, at the pass's depth; it is put under it here."""
    stack: list[tuple[int, tuple[str, ...], str, bool]] = []  # depth, path, anchor, is_pass
    leaves: list[Instance] = []
    previous_at: dict[int, tuple[tuple[str, ...], bool]] = {}
    for depth, name, seconds in timing_nodes(stderr):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent_path, anchor = (stack[-1][1], stack[-1][2]) if stack else ((), "builtin.module")
        pipeline = re.fullmatch(r"'([\w.]+)' Pipeline", name)
        if depth == 0 and name in NOT_PASSES:
            continue
        sibling = previous_at.get(depth)
        if pipeline and pipeline[1] == anchor and sibling is not None and sibling[1]:
            parent_path = sibling[0]  # the dynamic pipeline of the pass printed just before
        path = (*parent_path, name)
        is_pass = not pipeline and not name.startswith("(A)") and not name.startswith("Pipeline Collection")
        stack.append((depth, path, pipeline[1] if pipeline else anchor, is_pass))
        previous_at[depth] = (path, is_pass)
        for deeper in [d for d in previous_at if d > depth]:
            del previous_at[deeper]
        if is_pass:
            leaves.append(Instance(Timer(path, seconds), name, anchor))
    return [leaf.timer for leaf in leaves], leaves


def assign_timers(runs: list[tuple[str, str]], leaves: list[Instance],
                  pos: int = 0) -> tuple[list[int | None], int]:
    """The timer of each (pass name, anchor op name) of one op's passes in run order, from
    ``pos``: the next instance of that pass; a pipeline run again (an iteration) wraps around.
    Returns the timers and the position after the last one."""
    found: list[int | None] = []
    for name, kind in runs:
        candidates = [i for i, leaf in enumerate(leaves) if leaf.name == name and leaf.anchor == kind] \
            or [i for i, leaf in enumerate(leaves) if leaf.name == name]
        if not candidates:
            found.append(None)
            continue
        choice = next((i for i in candidates if i >= pos), candidates[0])
        found.append(choice)
        pos = choice + 1
    return found, pos
