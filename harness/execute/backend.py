"""What a backend is: compile a lowered module to something runnable, then run it on input sets.

The port's numbers check (port/verify.py) takes a :class:`Backend`, not one backend's functions:
the RefBackend (torch-mlir's test backend: linalg -> LLVM -> the ExecutionEngine) and IREE
(``iree-compile`` for llvm-cpu, ``iree-run-module``) are two implementations, registered by name
in harness/execute/backends.py. A backend is a small class with a compile and a run, as upstream's
e2e backends are; the target (linalg, TOSA, StableHLO) decides what it is given
(:class:`Lowered` holds every level the port made).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from harness import defaults
from harness.compiler.records import RunRecord
from harness.compiler.targets import Target

from .backend_names import DEFAULT_DEVICE, BackendName, Device
from .dtypes import TensorSignature
from .refbackend import RefBackendResult, Stage

if TYPE_CHECKING:
    from .worker import VariantLowering


@dataclass(frozen=True)
class Lowered:
    """What the port's stages made, for a backend to take the level it compiles."""

    target: Target
    contract_ir: Path    # the torch backend contract: the entry's signature, with signedness
    target_ir: Path      # the target's contract (the linalg file itself for linalg)
    linalg: Path         # linalg-on-tensors (the target lowered on to it)
    stem: str            # the model's name: the artifacts' file names start with it
    # The entry's signature when the caller read it already (harness check: --function's, from
    # FILE); None: the only public function of contract_ir.
    signature: TensorSignature | None = None


@dataclass(frozen=True)
class BackendOptions:
    timeout_s: float = defaults.TIMEOUT_S  # per child process (compile, each run)
    # harness check --in-process: the compiled code run in the harness's own process (the
    # RefBackend's ExecutionEngine; a crash then ends the harness). A backend whose runs are a
    # tool of its own refuses it in check().
    in_process: bool = False
    opt_level: int = 0  # harness check --opt-level: the RefBackend ExecutionEngine's LLVM level
    # The RefBackend with MLIR's runtime op verification on (off by default: its code generation
    # is slow on big models): a bad access aborts naming the op instead of reading garbage.
    runtime_checks: bool = False
    # --device: where the module runs (IREE's CUDA GPU; the RefBackend runs on the CPU alone), and
    # --cuda-target for CUDA ("": the GPU's own, harness.execute.iree_device.default_target)
    device: Device = DEFAULT_DEVICE
    cuda_target: str = ""


@dataclass
class Compiled:
    """A compile's result: the artifact a run takes, or the failed compile's record."""

    stage: str                 # the record's stage name (refbackend-lowering, iree-compile)
    record: RunRecord          # the compile as run: ok, or its diagnostics and command
    artifact: Path             # the LLVM module, the .vmfb
    signature: TensorSignature       # the entry's, from the torch backend contract
    rerun: list[str] = field(default_factory=list)  # argv that compiles it again by hand
    harness_rerun: bool = False  # ``rerun`` is harness's arguments (`harness run ...`), not a tool's
    # `harness reduce` words (the file, then its flags) that reduce a failed compile, as the
    # port prints them; () when the backend's compile failures have no reducer of their own
    reduce_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestcaseSet:
    """One input set of a portable test case: its name, arguments and expected results."""

    name: str
    inputs: Sequence[np.ndarray]
    expected: Sequence[np.ndarray]


class SearchRunner(Protocol):
    """What the numbers search needs of a backend (``harness bisect --numerics``, ``reduce``,
    ``report --numerics`` and the port's one-op search): one long-lived process that lowers the
    cut pieces of a function and runs them, counting its runs (the search's cost). A search
    makes hundreds of runs, so the backend keeps its compiler loaded between them."""

    runs: int
    timeout_s: float  # each request's limit

    def __enter__(self) -> SearchRunner: ...

    def __exit__(self, *exc: object) -> None: ...

    def run(self, linalg_path: str | os.PathLike, inputs: Sequence[np.ndarray], signature: TensorSignature,
            *, pipeline: str = ...) -> RefBackendResult:
        """A linalg-on-tensors file compiled and run on ``inputs``."""
        ...

    def execute(self, llvm_path: str | os.PathLike, inputs: Sequence[np.ndarray],
                signature: TensorSignature) -> RefBackendResult:
        """A file already compiled (:meth:`lower_variants`' output) run on ``inputs``."""
        ...

    def lower_variants(self, linalg_path: str | os.PathLike,
                       pipelines: Sequence[str]) -> list[VariantLowering]:
        """``linalg_path`` compiled by each pass-choice variant of the backend's pipeline."""
        ...


