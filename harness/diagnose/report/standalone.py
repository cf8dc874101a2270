"""repro.py (``templates/repro.py.in``): a bundle's reproducer that needs only torch, numpy and
the torch-mlir wheel (its MLIR Python bindings, PassManager and ExecutionEngine), no harness.

Why: a maintainer triages with ``pip install torch torch-mlir`` and upstream's source; a
repro.sh that calls ``python -m harness check`` reproduces nothing for them. So the script
embeds what it needs:

- the IR (``reduced.mlir``) as a string, the pipeline to linalg and the RefBackend's lowering
  to LLVM (pipelines.toml's ``linalg-to-llvm``) as textual pipelines;
- the arguments and eager PyTorch's values (``inputs.npz``, ``expected.npz``) in base64;
- the RefBackend's calling convention (unranked memref descriptors, the
  ``refbackend_consume_func_return_*`` callbacks) in a few lines of ctypes: the same convention
  ``harness.execute.jit`` implements, written out because the script may not import it.

Three kinds (``BundleKind``, the bundle's): a miscompile (exit 1 when the values are wrong or the run dies),
a run-time failure (exit 1 when the run dies; values that differ are printed, not counted)
and a failing MLIR core pass run through ``torch_mlir.passmanager`` (exit 1 when the expected
error shows). The work runs in a child
process of the script, so a signal is an outcome.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from pathlib import Path

from harness.compiler import jsonfile
from harness import defaults
from harness import versions as versions_module
from harness.execute.levels import join, split_pipeline
from harness.execute.lowering import LLVM_PIPELINE, resolve

from .bundle import write_text
from .redact import Redactor
from .repro import python_launcher
from .result import EXIT_STATUSES, BundleKind
from .sections import without_title_prefix
from .template import render

REPRO_PY = "repro.py"


_BUG = {BundleKind.COMPILE_FAILURE: "the pass fails with the expected error",
        BundleKind.MISCOMPILE: "the values are wrong, or the run dies",
        BundleKind.RUNTIME_FAILURE: "the run dies"}
_WHAT = {
    BundleKind.COMPILE_FAILURE: "It runs the pipeline below through torch_mlir.passmanager on the "
                                "embedded IR and looks for the expected error.",
    BundleKind.MISCOMPILE: "It lowers the embedded IR to linalg and then to LLVM with the "
                           "RefBackend's passes, runs it on the ExecutionEngine with the embedded "
                           "arguments and compares with eager PyTorch's values.",
    BundleKind.RUNTIME_FAILURE: "It lowers the embedded IR to linalg and then to LLVM with the "
                                "RefBackend's passes and runs it on the ExecutionEngine with the "
                                "embedded arguments; the bug is that the run dies.",
}


@dataclass(frozen=True, kw_only=True)
class ReproPy:
    """What repro.py embeds."""

    kind: BundleKind
    summary: str                    # one line: what goes wrong
    ir: str                         # the IR text
    ir_name: str = "reduced.mlir"   # the bundle's file it is
    to_linalg: str                  # textual; for PASS: the failing pipeline
    to_llvm: str = ""               # textual; the RefBackend's lowering to LLVM
    function: str = ""              # the entry point
    expected_error: str = ""        # PASS: the error text that shows the bug
    inputs_npz: bytes = b""
    expected_npz: bytes = b""
    # the same function evaluated in float64 (b"": none), by which float results are judged
    wide_npz: bytes = b""
    timeout_s: float = defaults.TIMEOUT_S


def repro_py(spec: ReproPy) -> str:
    """The script's text."""
    packages = versions_module.installed()
    return render("repro.py.in", {
        "SUMMARY": spec.summary.replace('"""', "'''").replace("\\", "/"),
        "TORCH": packages.get("torch", "?"),
        "TORCH_MLIR": packages.get("torch-mlir", "?"),
        "WHAT": _WHAT[spec.kind],
        "BUG": _BUG[spec.kind],
        **EXIT_STATUSES,
        "KIND": repr(spec.kind.value),
        "TIMEOUT_S": repr(float(spec.timeout_s)),
        "IR_NAME": spec.ir_name,
        "IR": python_text(spec.ir),
        "PIPELINE_NOTE": ("# The pipeline that fails (TO_LINALG), as the bundle's repro.sh runs it."
                          if spec.kind is BundleKind.COMPILE_FAILURE else
                          "# torch dialect -> linalg on tensors (torch-mlir-opt runs the same), then the "
                          "RefBackend's\n# lowering of linalg to LLVM (upstream's refbackend.py runs "
                          "the same passes)."),
        "TO_LINALG": repr(spec.to_linalg),
        "TO_LLVM": repr(spec.to_llvm),
        "FUNCTION": repr(spec.function),
        "EXPECTED_ERROR": repr(spec.expected_error),
        "ARRAYS_DOC": _arrays_doc(spec.inputs_npz, "argument") + _arrays_doc(spec.expected_npz, "expected"),
        "INPUTS_NPZ": _b64(spec.inputs_npz),
        "EXPECTED_NPZ": _b64(spec.expected_npz),
        "WIDE_NPZ": _b64(spec.wide_npz),
    })


