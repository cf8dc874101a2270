"""IR edit primitives on the MLIR bindings: functions, symbols, stand-in values, op units.

Edits run in the module's context under a default location (``IRState.attempt`` sets both).
Every edit keeps the module valid (callers verify it anyway) and keeps what the failure may
depend on: a value is only ever replaced by a zero constant of its exact type, or by a new
argument whose type states its rank and dtype. A stand-in that says less (an unranked or
non-value tensor, a list, a scalar that may feed a shape) could make the pipeline fail for a
reason of the reducer's own making, with the same message (an "unknown rank" failure
in a scripted loop reduced to an argument the reducer had made unranked).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch_mlir import ir
from torch_mlir.dialects import func as func_dialect

from harness.compiler.mlir import children, parse_ir, print_op

from .torch_types import TensorInfo, TypeKind, kind, tensor_info

# Ops whose result is a value written in the IR (the ConstantLike trait is not in the bindings).
CONSTANT_OPS = frozenset({"torch.constant.int", "torch.constant.float", "torch.constant.bool",
                          "torch.constant.none", "torch.constant.str", "torch.constant.device",
                          "torch.constant.number", "torch.vtensor.literal", "arith.constant"})


def parse_input(text: str | bytes, name: str) -> tuple[ir.Context, ir.Operation] | None:
    """The input, its locations naming ``name`` as the original run's diagnostics do (the
    bindings name a parsed string "-")."""
    parsed = parse_ir(text)
    if parsed is None:
        return None
    printed = print_op(parsed[1])
    if 'loc("-":' not in printed:
        return parsed
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    renamed = parse_ir(printed.replace('loc("-":', f'loc("{quoted}":'))
    if renamed is None:
        return parsed
    parsed[1].erase()
    return renamed


# --- functions and symbols ----------------------------------------------------------------------


def is_function(op: ir.Operation) -> bool:
    return isinstance(op.opview, func_dialect.FuncOp)


def sym_name(op: ir.Operation) -> str | None:
    if "sym_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["sym_name"]).value


def symbol_users(module: ir.Operation) -> dict[str, list[ir.Operation]]:
    """Ops that name a symbol in a top-level attribute (calls, methods), by symbol."""
    users: dict[str, list[ir.Operation]] = {}
    stack = list(children(module))
    while stack:
        op = stack.pop()
        for name in op.attributes:
            attr = op.attributes[name]
            if isinstance(attr, ir.FlatSymbolRefAttr):
                users.setdefault(attr.value, []).append(op)
        stack.extend(children(op))
    return users


def find_function(module: ir.Operation, name: str) -> ir.Operation | None:
    return next((op for op in children(module) if is_function(op) and sym_name(op) == name), None)


def uncalled_functions(module: ir.Operation) -> list[str]:
    """Functions with a body that nothing names: their signature is free to change."""
    users = symbol_users(module)
    return [n for op in children(module)
            if is_function(op) and (n := sym_name(op)) and not users.get(n)
            and len(op.regions[0].blocks) > 0]


def has_uses(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is not None


def entry_block(func: ir.Operation) -> ir.Block:
    return func.regions[0].blocks[0]


def single_return(func: ir.Operation) -> ir.Operation | None:
    """The function's ``func.return`` when it has one block (so any entry value dominates it)."""
    blocks = list(func.regions[0].blocks)
    if len(blocks) != 1:
        return None
    ops = list(blocks[0].operations)
    if not ops or ops[-1].operation.name != "func.return":
        return None
    return ops[-1].operation


def set_return(func: ir.Operation, values: list[ir.Value], res_attrs: list[int] | None = None) -> None:
    """Makes the function's single ``func.return`` return ``values`` (callers checked that it
    has one); ``res_attrs`` are the kept results' old indices, new results get none."""
    ret = single_return(func)
    assert ret is not None, "callers check single_return first"
    ir.Operation.create("func.return", operands=values, loc=ret.location, ip=ir.InsertionPoint(ret))
    ret.erase()
    _update_attr_array(func, "res_attrs", res_attrs, len(values))
    _sync_function_type(func)


def append_result(func: ir.Operation, value: ir.Value) -> bool:
    ret = single_return(func)
    if ret is None:
        return False
    old = list(ret.operands)
    set_return(func, [*old, value], list(range(len(old))))
    return True


