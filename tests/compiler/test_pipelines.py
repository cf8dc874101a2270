"""pipelines/pipelines.toml is the one definition; harness.compiler.pipelines renders it."""

from __future__ import annotations

import subprocess

import pytest

from harness.compiler import builds, pipelines
from harness.compiler.pipeline_text import parse_pipeline
from harness.errors import PipelineConfigError


def test_every_pipeline_is_registered_in_the_binary():
    helped = subprocess.run([builds.resolve().path, "--help"], capture_output=True, text=True).stdout
    for p in pipelines.default().pipelines.values():
        if p.driver is not pipelines.Driver.TORCH_MLIR_OPT:
            continue
        names = [p.pass_name] if p.pass_name else [r.name for r in parse_pipeline(p.textual())]
        for name in names:
            assert f"--{name} " in helped, (p.name, name)
        for option in p.defaults:
            assert f"--{option}" in helped, (p.name, option)


def test_bindings_pipelines_parse_in_the_bindings_and_not_in_the_binary():
    from torch_mlir import ir, passmanager
    from torch_mlir.dialects import torch as _torch  # noqa: F401 (registers torch-mlir's passes)

    helped = subprocess.run([builds.resolve().path, "--help"], capture_output=True, text=True).stdout
    bindings = [p for p in pipelines.default().pipelines.values() if p.driver is pipelines.Driver.BINDINGS]
    assert [str(p.name) for p in bindings] == ["tosa-to-linalg", "linalg-to-llvm"]
    for p in bindings:
        with ir.Context():
            passmanager.PassManager.parse(p.textual())  # raises on an unknown pass or option
    # Why they are not torch-mlir-opt's: the wheel's binary lacks upstream's bufferization and
    # MLIR's TOSA conversions.
    assert "--one-shot-bufferize" not in helped and "one-shot-bufferize{" in bindings[1].textual()
    assert "--tosa-to-linalg " not in helped and "func.func(tosa-to-linalg)" in bindings[0].textual()


def test_textual_with_options():
    p = pipelines.default().get("torchscript-to-torch")
    assert p.textual() == "builtin.module(torchscript-module-to-torch-backend-pipeline)"
    assert p.textual({"backend-legal-ops": ["aten.a", "aten.b"], "extra-library": "/x.mlir"}) == (
        "builtin.module(torchscript-module-to-torch-backend-pipeline"
        "{backend-legal-ops=aten.a,aten.b extra-library=/x.mlir})"
    )


def test_resolve_accepts_ours_upstream_and_textual():
    s = pipelines.default()
    assert s.resolve("torch-to-linalg") == s.resolve("torch-backend-to-linalg-on-tensors-backend-pipeline")
    assert s.resolve("builtin.module(canonicalize)") == "builtin.module(canonicalize)"
    # Pass flags, torch-mlir-opt's own usage, go to the runner as given.
    assert s.resolve(" -canonicalize -cse") == "-canonicalize -cse"


def test_output_types_name_known_pipelines():
    s = pipelines.default()
    assert [str(p.name) for p in s.for_output_type("linalg-on-tensors")] == [
        "torchscript-to-torch", "torch-to-linalg"]
    assert s.for_output_type("raw") == ()


def test_unknown_names_are_clear_errors():
    s = pipelines.default()
    with pytest.raises(PipelineConfigError, match="unknown pipeline 'nope'"):
        s.get("nope")
    with pytest.raises(PipelineConfigError, match="has no option 'bogus'"):
        s.get("torch-to-linalg").textual({"bogus": 1})
    with pytest.raises(PipelineConfigError, match="unknown output type"):
        s.for_output_type("llvm")


def test_broken_definition_files(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(PipelineConfigError, match="are missing"):
        pipelines.load(missing)
    bad = tmp_path / "bad.toml"
    bad.write_text("[pipeline.x]\nanchor = 'builtin.module'\n")
    with pytest.raises(PipelineConfigError, match="has no 'pass' key"):
        pipelines.load(bad)
    dangling = tmp_path / "dangling.toml"
    dangling.write_text("[output-type]\ntorch = ['absent']\n")
    with pytest.raises(PipelineConfigError, match="names unknown pipeline 'absent'"):
        pipelines.load(dangling)
    garbage = tmp_path / "garbage.toml"
    garbage.write_text("[[[")
    with pytest.raises(PipelineConfigError, match="not valid TOML"):
        pipelines.load(garbage)
