"""An LLVM-dialect module of the RefBackend on the wheel's ExecutionEngine, in this process.

The calling convention is the one ``refback-munge-calling-conventions`` makes: a public function
takes each tensor as a pointer to an unranked memref descriptor and returns nothing; its results
go to ``refbackend_consume_func_return_<TOKENS>``, an external function the caller registers,
where TOKENS name the result types (``mrf32`` a memref of f32, ``i64`` a scalar; see
lib/RefBackend/RefBackend.cpp, ``getTypeToken``). Descriptors are built and read here rather than
with ``torch_mlir.runtime``: that module's descriptors do not keep their array alive, and it
cannot read 0-d results.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

import numpy as np

from harness.errors import InputsError, UnsupportedDTypeError

from .dtypes import DType, TensorSignature, TensorSpec
from .flat_globals import flatten_constant_globals

if TYPE_CHECKING:
    from torch_mlir import ir
    from torch_mlir.execution_engine import ExecutionEngine

CONSUME_PREFIX = "refbackend_consume_func_return"
CIFACE_PREFIX = "_mlir_ciface_"

# Tokens of getTypeToken: an element type, "mr" + element type for a memref.
TOKEN_TO_DTYPE = {
    "i1": DType.BOOL, "i8": DType.INT8, "i16": DType.INT16, "i32": DType.INT32, "i64": DType.INT64,
    "f16": DType.FLOAT16, "f32": DType.FLOAT32, "f64": DType.FLOAT64,
    "c32": DType.COMPLEX64, "c64": DType.COMPLEX128,
}
DTYPE_TO_CTYPE: dict[DType, type[ctypes._CData]] = {
    DType.BOOL: ctypes.c_bool, DType.UINT8: ctypes.c_uint8, DType.INT8: ctypes.c_int8,
    DType.INT16: ctypes.c_int16, DType.INT32: ctypes.c_int32, DType.INT64: ctypes.c_int64,
    DType.FLOAT16: ctypes.c_uint16, DType.FLOAT32: ctypes.c_float, DType.FLOAT64: ctypes.c_double,
}
# Element types the munge pass accepts for arguments (isArgMemRefTypeValid): no bf16, no ui8
# beyond its signless i8 form.
ARGUMENT_DTYPES = frozenset({DType.BOOL, DType.UINT8, DType.INT8, DType.INT16, DType.INT32,
                             DType.INT64, DType.FLOAT16, DType.FLOAT32, DType.FLOAT64,
                             DType.COMPLEX64, DType.COMPLEX128})


class UnrankedMemRef(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


@dataclass(frozen=True)
class ResultToken:
    dtype: DType
    memref: bool


def parse_consume_name(name: str) -> tuple[ResultToken, ...] | None:
    """The result tokens of a consume function's name; None for any other name."""
    if not name.startswith(CONSUME_PREFIX):
        return None
    rest = name[len(CONSUME_PREFIX):]
    if rest and not rest.startswith("_"):
        return None
    tokens = []
    for raw in filter(None, rest.split("_")):
        memref = raw.startswith("mr")
        dtype = TOKEN_TO_DTYPE.get(raw[2:] if memref else raw)
        if dtype is None:
            return None
        tokens.append(ResultToken(dtype, memref))
    return tuple(tokens)


class _Arguments:
    """Descriptors for the arrays of one call, kept alive with the arrays they point into."""

    def __init__(self, arrays: Sequence[np.ndarray]):
        # np.require keeps a 0-d array 0-d (ascontiguousarray makes it [1]: a rank-1 descriptor
        # for a rank-0 argument, which MLIR's runtime checks reject as a rank mismatch).
        self.arrays = [np.require(a, requirements="C") for a in arrays]
        self.keep: list = []
        self.pointers = []
        for array in self.arrays:
            rank = array.ndim
            address = array.ctypes.data
            strides = _row_major_strides(array.shape)
            ranked = (ctypes.c_int64 * (3 + 2 * rank))(address, address, 0, *array.shape, *strides)
            unranked = UnrankedMemRef(rank, ctypes.addressof(ranked))
            pointer = ctypes.pointer(unranked)
            self.keep += [ranked, unranked, pointer]
            self.pointers.append(ctypes.pointer(pointer))


