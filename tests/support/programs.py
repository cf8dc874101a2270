"""Small torch-dialect programs that tests of more than one package run."""

from __future__ import annotations

from pathlib import Path

# Two outputs: a float one (sigmoid, masked_fill) and an integer one (a sum of a bool mask).
SMALL = """
func.func @forward(%x: !torch.vtensor<[2,3],f32>, %m: !torch.vtensor<[2,3],i1>) -> (!torch.vtensor<[2,3],f32>, !torch.vtensor<[],si64>) {
  %float0 = torch.constant.float 0.000000e+00
  %none = torch.constant.none
  %0 = torch.aten.sigmoid %x : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.masked_fill.Scalar %0, %m, %float0 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],i1>, !torch.float -> !torch.vtensor<[2,3],f32>
  %2 = torch.aten.sum %m, %none : !torch.vtensor<[2,3],i1>, !torch.none -> !torch.vtensor<[],si64>
  return %1, %2 : !torch.vtensor<[2,3],f32>, !torch.vtensor<[],si64>
}
"""

# Twelve computing ops at the torch backend contract; the sixth (aten.sin, line 9) is the one a
# wrong evaluator gets wrong.
CHAIN = """\
func.func @forward(%x: !torch.vtensor<[4,5],f32>, %w: !torch.vtensor<[4,5],f32>) -> !torch.vtensor<[4,5],f32> {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %0 = torch.aten.tanh %x : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %1 = torch.aten.mul.Tensor %0, %w : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %2 = torch.aten.add.Tensor %1, %x, %int1 : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32>, !torch.int -> !torch.vtensor<[4,5],f32>
  %3 = torch.aten.sigmoid %2 : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %4 = torch.aten.mul.Scalar %3, %float2 : !torch.vtensor<[4,5],f32>, !torch.float -> !torch.vtensor<[4,5],f32>
  %5 = torch.aten.sin %4 : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %6 = torch.aten.mul.Tensor %5, %3 : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %7 = torch.aten.relu %6 : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %8 = torch.aten.add.Tensor %7, %2, %int1 : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32>, !torch.int -> !torch.vtensor<[4,5],f32>
  %9 = torch.aten.tanh %8 : !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %10 = torch.aten.mul.Tensor %9, %9 : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32> -> !torch.vtensor<[4,5],f32>
  %11 = torch.aten.add.Tensor %10, %w, %int1 : !torch.vtensor<[4,5],f32>, !torch.vtensor<[4,5],f32>, !torch.int -> !torch.vtensor<[4,5],f32>
  return %11 : !torch.vtensor<[4,5],f32>
}
"""


# A flatten of two dynamic dims: torch-to-linalg casts the view's input to ?x1x4
# (lit_tests/pass/view-flatten-two-dynamic-dims-wrong-collapse.mlir), which MLIR's runtime op
# verification rejects where dim 1 is not 1.
FLATTEN = """
func.func @forward(%arg0: !torch.vtensor<[?,?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[?,?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
  return %1 : !torch.vtensor<[?,4],f32>
}
"""


# x[mask] = 0 on FX with a mask that selects nothing: torch-mlir's nonzero decomposition gives
# index_put.hacked_twin three empty index tensors (the wav2vec2 crash of issue 45, reduced).
EMPTY_INDEX_PUT = """
func.func @forward(%x: !torch.vtensor<[1,4,8],f32>, %i0: !torch.vtensor<[?],si64>, %i1: !torch.vtensor<[?],si64>, %i2: !torch.vtensor<[?],si64>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,8],f32> {
  %false = torch.constant.bool false
  %0 = torch.prim.ListConstruct %i0, %i1, %i2 : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.list<vtensor>
  %1 = torch.aten.index_put.hacked_twin %x, %0, %v, %false : !torch.vtensor<[1,4,8],f32>, !torch.list<vtensor>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[1,4,8],f32>
  return %1 : !torch.vtensor<[1,4,8],f32>
}
"""


def softsign_onnx(path: Path, opset: int) -> Path:
    """An ONNX file of one Softsign node named ``ss`` (an op with no TorchOnnxToTorch pattern in
    the wheel), float32[2, 4] in and out, at ``opset``."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    graph = helper.make_graph([helper.make_node("Softsign", ["x"], ["y"], name="ss")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)
    return path
