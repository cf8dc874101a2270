"""Failures inside the TorchScript stage reduce from the IR just before the failing pass, through
that pass alone, and the subject op with its operands is tried as one slice."""

from __future__ import annotations

from harness.compiler import pipelines
from harness.compiler.runner import RunOptions, run_pipeline
from harness.diagnose.reduce import AtFailingPass, ReduceOptions, reduce_file


def _object_graph() -> str:
    """A TorchScript object graph whose forward feeds ten elementwise ops into aten.fft_fftn,
    which torch-mlir does not register: torch-reduce-op-variants fails to legalize it."""
    lines = ['torch.class_type @__torch__.M {', '  torch.attr private "training" : !torch.bool',
             '  torch.method "forward", @__torch__.M.forward', '}',
             'func.func private @__torch__.M.forward(%self: !torch.nn.Module<"__torch__.M">, '
             '%x: !torch.tensor '
             '{torch.type_bound = !torch.vtensor<[2,8],f32>}) -> !torch.tensor {',
             '  %t = torch.tensor_static_info_cast %x : !torch.tensor to !torch.tensor<[2,8],f32>']
    prev = "%t"
    for i, op in enumerate(["relu", "tanh", "sigmoid", "neg", "exp"] * 2):
        lines.append(f"  %{i} = torch.aten.{op} {prev} "
                     ": !torch.tensor<[2,8],f32> -> !torch.tensor<[2,8],f32>")
        prev = f"%{i}"
    lines += ['  %none = torch.constant.none', '  %int0 = torch.constant.int 0',
              '  %int1 = torch.constant.int 1',
              '  %dims = torch.prim.ListConstruct %int0, %int1 '
              ': (!torch.int, !torch.int) -> !torch.list<int>',
              f'  %f = torch.operator "aten.fft_fftn"({prev}, %none, %dims, %none) '
              ': (!torch.tensor<[2,8],f32>, '
              '!torch.none, !torch.list<int>, !torch.none) -> !torch.tensor<[2,8],complex<f32>>',
              '  %r = torch.tensor_static_info_cast %f : !torch.tensor<[2,8],complex<f32>> to !torch.tensor',
              '  return %r : !torch.tensor', '}', '%false = torch.constant.bool false',
              '%root = torch.nn_module {', '  torch.slot "training", %false : !torch.bool',
              '} : !torch.nn.Module<"__torch__.M">']
    return "\n".join(lines) + "\n"


def test_object_graph_reduces_at_the_failing_pass(tmp_path):
    src = tmp_path / "og.mlir"
    src.write_text(_object_graph())
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, "torchscript-to-torch", options=ReduceOptions(
        output_path=out, budget_s=60, at_failing_pass=AtFailingPass.OBJECT_GRAPH))
    assert result.failing_pass == "torch-reduce-op-variants"
    assert result.pipeline_text == "builtin.module(func.func(torch-reduce-op-variants{extra-library=}))"
    assert result.ops_before == 27 and result.pre_pass_ops == 21
    text = out.read_text()
    assert 'torch.operator "aten.fft_fftn"' in text
    assert "torch.nn_module" not in text and "torch.aten.relu" not in text
    assert result.ops_after <= 8, text
    # The file fails the one pass as the input failed the whole pipeline.
    again = run_pipeline(out, result.pipeline_text, options=RunOptions(disable_threading=True))
    assert str(again.signature) == result.signature == \
        "legalization-failure: failed to legalize operation 'torch.operator \"aten.fft_fftn\"'"


def test_never_keeps_the_pipeline_and_the_object_graph(tmp_path):
    src = tmp_path / "og.mlir"
    src.write_text(_object_graph())
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, "torchscript-to-torch", options=ReduceOptions(output_path=out, budget_s=60))
    assert result.failing_pass == ""
    assert result.pipeline_text == pipelines.default().resolve("torchscript-to-torch")
    assert "torch.nn_module" in out.read_text()
