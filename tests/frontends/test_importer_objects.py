"""harness.frontends.torchscript.builder: the object graph (class types, nn_modules, slots), object and
tensor identity, weights as resource blobs, locations and the module's name attribute."""

import re
import warnings
from typing import Optional

import pytest
import torch
from torch import nn
from torch_mlir import ir

from harness import torchscript
from harness.errors import AliasedTensorError, MetaTensorError, PipelineFailure
from harness.frontends.torchscript import ModuleBuilder


def builder_for(script_module) -> ModuleBuilder:
    mb = ModuleBuilder()
    mb.import_module(script_module._c)
    mb.verify()
    return mb


def imported(script_module) -> str:
    return str(builder_for(script_module).module)


def traced(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(model, args, check_trace=False)


def qualname(script_module) -> str:
    return script_module._c._type().qualified_name()


def nn_modules(text: str) -> dict[str, str]:
    """SSA name -> text of each torch.nn_module op."""
    return {m.group(1): m.group(0) for m in
            re.finditer(r"(%\d+) = torch\.nn_module \{\n.*?\n  \} : [^\n]+", text, re.S)}


def slot_value(module_text: str, name: str) -> str:
    return re.search(rf'torch\.slot "{name}", (%[\w.]+) :', module_text).group(1)


def walk(op: ir.Operation) -> list[ir.Operation]:
    ops: list[ir.Operation] = []

    def visit(o):
        ops.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return ops


# --- class types, methods, slots ------------------------------------------------------------


class Leaf(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.full((5, 5), float(n)))
        self.register_buffer("mask", torch.ones(5, 5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight * self.mask


class Slots(nn.Module):
    maybe: Optional[int]

    def __init__(self):
        super().__init__()
        self.i = 3
        self.f = 1.5
        self.flag = False
        self.name = "slots"
        self.nothing = None
        self.dev = torch.device("cpu")
        self.dt = torch.float16
        self.ints = [1, 2]
        self.pair = (4, 2.0)
        self.table = {"k": 5}
        self.maybe = 7
        self.left = Leaf(1)
        self.right = Leaf(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.right(self.left(x)) * self.i

    @torch.jit.export
    def first(self) -> int:
        return self.ints[0]


@pytest.fixture(scope="module")
def slots():
    script = torch.jit.script(Slots())
    return script, imported(script)


def test_class_type_lists_attributes_then_methods(slots, filecheck):
    script, text = slots
    checks = """
        CHECK-LABEL: torch.class_type @ROOT {
        CHECK-NEXT:    torch.attr "training" : !torch.bool
        CHECK-NEXT:    torch.attr "_is_full_backward_hook" : {{.*}}
        CHECK-NEXT:    torch.attr "i" : !torch.int
        CHECK-NEXT:    torch.attr "f" : !torch.float
        CHECK-NEXT:    torch.attr "flag" : !torch.bool
        CHECK-NEXT:    torch.attr "name" : !torch.str
        CHECK-NEXT:    torch.attr "nothing" : !torch.none
        CHECK-NEXT:    torch.attr "dev" : !torch.Device
        CHECK-NEXT:    torch.attr "dt" : !torch.int
        CHECK-NEXT:    torch.attr "ints" : !torch.list<int>
        CHECK-NEXT:    torch.attr "pair" : !torch.tuple<int, float>
        CHECK-NEXT:    torch.attr "table" : !torch.dict<str, int>
        CHECK-NEXT:    torch.attr "maybe" : !torch.optional<int>
        CHECK-NEXT:    torch.attr "left" : !torch.nn.Module<"LEAF">
        CHECK-NEXT:    torch.attr "right" : !torch.nn.Module<"LEAF">
        CHECK-NEXT:    torch.method "forward", @ROOT.forward
        CHECK-NEXT:    torch.method "first", @ROOT.first
        CHECK-NEXT:  }
    """
    filecheck(text, checks.replace("ROOT", qualname(script)).replace("LEAF", qualname(script.left)))


def test_one_class_type_per_class_and_one_nn_module_per_object(slots):
    script, text = slots
    leaf = qualname(script.left)
    assert text.count(f"torch.class_type @{leaf} {{") == 1
    instances = rf'torch\.nn_module \{{.*?\}} : !torch\.nn\.Module<"{re.escape(leaf)}">'
    assert len(re.findall(instances, text, re.S)) == 2
    assert len(nn_modules(text)) == 3


def test_every_method_is_a_private_function_taking_self(slots):
    script, text = slots
    root, leaf = qualname(script), qualname(script.left)
    assert (f'func.func private @{root}.forward(%arg0: !torch.nn.Module<"{root}">, '
            '%arg1: !torch.tensor) -> !torch.tensor') in text
    assert f'func.func private @{root}.first(%arg0: !torch.nn.Module<"{root}">) -> !torch.int' in text
    assert (f'func.func private @{leaf}.forward(%arg0: !torch.nn.Module<"{leaf}">, '
            '%arg1: !torch.tensor) -> !torch.tensor') in text
    assert len(re.findall(r"^  func\.func ", text, re.M)) == 3


@pytest.mark.parametrize("slot, definition", [
    ("i", r"torch\.constant\.int 3"),
    ("f", r"torch\.constant\.float 1\.500000e\+00"),
    ("flag", r"torch\.constant\.bool false"),
    ("name", r'torch\.constant\.str "slots"'),
    ("nothing", r"torch\.constant\.none"),
    ("dev", r'torch\.constant\.device "cpu"'),
    ("dt", r"torch\.constant\.int 5"),  # the JIT stores dtype attributes as ScalarType ints
    ("maybe", r"torch\.constant\.int 7"),
    ("ints", r"torch\.prim\.ListConstruct %int1\w*, %int2\w* : \(!torch\.int, !torch\.int\) "
             r"-> !torch\.list<int>"),
    ("pair", r"torch\.prim\.TupleConstruct %int4\w*, %float2\.000000e00\w* : !torch\.int, !torch\.float -> "
             r"!torch\.tuple<int, float>"),
    ("table", r"torch\.prim\.DictConstruct keys\(%str\w* : !torch\.str\) values\(%int5\w* : !torch\.int\) -> "
              r"!torch\.dict<str, int>"),
])
def test_slot_value(slots, slot, definition):
    _script, text = slots
    root = nn_modules(text)[re.search(r'(%\d+) = torch\.nn_module \{[^}]*torch\.slot "left"', text).group(1)]
    value = slot_value(root, slot)
    assert re.search(rf"^  {re.escape(value)} = {definition}$", text, re.M), (slot, value)


def test_submodule_slots_hold_the_submodules_values(slots):
    _script, text = slots
    modules = nn_modules(text)
    root = next(m for m in modules.values() if 'torch.slot "left"' in m)
    left, right = slot_value(root, "left"), slot_value(root, "right")
    assert left != right and {left, right} <= set(modules)
    # Each Leaf keeps its own weight; the root is defined after both leaves.
    assert slot_value(modules[left], "weight") != slot_value(modules[right], "weight")
    assert list(modules)[-1] not in (left, right)


# --- identity of objects and tensors ---------------------------------------------------------


class SharedByAttributes(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = self.a

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def test_submodule_shared_by_two_attributes_shares_its_tensors():
    script = torch.jit.script(SharedByAttributes())
    text = imported(script)
    modules = nn_modules(text)
    root = next(m for m in modules.values() if 'torch.slot "a"' in m)
    a, b = slot_value(root, "a"), slot_value(root, "b")
    # torch.jit.script makes two objects for the two attributes, holding the same Parameters.
    assert a != b
    assert slot_value(modules[a], "weight") == slot_value(modules[b], "weight")
    assert slot_value(modules[a], "bias") == slot_value(modules[b], "bias")
    assert text.count("torch.tensor.literal") == 2


@pytest.fixture(scope="module")
def truly_shared():
    script = torch.jit.script(SharedByAttributes())
    script._c.setattr("b", script._c.getattr("a"))
    return script


def test_one_object_reachable_by_two_attributes_is_imported_once(truly_shared):
    text = imported(truly_shared)
    modules = nn_modules(text)
    assert len(modules) == 2
    root = next(m for m in modules.values() if 'torch.slot "a"' in m)
    assert slot_value(root, "a") == slot_value(root, "b")


def test_identity_probe_leaves_training_flags_alone(truly_shared):
    truly_shared.train()
    builder_for(truly_shared)
    assert truly_shared.training and truly_shared.a.training


def test_object_reachable_by_two_paths_is_rejected_by_the_pipeline(truly_shared, tmp_path):
    with pytest.raises(PipelineFailure) as info:
        torchscript.compile(truly_shared, [torch.ones(2, 4)], output_type="torch", out_dir=tmp_path)
    assert ("reachable by multiple paths from root object: '<root>.a' and '<root>.b'"
            in info.value.diagnostics)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.ones(5, 5))
        self.w2 = self.w1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w1 + x @ self.w2


def test_tied_parameters_are_one_literal():
    text = imported(torch.jit.script(Tied()))
    root = next(iter(nn_modules(text).values()))
    assert slot_value(root, "w1") == slot_value(root, "w2")
    assert text.count("torch.tensor.literal") == 1


class ViewOfBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        base = torch.arange(16.0)
        self.register_buffer("flat", base)
        self.register_buffer("square", base.view(4, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.square + self.flat.sum()


class HoldsView(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = ViewOfBuffer()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


@pytest.mark.parametrize("model, path, other", [
    (ViewOfBuffer, "<root>.square", "<root>.flat"),
    (HoldsView, "<root>.inner.square", "<root>.inner.flat"),
])
def test_tensors_sharing_storage_are_refused_not_copied(model, path, other):
    # Two literals would give the view its own storage: a write through one would no longer
    # show through the other. Upstream's importer refused them too.
    script = torch.jit.script(model())
    with pytest.raises(AliasedTensorError) as info:
        imported(script)
    err = info.value
    assert (err.path, err.other_path, err.root) == (path, other, qualname(script))
    assert str(err).startswith("Unhandled tensor that shares storage with another tensor.\n"
                               f"Found at path '{path}' from root object '{qualname(script)}'")


# --- weights as resource blobs --------------------------------------------------------------


def test_parameters_and_buffers_are_named_resource_blobs(slots):
    script, text = slots
    for name in ("left.weight", "right.mask"):
        assert (f"torch.tensor.literal(dense_resource<{name}> : tensor<5x5xf32>) "
                ": !torch.tensor<[5,5],f32>") in text
    blob = re.search(r'left\.weight: "0x([0-9A-F]+)"', text).group(1)
    assert blob == "04000000" + script.left.weight.detach().numpy().tobytes().hex().upper()


def test_elided_print_carries_no_hex_blob(slots):
    script, _ = slots
    module = builder_for(script).module
    elided = module.operation.get_asm(large_resource_limit=64)
    full = module.operation.get_asm()
    hex_blob = re.compile(r'"0x[0-9A-F]{65,}"')
    assert "dense_resource<left.weight>" in elided
    assert not hex_blob.search(elided)
    assert len(hex_blob.findall(full)) == 4


# --- locations (of functions: test_importer_locations.py) ---------------------------------


def test_object_graph_ops_are_located_at_their_object_path(slots):
    script, _ = slots
    mb = builder_for(script)
    located = {}
    for op in walk(mb.module.operation):
        if op.name in ("torch.nn_module", "torch.tensor.literal"):
            located.setdefault(op.name, []).append(str(op.location))
    assert sorted(located["torch.nn_module"]) == [
        'loc("<root>")', 'loc("<root>.left")', 'loc("<root>.right")']
    assert sorted(located["torch.tensor.literal"]) == [
        'loc("<root>.left.mask")', 'loc("<root>.left.weight")',
        'loc("<root>.right.mask")', 'loc("<root>.right.weight")']


# --- module attributes and statistics --------------------------------------------------------


@pytest.mark.parametrize("how", ["script", "trace"])
def test_debug_module_name_is_the_python_class_name(how):
    model = Leaf(1)
    script = torch.jit.script(model) if how == "script" else traced(model, torch.ones(5, 5))
    assert "___torch_mangle" in qualname(script) or how == "script"
    module = builder_for(script).module
    assert ir.StringAttr(module.operation.attributes["torch.debug_module_name"]).value == "Leaf"


def test_import_stats_count_what_was_imported(slots):
    script, _ = slots
    mb = ModuleBuilder()
    stats = mb.import_module(script._c)
    assert (stats.class_types, stats.objects, stats.functions) == (2, 3, 3)
    assert stats.tensor_bytes == 4 * (5 * 5 * 4)  # two leaves, each a 5x5 f32 weight and mask
    assert stats.node_kinds["prim::CallMethod"] == 2
    assert mb.last_import is stats


# --- upstream's order and sharing -------------------------------------------------------------


class Counter(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.n


class TwoCounters(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Counter(0)
        self.second = Counter(0)
        self.label = "counters"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return helper_function(self.second(self.first(x)))


def helper_function(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def test_functions_come_first_then_each_class_type_before_its_objects(filecheck):
    script = torch.jit.script(TwoCounters())
    filecheck(imported(script), """
        CHECK-NOT:   torch.class_type
        CHECK:       func.func private @{{.*}}TwoCounters.forward(
        CHECK:       func.func private @{{.*}}Counter.forward(
        CHECK:       func.func private @{{.*}}helper_function(
        CHECK-NOT:   func.func
        CHECK:       torch.class_type @{{.*}}TwoCounters {
        CHECK:       torch.class_type @{{.*}}Counter {
        CHECK:       torch.nn_module {
        CHECK:       } : !torch.nn.Module<"{{.*}}Counter">
        CHECK:       torch.nn_module {
        CHECK:       } : !torch.nn.Module<"{{.*}}Counter">
        CHECK:       torch.nn_module {
        CHECK:       } : !torch.nn.Module<"{{.*}}TwoCounters">
    """)


def test_equal_primitive_slot_values_are_one_constant():
    text = imported(torch.jit.script(TwoCounters()))
    modules = nn_modules(text)
    counters = [m for m in modules.values() if 'torch.slot "n"' in m]
    assert len(counters) == 2
    assert slot_value(counters[0], "n") == slot_value(counters[1], "n")
    assert len({slot_value(m, "training") for m in modules.values()}) == 1
    assert text.count("torch.constant.int 0") == 1
    assert text.count("torch.constant.bool true") == 1


def test_meta_device_parameter_is_named_not_a_raw_torch_error():
    """Issue 15, item 11: torch's own NotImplementedError ("Cannot copy out of meta tensor")
    named no parameter; the importer's error names it and says how to materialize it."""
    builder = ModuleBuilder()
    with pytest.raises(MetaTensorError) as info:
        builder.import_module(torch.jit.script(nn.Linear(4, 4, device="meta"))._c)
    assert info.value.name == "weight"
    assert "'weight'" in str(info.value) and "meta device" in str(info.value)
    assert "to_empty" in str(info.value)
