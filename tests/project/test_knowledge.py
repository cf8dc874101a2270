"""What explain, bisect and report know (harness/knowledge): the idioms state the real cause,
point at fixes by the names harness/fixes/ implements, and the seed idioms' "lowers today"
claims hold against the pinned torch-mlir."""

from __future__ import annotations


import pytest

from harness.knowledge import fixes, idioms, upstream

from support import harness


def test_fix_names_are_the_ones_harness_fixes_implements():
    assert sorted(fixes.FIXES) == ["autograd-function-forward", "bitwise-and-or", "moe-batched-experts",
                                   "persistent-buffers", "sdpa-explicit-scale", "tosa-cast-via-i32",
                                   "tosa-gather-via-i32", "tosa-variance-f32"]
    for idiom in idioms.KNOWN.values():
        assert not idiom.fix or idiom.fix in fixes.FIXES, idiom.name
    # Every fix answers an idiom, except the one that answers a miscompile (no error to match).
    assert {i.fix for i in idioms.KNOWN.values() if i.fix} == set(fixes.FIXES) - {"sdpa-explicit-scale"}
    assert fixes.FIXES["bitwise-and-or"].level is fixes.FixLevel.TORCH_IR
    assert fixes.FIXES["persistent-buffers"].level is fixes.FixLevel.MODULE
    assert fixes.FIXES["tosa-cast-via-i32"].level is fixes.FixLevel.TARGET_IR
    assert fixes.renaming("torch.aten.__or__.Tensor")[1] == "torch.aten.bitwise_or.Tensor"
    assert fixes.renaming("torch.aten.add.Tensor") is None


def test_the_literal_is_no_cause_any_more():
    """The old reading ('bool-literal-mask': the literal cannot be lowered) is gone: the literal
    lowers alone; the idiom is matched on the blocker __and__."""
    assert "bool-literal-mask" not in idioms.KNOWN
    assert idioms.matches("torch.vtensor.literal", "dense<true> : tensor<i1>") == []
    [found] = idioms.matches("torch.aten.__and__.Tensor", "")
    assert found.name == "bool-and-mask" and found.fix == "bitwise-and-or"
    assert "masking_utils" in found.title and "result & mask(...)" in found.title
    assert "aten.bitwise_and.Tensor, which lowers" in found.hint


@pytest.mark.parametrize(("said", "name", "emitter", "bundle"), [
    ("'tosa.cast' op is not profile-aligned: element type 'f64' is not legal",
     "tosa-variance-f64", "calculateVariance", "reports/upstream/variance-f32-in-f64-outside-tosa-profiles/"),
    ("'tosa.cast' op illegal: operation operand/result data types did not align with any profile or "
     "extension, got (i64,f32), did you mean (i1,f32)?",
     "tosa-cast-i64-f32", "tosaCastTensorToType", "reports/upstream/tosa-cast-i64-to-f32-outside-profiles/"),
])
def test_iree_refusing_torch_mlirs_tosa_is_one_of_the_two_profile_bugs(said, name, emitter, bundle):
    """IREE's words for TOSA outside the profiles (issue 43) name the one torch-mlir emitter and
    the one bundle that message is, and the target fix that answers it (harness.fixes.tosa)."""
    [found] = idioms.matches("tosa.cast", said)
    fix = {"calculateVariance": "tosa-variance-f32", "tosaCastTensorToType": "tosa-cast-via-i32"}[emitter]
    assert found.name == name and found.fix == fix and not found.seed
    assert f"--fix ({fix}" in found.hint
    assert emitter in found.hint and bundle in found.hint
    other = {"calculateVariance": "tosaCastTensorToType",
             "tosaCastTensorToType": "calculateVariance"}[emitter]
    assert other not in found.hint
    assert idioms.matches("tosa.cast", "'tosa.cast' op requires ...") == []


def test_the_other_fixes_answer_their_messages():
    [buffers] = idioms.matches("", "fx_importer: Could not find state mapping for buffer 'inv_freq'")
    assert buffers.fix == "persistent-buffers"
    [python_op] = idioms.matches('torch.operator "prim.PythonOp"', "")
    assert python_op.fix == "autograd-function-forward"


def test_known_upstream_reports_match_on_the_blocker():
    refs = [r.ref for r in upstream.matching("torch.aten.__and__.Tensor", "torch.vtensor.literal")]
    assert refs == ["llvm/torch-mlir#4749", "llvm/torch-mlir#4625"]
    # #4625 reports the literal: it is listed only when that is what the error names.
    assert [r.ref for r in upstream.matching("torch.aten.__and__.Tensor", "torch.aten.__and__.Tensor")] == [
        "llvm/torch-mlir#4749"]
    assert upstream.matching("torch.aten.nonzero") == []
    assert upstream.KNOWN_UPSTREAM[0].url == "https://github.com/llvm/torch-mlir/pull/4749"


def test_emit_list_says_which_seed_idioms_still_fail():
    proc = harness("emit", "--list", timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()}
    assert "[STILL FAILS today: traced, the torchscript pipeline stops" in lines["seed-tuple-of-views"]
    for name in ("arange-traced-size", "full-tensor-fill", "mask-to-dtype-device", "mask-to-bool",
                 "view-traced-sizes"):
        assert "[lowers today: " in lines[f"seed-{name}"], name


@pytest.mark.parametrize("name", sorted(i.name for i in idioms.KNOWN.values() if i.seed))
def test_seed_status_holds_against_the_pinned_torch_mlir(tmp_path, name):
    """The claim emit --list prints, checked: the traced idiom through both pipelines."""
    from harness.compiler.stages import StageOptions, run_stages
    from harness.port.emit import emit

    ir = tmp_path / f"{name}.mlir"
    emit(f"seed-{name}", ir)
    stages = run_stages(ir, ("torchscript-to-torch", "torch-to-linalg"), tmp_path, stem=name,
                        options=StageOptions(timeout_s=120))
    lowered = len(stages) == 2 and all(s.ok for s in stages)
    assert lowered == (not idioms.KNOWN[name].fails_today), [str(s.record.signature) for s in stages]