# A numerics reduction names each op's value (``VALUE_KEY`` on the op) and each argument's
# source (``ARG_SOURCE``), so an argument that stands in for an erased op is fed that op's value.
VALUE_KEY = "harness.value_key"
ARG_SOURCE = "harness.arg_source"


def add_argument(func: ir.Operation, type_: ir.Type, loc: ir.Location,
                 stands_for: tuple[ir.Operation, int] | None = None) -> ir.Value:
    """A new last argument. ``stands_for`` (op, result number): the value it replaces, named
    on the argument when the op carries a ``VALUE_KEY`` (numerics reductions only)."""
    block = entry_block(func)
    value = block.add_argument(type_, loc)
    _update_attr_array(func, "arg_attrs", list(range(len(block.arguments) - 1)), len(block.arguments))
    if stands_for is not None and VALUE_KEY in stands_for[0].attributes:
        key = ir.StringAttr(stands_for[0].attributes[VALUE_KEY]).value
        set_arg_source(func, len(block.arguments) - 1, f"{key}:{stands_for[1]}")
    _sync_function_type(func)
    return value


def set_arg_source(func: ir.Operation, index: int, source: str) -> None:
    """Names where argument ``index`` gets its value (``ARG_SOURCE`` in its attributes)."""
    count = len(entry_block(func).arguments)
    items = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else []
    items += [ir.DictAttr.get({}) for _ in range(count - len(items))]
    entries = {a.name: a.attr for a in ir.DictAttr(items[index])}
    entries[ARG_SOURCE] = ir.StringAttr.get(source)
    items[index] = ir.DictAttr.get(entries)
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(items)


def erase_arguments(func: ir.Operation, indices: range) -> bool:
    """Erases the arguments at ``indices``; a used one is replaced by a zero constant first.
    False (the function half-edited: the caller drops the clone) when one has none."""
    block = entry_block(func)
    total = len(block.arguments)
    for i in sorted(indices, reverse=True):
        arg = block.arguments[i]
        if has_uses(arg):
            first = next(iter(block.operations)).operation
            stand_in = insert_constant(arg.type, first, arg.location)
            if stand_in is None:
                return False
            arg.replace_all_uses_with(stand_in)
        block.erase_argument(i)
    _update_attr_array(func, "arg_attrs", [i for i in range(total) if i not in indices], len(block.arguments))
    _sync_function_type(func)
    return True


def _update_attr_array(func: ir.Operation, name: str, keep: list[int] | None, size: int) -> None:
    """Keeps ``arg_attrs``/``res_attrs`` (``torch.type_bound`` lives there) in step with the
    arguments or results: the entries at ``keep``, then empty ones up to ``size``."""
    if name not in func.attributes:
        return
    items = list(ir.ArrayAttr(func.attributes[name]))
    if keep is not None:
        items = [items[i] for i in keep if i < len(items)]
    items += [ir.DictAttr.get({}) for _ in range(size - len(items))]
    func.attributes[name] = ir.ArrayAttr.get(items)


def _sync_function_type(func: ir.Operation) -> None:
    """Sets ``function_type`` from the entry block's arguments and the return's operands."""
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    ret = single_return(func)
    results = [v.type for v in ret.operands] if ret is not None else list(old.results)
    inputs = [a.type for a in entry_block(func).arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


# --- stand-in values ----------------------------------------------------------------------------

# The zero constant of each torch scalar kind: its op and how to make its `value` attribute.
_SCALAR_ZEROS = {
    TypeKind.INT: ("torch.constant.int", lambda: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)),
    TypeKind.FLOAT: ("torch.constant.float", lambda: ir.FloatAttr.get_f64(0.0)),
    TypeKind.BOOL: ("torch.constant.bool", lambda: ir.BoolAttr.get(False)),
    TypeKind.NONE: ("torch.constant.none", None),
    TypeKind.STRING: ("torch.constant.str", lambda: ir.StringAttr.get("")),
    TypeKind.DEVICE: ("torch.constant.device", lambda: ir.StringAttr.get("cpu")),
}


