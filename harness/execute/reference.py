"""A reference evaluator for torch-dialect IR: a function run op by op in eager PyTorch.

Each op runs through its ``torch.ops`` overload (``ref_ops``), so the value of every SSA value
is what PyTorch computes for that op on those operands: expected values that owe nothing to any
lowering. It reads IR at the torch backend contract (after ``torchscript-to-torch`` or
``fx-to-torch``), raw FX-imported IR, and raw TorchScript-imported IR (object graph: slots,
methods, ``prim.If``/``prim.Loop``).

- Ops it cannot evaluate are found before anything runs and named in an UnsupportedOpsError.
- An op that raises in eager is a ReferenceEvaluationError naming the op and its location.
- Where a tensor differs from the dtype or static shape its IR type claims, a TypeNote says so
  (the lowered code follows the IR type; the note points at a refinement bug or at us).
- Ops drawing random numbers are listed: their values cannot match a lowering's.
"""

from __future__ import annotations

import os
import re
import time
from collections import ChainMap, Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator, MutableMapping, Sequence

import numpy as np
import torch

from harness.compiler.locations import first_file_location
from harness.errors import (
    InputFileError,
    InputsError,
    ReferenceEvaluationError,
    UnsupportedDTypeError,
    UnsupportedOpsError,
)

from .dtypes import DType, TensorSignature, TensorSpec, torch_tensor_spec
from .ref_ops import display_name, handler_for, is_random, why_unsupported
from .signature import find_function, function_name, public_functions

if TYPE_CHECKING:
    from torch_mlir import ir

# Ops that end a block: their operands are the block's results.
TERMINATORS = frozenset({"func.return", "torch.prim.If.yield", "torch.prim.Loop.condition",
                         "torch.global_slot.init"})
# Under ReferenceOptions.widen: casts between float dtypes keep the float64 value (the IR's
# to(float32) would round it back), and assertions of a tensor's dtype hold by construction.
FLOAT_CASTS = frozenset({"torch.aten.to.dtype", "torch.aten.to.dtype_layout", "torch.aten.to.other",
                         "torch.aten._to_copy", "torch.aten.type_as", "torch.prims.convert_element_type",
                         "torch.aten.to.prim_Device", "torch.aten.to.device"})
METADATA_ASSERTS = frozenset({"torch.aten._assert_tensor_metadata"})
# Ops that only declare structure (classes, slots): read where they are used, never evaluated.
STRUCTURE = frozenset({"func.func", "torch.class_type", "torch.attr", "torch.method", "torch.slot",
                       "torch.class_type_terminator", "torch.nn_module_terminator"})
MAX_TYPE_NOTES = 20

_MODULE_TYPE = re.compile(r'^!torch\.nn\.Module<"(?P<cls>[^"]+)">$')


@dataclass(frozen=True)
class ReferenceOptions:
    function: str | None = None  # entry; None = the only public function, or the root forward
    keep_values: bool = False    # record the values of every op of the entry function
    check_types: bool = True     # compare tensors with their IR types (dtype, static dims)
    # In float64 (the float64 rule's reference): float inputs and literals (weights) widened,
    # every float result widened, a float-to-float cast keeping its float64 operand; an op that
    # names a float dtype (softmax's, sum's) still computes in it before its result is widened.
    widen: bool = False


@dataclass
class ValueRecord:
    index: int      # the op's position in the entry function's body
    op: str
    location: str
    values: tuple


@dataclass
class TypeNote:
    op: str
    location: str
    result: int
    expected: str
    got: str

    def render(self) -> str:
        return (f"{self.op} at {self.location}: result {self.result} is {self.got}, "
                f"the IR says {self.expected}")


