"""Weights as flat arrays before the JIT (harness/execute/flat_globals.py): a multi-dimensional
constant global becomes one flat array of the same blob, and the lowered module computes the
same numbers, for real through the RefBackend's lowering and the ExecutionEngine."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.execute.flat_globals import flatten_constant_globals
from harness.execute.jit import JitModule
from harness.execute.refbackend import lower_to_llvm

WEIGHTS = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8

LINALG = """
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %w = arith.constant dense_resource<weights> : tensor<2x3x4xf32>
  %init = tensor.empty() : tensor<2x3x4xf32>
  %sum = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%arg0, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x3x4xf32>
  return %sum : tensor<2x3x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000HEX"
    }
  }
#-}
"""


def test_a_nested_weight_global_becomes_flat_and_computes_the_same(tmp_path: Path) -> None:
    linalg = tmp_path / "m.linalg.mlir"
    linalg.write_text(LINALG.replace("HEX", WEIGHTS.tobytes().hex().upper()))
    llvm = tmp_path / "m.llvm.mlir"
    assert lower_to_llvm(linalg, llvm).ok
    text = llvm.read_bytes()
    assert b"!llvm.array<2 x array<3 x array<4 x f32>>>" in text  # what the lowering makes
    flat, count = flatten_constant_globals(text)
    assert count == 1
    assert b"(dense_resource<weights> : tensor<24xf32>)" in flat
    assert b"!llvm.array<24 x f32>" in flat and b"array<3 x array<4 x f32>>" not in flat.split(
        b"llvm.mlir.global")[-1].split(b"\n")[0]
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    [got] = JitModule.load(text).invoke("forward", [x], None)  # load flattens
    np.testing.assert_array_equal(got, x + WEIGHTS)


def test_flat_and_one_dimensional_globals_stay_as_they_are() -> None:
    line = (b'  llvm.mlir.global private constant @c(dense_resource<k> : tensor<64xf32>) '
            b'{addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<64 x f32>\n')
    assert flatten_constant_globals(line) == (line, 0)
    nested = (b'  llvm.mlir.global private constant @c(dense_resource<k> : tensor<2x5xi64>) '
              b'{addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x array<5 x i64>>\n')
    flat, count = flatten_constant_globals(nested + b"{-#\n  dialect_resources: {}\n#-}\n")
    assert count == 1 and flat.startswith(
        b'  llvm.mlir.global private constant @c(dense_resource<k> : tensor<10xi64>) '
        b'{addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<10 x i64>\n{-#')


#: A weight as the ONNX path brings it: torch-mlir's onnx.Constant pattern makes the importer's
#: dense_resource an inline DenseElementsAttr, which the lowering prints as hex when large.
BIG = np.arange(4 * 8 * 16, dtype=np.float32).reshape(4, 8, 16) / 64


def test_an_inline_hex_weight_global_becomes_flat_and_computes_the_same(tmp_path: Path) -> None:
    linalg = tmp_path / "m.linalg.mlir"
    source = LINALG.split("{-#")[0].replace("2x3x4", "4x8x16")
    linalg.write_text(source.replace("dense_resource<weights>",
                                     f'dense<"0x{BIG.tobytes().hex().upper()}">'))
    llvm = tmp_path / "m.llvm.mlir"
    assert lower_to_llvm(linalg, llvm).ok
    text = llvm.read_bytes()
    [line] = [x for x in text.splitlines() if b"llvm.mlir.global" in x and b"4x8x16" in x]
    assert b'(dense<"0x' in line and line.endswith(b"!llvm.array<4 x array<8 x array<16 x f32>>>")
    flat, count = flatten_constant_globals(text)
    assert count == 1
    [line] = [x for x in flat.splitlines() if b"@__constant_4x8x16xf32(" in x]
    assert line.endswith(b" : tensor<512xf32>) {addr_space = 0 : i32, alignment = 64 : i64} "
                         b": !llvm.array<512 x f32>")
    assert BIG.tobytes().hex().upper().encode() in line  # the same bytes
    x = np.random.default_rng(0).standard_normal((4, 8, 16)).astype(np.float32)
    [got] = JitModule.load(text).invoke("forward", [x], None)  # load flattens
    np.testing.assert_array_equal(got, x + BIG)


def test_globals_of_other_values_stay_as_they_are() -> None:
    def line(value: bytes) -> bytes:
        return (b"  llvm.mlir.global private constant @c(" + value + b" : tensor<2x2xf32>) "
                b"{addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x array<2 x f32>>\n")

    for value in (b"dense<[[1.0, 2.0], [3.0, 4.0]]>", b"dense<0.000000e+00>"):
        assert flatten_constant_globals(line(value)) == (line(value), 0)
    hexed = line(b'dense<"0x0000803F000000400000404000008040">')
    assert flatten_constant_globals(hexed + hexed) == (
        2 * (b'  llvm.mlir.global private constant @c(dense<"0x0000803F000000400000404000008040"> '
             b": tensor<4xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>\n"), 2)