def zero_element(element_type: ir.Type) -> ir.Attribute | None:
    """0 (false for i1) of an integer or float element type torch tensors use, else None."""
    et = element_type.maybe_downcast()
    if isinstance(et, ir.IntegerType) and (et.width in (8, 16, 32, 64) or (et.width == 1 and et.is_signless)):
        return ir.IntegerAttr.get(et, 0)
    if isinstance(et, ir.FloatType) and et.width in (16, 32, 64):
        return ir.FloatAttr.get(et, 0.0)
    return None


def zero_splat(shaped: ir.Type) -> ir.DenseElementsAttr | None:
    """``dense<0> : tensor<...>`` of a static builtin tensor type, or None."""
    info = tensor_info(shaped)
    return _zero_tensor(info) if info is not None else None


def _zero_tensor(info: TensorInfo) -> ir.DenseElementsAttr | None:
    if not info.is_static:
        return None
    zero = zero_element(info.dtype)
    if zero is None:
        return None
    return ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get(list(info.sizes), info.dtype), zero)  # type: ignore[arg-type]


def zero_constant(type_: ir.Type) -> tuple[str, ir.Attribute | None] | None:
    """(op name, ``value`` attribute) of a zero constant of exactly ``type_``, or None."""
    k = kind(type_)
    if k in _SCALAR_ZEROS:
        name, make = _SCALAR_ZEROS[k]
        return name, make() if make else None
    if k is TypeKind.VALUE_TENSOR:
        attr = _zero_tensor(tensor_info(type_))  # type: ignore[arg-type]
        return ("torch.vtensor.literal", attr) if attr is not None else None
    return None


def insert_constant(type_: ir.Type, before: ir.Operation, loc: ir.Location) -> ir.Value | None:
    spec = zero_constant(type_)
    if spec is None:
        return None
    name, value = spec
    op = ir.Operation.create(name, results=[type_], attributes={"value": value} if value else {},
                             loc=loc, ip=ir.InsertionPoint(before))
    return op.results[0]


def states_rank_and_dtype(type_: ir.Type) -> bool:
    """A value tensor or builtin tensor whose type gives its rank and dtype: a new argument of
    it tells the pipeline as much as the value it replaces."""
    info = tensor_info(type_)
    return info is not None and info.has_rank_and_dtype and kind(type_) in (
        TypeKind.VALUE_TENSOR, TypeKind.BUILTIN_TENSOR)


def is_scalar(type_: ir.Type) -> bool:
    return kind(type_).is_scalar


def returnable(type_: ir.Type) -> bool:
    """Types a function may return to keep a value alive without changing what it says."""
    return kind(type_) in (TypeKind.INT, TypeKind.FLOAT, TypeKind.BOOL) or states_rank_and_dtype(type_)


def same_typed_operands(op: ir.Operation) -> list[ir.Value | None] | None:
    """For each result of ``op``, an operand of exactly its type (None for an unused result);
    None when a used result has no such operand."""
    inputs: list[ir.Value | None] = []
    for result in op.results:
        if not has_uses(result):
            inputs.append(None)
            continue
        value = next((v for v in op.operands if v.type == result.type), None)
        if value is None:
            return None
        inputs.append(value)
    return inputs if op.results else None


# --- op units -----------------------------------------------------------------------------------


@dataclass
class Unit:
    """An op that reductions may remove: its parent unit (None at function level) and function."""

    op: ir.Operation
    parent: int | None
    func: ir.Operation | None


def op_units(module: ir.Operation) -> list[Unit]:
    """The ops inside top-level ops in pre-order; block terminators are not units."""
    units: list[Unit] = []

    def walk(op: ir.Operation, parent: int | None, func: ir.Operation | None) -> None:
        for region in op.regions:
            for block in region.blocks:
                ops = [o.operation for o in block.operations]
                for i, child in enumerate(ops):
                    if i == len(ops) - 1 and child.has_trait(ir.IsTerminatorTrait):
                        walk(child, parent, func)  # its regions (rare) still count
                        continue
                    units.append(Unit(child, parent, func))
                    walk(child, len(units) - 1, func)

    for top in children(module):
        walk(top, None, top if is_function(top) else None)
    return units