def python_text(text: str) -> str:
    """A Python literal of ``text`` a person can read: a raw triple-quoted string when that
    spells it exactly, else ``repr``."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''" + text + "'''"
    return repr(text)


def _b64(data: bytes) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    lines = [encoded[i:i + 96] for i in range(0, len(encoded), 96)] or [""]
    return "(\n" + "\n".join(f"    {line!r}" for line in lines) + "\n)"


def _arrays_doc(data: bytes, what: str) -> str:
    import numpy as np

    if not data:
        return ""
    with np.load(io.BytesIO(data)) as npz:
        return "".join(f"#   {what} {name}: {npz[name].dtype}{list(npz[name].shape)}\n"
                       for name in npz.files)


def numerics_repro(folder: Path, kind: BundleKind, pipeline: str, summary: str,
                   timeout_s: float = defaults.TIMEOUT_S) -> ReproPy:
    """The ReproPy of a miscompile or run-time failure bundle from its files (``reduced.mlir``,
    ``inputs.npz``, ``expected.npz``) and the pipeline its ``reduced.mlir`` goes to linalg by."""
    from harness.execute.signature import read_signature

    split = split_pipeline(pipeline)
    ir_file = folder / "reduced.mlir"
    return ReproPy(
        kind=kind, summary=summary, ir=ir_file.read_text(),
        to_linalg=join((*split.to_torch_passes, *split.to_linalg_passes)),
        to_llvm=resolve(LLVM_PIPELINE)[0], function=read_signature(ir_file, None).name,
        inputs_npz=(folder / "inputs.npz").read_bytes(),
        expected_npz=(folder / "expected.npz").read_bytes(),
        wide_npz=(folder / WIDE_NPZ).read_bytes() if (folder / WIDE_NPZ).is_file() else b"",
        timeout_s=timeout_s)


#: A miscompile bundle's float64 evaluation of reduced.mlir on inputs.npz: what repro.py judges
#: float results against (the harness's float64 rule, harness.execute.closeness).
WIDE_NPZ = "expected-float64.npz"


def write_standalone(folder: Path, kind: BundleKind, pipeline: str, summary: str,
                     redactor: Redactor | None = None, timeout_s: float = defaults.TIMEOUT_S) -> None:
    """repro.py and repro.sh of a miscompile or run-time failure bundle whose reduced.mlir,
    inputs.npz and expected.npz are written (redacted with ``redactor`` when given)."""
    # redacted field by field: the base64 of the arrays is no text to redact (a run like
    # "/TOw25TL" in it looks like a path), and reduced.mlir on disk is redacted already
    if redactor is not None:
        summary = redactor.text(summary)
    text = repro_py(numerics_repro(folder, kind, pipeline, summary, timeout_s))
    script = repro_sh(kind, summary)
    if redactor is not None:
        script = redactor.text(script)
    for name, body in ((REPRO_PY, text), ("repro.sh", script)):
        write_text(folder / name, body)
        (folder / name).chmod(0o755)


def write_pass_repro(folder: Path, spec: ReproPy, redactor: Redactor | None = None) -> None:
    """repro.py of a bundle whose failing pipeline is upstream MLIR's (the bindings tool ran it):
    the pipeline through torch_mlir.passmanager, beside repro.sh's command."""
    text = repro_py(spec)
    write_text(folder / REPRO_PY, redactor.text(text) if redactor is not None else text)
    (folder / REPRO_PY).chmod(0o755)


def summary_of_record(folder: Path) -> str:
    """The bundle's title from its record.json, for a bundle written before repro.py existed."""
    record = jsonfile.loads((folder / "record.json").read_text())
    return without_title_prefix(str(record.get("title", "")))[1]


def repro_sh(kind: BundleKind, summary: str) -> str:
    """repro.sh of a bundle with repro.py: the one launcher (``repro.launcher``) running it with
    ``$PYTHON`` (default python3)."""
    return python_launcher(summary, _BUG[kind], versions_module.installed())
