"""The reference evaluator against eager PyTorch on the project's models (OPT, FixedOPT, the seed
idioms) at every IR level they reach, and on small modules for each construct it reads."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from harness.compiler import pipelines
from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import (
    ElidedWeightsError,
    InputsError,
    ReferenceEvaluationError,
    UnsupportedOpsError,
)
from harness.execute.reference import (
    ReferenceOptions,
    coverage,
    entry_signature,
    evaluate,
    evaluate_file,
)
from harness.frontends.fx import export_and_import
from harness.frontends.torchscript import ModuleBuilder, forward_annotator
from harness.models import catalog, seed


def write_ts(script, examples, path):
    builder = ModuleBuilder()
    builder.import_module(script._c if hasattr(script, "_c") else script,
                          forward_annotator(script, list(examples)))
    return write_module(builder.module, path, WriteOptions(keep_weights=True))


def lower(path, pipeline_name, out):
    record = run_pipeline(path, pipelines.default().resolve(pipeline_name),
                          options=RunOptions(output_path=str(out)))
    return out if record.ok else None


def first_tensor(outputs):
    out = outputs[0]
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def eager_of(model, examples):
    with torch.no_grad():
        out = model(*examples)
    return first_tensor((out,))


def levels(tmp_path, traced, stem):
    """The IR files of a catalog model: raw TorchScript, its backend contract, raw FX, its backend
    contract (those a pipeline produces)."""
    files = {"ts-raw": write_ts(traced.script, traced.examples, tmp_path / f"{stem}.ts.mlir")}
    files["ts-torch"] = lower(files["ts-raw"], "torchscript-to-torch", tmp_path / f"{stem}.ts-torch.mlir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fx_module = export_and_import(traced.eager, traced.examples, name=stem)
    files["fx-raw"] = write_module(fx_module, tmp_path / f"{stem}.fx.mlir", WriteOptions(keep_weights=True))
    files["fx-torch"] = lower(files["fx-raw"], "fx-to-torch", tmp_path / f"{stem}.fx-torch.mlir")
    return files


@pytest.mark.parametrize("name", ["opt-tiny", "opt-fixed-tiny"])
def test_opt_models_match_eager_at_every_level(tmp_path, name):
    traced = catalog.get(name).build()
    eager = eager_of(traced.eager, traced.examples)
    files = levels(tmp_path, traced, name)
    # FixedOPT reaches the backend contract through both frontends; stock OPT too.
    assert files["ts-torch"] is not None and files["fx-torch"] is not None
    inputs = [t.numpy() for t in traced.examples]
    for level, path in files.items():
        result = evaluate_file(path, inputs)
        out = first_tensor(result.outputs)
        assert out.shape == eager.shape and out.dtype == eager.dtype, level
        # raw TorchScript runs the traced ops themselves; the other levels decompose some
        # (layer_norm into var_mean, ...), which moves the last bits.
        tolerance = 0.0 if level == "ts-raw" else 1e-5
        assert (out - eager).abs().max().item() <= tolerance, level
        assert not result.type_notes, (level, result.type_notes)
        assert result.ops_evaluated > 100


@pytest.mark.parametrize("name", sorted(seed.IDIOMS))
def test_seed_idioms_and_their_fixes_match_eager(tmp_path, name):
    idiom = seed.IDIOMS[name]
    for variant, make in (("stock", idiom.make), ("fixed", idiom.make_fixed)):
        torch.manual_seed(0)
        model = make().eval()
        examples = idiom.examples()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            script = torch.jit.trace(model, examples, strict=False)
        raw = write_ts(script, examples, tmp_path / f"{variant}.ts.mlir")
        files = {"ts-raw": raw,
                 "ts-torch": lower(raw, "torchscript-to-torch", tmp_path / f"{variant}.torch.mlir")}
        expected = eager_of(model, examples)
        for level, path in files.items():
            if path is None:  # some idioms are exactly what torchscript-to-torch fails on
                continue
            out = first_tensor(evaluate_file(path, [e.numpy() for e in examples]).outputs)
            assert torch.allclose(out, expected, rtol=1e-5, atol=1e-6), (variant, level)


def test_raw_torchscript_control_flow_lists_and_in_place_ops(tmp_path):
    class Scripted(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor([2.0, 3.0]))

        def forward(self, x, n: int):
            acc = torch.zeros_like(x)
            sizes: list[int] = []
            for i in range(n):
                acc.add_(x * self.scale)    # in place, on a non-value tensor
                sizes.append(i)
            if len(sizes) > 2:
                acc = acc - 1.0
            return acc, sizes[-1]

    model = Scripted()
    script = torch.jit.script(model)
    builder = ModuleBuilder()
    builder.import_module(script._c)
    path = write_module(builder.module, tmp_path / "scripted.mlir", WriteOptions(keep_weights=True))
    x = np.array([1.0, -1.0], np.float32)
    result = evaluate_file(path, [x, 3])
    acc, last = result.outputs[0]
    torch.testing.assert_close(acc, model(torch.from_numpy(x), 3)[0], rtol=0, atol=0)
    assert last == 2
    assert x.tolist() == [1.0, -1.0]  # inputs are copied, never changed


def _parse(text):
    from torch_mlir import ir

    from harness.compiler.mlir import new_context

    context = new_context()
    with context:
        return context, ir.Module.parse(textwrap.dedent(text))


def test_unsupported_ops_are_named_before_anything_runs():
    context, module = _parse("""
        func.func @forward(%x: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
          %0 = torch.operator "mylib.frobnicate"(%x) : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
          %1 = torch.operator "mylib.frobnicate"(%0) : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
          %2 = torch.symbolic_int "s0" {min_val = 2, max_val = 8} : !torch.int
          %3 = torch.aten.tanh %1 : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
          return %3 : !torch.vtensor<[2],f32>
        }""")
    with context:
        found = coverage(module.operation)
        assert found.unsupported == {'torch.operator "mylib.frobnicate"': 2, "torch.symbolic_int": 1}
        assert found.supported == {"torch.aten.tanh": 1}
        with pytest.raises(UnsupportedOpsError) as e:
            evaluate(module.operation, [np.zeros(2, np.float32)])
    assert e.value.ops == found.unsupported and e.value.function == "forward"
    assert 'torch.operator "mylib.frobnicate" (x2)' in str(e.value)


def test_op_views_of_torch_operator_are_named_by_their_op():
    """A use's owner is an OpView; torch.operator's has a `name` attribute (a StringAttr) of
    its own. The evaluator's helpers name the op, whichever form they are given."""
    from harness.execute.ref_ops import display_name, handler_for, qualified_name

    context, module = _parse("""
        func.func @forward(%x: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
          %0 = torch.aten.tanh %x : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
          %1 = torch.operator "aten.tanh"(%0) : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
          return %1 : !torch.vtensor<[2],f32>
        }""")
    with context:
        first = module.body.operations[0].regions[0].blocks[0].operations[0]
        view = next(iter(first.results[0].uses)).owner
        assert not isinstance(view.name, str)  # the trap: the op's `name` attribute
        assert display_name(view) == display_name(view.operation) == 'torch.operator "aten.tanh"'
        assert qualified_name(view) == "aten.tanh" and handler_for(view) is not None


