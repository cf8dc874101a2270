"""Which tool the IR tools (bisect, reduce, report) run a pipeline with.

The tools run every pipeline through ``runner.run_pipeline(..., opt=PATH)``. A pipeline whose
``driver`` is ``bindings`` (pipelines.toml ``linalg-to-llvm``: upstream MLIR passes
torch-mlir-opt does not register) gets the bindings tool's launcher as that PATH
(``lowering.bindings_launcher``): it takes torch-mlir-opt's flags and answers ``--version`` /
``--help-list`` as a stand-in, so the tools need no second code path. A textual pipeline is
torch-mlir-opt's unless ``--driver bindings`` says otherwise: guessing from a rejection would
hide a typo in a pass name behind a second tool's error.
"""

from __future__ import annotations

from harness.compiler import builds as builds_module
from harness.errors import UsageError
from harness.execute.lowering import Driver, bindings_launcher, driver_for


def tool_for(spec: str, opt: str | None, driver: Driver | str | None = None) -> str | None:
    """The ``opt`` to run ``spec`` with: ``opt`` itself for torch-mlir-opt (None: the runner's
    default order), the bindings launcher for a bindings pipeline."""
    if driver_for(spec, driver) is not Driver.BINDINGS:
        return opt
    if opt and not builds_module.resolve(opt).bindings:
        raise UsageError(
            f"'{spec.strip()[:120]}' runs on the MLIR Python bindings (driver bindings: its "
            f"upstream MLIR passes are not registered in torch-mlir-opt), so --opt {opt} cannot "
            "run it. Drop --opt (and $TORCH_MLIR_OPT is not used for it either), or pass "
            "--driver torch-mlir-opt for a pipeline your torch-mlir-opt build does register.")
    return str(bindings_launcher())
