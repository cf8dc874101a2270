"""TorchScript graphs to torch-dialect function bodies.

One ``GraphImporter`` per function: it walks the graph's nodes in order, maps each JIT value to
an MLIR value, and emits ops at the current insertion point. aten (and schema-carrying prim)
nodes go through their schema to ``torch.<ns>.<name>[.<overload>]`` when the dialect registers
that op, else to ``torch.operator "<ns>.<name>[.<overload>]"`` so the pipeline, not the
importer, reports the missing lowering. Structural prim nodes have hand-written handlers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Protocol
from collections.abc import Callable, Iterable, Sequence

import torch
from torch_mlir import ir

from harness.errors import UnsupportedNodeError, UnsupportedTypeError

from .as_strided import AS_STRIDED, Gather
from .literals import TensorLiterals
from .locations import LocationFactory, LocationPlan
from .typemap import TORCH_DTYPE_TO_INT, TypeMapper

# prim nodes without a schema that map one-to-one onto a torch-dialect op (same operands,
# same results, no attributes). prim nodes with a schema (prim::Print, prim::device,
# prim::NumToTensor.Scalar, prim::unchecked_cast, ...) take the schema path like aten nodes.
PRIM_KIND_TO_OP: dict[str, str] = {
    "prim::ListConstruct": "torch.prim.ListConstruct",
    "prim::ListUnpack": "torch.prim.ListUnpack",
    "prim::Enter": "torch.prim.Enter",
    "prim::Exit": "torch.prim.Exit",
    "prim::CreateObject": "torch.prim.CreateObject",
}


@dataclass(frozen=True)
class CalleeTypes:
    """The MLIR argument and result types of a function, as its callers must match them."""

    inputs: tuple[ir.Type, ...]
    results: tuple[ir.Type, ...]


class CalleeResolver(Protocol):
    def method_signature(self, class_qualname: str, method: str) -> CalleeTypes | None: ...

    def function_symbol(self, qualname: str, node: torch._C.Node,
                        object_path: str) -> tuple[str, CalleeTypes]: ...


@dataclass
class ImportEnv:
    """What every function importer of one module shares."""

    context: ir.Context
    types: TypeMapper
    locs: LocationFactory
    literals: TensorLiterals
    callees: CalleeResolver
    node_kinds: dict[str, int] = field(default_factory=dict)
    _registered: dict[str, bool] = field(default_factory=dict)

    def is_registered(self, op_name: str) -> bool:
        known = self._registered.get(op_name)
        if known is None:
            known = self.context.is_registered_operation(op_name)
            self._registered[op_name] = known
        return known


def _is_tensor_type(t: ir.Type) -> bool:
    s = str(t)
    return s.startswith("!torch.tensor") or s.startswith("!torch.vtensor")


def schema_op_name(schema: torch._C.FunctionSchema) -> tuple[str, str]:
    """``("torch.aten.add.Tensor", "aten.add.Tensor")``: the op and ``torch.operator`` names of a
    schema, from its ``name`` (``aten::add``) and ``overload_name`` (``Tensor``)."""
    dotted = schema.name.replace("::", ".", 1)
    if schema.overload_name:
        dotted += "." + schema.overload_name
    return "torch." + dotted, dotted


@cache
def _op_names_of_schema_text(text: str) -> tuple[str, str]:
    # node.schema() is the schema's text; parsing it once per distinct text keeps the import of
    # a model with thousands of aten nodes to a few hundred parses.
    return schema_op_name(torch._C.parse_schema(text))


class GraphImporter:
    """Imports the nodes of one TorchScript graph into one MLIR function."""

    def __init__(self, env: ImportEnv, object_path: str):
        self.env = env
        self.object_path = object_path
        self.values: dict[int, ir.Value] = {}
        self.locations: LocationPlan | None = None
        # as_strided nodes imported as gathers (as_strided.plan_gathers, set by the caller).
        self.gathers: dict[torch._C.Node, Gather] = {}
        self._handlers: dict[str, Callable[[torch._C.Node, ir.Location], None]] = {
            "prim::Constant": self._constant,
            "prim::GetAttr": self._get_attr,
            "prim::SetAttr": self._set_attr,
            "prim::Store": self._named("torch.prim.Store"),
            "prim::Load": self._named("torch.prim.Load"),
            "prim::CallMethod": self._call_method,
            "prim::CallFunction": self._call_function,
            "prim::If": self._if,
            "prim::Loop": self._loop,
            "prim::DictConstruct": self._dict_construct,
            "prim::TupleConstruct": self._tuple_construct,
            "prim::TupleUnpack": self._tuple_unpack,
        }

    # ----- values and types -------------------------------------------------------------

    def lookup(self, jit_value: torch._C.Value) -> ir.Value:
        return self.values[jit_value.unique()]

    def bind(self, jit_value: torch._C.Value, value: ir.Value) -> None:
        self.values[jit_value.unique()] = value

    def jit_type(self, jit_value: torch._C.Value, node: torch._C.Node | None = None) -> ir.Type:
        try:
            return self.env.types.from_jit(jit_value.type(), f"value %{jit_value.debugName()}")
        except UnsupportedTypeError as e:
            where = LocationFactory.describe(node) if node is not None else ""
            raise UnsupportedTypeError(
                e.type_str, f"{e.context} at {where or 'unknown location'} in {self.object_path}",
                e.supported,
            ) from None

    def adjust(self, value: ir.Value, target: ir.Type, loc: ir.Location) -> ir.Value:
        """Casts a value to the type a user expects: static-info casts for tensors,
        ``torch.derefine`` into Optional/Union/Any."""
        if value.type == target:
            return value
        if _is_tensor_type(value.type) and _is_tensor_type(target):
            op = "torch.tensor_static_info_cast"
        else:
            op = "torch.derefine"
        return ir.Operation.create(op, results=[target], operands=[value], loc=loc).result

    # ----- driving ----------------------------------------------------------------------

    def plan_locations(self, graph: torch._C.Graph) -> LocationPlan:
        """Fixes every node's location up front, filling the gaps from neighbours."""
        self.locations = self.env.locs.plan(graph)
        return self.locations

    def import_block_nodes(self, nodes: Iterable[torch._C.Node]) -> None:
        for node in nodes:
            self.import_node(node)

    def import_node(self, node: torch._C.Node) -> None:
        kind = node.kind()
        self.env.node_kinds[kind] = self.env.node_kinds.get(kind, 0) + 1
        loc = self.locations.by_node.get(node) if self.locations is not None else None
        if loc is None:
            loc = self.env.locs.for_node(node)
        if kind == AS_STRIDED and node in self.gathers:
            self._gather(node, self.gathers[node], loc)
            return
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(node, loc)
            return
        schema = node.schema()
        if schema != "(no schema)":
            names = _op_names_of_schema_text(schema)
            op_name, dotted = names
            if self.env.is_registered(op_name):
                self._emit_simple(op_name, node, loc)
            else:
                self._emit_operator(dotted, node, loc)
            return
        prim_op = PRIM_KIND_TO_OP.get(kind)
        if prim_op is not None:
            self._emit_simple(prim_op, node, loc)
            return
        raise UnsupportedNodeError(
            kind, LocationFactory.describe(node), self.object_path,
            "it has no schema and no structural translation "
            f"(schema-less nodes handled: {', '.join(sorted([*self._handlers, *PRIM_KIND_TO_OP]))}).",
        )

    def _operands(self, node: torch._C.Node) -> list[ir.Value]:
        return [self.lookup(v) for v in node.inputs()]

    def _result_types(self, node: torch._C.Node) -> list[ir.Type]:
        return [self.jit_type(v, node) for v in node.outputs()]

    def _bind_results(self, node: torch._C.Node, op: ir.Operation) -> None:
        for jit_value, value in zip(node.outputs(), op.results, strict=False):
            self.bind(jit_value, value)

    def _emit_simple(self, op_name: str, node: torch._C.Node, loc: ir.Location,
                     attributes: dict[str, ir.Attribute] | None = None) -> ir.Operation:
        op = ir.Operation.create(
            op_name,
            results=self._result_types(node),
            operands=self._operands(node),
            attributes=attributes,
            loc=loc,
        )
        self._bind_results(node, op)
        return op

    def _emit_operator(self, dotted: str, node: torch._C.Node, loc: ir.Location) -> None:
        self._emit_simple("torch.operator", node, loc, {"name": ir.StringAttr.get(dotted)})

    def _gather(self, node: torch._C.Node, gather: Gather, loc: ir.Location) -> None:
        """``aten.index.Tensor(base, [coordinates...])`` in place of an as_strided read."""
        tensor = torch._C.TensorType.get()
        plain = self.jit_type(node.output(), node)
        coords = [self.adjust(self.constant(c, tensor, loc,
                                            name_hint=f"{self._const_name(node)}.as_strided{i}"),
                              plain, loc)
                  for i, c in enumerate(gather.coords)]
        indices = ir.Operation.create(
            "torch.prim.ListConstruct", operands=coords, loc=loc,
            results=[self.env.types.from_jit(torch._C.ListType(torch._C.OptionalType(tensor)),
                                             "as_strided's gather indices")]).result
        op = ir.Operation.create("torch.aten.index.Tensor", results=[plain],
                                 operands=[self.lookup(gather.base), indices], loc=loc)
        self._bind_results(node, op)

    # ----- constants --------------------------------------------------------------------

    def _constant(self, node: torch._C.Node, loc: ir.Location) -> None:
        out = node.output()
        kind = out.type().kind()
        if kind == "FunctionType":
            return  # Materialized by the prim::CallFunction that uses it.
        value: object
        if not node.hasAttribute("value"):
            value = None
        elif node.kindOf("value") == "t":
            value = node.t("value")
        else:
            value = out.toIValue()
        target = self.jit_type(out, node)
        self.bind(out, self.adjust(self.constant(value, out.type(), loc, node), target, loc))

    def constant(self, value: object, jit_type: torch._C.JitType, loc: ir.Location,
                 node: torch._C.Node | None = None, name_hint: str = "") -> ir.Value:
        """An MLIR value holding a Python/IValue constant of the given TorchScript type."""
        if not name_hint and isinstance(value, (torch.Tensor, list, tuple, dict)):
            name_hint = self._const_name(node)  # names resource blobs; only tensors need one
        return emit_constant(self.env, value, jit_type, loc, name_hint, f"constant in {self.object_path}")

    def _const_name(self, node: torch._C.Node | None) -> str:
        flc = LocationFactory.describe(node) if node is not None else ""
        base = flc.rsplit("/", 1)[-1] if flc else "constant"
        return f"{self.object_path}.const.{base}"

    # ----- object access ----------------------------------------------------------------

    def _get_attr(self, node: torch._C.Node, loc: ir.Location) -> None:
        self._emit_simple("torch.prim.GetAttr", node, loc, {"name": ir.StringAttr.get(node.s("name"))})

    def _set_attr(self, node: torch._C.Node, loc: ir.Location) -> None:
        self._emit_simple("torch.prim.SetAttr", node, loc, {"name": ir.StringAttr.get(node.s("name"))})

    def _named(self, op_name: str) -> Callable[[torch._C.Node, ir.Location], None]:
        """Nodes that carry a ``name`` string and map one-to-one (prim::Store, prim::Load: the
        variables of a graph the JIT has not converted to SSA form yet)."""
        def emit(node: torch._C.Node, loc: ir.Location) -> None:
            self._emit_simple(op_name, node, loc, {"name": ir.StringAttr.get(node.s("name"))})
        return emit

    def _near(self, node: torch._C.Node, loc: ir.Location) -> ir.Location:
        """Where the casts around a call go: the call's own location, or for a traced call
        (unknown, see locations.py) the one its neighbours lend."""
        return self.locations.near.get(node, loc) if self.locations is not None else loc

    def _call_method(self, node: torch._C.Node, loc: ir.Location) -> None:
        near = self._near(node, loc)
        receiver, *args = list(node.inputs())
        name = node.s("name")
        receiver_type = receiver.type()
        sig = None
        if receiver_type.kind() == "ClassType":
            sig = self.env.callees.method_signature(receiver_type.qualified_name(), name)  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        operands = [self.lookup(receiver)] + [self.lookup(a) for a in args]
        jit_results = self._result_types(node)
        if sig is not None:
            operands = operands[:1] + [self.adjust(v, t, near)
                                       for v, t in zip(operands[1:], sig.inputs[1:], strict=False)]
            result_types = list(sig.results)
        else:
            result_types = jit_results
        op = ir.Operation.create(
            "torch.prim.CallMethod", results=result_types, operands=operands,
            attributes={"name": ir.StringAttr.get(name)}, loc=loc,
        )
        for jit_value, value, want in zip(node.outputs(), op.results, jit_results, strict=False):
            self.bind(jit_value, self.adjust(value, want, near))

    def _call_function(self, node: torch._C.Node, loc: ir.Location) -> None:
        fn_value, *args = list(node.inputs())
        qualname = str(fn_value.type())  # FunctionType prints as the callee's qualified name
        symbol, sig = self.env.callees.function_symbol(qualname, node, self.object_path)
        near = self._near(node, loc)
        fn_type = ir.FunctionType.get(list(sig.inputs), list(sig.results))
        callee = ir.Operation.create(
            "func.constant", results=[fn_type],
            attributes={"value": ir.FlatSymbolRefAttr.get(symbol)}, loc=loc,
        ).result
        operands = [self.adjust(self.lookup(a), t, near) for a, t in zip(args, sig.inputs, strict=False)]
        op = ir.Operation.create(
            "func.call_indirect", results=list(sig.results), operands=[callee, *operands], loc=loc
        )
        for jit_value, value, want in zip(node.outputs(), op.results, self._result_types(node), strict=False):
            self.bind(jit_value, self.adjust(value, want, near))

    # A traced tuple's type holds what the tracer saw (Float(3, 2)) even where an element comes
    # from a CallMethod typed by the callee's signature (Tensor). The torch dialect wants a
    # tuple's element types to be exactly its operands' and its unpacked results'.

    def _contained_types(self, jit_value: torch._C.Value, node: torch._C.Node) -> list[ir.Type]:
        return [self.env.types.from_jit(t, f"element of %{jit_value.debugName()}")
                for t in jit_value.type().containedTypes()]  # type: ignore[attr-defined]  # not in torch/_C's .pyi

    def _tuple_construct(self, node: torch._C.Node, loc: ir.Location) -> None:
        # As upstream: an element whose type is a subtype of the tuple's (a tensor into an
        # Optional[Tensor] field) goes in as is, since the tuple op accepts subtypes; tensors
        # get their static information cast to the field's.
        elements = self._contained_types(node.output(), node)
        element_jit = list(node.output().type().containedTypes())  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        operands = []
        for jit_input, v, t, jt in zip(node.inputs(), self._operands(node), elements, element_jit,
                                       strict=False):
            if not (_is_tensor_type(v.type) and _is_tensor_type(t)) and jit_input.type().isSubtypeOf(jt):
                operands.append(v)
            else:
                operands.append(self.adjust(v, t, loc))
        op = ir.Operation.create("torch.prim.TupleConstruct", results=self._result_types(node),
                                 operands=operands, loc=loc)
        self._bind_results(node, op)

    def _tuple_unpack(self, node: torch._C.Node, loc: ir.Location) -> None:
        elements = self._contained_types(node.input(), node)
        op = ir.Operation.create("torch.prim.TupleUnpack", results=elements,
                                 operands=self._operands(node), loc=loc)
        for jit_value, value, want in zip(node.outputs(), op.results, self._result_types(node), strict=False):
            self.bind(jit_value, self.adjust(value, want, loc))

    def _dict_construct(self, node: torch._C.Node, loc: ir.Location) -> None:
        flat = self._operands(node)
        keys, values = flat[0::2], flat[1::2]
        op = ir.Operation.create(
            "torch.prim.DictConstruct", results=self._result_types(node), operands=keys + values, loc=loc
        )
        self._bind_results(node, op)

    # ----- control flow -----------------------------------------------------------------

    def _import_region_block(self, region: ir.Region, jit_block: torch._C.Block, arg_types: Sequence[ir.Type],
                             terminator: str, leading: Sequence[ir.Value] = (),
                             out_types: Sequence[ir.Type] = (), loc: ir.Location | None = None) -> None:
        block = region.blocks.append(*arg_types)
        with ir.InsertionPoint(block):
            for jit_arg, arg in zip(jit_block.inputs(), block.arguments, strict=False):
                self.bind(jit_arg, self.adjust(arg, self.jit_type(jit_arg), loc))
            self.import_block_nodes(jit_block.nodes())
            outs = [self.lookup(v) for v in jit_block.outputs()]
            n_lead = len(outs) - len(out_types)
            outs = outs[:n_lead] + [self.adjust(v, t, loc)
                                    for v, t in zip(outs[n_lead:], out_types, strict=False)]
            ir.Operation.create(terminator, operands=[*leading, *outs], loc=loc)

    def _if(self, node: torch._C.Node, loc: ir.Location) -> None:
        result_types = self._result_types(node)
        op = ir.Operation.create(
            "torch.prim.If", results=result_types, operands=self._operands(node), regions=2, loc=loc
        )
        then_block, else_block = list(node.blocks())
        for region, jit_block in zip(op.regions, (then_block, else_block), strict=False):
            self._import_region_block(region, jit_block, (), "torch.prim.If.yield",
                                      out_types=result_types, loc=loc)
        self._bind_results(node, op)

    def _loop(self, node: torch._C.Node, loc: ir.Location) -> None:
        result_types = self._result_types(node)
        operands = self._operands(node)
        max_trip, init_cond, *carried = operands
        carried = [self.adjust(v, t, loc) for v, t in zip(carried, result_types, strict=False)]
        op = ir.Operation.create(
            "torch.prim.Loop", results=result_types, operands=[max_trip, init_cond, *carried],
            regions=1, loc=loc,
        )
        (body,) = list(node.blocks())
        int_type = self.env.types.parse("!torch.int")
        self._import_region_block(op.regions[0], body, [int_type, *result_types],
                                  "torch.prim.Loop.condition", out_types=result_types, loc=loc)
        self._bind_results(node, op)


