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