def covered(units: list[Unit], chosen: range | set[int]) -> set[int]:
    """The chosen units and every unit nested in one (pre-order: parents come first)."""
    out: set[int] = set()
    for i, unit in enumerate(units):
        if i in chosen or (unit.parent is not None and unit.parent in out):
            out.add(i)
    return out


def all_ops(module: ir.Operation) -> list[ir.Operation]:
    """Every op in the module, top-level ones included, in pre-order."""
    out: list[ir.Operation] = []
    stack = list(reversed(list(children(module))))
    while stack:
        op = stack.pop()
        out.append(op)
        stack.extend(reversed(list(children(op))))
    return out


# --- whole-op edits -----------------------------------------------------------------------------


def erase_with_constants(op: ir.Operation) -> bool:
    """Erases ``op``, its used results replaced by zero constants (a call of a dropped function)."""
    for r in op.results:
        if has_uses(r):
            stand_in = insert_constant(r.type, op, op.location)
            if stand_in is None:
                return False
            r.replace_all_uses_with(stand_in)
    op.erase()
    return True


def inline_region(op: ir.Operation, region: int) -> bool:
    """Replaces ``op`` by the body of its single-block, argument-free region ``region``."""
    blocks = list(op.regions[region].blocks)
    if len(blocks) != 1 or len(blocks[0].arguments):
        return False
    body = [o.operation for o in blocks[0].operations]
    if not body:
        return False
    term = body[-1]
    if len(term.operands) != len(op.results) or any(
            a.type != b.type for a, b in zip(term.operands, op.results, strict=False)):
        return False
    for child in body[:-1]:
        child.move_before(op)
    for res, val in zip(op.results, list(term.operands), strict=False):
        res.replace_all_uses_with(val)
    op.erase()
    return True


def _resource(attr: ir.Attribute) -> ir.DenseResourceElementsAttr | None:
    """``attr`` as a ``dense_resource`` (the bindings do not downcast it on their own)."""
    try:
        return ir.DenseResourceElementsAttr(attr)
    except ValueError:
        return None


def resource_literals(module: ir.Operation) -> list[ir.Operation]:
    """Ops whose ``value`` is a ``dense_resource`` (weights kept out of line)."""
    return [op for op in all_ops(module)
            if "value" in op.attributes and _resource(op.attributes["value"]) is not None]


def splat_resource(op: ir.Operation) -> bool:
    """The ``dense_resource`` of ``op`` as a zero splat of the same type."""
    splat = zero_splat(op.attributes["value"].type)
    if splat is None:
        return False
    op.attributes["value"] = splat
    return True


# --- the subject's slice --------------------------------------------------------------------------


def op_label(op: ir.Operation) -> str:
    """The op's name as a failure's subject spells it (``torch.operator "aten.x"``)."""
    name = op.name
    if name == "torch.operator" and "name" in op.attributes:
        return f'{name} "{ir.StringAttr(op.attributes["name"]).value}"'
    return name


def _can_stand_in(type_: ir.Type) -> bool:
    info = tensor_info(type_)
    return states_rank_and_dtype(type_) or (
        kind(type_) is TypeKind.TENSOR and info is not None and info.has_rank_and_dtype)


def _stand_in(func: ir.Operation, value: ir.Value, loc: ir.Location) -> ir.Value:
    """A new argument that replaces ``value``: of its type when that states rank and dtype;
    for a raw TorchScript tensor that does, a value tensor argument copied to it."""
    if states_rank_and_dtype(value.type):
        return add_argument(func, value.type, loc)
    vtype = ir.Type.parse(str(value.type).replace("!torch.tensor", "!torch.vtensor", 1))
    arg = add_argument(func, vtype, loc)
    first = entry_block(func).operations[0]
    copy = ir.Operation.create("torch.copy.to_tensor", results=[value.type], operands=[arg],
                               loc=loc, ip=ir.InsertionPoint(first))
    return copy.result


