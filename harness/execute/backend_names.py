"""The backends' names, importable without numpy or the bindings (options, records, the CLI)."""

from __future__ import annotations

from harness.enums import ParsableEnum


class BackendName(ParsableEnum):
    """A backend that runs a lowered module."""

    REFBACKEND = "refbackend"  # torch-mlir's RefBackend: linalg -> LLVM -> the wheel's ExecutionEngine
    IREE = "iree"              # iree-compile (llvm-cpu) and iree-run-module, from the [iree] extra


#: The default: the RefBackend, which the torch-mlir wheel carries (IREE is an extra).
DEFAULT_BACKENDS: tuple[BackendName, ...] = (BackendName.REFBACKEND,)


def parse_backends(text: str) -> tuple[BackendName, ...]:
    """``--backend``: backends separated by commas, in the order given, each once."""
    return BackendName.parse_list(text, "--backend")