def emit_constant(env: ImportEnv, value: object, jit_type: torch._C.JitType, loc: ir.Location, name_hint: str,
                  context: str) -> ir.Value:
    """Constants of every TorchScript type, shared by graph constants and object slots."""
    if value is None:
        return ir.Operation.create("torch.constant.none", results=[env.types.parse("!torch.none")],
                                   loc=loc).result
    if isinstance(value, torch.Tensor):
        return emit_tensor(env, value, loc, name_hint, context)
    scalar = _scalar_constant(value, jit_type.kind())
    if scalar is not None:
        op, result, attr = scalar
        return ir.Operation.create(op, results=[env.types.parse(result)], attributes={"value": attr},
                                   loc=loc).result
    if isinstance(value, (list, tuple)):
        return _sequence_constant(env, value, jit_type, loc, name_hint, context)
    if isinstance(value, dict):
        key_t, val_t = list(jit_type.containedTypes())  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        keys = [emit_constant(env, k, key_t, loc, f"{name_hint}.key", context) for k in value]
        vals = [emit_constant(env, v, val_t, loc, f"{name_hint}.{k}", context) for k, v in value.items()]
        return ir.Operation.create("torch.prim.DictConstruct",
                                   results=[env.types.from_jit(jit_type, context)],
                                   operands=keys + vals, loc=loc).result
    raise UnsupportedTypeError(f"{type(value).__name__} value {value!r:.60}", context,
                               "None, Tensor, bool, int, float, str, device, dtype, list, tuple, dict")


