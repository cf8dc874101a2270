"""The backends' names, importable without numpy or the bindings (options, records, the CLI)."""

from __future__ import annotations

from harness.enums import ParsableEnum


class BackendName(ParsableEnum):
    """A backend that runs a lowered module."""

    REFBACKEND = "refbackend"  # torch-mlir's RefBackend: linalg -> LLVM -> the wheel's ExecutionEngine
    IREE = "iree"              # iree-compile (llvm-cpu) and iree-run-module, from the [iree] extra


    @property
    def said(self) -> str:
        """As a sentence names it: "the RefBackend", "IREE"."""
        return {BackendName.REFBACKEND: "the RefBackend", BackendName.IREE: "IREE"}[self]


#: The default: the RefBackend, which the torch-mlir wheel carries (IREE is an extra). The
#: port's --backend list and the one --backend of check and fix start from it.
DEFAULT_BACKEND = BackendName.REFBACKEND
DEFAULT_BACKENDS: tuple[BackendName, ...] = (DEFAULT_BACKEND,)


class Device(ParsableEnum):
    """Where a backend runs the compiled module (``--device``)."""

    CPU = "cpu"    # this machine's CPU: the RefBackend's JIT, IREE's llvm-cpu and local-task
    CUDA = "cuda"  # an NVIDIA GPU: IREE's cuda target (PTX for --cuda-target) and its cuda driver


#: The default: the CPU, where every backend runs and the harness's tests do.
DEFAULT_DEVICE = Device.CPU


def parse_backends(text: str) -> tuple[BackendName, ...]:
    """``--backend``: backends separated by commas, in the order given, each once."""
    return BackendName.parse_list(text, "--backend")
