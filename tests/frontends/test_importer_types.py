"""harness.frontends.torchscript.typemap and annotations: TorchScript types as torch-dialect types.

Expected spellings are the torch dialect's type syntax (``!torch.tensor<[2,3],f32>``,
``!torch.optional<int>``, ...) written out here, and the JIT's own dtype encoding read from
the JIT, never from the importer's tables.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Dict, List, Optional, Tuple, Union

import pytest
import torch
from torch import nn
from torch_mlir import ir

from harness.errors import AnnotationError
from harness.frontends.torchscript import (
    ClassAnnotator,
    ImportOptions,
    ModuleBuilder,
    new_context,
)
from harness.frontends.torchscript.builder import _ImportSession
from harness.frontends.torchscript.nodes import emit_constant
from harness.frontends.torchscript.typemap import (
    TORCH_DTYPE_TO_INT,
    TORCH_DTYPE_TO_MLIR_TYPE_ASM,
)


def traced(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(fn, args, check_trace=False)


def imported_function(fn, options: ImportOptions | None = None) -> str:
    mb = ModuleBuilder()
    mb.import_function(fn, options)
    mb.verify()
    return str(mb.module)


def imported_module(script_module, annotator: ClassAnnotator | None = None,
                    options: ImportOptions | None = None) -> str:
    mb = ModuleBuilder()
    mb.import_module(script_module._c, annotator, options)
    mb.verify()
    return str(mb.module)


# --- tensor types ---------------------------------------------------------------------------


def test_traced_values_carry_shape_and_dtype():
    fn = traced(lambda x, i: (x * 2, i + 1), torch.ones(2, 3), torch.ones(4, dtype=torch.int64))
    text = imported_function(fn)
    # Arguments keep the erased type of the signature and are cast to what the trace saw.
    assert "tensor_static_info_cast %arg0 : !torch.tensor to !torch.tensor<[2,3],f32>" in text
    assert "tensor_static_info_cast %arg1 : !torch.tensor to !torch.tensor<[4],si64>" in text
    # The tracer records the Python scalars as 0-d tensor constants.
    assert "torch.tensor.literal(dense<2> : tensor<si64>) : !torch.tensor<[],si64>" in text
    assert re.search(r"torch\.aten\.mul\.Tensor %0, %\d+ : "
                     r"!torch\.tensor<\[2,3\],f32>, !torch\.tensor<\[\],si64> "
                     r"-> !torch\.tensor<\[2,3\],f32>", text)
    assert re.search(r"torch\.aten\.add\.Tensor %1, %\d+, %int1 : !torch\.tensor<\[4\],si64>, "
                     r"!torch\.tensor<\[\],si64>, !torch\.int -> !torch\.tensor<\[4\],si64>", text)
    # The refined tuple is derefined to the signature's result type.
    assert re.search(r"torch\.derefine %\d+ : !torch\.tuple<tensor<\[2,3\],f32>, tensor<\[4\],si64>> to "
                     r"!torch\.tuple<tensor, tensor>\n\s+return", text)


def test_scripted_values_have_unknown_shape_and_dtype():
    @torch.jit.script
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

    assert "torch.aten.relu %arg0 : !torch.tensor -> !torch.tensor" in imported_function(f)


def test_ignore_existing_tensor_shapes_and_dtypes_erases_traced_types():
    fn = traced(lambda x: torch.relu(x), torch.ones(2, 3))
    text = imported_function(fn, ImportOptions(ignore_existing_tensor_shapes_and_dtypes=True))
    assert "torch.aten.relu %arg0 : !torch.tensor -> !torch.tensor" in text
    assert "<[" not in text and "tensor_static_info_cast" not in text


def test_ignore_existing_shapes_keeps_literal_types_and_casts_them():
    weight = torch.ones(3, 3)
    fn = traced(lambda x: x @ weight, torch.ones(3, 3))
    text = imported_function(fn, ImportOptions(ignore_existing_tensor_shapes_and_dtypes=True))
    assert re.search(r"(%\d+) = torch\.tensor\.literal\(dense<1\.000000e\+00> : tensor<3x3xf32>\) : "
                     r"!torch\.tensor<\[3,3\],f32>\n\s+%\d+ = torch\.tensor_static_info_cast \1 : "
                     r"!torch\.tensor<\[3,3\],f32> to !torch\.tensor\n", text), text


def test_value_semantics_option_gives_vtensors():
    fn = traced(lambda x: torch.relu(x), torch.ones(2, 3))
    text = imported_function(fn, ImportOptions(assume_tensors_have_value_semantics=True))
    assert "torch.aten.relu %0 : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>" in text
    assert "!torch.tensor" not in text


def test_upstream_camel_case_option_names():
    options = ImportOptions()
    options.ignoreExistingTensorShapesAndDtypes = True
    options.assumeTensorsHaveValueSemantics = True
    assert options == ImportOptions(ignore_existing_tensor_shapes_and_dtypes=True,
                                    assume_tensors_have_value_semantics=True)


# Every dtype of the type table with the element type the torch dialect spells for it.
DTYPE_ELEMENT_TYPES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.uint8: "ui8", torch.int8: "si8", torch.int16: "si16", torch.int32: "si32",
    torch.int64: "si64", torch.bool: "i1", torch.complex64: "complex<f32>",
    torch.complex128: "complex<f64>", torch.qint8: "!torch.qint8", torch.quint8: "!torch.quint8",
}
QUANTIZED = {torch.qint8, torch.quint8}


def test_the_dtype_table_is_the_one_tested_here():
    assert TORCH_DTYPE_TO_MLIR_TYPE_ASM == DTYPE_ELEMENT_TYPES


@pytest.mark.parametrize("dtype", list(DTYPE_ELEMENT_TYPES), ids=str)
def test_traced_tensor_dtype(dtype):
    elem = DTYPE_ELEMENT_TYPES[dtype]
    if dtype in QUANTIZED:
        fn = traced(lambda x: torch.quantize_per_tensor(x, 0.1, 0, dtype).dequantize(), torch.ones(2))
        assert f"-> !torch.tensor<[2],{elem}>" in imported_function(fn)
    else:
        fn = traced(lambda x: x.clone(), torch.zeros(2, dtype=dtype))
        assert f"torch.aten.clone %0, %none : !torch.tensor<[2],{elem}>, !torch.none -> " \
               f"!torch.tensor<[2],{elem}>" in imported_function(fn)


class WithBuffer(nn.Module):
    def __init__(self, value: torch.Tensor):
        super().__init__()
        self.register_buffer("b", value)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@pytest.mark.parametrize("dtype", [d for d in DTYPE_ELEMENT_TYPES if d not in QUANTIZED | {torch.bool}],
                         ids=str)
def test_buffer_literal_of_every_dtype_holds_its_bytes(dtype):
    value = (torch.arange(20) % 2).to(dtype).reshape(4, 5)  # over 16 elements: a blob
    text = imported_module(torch.jit.script(WithBuffer(value)))
    elem = DTYPE_ELEMENT_TYPES[dtype]
    assert (f"torch.tensor.literal(dense_resource<b> : tensor<4x5x{elem}>) "
            f": !torch.tensor<[4,5],{elem}>") in text
    blob = re.search(r'\bb: "0x([0-9A-F]+)"', text).group(1)
    assert blob[8:] == value.contiguous().view(torch.uint8).numpy().tobytes().hex().upper()
    # Printed blobs parse back in a fresh context.
    ir.Module.parse(text, new_context())


def test_bool_buffer_is_a_dense_literal_not_a_blob():
    # An i1 blob holds a byte per element, which the ExecutionEngine's memref conversion rejects
    # ("no known conversion for innermost element type"): GPT-Neo's causal mask stopped there.
    value = torch.tensor([[True, False, True], [False, False, True]])
    text = imported_module(torch.jit.script(WithBuffer(value)))
    assert ("torch.tensor.literal(dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>) "
            ": !torch.tensor<[2,3],i1>") in text
    assert "dense_resource" not in text


def test_dtype_int_table_matches_the_jits_scalar_type_encoding():
    for dtype, code in TORCH_DTYPE_TO_INT.items():
        graph = torch._C.Graph()
        assert graph.insertConstant(dtype).node().i("value") == code, dtype
    assert set(TORCH_DTYPE_TO_INT) == set(DTYPE_ELEMENT_TYPES)


def test_dtype_value_becomes_its_scalar_type_int():
    mb = ModuleBuilder()
    session = _ImportSession(mb, ImportOptions())
    with mb.context, ir.Location.unknown(mb.context), ir.InsertionPoint(mb.module.body):
        value = emit_constant(session.env, torch.bfloat16, torch._C.IntType.get(),
                              ir.Location.unknown(mb.context), "dtype", "test")
    assert str(value.owner) == "%int15 = torch.constant.int 15"  # ScalarType::BFloat16


# --- non-tensor types -----------------------------------------------------------------------


# Twelve parameter types, six a function (the pylint limit is 8): argument `index` of the table
# below is parameter `index` of many_types, then `index - 6` of more_types.
@torch.jit.script
def many_types(a: Optional[int], b: Union[int, float], c: List[Tuple[int, str]],
               d: Dict[str, torch.Tensor], e: torch.device, f: Optional[torch.Generator]) -> torch.Tensor:
    return torch.rand([2], generator=f)


@torch.jit.script
def more_types(g: float, h: bool, i: str, j: Any, k: Dict[int, List[float]],
               m: Tuple[torch.Tensor, Optional[float]]) -> torch.Tensor:
    return m[0]


@pytest.mark.parametrize("index, expected", [
    (0, "!torch.optional<int>"),
    (1, "!torch.union<float, int>"),
    (2, "!torch.list<tuple<int, str>>"),
    (3, "!torch.dict<str, tensor>"),
    (4, "!torch.Device"),
    (5, "!torch.optional<Generator>"),
    (6, "!torch.float"),
    (7, "!torch.bool"),
    (8, "!torch.str"),
    (9, "!torch.any"),
    (10, "!torch.dict<int, list<float>>"),
    (11, "!torch.tuple<tensor, optional<float>>"),
], ids=["Optional", "Union", "List", "Dict", "Device", "Generator", "float", "bool", "str", "Any",
        "nested-Dict", "Tuple"])
def test_argument_type(index, expected):
    function, position = (many_types, index) if index < 6 else (more_types, index - 6)
    header = re.search(r"func\.func @[\w.]+\((.*)\) -> ", imported_function(function)).group(1)
    assert header.split(", %")[position].split(": ", 1)[1] == expected


def test_generator_operand_of_an_aten_op():
    text = imported_function(many_types)
    assert re.search(r"\(%\d+, %arg5, %none, %none, %none, %none\) : \(!torch\.list<int>, "
                     r"!torch\.optional<Generator>, !torch\.none,", text), text


def test_number_type():
    @torch.jit.script
    def item(x: torch.Tensor):
        return x.sum().item()

    assert re.search(r"torch\.aten\.item %\d+ : !torch\.tensor -> !torch\.number\n"
                     r"\s+return %\d+ : !torch\.number", imported_function(item))


def test_class_type_of_self_and_of_submodule_values():
    class Leaf(nn.Module):
        def forward(self, x):
            return x

    class Root(nn.Module):
        def __init__(self):
            super().__init__()
            self.leaf = Leaf()

        def forward(self, x):
            return self.leaf(x)

    script = torch.jit.script(Root())
    root, leaf = script._c._type().qualified_name(), script.leaf._c._type().qualified_name()
    text = imported_module(script)
    assert (f'func.func private @{root}.forward(%arg0: !torch.nn.Module<"{root}">, '
            f'%arg1: !torch.tensor)') in text
    assert (f'torch.prim.GetAttr %arg0["leaf"] : !torch.nn.Module<"{root}"> '
            f'-> !torch.nn.Module<"{leaf}">') in text


# --- annotations: argument bounds, exports ---------------------------------------------------


class TwoArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.count = 1

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y * self.w

    @torch.jit.export
    def helper(self, x: torch.Tensor) -> torch.Tensor:
        return x


def forward_header(text: str) -> str:
    return re.search(r"func\.func private @[\w.]+TwoArgs\.forward\((.*)\) -> ", text).group(1)


def test_annotate_args_attaches_type_bounds():
    script = torch.jit.script(TwoArgs())
    annotator = ClassAnnotator()
    annotator.annotateArgs(script._c._type(), ["forward"],
                           [None, ([2, -1], torch.float32, True), ([4], torch.int64, False)])
    header = forward_header(imported_module(script, annotator))
    assert header.startswith('%arg0: !torch.nn.Module<"')
    assert "%arg1: !torch.tensor {torch.type_bound = !torch.vtensor<[2,?],f32>}" in header
    assert "%arg2: !torch.tensor {torch.type_bound = !torch.tensor<[4],si64>}" in header
    assert header.count("torch.type_bound") == 2


def test_annotate_args_none_leaves_an_argument_unbounded():
    script = torch.jit.script(TwoArgs())
    annotator = ClassAnnotator()
    annotator.annotateArgs(script._c._type(), ["forward"], [None, None, (None, torch.float32, True)])
    header = forward_header(imported_module(script, annotator))
    assert "%arg1: !torch.tensor, %arg2: !torch.tensor {torch.type_bound = !torch.vtensor<*,f32>}" in header


def test_without_annotator_everything_is_exported():
    text = imported_module(torch.jit.script(TwoArgs()))
    assert "torch.attr private" not in text and "torch.method private" not in text
    assert 'torch.attr "w" : !torch.tensor' in text
    assert re.search(r'torch\.method "forward", @[\w.]+TwoArgs\.forward\n', text)


def test_export_none_makes_every_member_private():
    script = torch.jit.script(TwoArgs())
    annotator = ClassAnnotator()
    annotator.exportNone(script._c._type())
    text = imported_module(script, annotator)
    for member in ("training", "w", "count"):
        assert f'torch.attr private "{member}"' in text
    assert re.search(r'torch\.method private "forward", @', text)
    assert re.search(r'torch\.method private "helper", @', text)


def test_export_path_reexports_one_method_and_one_attribute():
    script = torch.jit.script(TwoArgs())
    annotator = ClassAnnotator()
    annotator.exportNone(script._c._type())
    annotator.exportPath(script._c._type(), ["forward"])
    annotator.exportPath(script._c._type(), ["count"])
    text = imported_module(script, annotator)
    assert re.search(r'torch\.method "forward", @', text)
    assert re.search(r'torch\.method private "helper", @', text)
    assert 'torch.attr "count" : !torch.int' in text
    assert 'torch.attr private "w" : !torch.tensor' in text


def test_export_path_into_a_submodule():
    class Parent(nn.Module):
        def __init__(self):
            super().__init__()
            self.child = TwoArgs()

        def forward(self, x):
            return self.child(x, x)

    script = torch.jit.script(Parent())
    annotator = ClassAnnotator()
    annotator.exportNone(script._c._type())
    annotator.exportPath(script._c._type(), ["child", "w"])
    text = imported_module(script, annotator)
    child_class = re.search(r"torch\.class_type @[\w.]+TwoArgs \{.*?\n  \}", text, re.S).group(0)
    assert 'torch.attr "w" : !torch.tensor' in child_class
    assert 'torch.attr private "count"' in child_class
    assert 'torch.attr private "child"' in text


def test_annotator_accepts_a_script_module_or_a_qualified_name():
    script = torch.jit.script(TwoArgs())
    by_name = ClassAnnotator()
    by_name.exportNone(script._c._type().qualified_name())
    by_module = ClassAnnotator()
    by_module.export_none(script)
    assert imported_module(script, by_name) == imported_module(script, by_module)
    assert f"ClassAnnotation('{script._c._type().qualified_name()}')" in repr(by_name)


def test_annotating_an_attribute_as_a_method_is_an_error():
    script = torch.jit.script(TwoArgs())
    annotator = ClassAnnotator()
    with pytest.raises(AnnotationError, match=r"class '[\w.]+TwoArgs' does not have a method called 'count'"):
        annotator.annotateArgs(script._c._type(), ["count"], [None])