def _scalar_constant(value: object, kind: str) -> tuple[str, str, ir.Attribute] | None:
    """The op, result type and value attribute of a scalar constant (bool, int, float, str,
    device, dtype); None for any other value. An int or float where the schema says ``number``
    is a ``torch.constant.number``; an int where it says ``float`` is a float."""
    i64 = ir.IntegerType.get_signless(64)
    if isinstance(value, bool):
        return "torch.constant.bool", "!torch.bool", ir.BoolAttr.get(value)
    if isinstance(value, torch.dtype):
        return "torch.constant.int", "!torch.int", ir.IntegerAttr.get(i64, TORCH_DTYPE_TO_INT[value])
    if isinstance(value, (int, float)):
        name = {"NumberType": "number", "FloatType": "float"}.get(
            kind, "int" if isinstance(value, int) else "float")
        attr = (ir.IntegerAttr.get(i64, value) if isinstance(value, int) and name != "float"
                else ir.FloatAttr.get_f64(float(value)))
        return f"torch.constant.{name}", f"!torch.{name}", attr
    if isinstance(value, str):
        return "torch.constant.str", "!torch.str", ir.StringAttr.get(value)
    if isinstance(value, torch.device):
        return "torch.constant.device", "!torch.Device", ir.StringAttr.get(str(value))
    return None


