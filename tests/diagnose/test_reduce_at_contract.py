"""Issue 28 item 5, the cost of reducing at the failing pass: a backend-contract failure (the
TorchScript stage's usual one) gets the IR before torch-lower-to-backend-contract from one plain
run that prints it (MLIR's --mlir-print-ir-tree-dir), not from bisect's local reproducer, which
snapshots the module before every pass (longformer: 13.1 s CPU against 4.4 s). Other failures
still go through bisect, which then leaves a diagnosed failure's replay to the candidates."""

from __future__ import annotations

from harness.compiler import pipelines
from harness.compiler.runner import RunOptions, run_pipeline
from harness.diagnose.bisect import Replay, bisect
from harness.diagnose.reduce import AtFailingPass, ReduceOptions, _at_contract, reduce_file

TS = "torchscript-to-torch"


def _object_graph(last: str) -> str:
    """A TorchScript object graph whose forward feeds six elementwise ops into ``last`` (an op
    line that defines %f from %5)."""
    lines = ['torch.class_type @__torch__.M {', '  torch.attr private "training" : !torch.bool',
             '  torch.method "forward", @__torch__.M.forward', '}',
             'func.func private @__torch__.M.forward(%self: !torch.nn.Module<"__torch__.M">, '
             '%x: !torch.tensor '
             '{torch.type_bound = !torch.vtensor<[2,8],f32>}) -> !torch.tensor {',
             '  %t = torch.tensor_static_info_cast %x : !torch.tensor to !torch.tensor<[2,8],f32>']
    prev = "%t"
    for i, op in enumerate(["relu", "tanh", "sigmoid"] * 2):
        lines.append(f"  %{i} = torch.aten.{op} {prev} "
                     ": !torch.tensor<[2,8],f32> -> !torch.tensor<[2,8],f32>")
        prev = f"%{i}"
    lines += [last, '  return %f : !torch.tensor', '}', '%false = torch.constant.bool false',
              '%root = torch.nn_module {', '  torch.slot "training", %false : !torch.bool',
              '} : !torch.nn.Module<"__torch__.M">']
    return "\n".join(lines) + "\n"


# aten.xlogy.Tensor has no shape function: its result stays unranked; the contract rejects it.
CONTRACT = _object_graph("  %f = torch.aten.xlogy.Tensor %5, %5 : !torch.tensor<[2,8],f32>, "
                         "!torch.tensor<[2,8],f32> -> !torch.tensor")
# aten.fft_fftn is not registered: torch-reduce-op-variants fails, before the contract.
EARLIER = _object_graph('  %none = torch.constant.none\n  %f = torch.operator "aten.fft_fftn"(%5, %none, '
                        '%none, %none) : (!torch.tensor<[2,8],f32>, !torch.none, !torch.none, !torch.none) '
                        '-> !torch.tensor')


def test_a_contract_failure_reduces_from_one_plain_run(tmp_path):
    src = tmp_path / "og.mlir"
    src.write_text(CONTRACT)
    work = tmp_path / "work"
    work.mkdir()
    found = _at_contract(src, pipelines.default().resolve(TS), ReduceOptions(), work)
    assert found is not None and found.replay is None
    assert found.failing_pass_pipeline.startswith("builtin.module(torch-lower-to-backend-contract{")
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, TS, options=ReduceOptions(
        output_path=out, budget_s=60, at_failing_pass=AtFailingPass.OBJECT_GRAPH))
    assert result.failing_pass == "torch-lower-to-backend-contract"
    assert result.signature == ("pass-failure: unsupported by backend contract: tensor with "
                                "unknown rank: 'torch.aten.xlogy.Tensor'")
    text = out.read_text()
    assert "torch.aten.xlogy.Tensor" in text and "torch.aten.relu" not in text
    assert "torch.nn_module" not in text and result.ops_after <= 8, text
    again = run_pipeline(out, result.pipeline_text, options=RunOptions(disable_threading=True))
    assert str(again.signature) == result.signature


def test_another_failure_is_left_to_bisect(tmp_path):
    """fft_fftn fails in torch-reduce-op-variants, before the contract: no dump, no contract
    error, so bisect finds the pass; with Replay.CRASHES it does not replay a diagnosed failure."""
    src = tmp_path / "og.mlir"
    src.write_text(EARLIER)
    work = tmp_path / "work"
    work.mkdir()
    textual = pipelines.default().resolve(TS)
    assert _at_contract(src, textual, ReduceOptions(), work) is None
    skipped = bisect(src, textual, out_dir=tmp_path, blockers=False, replay=Replay.CRASHES)
    assert skipped.failing_pass == "torch-reduce-op-variants" and skipped.pre_pass_ir
    assert skipped.replay is None and "not replayed" in skipped.detail
    full = bisect(src, textual, out_dir=tmp_path, blockers=False)
    assert full.replay is not None and full.reproduced
