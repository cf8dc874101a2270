"""Every error the importer raises, each from the input that causes it.

Each test asserts the error class and that the one-paragraph message names what is wrong (the
node kind or type), where (the Python source position when the JIT has one, the object path
such as ``<root>.sub`` or the function), and what to do.
"""

import inspect
import re
import warnings
from typing import Any

import pytest
import torch
from torch import nn

from harness.errors import (
    AnnotationError,
    TorchScriptImportError,
    UnsupportedNodeError,
    UnsupportedTypeError,
)
from harness.frontends.torchscript import ClassAnnotator, ModuleBuilder


def import_script(model: nn.Module, annotator: ClassAnnotator | None = None) -> ModuleBuilder:
    mb = ModuleBuilder()
    mb.import_module(torch.jit.script(model)._c, annotator)
    return mb


def source_position(function, snippet: str) -> str:
    """``file:line:col`` of ``snippet`` in this file, as the JIT records a scripted token."""
    lines, start = inspect.getsourcelines(function)
    for offset, line in enumerate(lines):
        if snippet in line:
            return f"{__file__}:{start + offset}:{line.index(snippet)}"
    raise AssertionError(snippet)


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class Holder(nn.Module):
    """Puts ``child`` at ``<root>.sub``."""

    def __init__(self, child: nn.Module):
        super().__init__()
        self.sub = child

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sub(x)


# --- wrong objects --------------------------------------------------------------------------


def test_eager_module_passed_to_import_module():
    with pytest.raises(TorchScriptImportError,
                       match=r"import_module got an eager Small, not a TorchScript module\. "
                             r"Trace or script it first: torch\.jit\.trace"):
        ModuleBuilder().import_module(Small())


def test_non_module_passed_to_import_module():
    with pytest.raises(TorchScriptImportError,
                       match=r"import_module expects a torch\.jit\.ScriptModule or its \._c, "
                             r"got function\."):
        ModuleBuilder().import_module(lambda x: x)


@pytest.mark.parametrize("thing, name", [
    (lambda: torch.jit.script(Small()), "RecursiveScriptModule"),
    (lambda: (lambda x: x), "function"),
])
def test_wrong_object_passed_to_import_function(thing, name):
    with pytest.raises(TorchScriptImportError, match=rf"import_function expects a torch\.jit\.ScriptFunction "
                                           rf"\(from @torch\.jit\.script\), got {name}\."):
        ModuleBuilder().import_function(thing())


# --- unsupported types ----------------------------------------------------------------------


@torch.jit.script
def complex_argument(x: complex) -> complex:
    return x


@torch.jit.script
def future_argument(x: torch.jit.Future[int]) -> int:
    return torch.jit.wait(x)


def complex_value_source(x: float) -> float:
    c = complex(x, 2.0)
    print(c)
    return x


complex_value = torch.jit.script(complex_value_source)


@pytest.mark.parametrize("fn, type_str", [(complex_argument, "complex"), (future_argument, "Future[int]")])
def test_unsupported_argument_type(fn, type_str):
    with pytest.raises(UnsupportedTypeError) as info:
        ModuleBuilder().import_function(fn)
    assert info.value.type_str == type_str
    message = str(info.value)
    assert f"cannot import TorchScript type '{type_str}' (argument 'x' of {fn.qualified_name})" in message
    assert "Supported: Tensor, int, float" in message


def test_unsupported_value_type_names_its_node_location():
    with pytest.raises(UnsupportedTypeError) as info:
        ModuleBuilder().import_function(complex_value)
    where = source_position(complex_value_source, "complex(x, 2.0)")
    assert (f"cannot import TorchScript type 'complex' (value %c.1 at {where} in "
            f"{complex_value.qualified_name})") in str(info.value)
    assert "Supported: Tensor" in str(info.value)


class ComplexAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = 1 + 2j

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def test_unsupported_attribute_type_names_the_object_path():
    with pytest.raises(UnsupportedTypeError, match=r"type 'complex' \(attribute <root>\.sub\.c of class "
                                                   r"[\w.]+ComplexAttribute\)"):
        import_script(Holder(ComplexAttribute()))