def _row_major_strides(shape: Sequence[int]) -> list[int]:
    """The strides, in elements, of a row-major array of ``shape``: what the lowered code's
    identity layout declares. numpy's own may differ where a dimension is 0 or 1 (any stride is
    as good there), and MLIR's runtime checks compare them with the layout's (an empty index
    tensor's stride 0 for 1 is a "stride mismatch" before the code runs)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def read_memref(unranked: UnrankedMemRef, dtype: np.dtype) -> np.ndarray:
    """A copy of the memref an unranked descriptor points to (any rank, 0-d included)."""
    rank = unranked.rank
    header = (ctypes.c_int64 * (3 + 2 * rank)).from_address(unranked.descriptor)
    aligned, offset = header[1] & 0xFFFFFFFFFFFFFFFF, header[2]
    shape = tuple(header[3:3 + rank])
    strides = tuple(header[3 + rank:3 + 2 * rank])
    if 0 in shape:
        return np.empty(shape, dtype)
    itemsize = dtype.itemsize
    low = sum((n - 1) * s for n, s in zip(shape, strides, strict=False) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides, strict=False) if s > 0)
    span = high - low + 1
    base = aligned + (offset + low) * itemsize
    flat = np.frombuffer((ctypes.c_char * (span * itemsize)).from_address(base), dtype=dtype, count=span)
    view = np.lib.stride_tricks.as_strided(flat[-low:], shape, [s * itemsize for s in strides])
    return np.array(view, copy=True)


def _scalar_value(value: bool | int | float, dtype: DType) -> np.ndarray:
    if dtype is DType.FLOAT16:
        return np.array(value, np.uint16).view(np.float16)
    return np.array(value, dtype.numpy)


@dataclass
class Timings:
    parse_s: float = 0.0
    jit_s: float = 0.0
    run_s: float = 0.0


@dataclass
class JitModule:
    """A parsed and JIT-compiled LLVM-dialect module of the RefBackend."""

    engine: ExecutionEngine
    functions: tuple[str, ...]               # the public entry points
    consumers: dict[str, tuple[ResultToken, ...]]
    timings: Timings = field(default_factory=Timings)
    _callbacks: list = field(default_factory=list)
    _results: list = field(default_factory=list)

    @classmethod
    def load(cls, llvm_text: str | bytes, *, opt_level: int = 0) -> JitModule:
        from torch_mlir import ir

        from harness.compiler.mlir import new_context

        start = time.perf_counter()
        text = llvm_text.encode() if isinstance(llvm_text, str) else llvm_text
        text, _ = flatten_constant_globals(text)
        context = new_context()
        with context:
            module = ir.Module.parse(text)
        jit = cls.from_module(module, opt_level=opt_level)
        jit.timings.parse_s = time.perf_counter() - start - jit.timings.jit_s
        return jit

    @classmethod
    def from_module(cls, module: ir.Module, *, opt_level: int = 0) -> JitModule:
        """JIT-compiles an LLVM-dialect ``ir.Module`` already in memory (the RefBackend worker's
        lowered module: no print and parse in between)."""
        from torch_mlir import ir
        from torch_mlir.execution_engine import ExecutionEngine

        start = time.perf_counter()
        with module.context:
            names = [ir.StringAttr(op.attributes["sym_name"]).value
                     for op in module.body.operations
                     if op.operation.name == "llvm.func" and "sym_name" in op.attributes]
            engine = ExecutionEngine(module, opt_level=opt_level)
        consumers = {}
        for name in names:
            tokens = parse_consume_name(name)
            if tokens is not None:
                consumers[name] = tokens
        functions = tuple(n[len(CIFACE_PREFIX):] for n in names
                          if n.startswith(CIFACE_PREFIX) and n[len(CIFACE_PREFIX):] not in consumers)
        jit = cls(engine, functions, consumers)
        for name, tokens in consumers.items():
            jit._register(name, tokens)
        jit.timings.jit_s = time.perf_counter() - start
        return jit

    def _register(self, name: str, tokens: tuple[ResultToken, ...]) -> None:
        unsupported = [t.dtype.value for t in tokens if not t.memref and t.dtype not in DTYPE_TO_CTYPE]
        if unsupported:
            raise UnsupportedDTypeError(unsupported[0], f"a scalar result ({name})",
                                        "tensors of any element type; scalars of bool, int, float")
        argtypes: list[type[ctypes._CData]] = [
            ctypes.POINTER(UnrankedMemRef) if t.memref else DTYPE_TO_CTYPE[t.dtype]
            for t in tokens]

        def consume(*args: Any) -> None:
            self._results.append(tuple(
                read_memref(arg.contents, t.dtype.numpy) if t.memref else _scalar_value(arg, t.dtype)
                for arg, t in zip(args, tokens, strict=False)))

        callback = ctypes.CFUNCTYPE(None, *argtypes)(consume)
        self._callbacks.append(callback)  # the engine holds a raw pointer to it
        self.engine.register_runtime(name, callback)

    def resolve(self, function: str | None) -> str:
        """``function`` when the module has it, else its only public function: a raw TorchScript
        method (``@__torch__.M.forward``) is ``@forward`` once lowered."""
        if function in self.functions:
            return function
        if len(self.functions) == 1:
            return self.functions[0]
        raise InputsError("the lowered module", f"it has no public function @{function} and "
                          f"{len(self.functions)} others "
                          f"({', '.join('@' + f for f in self.functions) or 'none'}); name one")

    def invoke(self, function: str | None, inputs: Sequence[np.ndarray],
               signature: TensorSignature | None = None) -> tuple[np.ndarray, ...]:
        """Runs ``function`` on ``inputs``; results as numpy arrays of the signature's dtypes."""
        function = self.resolve(function)
        if signature is not None:
            check_inputs(inputs, signature.args, "the inputs")
        start = time.perf_counter()
        self.engine.lookup(function)  # materializes the code, so run_s is the call alone
        self.timings.jit_s += time.perf_counter() - start
        arguments = _Arguments(inputs)
        self._results.clear()
        start = time.perf_counter()
        self.engine.invoke(function, *arguments.pointers)
        self.timings.run_s = time.perf_counter() - start
        if len(self._results) != 1:
            raise InputsError("the lowered module", f"@{function} returned {len(self._results)} "
                              "times through the consume callbacks, expected once")
        results = self._results.pop()
        if signature is not None and len(signature.results) == len(results):
            results = tuple(_as_result(r, spec) for r, spec in zip(results, signature.results, strict=False))
        return results


