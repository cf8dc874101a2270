"""The backend contracts torch-mlir lowers to, and how each is lowered and checked: one table.

torch-mlir lowers its torch backend contract to three contracts: linalg-on-tensors, TOSA and
StableHLO (``torch-backend-to-*-backend-pipeline``). Its e2e suite checks the numbers of TOSA
and StableHLO by lowering them on to linalg-on-tensors and running that on the RefBackend
(``LinalgOnTensorsTosaBackend``, ``LinalgOnTensorsStablehloBackend``); the harness does the
same, so a target's stages are its lowering, then (TOSA, StableHLO) its way on to linalg.

Every pipeline named here is a pipelines.toml entry; nothing else in the harness spells a
target's pipeline name. A new target is a member of :class:`Target` and a row of
:data:`TARGETS` (and its pipelines in pipelines.toml).
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.enums import ParsableEnum


class Target(ParsableEnum):
    """A backend contract of torch-mlir."""

    LINALG = "linalg"        # linalg-on-tensors: the RefBackend's and IREE's input
    TOSA = "tosa"
    STABLEHLO = "stablehlo"


@dataclass(frozen=True)
class TargetPath:
    """How the torch backend contract reaches one target, and how its numbers are checked."""

    target: Target
    lowering: str           # pipelines.toml: torch backend contract -> this target's contract
    to_linalg: str = ""     # pipelines.toml: this contract -> linalg-on-tensors ("": it is linalg)
    upstream_backend: str = ""  # the upstream e2e backend that checks its numbers the same way

    @property
    def stages(self) -> tuple[str, ...]:
        """The pipelines.toml names that take the torch backend contract to linalg-on-tensors
        through this target, in order."""
        return (self.lowering, self.to_linalg) if self.to_linalg else (self.lowering,)


TARGETS: dict[Target, TargetPath] = {
    Target.LINALG: TargetPath(Target.LINALG, "torch-to-linalg",
                              upstream_backend="RefBackendLinalgOnTensorsBackend"),
    Target.TOSA: TargetPath(Target.TOSA, "torch-to-tosa", "tosa-to-linalg",
                            upstream_backend="LinalgOnTensorsTosaBackend"),
    Target.STABLEHLO: TargetPath(Target.STABLEHLO, "torch-to-stablehlo", "stablehlo-to-linalg",
                                 upstream_backend="LinalgOnTensorsStablehloBackend"),
}

#: The default: linalg-on-tensors, the contract the RefBackend and IREE take as it is, and the
#: one every earlier record was made for (TOSA and StableHLO are asked for with --target).
DEFAULT_TARGETS: tuple[Target, ...] = (Target.LINALG,)

#: The lowering to linalg-on-tensors, by its pipelines.toml name (what `harness check` lowers
#: a torch file with by default, and what the known miscompiles' fixes apply to).
LINALG_LOWERING = TARGETS[Target.LINALG].lowering


def target_path(target: Target | str) -> TargetPath:
    return TARGETS[Target.parse(target)]


def parse_targets(text: str) -> tuple[Target, ...]:
    """``--target``: targets separated by commas, in the order given, each once."""
    return Target.parse_list(text, "--target")


def stage_target(stage: str) -> Target | None:
    """The target whose path runs pipelines.toml stage ``stage`` (None: no target's)."""
    return next((p.target for p in TARGETS.values() if stage in p.stages), None)
