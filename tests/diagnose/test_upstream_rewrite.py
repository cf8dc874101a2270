"""Issue 44: a miscompile whose culprit is an upstream MLIR pass is shown with upstream passes
alone: the RefBackend's passes up to and including the culprit, when none of them is
torch-mlir's; otherwise the bundle cannot show it without torch-mlir and says nothing of it."""

from __future__ import annotations

from harness.diagnose.report.upstream_rewrite import upstream_prefix

REFBACKEND = ("builtin.module(func.func(linalg-generalize-named-ops),func.func(linalg-fuse-elementwise-ops),"
              "func.func(refback-munge-memref-copy),func.func(convert-linalg-to-loops))")


def test_the_passes_up_to_an_upstream_culprit_are_its_pipeline():
    assert upstream_prefix("linalg-fuse-elementwise-ops", REFBACKEND) == (
        "builtin.module(func.func(linalg-generalize-named-ops),func.func(linalg-fuse-elementwise-ops))")


def test_a_torch_mlir_pass_before_the_culprit_or_as_it_gives_none():
    assert upstream_prefix("convert-linalg-to-loops", REFBACKEND) == ""
    assert upstream_prefix("refback-munge-memref-copy", REFBACKEND) == ""
    assert upstream_prefix("lower-affine", REFBACKEND) == ""  # not in the pipeline