def _as_result(array: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """ui8 comes back as signless i8: reinterpret it as the signature says."""
    if spec.dtype is DType.UINT8 and array.dtype == np.int8:
        return array.view(np.uint8)
    return array


def check_inputs(inputs: Sequence[np.ndarray], specs: Sequence[TensorSpec], source: str) -> None:
    """Count, dtype and static dimensions of ``inputs`` against ``specs`` (an InputsError names
    the first that differs): the JIT code reads whatever memory it is given."""
    described = ", ".join(s.describe() for s in specs)
    if len(inputs) != len(specs):
        raise InputsError(source, f"{len(inputs)} arrays for {len(specs)} arguments", described)
    for i, (array, spec) in enumerate(zip(inputs, specs, strict=False)):
        if spec.dtype not in ARGUMENT_DTYPES:
            raise InputsError(source, f"argument {i} is {spec.dtype.value}, which the RefBackend's "
                              "calling convention does not take", described)
        got = DType.of(array)
        if got is not spec.dtype:
            raise InputsError(source, f"argument {i} is {got.value}, expected {spec.dtype.value}",
                              described)
        if len(array.shape) != len(spec.shape) or any(
                d is not None and d != n for d, n in zip(spec.shape, array.shape, strict=False)):
            raise InputsError(source, f"argument {i} has shape {list(array.shape)}, expected "
                              f"{spec.describe()}", described)