def _sequence_constant(env: ImportEnv, value: list | tuple, jit_type: torch._C.JitType,
                       loc: ir.Location, name_hint: str, context: str) -> ir.Value:
    """A list (``torch.prim.ListConstruct``, elements derefined to its element type) or a tuple
    (``torch.prim.TupleConstruct``) of constants."""
    types = env.types
    kind = jit_type.kind()
    contained = list(jit_type.containedTypes())  # type: ignore[attr-defined]  # not in torch/_C's .pyi
    if kind == "ListType":
        elem_types = [contained[0]] * len(value)
    elif kind == "TupleType":
        elem_types = contained
    else:
        elem_types = [_jit_type_of_python(v) for v in value]
    elems = [emit_constant(env, v, t, loc, f"{name_hint}.{i}", context)
             for i, (v, t) in enumerate(zip(value, elem_types, strict=False))]
    if kind == "TupleType" or (kind != "ListType" and isinstance(value, tuple)):
        result = types.from_jit(jit_type, context) if kind == "TupleType" else types.parse(
            "!torch.tuple<" + ", ".join(str(e.type) for e in elems) + ">")
        return ir.Operation.create("torch.prim.TupleConstruct", results=[result], operands=elems,
                                   loc=loc).result
    result = types.from_jit(jit_type, context)
    elem_type = types.from_jit(contained[0], context) if contained else None
    if elem_type is not None:
        elems = [e if e.type == elem_type else ir.Operation.create(
            "torch.derefine" if not _is_tensor_type(e.type) else "torch.tensor_static_info_cast",
            results=[elem_type], operands=[e], loc=loc).result for e in elems]
    return ir.Operation.create("torch.prim.ListConstruct", results=[result], operands=elems,
                               loc=loc).result


