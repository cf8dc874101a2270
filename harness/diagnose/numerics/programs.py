"""Programs cut out of a function at the torch backend contract, fed the reference's values.

The entry function's body is a list of ops; a *cut* after op ``j`` splits it in two. The values
that cross a cut (defined at or before it, used after it) are its *frontier*. A program
``(start, end]`` takes the frontier of ``start`` as arguments, runs the ops after ``start`` up
to ``end``, and returns the frontier of ``end`` that it computed (the function's own results
when ``end`` is the end). Fed the values the reference evaluator recorded for its arguments, a
program's expected results are the recorded values of what it returns: so every piece of the
function can be lowered and checked on its own, with right inputs.

- Constants, literals and lists of constants never cross a cut (every program keeps the ones it
  uses); a cut is *valid* only when everything else crossing it is a ``!torch.vtensor`` with a
  rank and a dtype whose recorded value fits its type.
- Literals with more than ``LITERAL_ARG_ELEMENTS`` elements (weights) become arguments, so a
  program's text stays small and a piece of a big model compiles in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch_mlir import ir

from harness.compiler.mlir import print_op
from harness.execute.dtypes import DType, TensorSignature, torch_tensor_spec
from harness.execute.reference import ReferenceResult, where
from harness.execute.signature import find_function, signature_of
from harness.errors import UnsupportedDTypeError

LITERAL_ARG_ELEMENTS = 16
END = 1 << 30  # the cut after the last op: the function's own results
_CONSTANT_PREFIXES = ("torch.constant.",)
_LITERALS = frozenset({"torch.vtensor.literal"})


@dataclass(frozen=True)
class ValueRef:
    """A value of the entry function: result ``index`` of the op at ``op``, or argument
    ``index`` when ``op`` is -1."""

    op: int
    index: int


@dataclass
class CutProgram:
    """A piece of the function as a module of its own, and where its values come from."""

    text: str
    start: int                       # the cut it starts after (-1: the function's start)
    end: int                         # the cut it ends at (END: the function's end)
    args: list[ValueRef]             # what feeds each argument
    results: list[ValueRef]          # what each result is
    signature: TensorSignature
    ops: list[int] = field(default_factory=list)  # positions of the computing ops it keeps

    def inputs(self, values: Values) -> list[np.ndarray]:
        return [values.array(ref) for ref in self.args]

    def expected(self, values: Values) -> list:
        return [values.get(ref) for ref in self.results]


class Values:
    """The recorded value of every entry-function value: arguments and op results."""

    def __init__(self, inputs: Sequence[npt.ArrayLike], reference: ReferenceResult) -> None:
        self.inputs = [np.asarray(a) for a in inputs]
        self.by_op = {v.index: v.values for v in reference.values}

    def get(self, ref: ValueRef) -> Any:  # what the op gave: a tensor, an array, an int, a list...
        if ref.op < 0:
            return self.inputs[ref.index]
        return self.by_op[ref.op][ref.index]

    def array(self, ref: ValueRef) -> np.ndarray:
        value = self.get(ref)
        if isinstance(value, torch.Tensor):
            return value.detach().contiguous().numpy().copy()
        return np.asarray(value)

    def fits(self, ref: ValueRef, type_: ir.Type) -> bool:
        """Whether the recorded value can stand for a value of ``type_`` as an argument."""
        try:
            spec = torch_tensor_spec(str(type_))
        except UnsupportedDTypeError:
            return False
        value = self.by_op.get(ref.op, ())[ref.index] if ref.op >= 0 else self.inputs[ref.index]
        if spec is None or not isinstance(value, (torch.Tensor, np.ndarray)):
            return False
        try:
            got = DType.of(value)
        except UnsupportedDTypeError:
            return False
        if got is DType.BFLOAT16:  # cannot cross into numpy (DType.numpy refuses it)
            return False
        return got is spec.dtype and len(spec.shape) == value.ndim and all(
            d is None or d == n for d, n in zip(spec.shape, value.shape, strict=False))


def _is_constant(op: ir.Operation) -> bool:
    name = op.operation.name
    return name.startswith(_CONSTANT_PREFIXES) or name in _LITERALS


def _has_tensor_type(values: Iterable[ir.Value]) -> bool:
    return any("tensor" in str(v.type) for v in values)


class Cuts:
    """The entry function's ops, which of them may move into any program, and where it may be cut."""

    def __init__(self, module: ir.Operation, function: str, values: Values):
        self.module = module
        self.function = function
        self.values = values
        func = find_function(module, function, "the module")
        self.block = func.regions[0].blocks[0]
        body = [o.operation for o in self.block.operations]
        self.ops = body[:-1]
        self.position = {op: i for i, op in enumerate(self.ops)}
        n = len(self.ops)
        self.movable = movable_flags(self.ops)
        self.last_use: dict[ValueRef, int] = {}
        for q, op in enumerate(body):
            for user in _with_nested(op):
                for v in user.operands:
                    p = self._owner(v)
                    if p is not None:
                        ref = ValueRef(p, v.result_number)
                        self.last_use[ref] = max(self.last_use.get(ref, -1), q)
        # (defining op, result), last use: in program order, sorted once
        self._live = sorted(self.last_use.items(), key=lambda kv: (kv[0].op, kv[0].index))
        self.valid = self._valid_cuts(n)

    def _owner(self, value: ir.Value) -> int | None:
        """The position of the op that defines ``value`` in the entry block, if one does."""
        if not isinstance(value, ir.OpResult):
            return None
        owner = value.owner
        return self.position.get(owner.operation if hasattr(owner, "operation") else owner)

    def frontier(self, cut: int) -> list[ValueRef]:
        """Non-movable values defined at or before ``cut`` and used after it."""
        if cut < 0:
            return []
        return [ref for ref, last in self._live if ref.op <= cut < last and not self.movable[ref.op]]

    def _valid_cuts(self, n: int) -> list[int]:
        """The computing ops after which the program may be cut: every value live across the
        cut (its frontier) has a recorded value that fits its type. Each value is checked once
        and the cuts are swept with a count of the misfits live across them; a frontier per cut
        took gemma3n_vision's 3,226 cuts 40 s."""
        misfits = [0] * (n + 1)  # +1 where a misfit's live range starts, -1 where it ends
        for ref, last in self._live:
            if self.movable[ref.op] or last <= ref.op or self._fits(ref):
                continue
            misfits[ref.op] += 1
            misfits[min(last, n)] -= 1
        valid, live = [], 0
        for j in range(n):
            live += misfits[j]
            if not self.movable[j] and live == 0:
                valid.append(j)
        return valid

    def _fits(self, ref: ValueRef) -> bool:
        try:
            return self.values.fits(ref, self.ops[ref.op].results[ref.index].type)
        except (IndexError, KeyError):  # no value recorded for it: it cannot stand as an argument
            return False

    def computing(self) -> list[int]:
        """Positions of the ops that compute (not constants, literals or lists of constants)."""
        return [i for i in range(len(self.ops)) if not self.movable[i]]

    def label(self, position: int) -> str:
        op = self.ops[position]
        return op.operation.name.removeprefix("torch.")

    def location(self, position: int) -> str:
        return where(self.ops[position])

    def build(self, start: int, end: int, *, literal_args: bool = True,
              observe: tuple[int, ...] = (), returning: tuple[ValueRef, ...] = ()) -> CutProgram:
        """The program ``(start, end]``; see the module docstring. ``literal_args``: weights
        (literals of more than LITERAL_ARG_ELEMENTS elements) as arguments. ``observe``: ops
        whose results are returned too, after its own (the values inside a program).
        ``returning``: these values only, instead of the frontier of ``end`` (what feeds them)."""
        with self.module.context, ir.Location.unknown():
            clone = self.module.clone()
            try:
                return self._build(clone, start, end, literal_args, observe, returning)
            finally:
                clone.erase()

    def _build(self, clone: ir.Operation, start: int, end: int, literal_args: bool,
               observe: tuple[int, ...] = (), returning: tuple[ValueRef, ...] = ()) -> CutProgram:
        func = find_function(clone, self.function, "the module")
        block = func.regions[0].blocks[0]
        body = [o.operation for o in block.operations]
        ops, ret = body[:-1], body[-1]
        args: list[ValueRef] = [ValueRef(-1, i) for i in range(len(block.arguments))]
        # The frontier of start becomes arguments.
        for ref in self.frontier(start):
            value = ops[ref.op].results[ref.index]
            value.replace_all_uses_with(block.add_argument(value.type, ops[ref.op].location))
            args.append(ref)
        # What the program returns.
        if end >= len(ops) - 1 or end == END:
            end = END
            returned = list(ret.operands)
            results = [self._ref_of(v, ops, block, args) for v in returned]
        else:
            results = list(returning) or [ref for ref in self.frontier(end) if ref.op > start]
            returned = [ops[ref.op].results[ref.index] for ref in results]
        for p in observe:
            for i, value in enumerate(ops[p].results):
                if start < p and self.values.fits(ValueRef(p, i), value.type):
                    returned.append(value)
                    results.append(ValueRef(p, i))
        ir.Operation.create("func.return", operands=returned, loc=ret.location, ip=ir.InsertionPoint(ret))
        ret.erase()
        alive = _erase_unused(ops, start, len(ops) if end == END else end)
        kept = sorted(p for p in alive if not self.movable[p])
        if literal_args:
            args += _weights_to_arguments(ops, sorted(alive), block)
        return _finished(clone, func, args, returned, results, start, end, kept)

    def isolated(self, positions: list[int]) -> CutProgram:
        """Every op of ``positions`` fed the reference's values: each operand a computing op (or
        the function's argument) defines becomes an argument of its own, so one run gives each
        op's own output on exact operands, free of what the ops before it carry in (the float64
        rule's measure of one op, for all of them in one lowering). Ops that cannot stand so
        (an operand with no value that fits its type, regions) are left out; ``ops`` lists the
        ones kept, and the results are theirs, in order."""
        with self.module.context, ir.Location.unknown():
            clone = self.module.clone()
            try:
                return self._isolated(clone, positions)
            finally:
                clone.erase()

    def _isolated(self, clone: ir.Operation, positions: list[int]) -> CutProgram:
        func = find_function(clone, self.function, "the module")
        block = func.regions[0].blocks[0]
        body = [o.operation for o in block.operations]
        ops, ret = body[:-1], body[-1]
        originals = self.ops
        args: list[ValueRef] = [ValueRef(-1, i) for i in range(len(block.arguments))]
        fed: dict[ValueRef, ir.Value] = {ValueRef(-1, i): a for i, a in enumerate(block.arguments)}
        kept: list[int] = []
        returned: list[ir.Value] = []
        results: list[ValueRef] = []
        for p in positions:
            op = ops[p]
            refs = [value_ref(self, v) for v in originals[p].operands]
            if len(op.regions) or any(r is None for r in refs):
                continue
            feeds = [r for r in refs if r is not None and (r.op < 0 or not self.movable[r.op])]
            if any(r.op >= 0 and not self._fits(r) for r in feeds):
                continue
            own = [ValueRef(p, i) for i, v in enumerate(op.results)
                   if self.values.fits(ValueRef(p, i), v.type)]
            if not own:
                continue
            for i, r in enumerate(refs):
                if r is None or (r.op >= 0 and self.movable[r.op]):
                    continue
                if r not in fed:
                    source = ops[r.op].results[r.index] if r.op >= 0 else block.arguments[r.index]
                    fed[r] = block.add_argument(source.type, op.location)
                    args.append(r)
                op.operands[i] = fed[r]
            kept.append(p)
            returned += [op.results[ref.index] for ref in own]
            results += own
        ir.Operation.create("func.return", operands=returned, loc=ret.location, ip=ir.InsertionPoint(ret))
        ret.erase()
        keep = set(kept)
        alive = []
        for p in range(len(ops) - 1, -1, -1):
            if p in keep or any(_has_uses(r) for r in ops[p].results):
                alive.append(p)
            else:
                ops[p].erase()
        args += _weights_to_arguments(ops, sorted(alive), block)
        return _finished(clone, func, args, returned, results, -1, END, kept)

    def _ref_of(self, value: ir.Value, ops: list[ir.Operation], block: ir.Block,
                args: list[ValueRef]) -> ValueRef:
        if isinstance(value, ir.BlockArgument):
            return args[value.arg_number]
        owner = value.owner
        return ValueRef(ops.index(owner.operation if hasattr(owner, "operation") else owner),
                        value.result_number)