def slice_to(module: ir.Operation, subject: tuple[str, ...], depth: int | None,
             alone: bool = False) -> bool:
    """The first function-level op named in ``subject`` in a function nothing calls, with what
    computes its operands up to ``depth`` non-constant ops back (None: all of it), returned by
    its function; every other op of that function erased. An operand beyond ``depth`` becomes a
    new argument (``_stand_in``) or, when none can stand in for it, is kept with its own slice.
    ``alone``: every other top-level op (globals, other functions) goes too."""
    callers = symbol_users(module)
    for unit in op_units(module):
        if unit.parent is not None or unit.func is None or callers.get(sym_name(unit.func) or ""):
            continue
        if op_label(unit.op) in subject:
            func = unit.func
            if not _slice(func, unit.op, depth):
                return False
            if alone:
                for top in reversed(list(children(module))):
                    if top != func:
                        top.erase()
            return True
    return False


def _slice(func: ir.Operation, target: ir.Operation, depth: int | None) -> bool:
    # Ops are told apart by their index here: an Operation's hash changes when its operands do.
    ops = [o.operation for o in entry_block(func).operations]
    index = {op: i for i, op in enumerate(ops)}
    start = index[target]
    keep = {start}
    replaced: dict[tuple[int, int], ir.Value] = {}
    stack: list[tuple[int, int | None]] = [(start, depth)]
    while stack:
        at, left = stack.pop()
        for value in ops[at].operands:
            if not isinstance(value, ir.OpResult):
                continue
            owner = index.get(value.owner.operation if hasattr(value.owner, "operation") else value.owner)
            if owner is None or owner in keep:
                continue
            constant = ops[owner].name in CONSTANT_OPS or ops[owner].name == "torch.prim.ListConstruct"
            if not constant and left is not None and left <= 0 and _can_stand_in(value.type):
                replaced[(owner, value.result_number)] = value
                continue
            keep.add(owner)
            stack.append((owner, left if constant or left is None else left - 1))
    for (owner, _), value in sorted(replaced.items()):
        if owner not in keep:
            value.replace_all_uses_with(_stand_in(func, value, ops[owner].location))
    set_return(func, [r for r in target.results if returnable(r.type)])
    for i in reversed(range(len(ops) - 1)):
        if i not in keep:
            if any(has_uses(r) for r in ops[i].results):
                return False
            ops[i].erase()
    return True


def knock_out(module: ir.Operation, subject: tuple[str, ...]) -> bool:
    """Every op named in ``subject`` gone, so the pipeline may meet the next failure: its whole
    function when nothing calls it, else the op alone, each used result replaced by an operand
    of its type, a new argument (a function nothing calls) or a zero constant. False when none
    is found, nothing would be left, or some op has nothing to stand in for a used result."""
    callers = symbol_users(module)
    funcs = [t for t in children(module) if is_function(t)]
    hits = [u for u in op_units(module) if op_label(u.op) in subject]
    whole = {name for u in hits if u.parent is None and u.func is not None
             and (name := sym_name(u.func)) and not callers.get(name)}
    if not hits or len(whole) >= len(funcs):
        return False
    for unit in reversed(hits):
        func = unit.func
        name = sym_name(func) if func is not None else None
        if name in whole:
            continue
        free = func is not None and not callers.get(name or "")
        same = same_typed_operands(unit.op) or [None] * len(unit.op.results)
        for result, found in zip(unit.op.results, same, strict=False):
            if not has_uses(result):
                continue
            value = found
            if value is None and free and states_rank_and_dtype(result.type):
                value = add_argument(func, result.type, unit.op.location)
            if value is None:
                value = insert_constant(result.type, unit.op, unit.op.location)
            if value is None:
                return False
            result.replace_all_uses_with(value)
        unit.op.erase()
    for func in funcs:
        if sym_name(func) in whole:
            func.erase()
    return True


def drop_unused(func: ir.Operation) -> bool:
    """Constants and lists nothing uses, and arguments nothing uses, erased: edits that cannot
    change what the function computes, so they need no run to be kept."""
    block = entry_block(func)
    erased = False
    changed = True
    while changed:
        changed = False
        for op in reversed([o.operation for o in block.operations][:-1]):
            if (op.name in CONSTANT_OPS or op.name == "torch.prim.ListConstruct") and \
                    not any(has_uses(r) for r in op.results):
                op.erase()
                changed = erased = True
    for i in reversed(range(len(block.arguments))):
        if not has_uses(block.arguments[i]):
            erase_arguments(func, range(i, i + 1))
            erased = True
    return erased
