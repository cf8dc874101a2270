"""The defaults every layer and the CLI share, each defined once: a library function's keyword
default and the matching ``--flag``'s default read the same name here (a leaf: imports nothing)."""

from __future__ import annotations

#: Seconds one torch-mlir-opt run (or one RefBackend child) may take before it is killed.
TIMEOUT_S = 600.0
#: Wall-clock seconds a reduction (``harness reduce``, a report's reduce step) may spend.
REDUCE_BUDGET_S = 60.0
#: Candidates a reduction may run at most.
REDUCE_MAX_TRIES = 10_000
#: Input files over this many MiB are refused (0 = no limit): see ``compiler.runner.check_input``.
MAX_INPUT_MB = 4096

#: ``--dynamic NAME``: the range (min, max) each named dimension takes when none is given
#: (``NAME=MIN..MAX`` overrides it). torch.export specialises sizes 0 and 1, so a dynamic
#: dimension is exported at 2 or more; seq's max is also capped one below the model's positions.
DYNAMIC_RANGES: dict[str, tuple[int, int]] = {
    "batch": (1, 64),
    "seq": (2, 512),
    "height": (16, 1024),
    "width": (16, 1024),
}
#: ``--dynamic``: how much larger than the traced set the second input set is along each named
#: dimension (seq 8 -> 13, batch 2 -> 4), so one compiled module runs at two shapes.
DYNAMIC_SECOND_STEP: dict[str, int] = {"batch": 2, "seq": 5, "height": 16, "width": 16}
#: ``--dynamic INPUT.AXIS=MIN..MAX``: how much the second input set's size differs along a custom
#: axis (larger, or smaller when the first size is already at MAX).
DYNAMIC_CUSTOM_STEP = 4
#: ``--dynamic batch``: the batch the model is exported at when ``--batch`` is not given (1 would
#: be specialised by torch.export).
DYNAMIC_BATCH = 2
