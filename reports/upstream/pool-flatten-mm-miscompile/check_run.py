"""Runs the pass-pipeline string argv[2] on the file argv[1] through MLIR's Python bindings, then
its @main on the bindings' ExecutionEngine, with printMemrefF32 and memrefCopy supplied from Python
(what -shared-libs=libmlir_runner_utils.so,libmlir_c_runner_utils.so give mlir-runner). run.mlir's
inputs make every output 36: exit 0 when it is, 1 when it is not."""
import ctypes
import sys
from pathlib import Path

import numpy as np
from torch_mlir import ir, passmanager
from torch_mlir.execution_engine import ExecutionEngine

I64P = ctypes.POINTER(ctypes.c_int64)
printed: list[np.ndarray] = []


def ranked(desc: int, rank: int) -> tuple[int, list[int]]:
    """The aligned pointer (at its offset, in elements) and the sizes of a ranked descriptor:
    allocated, aligned, offset, sizes[rank], strides[rank]."""
    words = ctypes.cast(desc, I64P)
    return words[1], [words[2]] + [words[3 + i] for i in range(rank)]


def print_memref(rank: int, desc: int) -> None:
    aligned, (offset, *sizes) = ranked(desc, rank)
    count = int(np.prod(sizes))
    floats = ctypes.cast(aligned, ctypes.POINTER(ctypes.c_float))
    data = np.ctypeslib.as_array(floats, shape=(offset + count,))
    printed.append(data[offset:].reshape(sizes).copy())
    print("printMemrefF32: sizes", sizes, "data", printed[-1].tolist(), flush=True)


def memref_copy(elem_size: int, src: int, dst: int) -> None:
    """memrefCopy(elemSize, UnrankedMemRef *src, UnrankedMemRef *dst), identity layouts only."""
    def span(unranked: int) -> tuple[int, int]:
        rank = ctypes.cast(unranked, I64P)[0]
        desc = ctypes.cast(unranked, ctypes.POINTER(ctypes.c_void_p))[1]
        aligned, (offset, *sizes) = ranked(desc, rank)
        return aligned + offset * elem_size, int(np.prod(sizes)) * elem_size
    (source, nbytes), (target, _) = span(src), span(dst)
    ctypes.memmove(target, source, nbytes)


print_cb = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(print_memref)
copy_cb = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)(memref_copy)
with ir.Context():
    module = ir.Module.parse(Path(sys.argv[1]).read_text())
    passmanager.PassManager.parse(sys.argv[2]).run(module.operation)
    engine = ExecutionEngine(module, opt_level=0)
    engine.raw_register_runtime("printMemrefF32", ctypes.cast(print_cb, ctypes.c_void_p))
    engine.raw_register_runtime("memrefCopy", ctypes.cast(copy_cb, ctypes.c_void_p))
    engine.invoke("main")
right = bool(printed) and bool(np.allclose(printed[-1], 36.0))
print("right: every value is 36" if right else "WRONG: every value should be 36")
sys.exit(0 if right else 1)
