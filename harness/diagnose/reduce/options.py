"""What a reduction is asked for: the options every part of the reducer reads (a leaf of the
package, so the session and the strategies need not import the package's front door)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness import defaults
from harness.compiler.records import RunRecord
from harness.enums import ParsableEnum

class Strategy(ParsableEnum):
    """How candidates are made; ``ReduceResult.mode`` says which one ran."""

    IR = "ir"        # edits on the MLIR bindings
    LINES = "lines"  # text lines deleted (the fallback for inputs the bindings cannot read)


class AtFailingPass(ParsableEnum):
    """When to reduce the IR just before the failing pass, through that pass alone, instead of
    the input through the whole pipeline (TorchScript's object-graph IR barely
    shrinks through torchscript-to-torch; the function-level IR before its failing pass does)."""

    NEVER = "never"
    OBJECT_GRAPH = "object-graph"  # when the input is TorchScript object-graph IR
    ALWAYS = "always"


@dataclass(frozen=True)
class ReduceOptions:
    """How long to search and how to run each candidate."""

    output_path: str | os.PathLike | None = None  # None: FILE.reduced.mlir beside the input
    budget_s: float = defaults.REDUCE_BUDGET_S  # wall clock for the whole reduction
    max_tries: int = defaults.REDUCE_MAX_TRIES  # runs of torch-mlir-opt on candidates
    opt: str | None = None  # torch-mlir-opt binary (runner's default order otherwise)
    try_timeout_s: float | None = None  # None: from the original run's time
    disable_threading: bool = True  # deterministic first error, full crash dumps
    splat_weights: bool = True  # try dense_resource weights as zero splats
    cleanup: bool = True  # try the binary's symbol-dce / canonicalize on the result
    progress: Callable[[str], None] | None = None  # called with one line per kept reduction
    strategy: Strategy | str = Strategy.IR  # "lines": delete text lines only
    # The input's run through the same pipeline when the caller already has it (report does):
    # a large input is then not run a second time just to learn its signature.
    original: RunRecord | None = None
    # NEVER by default: the result is then a file that fails the pipeline the caller named. Else
    # it fails ``ReduceResult.pipeline_text``, the failing pass alone (harness reduce's default).
    at_failing_pass: AtFailingPass | str = AtFailingPass.NEVER
    # The test a candidate must fail in place of torch-mlir-opt's run of the pipeline (a file
    # and a timeout in, its record out): ``harness reduce --iree-compile`` keeps what
    # iree-compile rejects. The pipeline is then only its label; torch-mlir-opt still makes the
    # candidates (the bindings) and cleans them up.
    runner: Callable[[Path, float], RunRecord] | None = None
