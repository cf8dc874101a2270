"""harness.compiler.targets: the one table of backend contracts, and what reads it."""

from __future__ import annotations

import pytest

from harness.compiler import pipelines
from harness.compiler.targets import (
    DEFAULT_TARGETS,
    LINALG_LOWERING,
    TARGETS,
    Target,
    parse_targets,
    stage_target,
    target_path,
)
from harness.errors import UsageError
from harness.execute.backend_names import BackendName, parse_backends
from harness.execute.levels import split_pipeline
from harness.execute.lowering import Driver, resolve
from harness.diagnose.numerics.subject import pipeline_name


def test_every_target_has_its_pipelines_and_ends_at_linalg():
    known = pipelines.default()
    assert set(TARGETS) == set(Target) and DEFAULT_TARGETS == (Target.LINALG,)
    for target, path in TARGETS.items():
        assert path.target is target
        first = known.get(path.stages[0])
        assert first.input == "torch backend contract"
        assert known.get(path.stages[-1]).output == "linalg-on-tensors backend contract"
        assert all(stage_target(stage) is target for stage in path.stages)
    assert LINALG_LOWERING == "torch-to-linalg" and target_path("tosa").stages == (
        "torch-to-tosa", "tosa-to-linalg")


def test_target_and_backend_lists_keep_order_and_refuse_the_unknown():
    assert parse_targets("stablehlo, linalg,stablehlo") == (Target.STABLEHLO, Target.LINALG)
    assert parse_backends("iree,refbackend") == (BackendName.IREE, BackendName.REFBACKEND)
    with pytest.raises(UsageError, match="'linalg', 'tosa', 'stablehlo'"):
        parse_targets("mhlo")
    with pytest.raises(UsageError, match="names no target"):
        parse_targets(" , ")
    with pytest.raises(UsageError, match="'refbackend', 'iree'"):
        parse_backends("xla")


def test_a_textual_pipeline_with_tosas_conversions_runs_on_the_bindings():
    """torch-mlir-opt does not register MLIR's tosa-to-* passes: a cut program's lowering to
    linalg through TOSA (the numbers search's) must go to the bindings; a pipeline of generic
    passes stays torch-mlir-opt's."""
    tosa = split_pipeline("torch-to-tosa,tosa-to-linalg").to_linalg
    assert resolve(tosa)[1] is Driver.BINDINGS
    assert resolve(split_pipeline("torch-to-stablehlo,stablehlo-to-linalg").to_linalg)[1] is (
        Driver.TORCH_MLIR_OPT)
    assert resolve("builtin.module(inline,canonicalize)")[1] is Driver.TORCH_MLIR_OPT
    assert pipeline_name(tosa) == "torch-to-tosa,tosa-to-linalg"
    assert pipeline_name(split_pipeline("torch-to-linalg").to_linalg) == "torch-to-linalg"


def test_the_split_is_at_whichever_target_lowers():
    for target, path in TARGETS.items():
        split = split_pipeline(",".join(("fx-to-torch", *path.stages)))
        assert split.to_torch_passes and split.to_torch_passes[0].name == (
            "torchdynamo-export-to-torch-backend-pipeline"), target
        first = pipelines.default().get(path.lowering).pass_name
        assert split.to_linalg_passes[0].name == first, target