def _finished(clone: ir.Operation, func: ir.Operation, args: list[ValueRef], returned: list,
              results: list[ValueRef], start: int, end: int, kept: list[int]) -> CutProgram:
    """The cut-out function's unused arguments dropped and its type set: the program."""
    block = func.regions[0].blocks[0]
    _erase_unused_arguments(block, args)
    for name in ("arg_attrs", "res_attrs"):
        if name in func.attributes:
            del func.attributes[name]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in returned]))
    return CutProgram(print_op(clone), start, end, args, results, signature_of(func), kept)


def movable_flags(ops: list[ir.Operation]) -> list[bool]:
    """For each op of a block: whether it only makes a constant (a constant, a literal, a list
    or scalar computed from constants), which any program may carry along."""
    position = {op: i for i, op in enumerate(ops)}
    flags = [False] * len(ops)
    for i, op in enumerate(ops):
        def from_movable(v: ir.Value) -> bool:
            if not isinstance(v, ir.OpResult):
                return False
            owner = v.owner.operation if hasattr(v.owner, "operation") else v.owner
            return owner in position and flags[position[owner]]
        pure_scalar = (not len(op.regions) and not _has_tensor_type(op.operands)
                       and not _has_tensor_type(op.results) and len(op.results) > 0)
        flags[i] = _is_constant(op) or (pure_scalar and all(from_movable(v) for v in op.operands))
    return flags


