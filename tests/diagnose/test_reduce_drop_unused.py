"""edits.drop_unused: what nothing uses goes without a run (the numerics reducer's piece kept
an unused int constant and argument when its budget ran out)."""

from __future__ import annotations

from harness.compiler.mlir import parse_ir, print_op
from harness.diagnose.reduce import edits

# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
PIECE = """
func.func @forward(%arg0: !torch.vtensor<[1,4,2,2],f32>, %arg1: !torch.vtensor<[2,4],f32>, %arg2: !torch.vtensor<[4,2],f32>) -> !torch.vtensor<[1,2],f32> {
  %int-1 = torch.constant.int -1
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %unused = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %0 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.adaptive_avg_pool2d %arg0, %0 : !torch.vtensor<[1,4,2,2],f32>, !torch.list<int> -> !torch.vtensor<[1,4,1,1],f32>
  %2 = torch.prim.ListConstruct %int1, %int-1 : (!torch.int, !torch.int) -> !torch.list<int>
  %3 = torch.aten.view %1, %2 : !torch.vtensor<[1,4,1,1],f32>, !torch.list<int> -> !torch.vtensor<[1,4],f32>
  %4 = torch.aten.mm %3, %arg2 : !torch.vtensor<[1,4],f32>, !torch.vtensor<[4,2],f32> -> !torch.vtensor<[1,2],f32>
  return %4 : !torch.vtensor<[1,2],f32>
}
"""  # noqa: E501


def test_unused_constants_lists_and_arguments_go():
    context, module = parse_ir(PIECE)
    with context:
        func = edits.find_function(module, "forward")
        edits.set_arg_source(func, 2, "in2")
        assert edits.drop_unused(func)
        text = print_op(module)
        assert "%int0" not in text and "%unused" not in text
        assert [str(a.type) for a in edits.entry_block(func).arguments] == [
            "!torch.vtensor<[1,4,2,2],f32>", "!torch.vtensor<[4,2],f32>"]
        assert 'harness.arg_source = "in2"' in text  # the kept argument keeps its source
        assert text.count("torch.constant.int") == 2
        assert not edits.drop_unused(func)