@dataclass
class ReferenceResult:
    function: str
    outputs: tuple
    ops_evaluated: int
    seconds: float
    random_ops: list[str] = field(default_factory=list)
    type_notes: list[TypeNote] = field(default_factory=list)
    values: list[ValueRecord] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"function": self.function, "ops_evaluated": self.ops_evaluated,
                "seconds": self.seconds, "random_ops": self.random_ops,
                "type_notes": [vars(n) for n in self.type_notes],
                "outputs": [describe_value(o) for o in self.outputs]}


@dataclass
class Coverage:
    """Which op kinds of a module the evaluator can and cannot evaluate, with their counts."""

    supported: dict[str, int]
    unsupported: dict[str, int]
    reasons: dict[str, str] = field(default_factory=dict)  # unsupported op -> why, when known

    @property
    def complete(self) -> bool:
        return not self.unsupported


@dataclass
class ScriptObject:
    """A ``torch.nn_module`` of raw TorchScript IR: its class and its slots' values."""

    class_name: str
    slots: dict[str, Any]


def describe_value(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"{DType.of(value).short}{list(value.shape)}".replace(" ", "")
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe_value(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def where(op: ir.Operation) -> str:
    """``file:line`` of an op's location (the first file location inside it), else its text."""
    text = str(op.location)
    found = first_file_location(text)
    return found.file_line if found is not None else text


def _walk(op: ir.Operation) -> Iterator[ir.Operation]:
    for region in op.regions:
        for block in region.blocks:
            for child in (o.operation for o in block.operations):
                yield child
                yield from _walk(child)


def coverage(module_op: ir.Operation) -> Coverage:
    """Op kinds of every function and module-level value of ``module_op``."""
    supported: Counter = Counter()
    unsupported: Counter = Counter()
    reasons: dict[str, str] = {}
    for op in _walk(module_op):
        kind = op.operation.name
        if kind in STRUCTURE or kind in TERMINATORS or kind == "torch.nn_module":
            continue
        name = display_name(op)
        if handler_for(op) is not None:
            supported[name] += 1
            continue
        unsupported[name] += 1
        reason = why_unsupported(op)
        if reason and name not in reasons:
            reasons[name] = f"{reason} (first at {where(op)})"
    return Coverage(dict(supported), dict(unsupported), reasons)


class _Evaluator:
    def __init__(self, module_op: ir.Operation, options: ReferenceOptions) -> None:
        from torch_mlir import ir

        self.ir = ir
        self.module = module_op
        self.options = options
        self.functions: dict[str, Any] = {}
        self.methods: dict[str, dict[str, str]] = {}
        self.objects: list[ScriptObject] = []
        self.module_env: dict = {}
        self.ops_evaluated = 0
        self.random_ops: list[str] = []
        self.type_notes: list[TypeNote] = []
        self.values: list[ValueRecord] = []
        self._scopes: list[ChainMap] = []
        for op in (o.operation for o in module_op.regions[0].blocks[0].operations):
            if op.operation.name == "func.func":
                self.functions[function_name(op)] = op
            elif op.operation.name == "torch.class_type":
                cls = ir.StringAttr(op.attributes["sym_name"]).value
                self.methods[cls] = {
                    ir.StringAttr(m.attributes["name"]).value:
                        ir.FlatSymbolRefAttr(m.attributes["function"]).value
                    for m in (x.operation for x in op.regions[0].blocks[0].operations)
                    if m.operation.name == "torch.method"}

    # --- structure ----------------------------------------------------------------------------

    def where(self, op: ir.Operation) -> str:
        return where(op)

    def evaluate_module_level(self) -> None:
        """Constants, literals and ``torch.nn_module`` objects outside functions (raw TorchScript)."""
        for op in (o.operation for o in self.module.regions[0].blocks[0].operations):
            if op.operation.name in STRUCTURE:
                continue
            if op.operation.name == "torch.nn_module":
                slots = {}
                for slot in (s.operation for s in op.regions[0].blocks[0].operations):
                    if slot.operation.name == "torch.slot":
                        name = self.ir.StringAttr(slot.attributes["name"]).value
                        slots[name] = self.module_env[slot.operands[0]]
                m = _MODULE_TYPE.match(str(op.results[0].type))
                obj = ScriptObject(m.group("cls") if m else "", slots)
                self.objects.append(obj)
                self.module_env[op.results[0]] = obj
            else:
                self.eval_op(op, self.module_env)

    def entry(self, name: str | None) -> tuple[ir.Operation, list[ScriptObject]]:
        """The entry function and the leading arguments it takes before the user's (self)."""
        if name is None and public_functions(self.module):
            return find_function(self.module, None, "the module"), []
        if name is not None and name in self.functions:
            func = self.functions[name]
        elif name is None and self.objects:
            nested = {id(v) for o in self.objects for v in o.slots.values()}
            roots = [o for o in self.objects if id(o) not in nested]
            if len(roots) != 1 or "forward" not in self.methods.get(roots[0].class_name, {}):
                raise InputFileError("the module has no public function and no single root "
                                     "nn.Module with a forward method; name one with --function.")
            func = self.functions[self.methods[roots[0].class_name]["forward"]]
        else:
            return find_function(self.module, name, "the module"), []
        args = list(func.regions[0].blocks[0].arguments)
        if args and (self_type := _MODULE_TYPE.match(str(args[0].type))):
            cls = self_type.group("cls")
            owners = [o for o in self.objects if o.class_name == cls]
            if len(owners) != 1:
                raise InputFileError(f"@{function_name(func)} is a method of {cls}, which has "
                                     f"{len(owners)} instances in the module; cannot pick self.")
            return func, [owners[0]]
        return func, []

    def get_slot(self, op: ir.Operation, obj: object, name: str) -> Any:
        if not isinstance(obj, ScriptObject) or name not in obj.slots:
            raise ReferenceEvaluationError(op.operation.name, self.where(op),
                                           f"the object has no slot {name!r}")
        return obj.slots[name]

    def set_slot(self, op: ir.Operation, obj: object, name: str, value: object) -> None:
        if not isinstance(obj, ScriptObject):
            raise ReferenceEvaluationError(op.operation.name, self.where(op),
                                           "SetAttr on a value that is not an object")
        obj.slots[name] = value

    def call_method(self, op: ir.Operation, obj: object, name: str, args: Sequence) -> list:
        symbol = self.methods.get(getattr(obj, "class_name", ""), {}).get(name)
        if symbol is None:
            raise ReferenceEvaluationError(op.operation.name, self.where(op),
                                           f"no method {name!r} on {obj!r}")
        return self.call(symbol, [obj, *args])

    def call(self, symbol: str, args: Sequence) -> list:
        func = self.functions.get(symbol)
        if func is None or not func.regions[0].blocks:
            raise ReferenceEvaluationError("func.call", symbol, "the callee has no body in the module")
        return self.run_region(func.regions[0], list(args), self.module_env)

    # --- evaluation ---------------------------------------------------------------------------

    def run_region(self, region: ir.Region, block_args: Sequence,
                   env: MutableMapping[ir.Value, Any] | None = None, record: bool = False) -> list:
        """Runs the first block of ``region`` with ``block_args``, in a scope over ``env`` (by
        default the scope of the op being evaluated: nested regions see outer values)."""
        block = region.blocks[0]
        parent = env if env is not None else (self._scopes[-1] if self._scopes else self.module_env)
        scope = ChainMap({}, parent)
        if len(block.arguments) != len(block_args):
            raise ReferenceEvaluationError("a region", "", f"{len(block_args)} values for "
                                           f"{len(block.arguments)} block arguments")
        for arg, value in zip(block.arguments, block_args, strict=False):
            scope[arg] = value
        self._scopes.append(scope)
        try:
            for index, op in enumerate(o.operation for o in block.operations):
                if op.operation.name in TERMINATORS:
                    return [scope[v] for v in op.operands]
                results = self.eval_op(op, scope)
                if record:
                    self.values.append(ValueRecord(index, op.operation.name, self.where(op), tuple(results)))
        finally:
            self._scopes.pop()
        return []

    def eval_op(self, op: ir.Operation, env: MutableMapping[ir.Value, Any]) -> Sequence:
        handler = handler_for(op)
        if handler is None:
            raise UnsupportedOpsError("?", {display_name(op): 1})
        args = [env[v] for v in op.operands]
        kept = _kept_wide(op, args) if self.options.widen else None
        results: Sequence
        if kept is not None:
            results = kept
        else:
            results = handler(self, op, args)
            if self.options.widen:
                results = tuple(widen(r) for r in results)
        self.ops_evaluated += 1
        if len(results) != len(op.results):
            raise ReferenceEvaluationError(op.operation.name, self.where(op),
                                           f"gave {len(results)} values for {len(op.results)} results")
        for i, (value, result) in enumerate(zip(results, op.results, strict=False)):
            env[result] = value
            if self.options.check_types and not self.options.widen and isinstance(value, torch.Tensor):
                self._check_type(op, i, value, result)
        if is_random(op):
            self.random_ops.append(f"{display_name(op)} at {self.where(op)}")
        return results

    def _check_type(self, op: ir.Operation, index: int, value: torch.Tensor, result: ir.OpResult) -> None:
        try:
            spec = torch_tensor_spec(str(result.type))
        except UnsupportedDTypeError:
            return
        if spec is None or len(self.type_notes) >= MAX_TYPE_NOTES:
            return
        got = TensorSpec(DType.of(value), tuple(value.shape))
        same_dims = len(spec.shape) == len(got.shape) and all(
            d is None or d == n for d, n in zip(spec.shape, got.shape, strict=False))
        if spec.dtype is not got.dtype or not same_dims:
            self.type_notes.append(TypeNote(display_name(op), self.where(op), index, spec.describe(),
                                            got.describe()))


def _to_torch(value: object) -> object:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.array(value, copy=True))
    if isinstance(value, torch.Tensor):
        return value.clone()
    return value


def entry_signature(module_op: ir.Operation, function: str | None = None) -> TensorSignature:
    """The tensor arguments (the user's: ``self`` of a raw TorchScript method is left out) and
    results of the function ``evaluate`` would run."""
    ev = _Evaluator(module_op, ReferenceOptions(function=function))
    if ev.functions and any(op.operation.name == "torch.nn_module"
                            for op in module_op.regions[0].blocks[0].operations):
        ev.evaluate_module_level()
    func, leading = ev.entry(function)
    from torch_mlir import ir

    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    args = []
    # `in` and [] as every MLIR bindings version has them
    arg_attrs = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None  # noqa: SIM401
    for i, t in enumerate(ftype.inputs):
        if i < len(leading):
            continue
        text = str(t)
        if arg_attrs is not None:  # raw TorchScript: !torch.tensor {torch.type_bound = !torch.vtensor<...>}
            attrs = ir.DictAttr(ir.ArrayAttr(arg_attrs)[i])
            if "torch.type_bound" in attrs:
                text = str(ir.TypeAttr(attrs["torch.type_bound"]).value)
        spec = torch_tensor_spec(text)
        if spec is None:
            raise UnsupportedDTypeError(text, f"argument {i} of @{function_name(func)}",
                                        "tensors with known shape rank and dtype")
        args.append(spec)
    # Results of a raw TorchScript method are !torch.tensor without dtype: left out then (the
    # RefBackend's results keep the dtypes it computed).
    specs = [torch_tensor_spec(str(t)) for t in ftype.results]
    results = [s for s in specs if s is not None] if all(specs) else []
    return TensorSignature(function_name(func), tuple(args), tuple(results))


def evaluate(module_op: ir.Operation, inputs: Sequence,
             options: ReferenceOptions = ReferenceOptions()) -> ReferenceResult:
    """Runs the entry function of ``module_op`` (an ``ir.Operation`` of a module) on ``inputs``
    (numpy arrays, torch tensors or Python scalars; copied, never changed)."""
    found = coverage(module_op)
    ev = _Evaluator(module_op, options)
    if found.unsupported:  # before the module-level values: the weights may not even be there
        named = options.function or (function_name(public_functions(module_op)[0])
                                     if len(public_functions(module_op)) == 1 else "forward")
        raise UnsupportedOpsError(named, found.unsupported, found.reasons)
    start = time.perf_counter()
    ev.evaluate_module_level()
    func, leading = ev.entry(options.function)
    expected = len(func.regions[0].blocks[0].arguments) - len(leading)
    if len(inputs) != expected:
        raise InputsError("the inputs", f"{len(inputs)} values for the {expected} arguments of "
                          f"@{function_name(func)}")
    given = [_to_torch(v) for v in inputs]
    outputs = ev.run_region(func.regions[0], [*leading, *(widen(v) for v in given)] if options.widen
                            else [*leading, *given],
                            ev.module_env, record=options.keep_values)
    return ReferenceResult(function_name(func), tuple(outputs), ev.ops_evaluated,
                           time.perf_counter() - start, ev.random_ops, ev.type_notes, ev.values)


def _kept_wide(op: ir.Operation, args: Sequence) -> tuple | None:
    """What an op gives in a float64 evaluation without running it (None: run it, then widen
    its results): a float-to-float cast keeps its operand's float64 value, a dtype assertion
    holds."""
    name = op.operation.name
    if name in METADATA_ASSERTS:
        return ()
    if name in FLOAT_CASTS and args and isinstance(args[0], torch.Tensor) and args[0].is_floating_point():
        try:
            spec = torch_tensor_spec(str(op.results[0].type))
        except UnsupportedDTypeError:
            return None
        if spec is not None and spec.dtype.is_float:
            return (args[0].clone(),)
    return None


def widen(value: object) -> object:
    """A float tensor (and the float tensors of a list or tuple) as float64; the rest as is."""
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
        return value.double()
    if isinstance(value, (list, tuple)):
        return type(value)(widen(v) for v in value)
    return value


class OpEvaluator:
    """One op of a module at a time, on operand values given: the float64 evaluation of an op
    on the reference's float32 operands (widened), by which the float64 rule measures the op's
    own error (``harness.execute.closeness``), apart from what its operands carry in."""

    def __init__(self, module_op: ir.Operation) -> None:
        self._ev = _Evaluator(module_op, ReferenceOptions(check_types=False, widen=True))

    def widened(self, op: ir.Operation, operands: Sequence) -> list | None:
        """The op's results on ``operands`` widened to float64; None when it cannot run so (an
        op with regions, a float32-only kernel, an op that raises)."""
        if len(op.regions) or handler_for(op) is None:
            return None
        env = dict(zip(op.operands, (widen(v.clone() if isinstance(v, torch.Tensor) else v)
                                     for v in operands), strict=False))
        try:
            with torch.no_grad():
                return list(self._ev.eval_op(op, env))
        except Exception:  # no float64 opinion: the flat tolerance judges the op
            return None


def evaluate_file(path: str | os.PathLike, inputs: Sequence,
                  options: ReferenceOptions = ReferenceOptions()) -> ReferenceResult:
    """``evaluate`` on the IR file at ``path`` (text or bytecode)."""
    from torch_mlir import ir

    from harness.compiler.mlir import new_context

    with new_context():
        try:
            module = ir.Module.parseFile(os.fspath(path))
        except ir.MLIRError as e:
            raise InputFileError(
                f"cannot parse {path} as torch-dialect IR: {str(e).splitlines()[0][:300]}. Give "
                "the reference evaluator IR of the torch level (imported, or after "
                "torchscript-to-torch / fx-to-torch)."
            ) from None
        return evaluate(module.operation, inputs, options)
