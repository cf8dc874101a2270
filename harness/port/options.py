"""The options of a port, with the library's defaults (the CLI passes only what the user set).

Importable without torch: ``harness --help`` reads the defaults from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness import defaults
from harness.compiler.targets import DEFAULT_TARGETS, Target
from harness.execute.backend_names import DEFAULT_BACKENDS, DEFAULT_DEVICE, BackendName, Device
from harness.frontends.names import FrontendName
from harness.models.dynamic import DynamicSpec
from harness.models.hf_config import Size

if TYPE_CHECKING:
    from harness.execute.backend import BackendOptions

#: Imported IR keeps its weights as text up to this many MiB of tensors, as bytecode above it
#: (OPT-125m's weights as hex text are ~1 GB; the RefBackend needs them, people rarely read them).
TEXT_WEIGHTS_LIMIT_MB = 64


@dataclass(frozen=True, kw_only=True)
class PortOptions:
    """How to port one MODEL. ``None`` means the model driver's own default."""

    size: Size | None = None          # None: tiny for a model type, its own for a directory
    overrides: Mapping[str, object] = field(default_factory=dict)  # --set FIELD=VALUE
    batch: int | None = None          # None: the driver's (1)
    seq: int | None = None            # None: the driver's (8)
    seed: int = 0                     # weights and the traced inputs; the second set uses seed+1
    inputs: tuple[str, ...] = ()      # --input NAME=SHAPE[:DTYPE]: inputs the planner cannot make
    variants: tuple[str, ...] = ()    # () = every variant the model has (OPT: stock and fixed)
    frontends: tuple[FrontendName, ...] = (FrontendName.TORCHSCRIPT, FrontendName.FX)
    targets: tuple[Target, ...] = DEFAULT_TARGETS  # --target: the backend contracts, each checked
    backends: tuple[BackendName, ...] = DEFAULT_BACKENDS  # --backend: what compiles and runs each
    testcase_dir: str | None = None   # --iree-testcase DIR: each IREE port's portable test case
    device: Device = DEFAULT_DEVICE   # --device: where the backends run the module (cuda: IREE's)
    cuda_target: str = ""             # --cuda-target sm_XX ("": the GPU's, harness.execute.iree_device)
    numerics: bool = True             # run the lowered module on the RefBackend against eager
    torch_only: bool = False          # stop at the torch backend contract
    keep_weights: bool | None = None  # None: kept when numerics run (the RefBackend needs them)
    tolerances: tuple[str, ...] = ()  # DTYPE=RTOL,ATOL over execute.closeness' defaults
    diagnose: bool = True             # on a failing pipeline: blockers (one-op runs) and bisect
    out: str = "harness-out"          # parent of the port's unique folder
    record_path: str | None = None    # also write the record here (--json FILE)
    opt: str | None = None            # torch-mlir-opt (None: $TORCH_MLIR_OPT, then the wheel's)
    timeout_s: float = defaults.TIMEOUT_S  # per stage: each subprocess, and trace/export/import
    memory_limit_mb: int = defaults.MEMORY_LIMIT_MB  # address space per torch-mlir-opt run (0: none)
    invocation: str = "harness"       # how the user started harness, for the printed commands
    fix: bool = False                 # --fix: the fixes of harness.fixes (module, torch IR) that answer
    dynamic: DynamicSpec = DynamicSpec()  # --dynamic: dimensions exported/imported dynamic

    def backend_options(self) -> BackendOptions:
        """What each backend is given: the port's time limit and device."""
        from harness.execute.backend import BackendOptions  # numpy: not for `harness --help`

        return BackendOptions(timeout_s=self.timeout_s, device=self.device, cuda_target=self.cuda_target)

    @property
    def weights_kept(self) -> bool:
        return self.numerics and not self.torch_only if self.keep_weights is None else self.keep_weights

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size.value if self.size else None,
            "overrides": dict(self.overrides),
            "batch": self.batch,
            "seq": self.seq,
            "seed": self.seed,
            "inputs": list(self.inputs),
            "variants": list(self.variants),
            "frontends": [f.value for f in self.frontends],
            "targets": [t.value for t in self.targets],
            "backends": [b.value for b in self.backends],
            "testcase_dir": self.testcase_dir,
            "device": self.device.value,
            "cuda_target": self.cuda_target or None,
            "numerics": self.numerics and not self.torch_only,
            "torch_only": self.torch_only,
            "keep_weights": self.weights_kept,
            "tolerances": list(self.tolerances),
            "diagnose": self.diagnose,
            "fix": self.fix,
            "opt": self.opt,
            "timeout_s": self.timeout_s,
            "memory_limit_mb": self.memory_limit_mb,
            "dynamic": str(self.dynamic) or None,
        }


BOTH = "both"


def parse_frontends(text: str) -> tuple[FrontendName, ...]:
    """Frontends separated by commas (``torchscript,fx,onnx``), in the order given, each once;
    ``both`` is TorchScript and FX (the default: TorchScript first, the mission's path)."""
    if text.strip().lower() == BOTH:
        return (FrontendName.TORCHSCRIPT, FrontendName.FX)
    return FrontendName.parse_list(text, "--frontend")


#: ``harness opt``: the 2022 walkthrough's port of OPT-125m, as it always ran: both variants
#: through the TorchScript path, a prompt of 7 tokens, weights elided, numbers not checked.
OPT_DEFAULTS = PortOptions(size=Size.DEFAULT, seq=7, frontends=(FrontendName.TORCHSCRIPT,),
                           numerics=False)
