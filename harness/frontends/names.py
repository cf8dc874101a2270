"""The frontends' names, importable without torch (the IR cache's hit path stays torch-free)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.enums import ParsableEnum


class FrontendName(ParsableEnum):
    TORCHSCRIPT = "torchscript"  # torch.jit.trace/script -> the project's importer (the mission's)
    FX = "fx"                    # torch.export -> the wheel's fx_importer
    ONNX = "onnx"                # torch.export -> torch.onnx.export -> the wheel's onnx_importer


@dataclass(frozen=True)
class PathInfo:
    """A frontend's path as a bug report names it, and whether upstream's CI runs it."""

    label: str
    upstream_ci: bool
    note: str = ""   # what a maintainer should know of it, said when only this path hits a bug


#: Each frontend's path, upstream's supported ones (an e2e config in its CI) first.
PATHS: dict[FrontendName, PathInfo] = {
    FrontendName.FX: PathInfo("FX (torch.export + fx_importer)", True),
    FrontendName.ONNX: PathInfo("ONNX (torch.onnx.export + onnx_importer)", True),
    FrontendName.TORCHSCRIPT: PathInfo(
        "TorchScript (torch.jit + a JIT IR importer; its IR matches what upstream's JIT IR "
        "importer, off by default since llvm/torch-mlir#3693, emits)", False,
        "upstream no longer runs the TorchScript e2e config (llvm/torch-mlir#3693)"),
}
