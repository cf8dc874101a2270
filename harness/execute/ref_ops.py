"""What the reference evaluator does for each op of the torch dialect.

- ``torch.aten.NAME[.OVERLOAD]``, ``torch.prims.*``, ``torch.prim.*`` and ``torch.operator
  "NS.NAME.OVERLOAD"`` run through their ``torch.ops`` overload, found from the op name (no
  overload = ``.default``). Operands are bound to the overload's schema in order: the torch
  dialect keeps every schema argument, keyword-only ones (``alpha=``, ``dtype=``) included.
- Ops with no ``torch.ops`` counterpart (constants, literals, list/tuple constructs, casts that
  only change static information, the object graph and control flow of raw TorchScript IR) have
  handlers here.
- Generic TorchScript list ops (schemas with type variables, ``t[]``) cannot be called through
  ``torch.ops`` from Python (it rejects a Python list as ``List[t]``): the common ones are
  written out; the others are unsupported, i.e. named to the user, never guessed.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn, Protocol
from collections.abc import Callable, MutableMapping, Sequence

import torch

from harness.errors import ReferenceEvaluationError

from .literals import literal_tensor

if TYPE_CHECKING:
    from torch._ops import OpOverload
    from torch_mlir import ir


class Evaluator(Protocol):
    """What an op's handler may ask of the evaluator running it (reference.py's implements it;
    a protocol here, so this table does not import the evaluator that imports it)."""

    def where(self, op: ir.Operation) -> str: ...

    def get_slot(self, op: ir.Operation, obj: object, name: str) -> Any: ...

    def set_slot(self, op: ir.Operation, obj: object, name: str, value: object) -> None: ...

    def call_method(self, op: ir.Operation, obj: object, name: str, args: Sequence) -> list: ...

    def call(self, symbol: str, args: Sequence) -> list: ...

    def run_region(self, region: ir.Region, block_args: Sequence,
                   env: MutableMapping[ir.Value, Any] | None = None, record: bool = False) -> list: ...


# (evaluator, op, operand values) -> result values, one per op result
Handler = Callable[[Any, Any, list], Sequence]

HANDLERS: dict[str, Handler] = {}

# Ops whose values depend on a random generator: the lowered code draws other numbers.
RANDOM_OPS = frozenset({
    "aten.rand", "aten.randn", "aten.rand_like", "aten.randn_like", "aten.randint",
    "aten.randint_like", "aten.bernoulli", "aten.bernoulli_", "aten.uniform", "aten.uniform_",
    "aten.normal", "aten.normal_", "aten.exponential", "aten.exponential_", "aten.multinomial",
    "aten.randperm", "aten.native_dropout", "aten.rrelu",
})
# Ops that return uninitialized memory: filled with zeros, so that two evaluations agree.
UNINITIALIZED_OPS = frozenset({
    "aten.empty", "aten.empty_like", "aten.empty_strided", "aten.new_empty",
    "aten.new_empty_strided",
})
# Ops whose eager result depends on the operand's memory layout. A value-semantic tensor
# (!torch.vtensor) has none: torch-mlir reads aten.view as a reshape and as_strided's strides as
# those of a contiguous operand, so these get contiguous operands.
LAYOUT_SENSITIVE_OPS = frozenset({
    "aten.view", "aten._unsafe_view", "aten.view_as", "aten.as_strided", "aten.stride",
    "aten.is_contiguous",
})
_TYPE_VARIABLE = re.compile(r"\bt\d*\b")


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = fn
        return fn
    return register


def _attr_value(op: ir.Operation, name: str = "value") -> Any:
    """The Python value of an int, float, bool or string attribute."""
    from torch_mlir import ir

    attr = op.attributes[name]
    for kind in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
        if isinstance(attr, kind):
            return attr.value
    for kind in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr, ir.StringAttr):
        try:
            return kind(attr).value
        except ValueError:
            continue
    raise ReferenceEvaluationError(op.operation.name, str(op.location),
                                   f"attribute {name} = {attr} has no Python value")


# --- Constants and literals ---------------------------------------------------------------------

@handles("torch.constant.int", "torch.constant.float", "torch.constant.str", "torch.constant.number")
def _constant(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (_attr_value(op),)


@handles("torch.constant.bool")
def _constant_bool(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (bool(_attr_value(op)),)


@handles("torch.constant.none", "torch.prim.Uninitialized")
def _none(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (None,)


@handles("torch.constant.device")
def _device(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (torch.device(_attr_value(op)),)


@handles("torch.vtensor.literal", "torch.tensor.literal")
def _literal(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (literal_tensor(op),)


@handles("torch.aten.tensor")
def _tensor_of_list(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    """``aten::tensor(t[] data, *, dtype, device, requires_grad)``: its ``t[]`` keeps it out of
    ``torch.ops`` (which rejects a Python list as ``List[t]``), and torch-mlir's nonzero
    decomposition makes one of a shape (a boolean mask's ``x[mask] = v`` on FX). torch.tensor
    infers the dtype as the op does (int64, the default float dtype, bool); a given dtype code
    is applied through ``_to_copy``, which takes the code as the schema does."""
    data, dtype, device, requires_grad = _operands(ev, op, args, 4)
    try:
        value = torch.tensor(data, device=device, requires_grad=bool(requires_grad))
        if dtype is not None:
            value = torch.ops.aten._to_copy.default(value, dtype=dtype)
    except Exception as e:  # a ragged list, a value torch.tensor refuses: name the op
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ReferenceEvaluationError(op.operation.name, ev.where(op), f"{type(e).__name__}: {first}") from e
    return (value,)


def _operands(ev: Evaluator, op: ir.Operation, args: list[Any], count: int) -> list[Any]:
    """``args`` when the op has ``count`` operands, else the error that says it does not."""
    if len(args) != count:
        raise ReferenceEvaluationError(op.operation.name, ev.where(op),
                                       f"it has {len(args)} operands, its schema takes {count}")
    return args


# --- Lists, tuples, casts of static information ---------------------------------------------------

@handles("torch.prim.ListConstruct")
def _list(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (list(args),)


@handles("torch.prim.TupleConstruct")
def _tuple(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (tuple(args),)


@handles("torch.prim.TupleIndex")
def _tuple_index(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (args[0][args[1]],)


@handles("torch.prim.TupleUnpack", "torch.prim.ListUnpack")
def _unpack(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    values = tuple(args[0])
    if len(values) != len(op.results):
        raise ReferenceEvaluationError(op.operation.name, ev.where(op), f"unpacks {len(values)} values "
                                       f"into {len(op.results)} results")
    return values


@handles("torch.derefine", "torch.prim.unchecked_cast", "torch.tensor_static_info_cast")
def _identity(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (args[0],)


@handles("torch.copy.to_vtensor", "torch.copy.to_tensor")
def _copy(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    # value semantics: a snapshot, so a later in-place op on the source does not change it
    return (args[0].clone(),)


@handles("torch.overwrite.tensor.contents")
def _overwrite(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    value, target = args
    target.copy_(value)
    return ()


@handles("torch.prim.Print", "torch.aten.warn", "torch.bind_symbolic_shape")
def _no_effect(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return ()


@handles("torch.runtime.assert")
def _runtime_assert(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    if not args[0]:
        raise ReferenceEvaluationError(op.operation.name, ev.where(op),
                                       f"the assertion fails: {_attr_value(op, 'message')}")
    return ()


@handles("torch.prim.RaiseException")
def _raise(ev: Evaluator, op: ir.Operation, args: list[Any]) -> NoReturn:
    raise ReferenceEvaluationError(op.operation.name, ev.where(op),
                                   f"the model raises: {args[0] if args else ''}")


# --- Generic list ops (type variables in their schemas) ----------------------------------------------

@handles("torch.aten.__getitem__.t")
def _getitem(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (args[0][args[1]],)


@handles("torch.aten.len.t")
def _len(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (len(args[0]),)


@handles("torch.aten.add.t")
def _list_add(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (list(args[0]) + list(args[1]),)


@handles("torch.aten.mul.left_t")
def _list_mul(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (list(args[0]) * args[1],)


@handles("torch.aten.list.t")
def _list_copy(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (list(args[0]),)


@handles("torch.aten.append.t")
def _append(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    args[0].append(args[1])
    return (args[0],)


@handles("torch.aten._set_item.t")
def _set_item(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    args[0][args[1]] = args[2]
    return (args[0],)


@handles("torch.aten.slice.t")
def _list_slice(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    values, start, end, step = args
    return (list(values)[start:end:step],)


@handles("torch.aten.__is__")
def _is(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (args[0] is args[1] or (args[0] is None and args[1] is None),)


@handles("torch.aten.__isnot__")
def _isnot(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (not (args[0] is args[1] or (args[0] is None and args[1] is None)),)


@handles("torch.aten.__contains__.int_list", "torch.aten.__contains__.float_list")
def _contains(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (args[1] in args[0],)


# --- Object graph and control flow of raw TorchScript IR ---------------------------------------------

@handles("torch.prim.GetAttr")
def _get_attr(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return (ev.get_slot(op, args[0], _attr_value(op, "name")),)


@handles("torch.prim.SetAttr")
def _set_attr(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    ev.set_slot(op, args[0], _attr_value(op, "name"), args[1])
    return ()


@handles("torch.prim.CallMethod")
def _call_method(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return tuple(ev.call_method(op, args[0], _attr_value(op, "name"), args[1:]))


@handles("func.call")
def _call(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    from torch_mlir import ir

    return tuple(ev.call(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, args))


@handles("torch.prim.If")
def _if(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    return tuple(ev.run_region(op.regions[0 if args[0] else 1], []))


@handles("torch.prim.Loop")
def _loop(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
    trip_count, condition, carried = args[0], args[1], list(args[2:])
    i = 0
    while condition and i < trip_count:
        results = ev.run_region(op.regions[0], [i, *carried])
        condition, carried = results[0], list(results[1:])
        i += 1
    return tuple(carried)


# --- torch.ops ---------------------------------------------------------------------------------------

def qualified_name(op: ir.Operation) -> str:
    """``aten.add.Tensor`` for ``torch.aten.add.Tensor`` and for ``torch.operator "aten.add.Tensor"``."""
    if op.operation.name == "torch.operator":
        return str(_attr_value(op, "name"))
    return op.operation.name.removeprefix("torch.")


@cache
def torch_overload(qualified: str) -> OpOverload | None:
    """The ``torch.ops`` overload of ``ns.name[.overload]``, or None when torch has none (or
    its schema has type variables, which ``torch.ops`` cannot bind Python values to)."""
    namespace, _, rest = qualified.partition(".")
    name, _, overload = rest.partition(".")
    if namespace not in ("aten", "prims", "prim", "quantized", "torchvision") or not name:
        return None
    try:
        packet = getattr(getattr(torch.ops, namespace), name)
        resolved = getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None
    schema = resolved._schema
    if "..." in str(schema):  # varargs: prim::PythonOp (an autograd.Function), aten::format;
        return None           # FunctionSchema has no is_vararg in Python
    typed = [str(a.type) for a in schema.arguments] + [str(r.type) for r in schema.returns]
    if any(_TYPE_VARIABLE.search(t) for t in typed):
        return None
    return resolved


def _torch_op_handler(qualified: str, overload: OpOverload) -> Handler:
    schema = overload._schema
    base = qualified.rsplit(".", 1)[0] if qualified.count(".") >= 2 else qualified

    def run(ev: Evaluator, op: ir.Operation, args: list[Any]) -> tuple[Any, ...]:
        if len(args) != len(schema.arguments):
            raise ReferenceEvaluationError(
                op.operation.name, ev.where(op), f"it has {len(args)} operands, the schema {schema} takes "
                f"{len(schema.arguments)}")
        if base in LAYOUT_SENSITIVE_OPS:
            args = [a.contiguous() if isinstance(a, torch.Tensor) and str(v.type).startswith("!torch.vtensor")
                    else a for a, v in zip(args, op.operands, strict=False)]
        positional, keywords = [], {}
        for argument, value in zip(schema.arguments, args, strict=False):
            if argument.kwarg_only:
                keywords[argument.name] = value
            else:
                positional.append(value)
        try:
            out = overload(*positional, **keywords)
        except Exception as e:  # torch's errors are many: name the op and its location
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ReferenceEvaluationError(op.operation.name, ev.where(op),
                                           f"{type(e).__name__}: {first}") from e
        if base in UNINITIALIZED_OPS and isinstance(out, torch.Tensor):
            out = out.zero_()
        if not schema.returns:
            return ()
        return (out,) if len(schema.returns) == 1 else tuple(out)

    return run


def handler_for(op: ir.Operation) -> Handler | None:
    """How to evaluate ``op``, or None when the evaluator cannot (it is then named to the user)."""
    name = op.operation.name
    found = HANDLERS.get(name)
    if found is not None:
        return found
    if name == "torch.operator" or name.startswith(("torch.aten.", "torch.prims.", "torch.prim.")):
        qualified = qualified_name(op)
        return _cached_torch_handler(qualified)
    return None


@cache
def _cached_torch_handler(qualified: str) -> Handler | None:
    overload = torch_overload(qualified)
    return None if overload is None else _torch_op_handler(qualified, overload)


# Ops no evaluator of the IR can run, and why: said instead of "add the op".
UNEVALUABLE = {
    "prim.PythonOp": (
        "a call of a Python torch.autograd.Function (its .apply(), traced as prim::PythonOp; "
        "Bloom's GeLUFunction is one): the trace held the Python object, the IR keeps only the "
        "call, so neither an evaluator nor a pipeline can tell what it computes. Import the "
        "model with torch.export (harness emit --importer fx), which inlines the Function's "
        "forward, or make the model call the forward's code directly."),
}


def why_unsupported(op: ir.Operation) -> str | None:
    """Why ``op`` cannot be evaluated, when that is a fact of the IR rather than a gap here."""
    name = op.operation.name
    if name != "torch.operator" and not name.startswith("torch.prim."):
        return None
    return UNEVALUABLE.get(qualified_name(op))


def display_name(op: ir.Operation) -> str:
    """The op as users know it: ``torch.aten.foo``, or ``torch.operator "aten.foo"``."""
    if op.operation.name == "torch.operator":
        return f'torch.operator "{qualified_name(op)}"'
    return op.operation.name


def is_random(op: ir.Operation) -> bool:
    qualified = qualified_name(op)
    base = qualified.rsplit(".", 1)[0] if qualified.count(".") >= 2 else qualified
    return base in RANDOM_OPS or qualified in RANDOM_OPS