class Backend(Protocol):
    """Compiles a :class:`Lowered` module and runs it on input sets, each run a
    :class:`RefBackendResult` (its outputs, or the failure's stage, error, signal and command)."""

    name: BackendName
    stage: str  # the compile's stage name in the record (refbackend-lowering, iree-compile)
    checked_runs: bool  # explain_failure can rerun with checks that name a failing op
    # The harness's one-op search (which lowers cut programs and runs them on the RefBackend)
    # speaks for this backend's mismatches: the RefBackend's own; not IREE's, whose wrong values
    # the RefBackend may compute right (and a mismatch must never be flipped to verified by it).
    searchable: bool
    # the modules its steps run as children (``python -m``): the warm sweep server imports them
    # before it forks, and forks them instead of starting a fresh Python for each
    child_modules: tuple[str, ...]

    def needs_linalg(self, target: Target) -> bool:
        """Whether it compiles the linalg the target was lowered on to (the RefBackend), not
        the target's own contract (IREE takes TOSA and StableHLO as they are)."""
        ...

    def check(self, options: BackendOptions = ...) -> None:
        """Raises HarnessError (one paragraph: what is missing, how to install it) when the
        backend cannot run on this machine, or cannot run as ``options`` ask (IREE in the
        harness's process): said before a model is built or a file lowered."""
        ...

    def unavailable(self, options: BackendOptions = ...) -> str:
        """Why this machine cannot run what the backend compiles as ``options`` ask, though it
        can compile it (IREE for a CUDA GPU on a machine without one); "" when it can. The port
        then compiles, writes its test case and stops there: lowered, numbers not checked."""
        ...

    def compile(self, lowered: Lowered, folder: Path, options: BackendOptions) -> Compiled:
        """Compiles into ``folder``; a signature the backend cannot take raises HarnessError."""
        ...

    def run_sets(self, compiled: Compiled, sets: Sequence[Sequence[np.ndarray]],
                 works: Sequence[Path], options: BackendOptions) -> list[RefBackendResult]:
        """Each set's run, its files in its own folder of ``works``."""
        ...

    def testcase(self, compiled: Compiled, sets: Sequence[TestcaseSet], folder: Path,
                 tolerance: tuple[float, float]) -> Path | None:
        """A test case the backend's own tools run without the harness: the module, each
        set's inputs and expected outputs, the commands (the script's path); None when the
        backend has no tools of its own (the RefBackend)."""
        ...

    def search_runner(self, *, timeout_s: float,
                      work_dir: str | os.PathLike | None) -> SearchRunner | None:
        """The numbers search's runner on this backend; None when the search does not speak
        for it (``searchable`` is False)."""
        ...

    def explain_failure(self, compiled: Compiled, lowered: Lowered,
                        sets: Sequence[tuple[str, Sequence[np.ndarray]]], folder: Path,
                        budget_s: float) -> RefBackendResult | None:
        """A run again with the backend's own checks (the RefBackend's runtime op verification)
        for sets that crashed or mismatched: the first that fails one, naming the op; None when
        none does, or the backend has no such checks."""
        ...

    def checked_run(self, compiled: Compiled, lowered: Lowered, which: str,
                    inputs: Sequence[np.ndarray], folder: Path, budget_s: float) -> RefBackendResult | None:
        """One set run again with the backend's own checks, whatever its outcome: when one set
        crashed, the others run under the same checks, so that a set that runs is said to run
        on the same code. None when the backend has no checks or the run could not be made."""
        ...


def run_linalg(backend: Backend, linalg: Path, inputs: Sequence[np.ndarray],
               signature: TensorSignature | None, folder: Path, options: BackendOptions) -> RefBackendResult:
    """A linalg-on-tensors file compiled by ``backend`` and run on one input set, its files in
    ``folder`` (``harness check``, and ``harness fix``'s check of the fixed file). The result's
    ``lowering`` is the compile's record; a failed compile is a result failed at
    ``Stage.LOWERING`` (the backend's ``stage`` names it). ``seconds``: ``lower``, then the
    run's own timings. ``signature``: the entry's, read from a torch-level file (None: the
    linalg file's only public function)."""
    stem = linalg.name.removesuffix(".mlir")
    lowered = Lowered(Target.LINALG, contract_ir=linalg, target_ir=linalg, linalg=linalg, stem=stem,
                      signature=signature)
    start = time.perf_counter()
    compiled = backend.compile(lowered, folder, options)
    lower_s = time.perf_counter() - start
    if not compiled.record.ok:
        return RefBackendResult(compiled.signature.name, Stage.LOWERING, lowering=compiled.record,
                                work_dir=str(folder), seconds={"lower": lower_s})
    work = folder / "execution"
    work.mkdir(exist_ok=True)
    [result] = backend.run_sets(compiled, [inputs], [work], options)
    result.lowering = compiled.record
    result.seconds = {"lower": lower_s, **result.seconds}
    return result
