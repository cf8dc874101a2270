"""The defaults every layer and the CLI share, each defined once: a library function's keyword
default and the matching ``--flag``'s default read the same name here (a leaf: imports nothing)."""

from __future__ import annotations

#: Seconds one torch-mlir-opt run (or one RefBackend child) may take before it is killed.
TIMEOUT_S = 600.0
#: MiB of address space one torch-mlir-opt run of ``harness port`` may take (RLIMIT_AS); 0 = no
#: limit: a port of a full-size model may need many GB.
MEMORY_LIMIT_MB = 0
#: The same for each port of ``harness sweep``: tiny models need well under 1 GB, and a pass that
#: allocates without end (audioflamingo3's FX import in convert-torch-to-linalg: ~200 MB/s) then
#: crashes with "LLVM ERROR: out of memory" within a minute, instead of running to the stage
#: timeout (or the kernel's OOM killer) and taking a sweep job's memory with it.
SWEEP_MEMORY_LIMIT_MB = 8192
#: Wall-clock seconds a reduction (``harness reduce``, a report's reduce step) may spend.
REDUCE_BUDGET_S = 60.0
#: A port's search for the one op that computes wrong stops narrowing its chain after this
#: many seconds, and names the op from the chain it has (``harness check`` searches on, without
#: a limit): gemma3n_vision's search took 250 s of a 327 s port.
ONE_OP_BUDGET_S = 60.0
#: Candidates a reduction may run at most.
REDUCE_MAX_TRIES = 10_000
#: Input files over this many MiB are refused (0 = no limit): see ``compiler.runner.check_input``.
MAX_INPUT_MB = 4096
#: ``--input NAME=SHAPE``: one given tensor over this many MiB is refused before it is made (a
#: port holds two sets of it, eager's outputs and each backend's copies).
MAX_GIVEN_INPUT_MB = 1024

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