def emit_tensor(env: ImportEnv, tensor: torch.Tensor, loc: ir.Location, name_hint: str, context: str,
                scalar: Callable[[object, torch._C.JitType], ir.Value] | None = None) -> ir.Value:
    """A tensor literal; a quantized tensor is its integer literal wrapped in
    ``torch.per_tensor_affine.create`` with its scale and zero point, as upstream imported it.
    ``scalar`` makes those two constants (the object graph shares equal ones)."""
    types = env.types
    if tensor.is_quantized and tensor.qscheme() != torch.per_tensor_affine:
        raise UnsupportedTypeError(
            f"quantized tensor with scheme {tensor.qscheme()}", f"tensor literal '{name_hint}' of {context}",
            "per-tensor affine quantized tensors (torch.quantize_per_tensor)",
        )
    attr = env.literals.elements_attr(tensor, name_hint, context)
    storage_dtype = tensor.int_repr().dtype if tensor.is_quantized else tensor.dtype
    literal_type = types.tensor(list(tensor.shape), storage_dtype, context=context)
    op = "torch.vtensor.literal" if types.value_semantics else "torch.tensor.literal"
    literal = ir.Operation.create(op, results=[literal_type], attributes={"value": attr}, loc=loc).result
    if not tensor.is_quantized:
        return literal
    if scalar is None:
        def scalar(v: object, t: torch._C.JitType) -> ir.Value:
            return emit_constant(env, v, t, loc, name_hint, context)
    scale = scalar(tensor.q_scale(), torch._C.FloatType.get())
    zero_point = scalar(tensor.q_zero_point(), torch._C.IntType.get())
    return ir.Operation.create(
        "torch.per_tensor_affine.create",
        results=[types.tensor(list(tensor.shape), tensor.dtype, context=context)],
        operands=[literal, scale, zero_point], loc=loc).result


def _jit_type_of_python(value: object) -> torch._C.JitType:
    if isinstance(value, bool):
        return torch._C.BoolType.get()
    if isinstance(value, int):
        return torch._C.IntType.get()
    if isinstance(value, float):
        return torch._C.FloatType.get()
    if isinstance(value, str):
        return torch._C.StringType.get()
    if isinstance(value, torch.Tensor):
        return torch._C.TensorType.get()
    return torch._C.NoneType.get()