def test_an_op_that_fails_in_eager_names_the_op_and_location():
    # Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
    # where the string closes).
    context, module = _parse("""
        func.func @forward(%a: !torch.vtensor<[2,3],f32>, %b: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,2],f32> {
          %0 = torch.aten.mm %a, %b : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,2],f32> loc("model.py":42:0)
          return %0 : !torch.vtensor<[2,2],f32>
        }""")  # noqa: E501
    with context, pytest.raises(ReferenceEvaluationError) as e:
        evaluate(module.operation, [np.zeros((2, 3), np.float32)] * 2)
    assert e.value.op == "torch.aten.mm" and e.value.location == "model.py:42"
    assert "cannot be multiplied" in e.value.message


def test_type_notes_random_ops_and_kept_values():
    # The IR claims f64 where eager computes f32: the evaluator notes it and goes on.
    context, module = _parse("""
        func.func @forward(%x: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[3],f64>, !torch.vtensor<[3],f32>) {
          %int1 = torch.constant.int 1
          %0 = torch.aten.add.Tensor %x, %x, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f64>
          %none = torch.constant.none
          %1 = torch.aten.rand_like %x, %none, %none, %none, %none, %none : !torch.vtensor<[3],f32>, !torch.none, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[3],f32>
          return %0, %1 : !torch.vtensor<[3],f64>, !torch.vtensor<[3],f32>
        }""")  # noqa: E501
    with context:
        result = evaluate(module.operation, [np.ones(3, np.float32)], ReferenceOptions(keep_values=True))
    assert [n.render() for n in result.type_notes] == [
        "torch.aten.add.Tensor at -:4: result 0 is f32[3], the IR says f64[3]"]
    assert result.random_ops == ["torch.aten.rand_like at -:6"]
    assert [(v.index, v.op) for v in result.values] == [
        (0, "torch.constant.int"), (1, "torch.aten.add.Tensor"), (2, "torch.constant.none"),
        (3, "torch.aten.rand_like")]
    assert result.values[1].values[0].tolist() == [2.0, 2.0, 2.0]