class ComplexMethod(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x

    @torch.jit.export
    def rotate(self, z: complex) -> complex:
        return z


def test_unsupported_method_argument_names_the_method_and_object_path():
    with pytest.raises(UnsupportedTypeError, match=r"type 'complex' \(argument 'z' of method "
                                                   r"[\w.]+ComplexMethod\.rotate of <root>\.sub\)"):
        import_script(Holder(ComplexMethod()))


@torch.jit.script
class Point:
    def __init__(self, x: int):
        self.x = x


class ObjectAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.point = Point(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.point.x


def test_torchscript_class_object_attribute():
    with pytest.raises(UnsupportedTypeError) as info:
        import_script(Holder(ObjectAttribute()))
    message = str(info.value)
    assert re.search(r"type '__torch__\.[\w.]*Point' \(attribute <root>\.sub\.point holds a TorchScript "
                     r"class object", message), message
    assert "nn.Module submodules" in message


@torch.jit.interface
class Transform(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class Identity(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class InterfaceAttribute(nn.Module):
    impl: Transform

    def __init__(self):
        super().__init__()
        self.impl = Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.impl.forward(x)


def test_interface_typed_attribute():
    with pytest.raises(UnsupportedTypeError, match=r"type '__torch__\.[\w.]*Transform' \(attribute "
                                                   r"<root>\.sub\.impl of class [\w.]+InterfaceAttribute\)"):
        import_script(Holder(InterfaceAttribute()))


class GeneratorAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen = torch.Generator()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def test_value_of_a_type_without_constants():
    with pytest.raises(UnsupportedTypeError) as info:
        import_script(Holder(GeneratorAttribute()))
    message = str(info.value)
    assert "cannot import TorchScript type 'Generator value" in message
    assert "(attribute <root>.sub.gen)" in message
    assert "Supported: None, Tensor, bool, int, float, str, device, dtype, list, tuple, dict." in message


class WithBuffer(nn.Module):
    def __init__(self, value: torch.Tensor):
        super().__init__()
        self.register_buffer("q", value)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def quantized() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8)


def per_channel() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_channel(torch.ones(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 0]), 0,
                                          torch.qint8)


@pytest.mark.parametrize("make, type_str", [
    (per_channel, "quantized tensor with scheme torch.per_channel_affine"),
    (lambda: torch.eye(3).to_sparse(), "sparse_coo tensor of torch.float32"),
    (lambda: torch.zeros(3, dtype=torch.float8_e4m3fn), "torch.float8_e4m3fn"),
    (lambda: torch.zeros(3, dtype=torch.uint16), "torch.uint16"),
], ids=["per-channel", "sparse", "float8", "uint16"])
def test_unsupported_tensor(make, type_str):
    with pytest.raises(UnsupportedTypeError) as info:
        import_script(Holder(WithBuffer(make())))
    assert info.value.type_str == type_str
    assert "(tensor literal 'sub.q' of attribute <root>.sub.q)" in str(info.value)


# --- unsupported nodes ----------------------------------------------------------------------


@torch.jit.script
def uses_isinstance(x: Any) -> int:
    if isinstance(x, int):
        return x
    return 0


def test_node_without_schema_or_translation():
    with pytest.raises(UnsupportedNodeError) as info:
        ModuleBuilder().import_function(uses_isinstance)
    error = info.value
    assert (error.kind, error.location, error.object_path) == (
        "prim::isinstance", "", uses_isinstance.qualified_name)
    assert str(error).startswith(f"cannot import TorchScript node 'prim::isinstance' in "
                                 f"{uses_isinstance.qualified_name}: it has no schema")
    assert "prim::If, " in str(error)  # names what is handled


class Forks(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        future = torch.jit.fork(torch.neg, x)
        return torch.jit.wait(future)


def test_unsupported_node_in_a_submodule_names_its_location_and_object_path():
    with pytest.raises(UnsupportedNodeError) as info:
        import_script(Holder(Forks()))
    where = source_position(Forks.forward, "torch.jit.fork(")
    assert f"cannot import TorchScript node 'prim::fork' at {where} in <root>.sub:" in str(info.value)


CU = torch.jit.CompilationUnit("""
def inner(x):
    return x + 1

def outer(x):
    return inner(x) * 2
""")


def test_call_function_whose_callee_is_not_findable():
    with pytest.raises(UnsupportedNodeError) as info:
        ModuleBuilder().import_function(CU.outer)
    message = str(info.value)
    # The CompilationUnit's source is a string: its positions are <string>:line:col.
    assert "cannot import TorchScript node 'prim::CallFunction' at <string>:6:11 in outer:" in message
    assert "its callee 'inner' is not in the Python compilation unit" in message


# --- annotations ----------------------------------------------------------------------------


class TwoArgs(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Small()
        self.n = 1

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.child(x) + y


@pytest.fixture(scope="module")
def two_args():
    return torch.jit.script(TwoArgs())


def import_annotated(script, configure) -> None:
    annotator = ClassAnnotator()
    configure(annotator, script._c._type())
    ModuleBuilder().import_module(script._c, annotator)


def test_annotation_with_wrong_argument_count(two_args):
    # Refused by the call that is wrong, not later by the import.
    with pytest.raises(AnnotationError,
                       match=r"There must be one argument annotation per function parameter\. "
                             r"Including 'self' the number of argument annotations is: 2\. The "
                             r"number of function parameters is: 3\. The function signature is "
                             r"\(__torch__\.[\w.]+TwoArgs self, Tensor x, Tensor y\)\."):
        ClassAnnotator().annotateArgs(two_args._c._type(), ["forward"], [None, ([2], torch.float32, True)])


@pytest.mark.parametrize("annotation, message", [
    (([2, "n"], torch.float32, True), r"argument annotation 1 of forward has shape \[2, 'n'\]; use ints"),
    (([2], "float32", True), r"unsupported scalar type ''float32'' in argument annotation 1 of forward; "
                             r"use a torch\.dtype"),
    (([2], torch.float32), r"argument annotation 1 of forward is \(\[2\], torch\.float32\); expected None or "
                           r"a \(shape, dtype, value_semantics\) tuple"),
], ids=["shape", "dtype", "malformed"])
def test_malformed_argument_annotation(two_args, annotation, message):
    with pytest.raises(AnnotationError, match=message):
        ClassAnnotator().annotateArgs(two_args._c._type(), ["forward"], [None, annotation, None])


def test_annotation_path_through_a_non_submodule(two_args):
    with pytest.raises(AnnotationError, match=r"exportPath n\.forward: [\w.]+TwoArgs has no submodule in "
                                              r"attribute 'n' \(its submodules: child\)\."):
        ClassAnnotator().exportPath(two_args._c._type(), ["n", "forward"])


def test_annotation_of_an_unknown_member(two_args):
    with pytest.raises(AnnotationError,
                       match=r"class '[\w.]+Linear' does not have a method called 'backward' "
                             r"\(methods: forward\)"):
        ClassAnnotator().annotateArgs(two_args._c._type(), ["child", "fc", "backward"], [None])


def test_annotation_of_an_unknown_method(two_args):
    with pytest.raises(AnnotationError, match=r"class '[\w.]+TwoArgs' does not have a method or attribute "
                                              r"called 'backward' \(methods: forward; attributes: training, "
                                              r"_is_full_backward_hook, n, child\)"):
        ClassAnnotator().exportPath(two_args._c._type(), ["backward"])


def test_annotation_of_a_class_outside_the_module(two_args):
    other = torch.jit.script(Forks())
    with pytest.raises(AnnotationError, match=r"the annotator names class [\w.]+Forks, which is not part of "
                                              r"the imported module \(its root is [\w.]+TwoArgs\)"):
        import_annotated(two_args, lambda a, t: a.annotateArgs(other._c._type(), ["forward"], [None, None]))


@pytest.mark.parametrize("call, message", [
    (lambda a, t: a.exportPath(t, []), r"Empty exported path\. Can only export a property of a class\."),
    (lambda a, t: a.annotateArgs(t, [], []), r"Empty annotated path\. Can only annotate shapes/dtypes of a "
                                             r"method of a class\."),
], ids=["export", "annotate"])
def test_paths_must_not_be_empty(two_args, call, message):
    with pytest.raises(AnnotationError, match=message):
        call(ClassAnnotator(), two_args._c._type())


def test_failed_annotation_leaves_the_annotator_usable(two_args):
    # upstream's arg-error.py imports with the annotator after three refused calls.
    annotator = ClassAnnotator()
    for bad in ([], ["forward"]):
        with pytest.raises(AnnotationError):
            annotator.annotateArgs(two_args._c._type(), bad, [None])
    ModuleBuilder().import_module(two_args._c, annotator)


def test_annotator_needs_a_class_type():
    with pytest.raises(AnnotationError, match=r"expected a TorchScript class type .* got int\. "
                                              r"Pass script_module\._c\._type\(\)"):
        ClassAnnotator().exportNone(3)


# --- misuse and internal consistency --------------------------------------------------------


@torch.jit.script
def plain(x: torch.Tensor) -> torch.Tensor:
    return x


def test_same_function_imported_twice_into_one_builder():
    mb = ModuleBuilder()
    mb.import_function(plain)
    with pytest.raises(TorchScriptImportError,
                       match=rf"symbol @{re.escape(plain.qualified_name)} is imported twice "
                             r"into one module\. Import each module or function into a fresh"):
        mb.import_function(plain)


def test_verify_reports_an_invalid_module_as_an_importer_bug():
    mb = ModuleBuilder()
    mb.import_function(plain)
    from torch_mlir import ir
    with mb.context, ir.Location.unknown():
        # A second return at module level: not a valid module.
        ir.Operation.create("func.return", ip=ir.InsertionPoint(mb.module.body))
    with pytest.raises(TorchScriptImportError,
                       match=r"the imported module does not verify; this is an importer bug\. "
                             r"Diagnostics:\n(?s:.*)'func\.return' op expects parent op 'func\.func'"):
        mb.verify()


def test_attribute_values_and_types_that_disagree(monkeypatch):
    script = torch.jit.script(Small())
    real = torch._C._jit_debug_module_iterators

    def fewer_attributes(module):
        found = real(module)
        found["named_attributes"] = found["named_attributes"][:-1]
        return found

    monkeypatch.setattr(torch._C, "_jit_debug_module_iterators", fewer_attributes)
    with pytest.raises(TorchScriptImportError,
                       match=r"class [\w.]+Small at <root> reports 2 attribute values but 3 "
                             r"attribute types; this TorchScript object cannot be imported\."):
        ModuleBuilder().import_module(script._c)