def computing_ops(module: ir.Operation, function: str | None = None) -> list[str]:
    """The names of the ops of the entry function that compute (what "ops" means for a
    miscompile: constants, literals and lists of constants are not counted)."""
    func = find_function(module, function, "the module")
    ops = [o.operation for o in func.regions[0].blocks[0].operations][:-1]
    return [op.operation.name for op, movable in zip(ops, movable_flags(ops), strict=False) if not movable]


def _with_nested(op: ir.Operation) -> Iterator[ir.Operation]:
    yield op
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield from _with_nested(child.operation)


def _erase_unused(ops: list, start: int, last: int) -> list[int]:
    """Everything nothing uses goes, from the back; ops without results stay inside the piece
    (``start`` < position <= ``last``). The positions left, last first."""
    alive: list[int] = []
    for p in range(len(ops) - 1, -1, -1):
        op = ops[p]
        if any(_has_uses(r) for r in op.results) or (not len(op.results) and start < p <= last):
            alive.append(p)
        else:
            op.erase()
    return alive


def _weights_to_arguments(ops: list, alive: list[int], block: ir.Block) -> list[ValueRef]:
    """Large literals among ``alive`` become arguments of ``block``: their references, in order."""
    added: list[ValueRef] = []
    for p in alive:
        op = ops[p]
        if op.operation.name not in _LITERALS or _elements(op.results[0].type) <= LITERAL_ARG_ELEMENTS:
            continue
        value = op.results[0]
        value.replace_all_uses_with(block.add_argument(value.type, op.location))
        added.append(ValueRef(p, 0))
        op.erase()
    return added


def _erase_unused_arguments(block: ir.Block, args: list[ValueRef]) -> None:
    """Arguments nothing uses go, from ``block`` and from ``args`` (one reference per argument)."""
    for i in range(len(block.arguments) - 1, -1, -1):
        if not _has_uses(block.arguments[i]):
            block.erase_argument(i)
            del args[i]


def _has_uses(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is not None


def _elements(type_: ir.Type) -> int:
    spec = torch_tensor_spec(str(type_))
    if spec is None or any(d is None for d in spec.shape):
        return LITERAL_ARG_ELEMENTS + 1
    dims = [d for d in spec.shape if d is not None]  # every one: none is dynamic
    return int(np.prod(dims, dtype=np.int64)) if dims else 1


def value_ref(cuts: Cuts, value: ir.Value) -> ValueRef | None:
    """Which entry-function value ``value`` is (None: defined elsewhere)."""
    if isinstance(value, ir.BlockArgument):
        return ValueRef(-1, value.arg_number)
    p = cuts._owner(value)
    return ValueRef(p, value.result_number) if p is not None else None