def test_view_of_a_value_tensor_is_a_reshape():
    # torch-mlir reads aten.view of a !torch.vtensor as a reshape; eager's view refuses a
    # transposed operand.
    context, module = _parse("""
        func.func @forward(%x: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[6],f32> {
          %int0 = torch.constant.int 0
          %int1 = torch.constant.int 1
          %int6 = torch.constant.int 6
          %t = torch.aten.transpose.int %x, %int0, %int1 : !torch.vtensor<[2,3],f32>, !torch.int, !torch.int -> !torch.vtensor<[3,2],f32>
          %sizes = torch.prim.ListConstruct %int6 : (!torch.int) -> !torch.list<int>
          %v = torch.aten.view %t, %sizes : !torch.vtensor<[3,2],f32>, !torch.list<int> -> !torch.vtensor<[6],f32>
          return %v : !torch.vtensor<[6],f32>
        }""")  # noqa: E501
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with context:
        out = evaluate(module.operation, [x]).outputs[0]
    assert out.tolist() == x.T.reshape(6).tolist()


def test_weights_elided_and_wrong_inputs_are_input_errors(tmp_path):
    module = nn.Linear(4, 8)  # 32 weights: a resource blob (the importer inlines up to 16)
    script = torch.jit.trace(module, (torch.zeros(1, 4),))
    builder = ModuleBuilder()
    builder.import_module(script._c, forward_annotator(script, [torch.zeros(1, 4)]))
    elided = write_module(builder.module, tmp_path / "elided.mlir", WriteOptions(keep_weights=False))
    kept = write_module(builder.module, tmp_path / "kept.mlir", WriteOptions(keep_weights=True))
    x = np.ones((1, 4), np.float32)
    with pytest.raises(ElidedWeightsError, match=r"dense_resource<weight> has no data"):
        evaluate_file(elided, [x])
    torch.testing.assert_close(evaluate_file(kept, [x]).outputs[0], module(torch.from_numpy(x)))
    with pytest.raises(InputsError, match="2 values for the 1 arguments"):
        evaluate_file(kept, [x, x])


def test_entry_signature_of_raw_torchscript_skips_self(tmp_path):
    traced = catalog.get("seed-mask-to-bool").build()
    raw = write_ts(traced.script, traced.examples, tmp_path / "raw.mlir")
    from torch_mlir import ir

    from harness.compiler.mlir import new_context

    with new_context():
        signature = entry_signature(ir.Module.parseFile(str(raw)).operation)
    # (TorchScript mangles a class traced twice in one process: ...seed.___torch_mangle_N.MaskToBool)
    assert signature.name.startswith("__torch__.harness.models.seed.")
    assert signature.name.endswith("MaskToBool.forward")
    assert signature.describe().endswith(".forward(f32[2,1,5,5], si64[2,5]) -> ()")


def test_aten_tensor_of_a_list_is_evaluated():
    """``aten::tensor(t[] data, ...)`` has a type variable torch.ops cannot bind a list to; FX's
    boolean-mask assignment makes one (torch-mlir's nonzero decomposition, of the mask's shape),
    so the evaluator writes it out: dtype inferred as torch.tensor does, or the given code."""
    context, module = _parse("""
        func.func @forward(%x: !torch.vtensor<[3],si64>) -> (!torch.vtensor<[3],si64>, !torch.vtensor<[2],f64>) {
          %int1 = torch.constant.int 1
          %int4 = torch.constant.int 4
          %int64 = torch.constant.int 64
          %int7 = torch.constant.int 7
          %none = torch.constant.none
          %false = torch.constant.bool false
          %float = torch.constant.float 2.500000e-01
          %0 = torch.prim.ListConstruct %int1, %int4, %int64 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
          %1 = torch.aten.tensor %0, %none, %none, %false : !torch.list<int>, !torch.none, !torch.none, !torch.bool -> !torch.vtensor<[3],si64>
          %2 = torch.aten.mul.Tensor %1, %x : !torch.vtensor<[3],si64>, !torch.vtensor<[3],si64> -> !torch.vtensor<[3],si64>
          %3 = torch.prim.ListConstruct %float, %float : (!torch.float, !torch.float) -> !torch.list<float>
          %4 = torch.aten.tensor %3, %int7, %none, %false : !torch.list<float>, !torch.int, !torch.none, !torch.bool -> !torch.vtensor<[2],f64>
          return %2, %4 : !torch.vtensor<[3],si64>, !torch.vtensor<[2],f64>
        }""")  # noqa: E501
    with context:
        assert coverage(module.operation).complete
        result = evaluate(module.operation, [np.array([2, 3, 5], np.int64)])
    ints, floats = result.outputs
    assert ints.dtype == torch.int64 and ints.tolist() == [2, 12, 320]
    assert floats.dtype == torch.float64 and floats.tolist() == [0.25, 0.25]
    assert not result.type_notes
