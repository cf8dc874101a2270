"""Small sweep folders written from the port's own dataclasses, for the board tests whose
subject is the page (no port runs): ``record(...)`` makes a port record, ``write(...)`` puts
records and run failures where a sweep keeps them (``DIR/records`` or ``DIR/builds/NAME``)."""

from __future__ import annotations

from pathlib import Path

from harness.compiler.targets import Target
from harness.execute.backend_names import BackendName
from harness.models.choice import Variant
from harness.models.hf_resolve import SourceKind
from harness.port.record import (
    Blocker,
    FrontendPort,
    PortOutcome,
    PortRecord,
    PortStage,
    VariantRecord,
)
from harness.sweep.records import BUILDS, RECORDS, RunFailure, file_name, write_failure


def port(frontend: str, outcome: str = "verified", *, stage: str = "", blockers=(),
         target: str = "linalg", backend: str = "refbackend") -> FrontendPort:
    """A port of ``frontend`` to ``target`` on ``backend`` (the board's column is its path:
    ``fx-tosa-iree``)."""
    failed = PortStage.parse(stage) if stage else None
    return FrontendPort(frontend=frontend, outcome=PortOutcome.parse(outcome), failed_stage=failed,
                        blockers=list(blockers), target=Target.parse(target),
                        backend=BackendName.parse(backend))


def blocker(op: str, *, stage: str = "torch-to-linalg", signature: str = "", location: str = "",
            called_from: str = "", message: str = "") -> Blocker:
    return Blocker(rank=1, stage=stage, signature=signature or f"legalization-failure: {op}",
                   op=op, count=1, location=location, called_from=called_from,
                   message=message or f"failed to legalize operation '{op}'")


def record(model: str, modality: str, *ports: FrontendPort, build: str = "") -> PortRecord:
    return PortRecord(model=model, source=SourceKind.TYPE, model_type=model, modality=modality,
                      build=build, variants=[VariantRecord(Variant.STOCK, model, ports=list(ports))])


def write(root: Path, *results: PortRecord | RunFailure, build: str = "") -> Path:
    base = root / BUILDS / build if build else root
    (base / RECORDS).mkdir(parents=True, exist_ok=True)
    for result in results:
        if isinstance(result, RunFailure):
            write_failure(base, result)
        else:
            result.write(base / RECORDS / f"{file_name(result.model)}.json")
    return root
