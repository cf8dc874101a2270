"""The reductions, one small class each, under one delta-debugging loop.

A reduction numbers the parts of the best input so far (``count``) and removes a chunk of them
from a copy (``remove``); ``delta_debug`` tries chunks of n/2, n/4, ... 1 parts, last chunk
first, and a state keeps a copy that is smaller and still fails the same way. The IR state
edits clones of an MLIR module on the bindings; the line state, for inputs the bindings cannot
read, edits a list of lines; both go through the same loop.

The IR schedule (``reduce_ir``), largest first: dense resource weights to zero splats, whole
symbols (functions and the ops that reference them), ops (a used result becomes a new function
argument or a zero constant of its type; values an erased op used are returned so the chain
that fails stays alive), function results, dead ops, ops bypassed (a result replaced by an
operand of its type), regions inlined, function arguments, and the binary's own
``symbol-dce``/``canonicalize``; rounds of it until one finds nothing.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from enum import Enum
from functools import partial
from typing import Any, Protocol

from torch_mlir import ir

from harness.compiler.mlir import children, parse_ir
from harness.enums import ParsableEnum

from . import edits
from .session import IRState, LineState

CLEANUP_PIPELINES = ("builtin.module(symbol-dce)", "builtin.module(canonicalize,symbol-dce)")


class State(Protocol):
    """The best input so far; ``attempt`` keeps an edited copy that is smaller and fails alike."""

    best: Any
    metric: tuple[int, int]  # (ops, characters): a kept copy is smaller, so the search ends

    def attempt(self, edit: Callable[[Any], bool], what: str) -> bool: ...


class Reduction(ABC):
    @abstractmethod
    def apply(self, state: State) -> None: ...


class First(Enum):
    """The chunk size delta debugging starts with."""

    HALF = "half"      # n/2, n/4, ... 1
    WHOLE = "whole"    # everything at once, then halves: for edits that never add ops
    SINGLE = "single"  # one part at a time


class Chunked(Reduction):
    """A reduction over numbered parts of the input, driven by ``delta_debug``."""

    what = ""
    first = First.HALF

    @abstractmethod
    def count(self, best: Any) -> int: ...

    @abstractmethod
    def remove(self, candidate: Any, chunk: range) -> bool:
        """Removes the parts in ``chunk`` from ``candidate`` in place; False: not possible."""

    def label(self, chunk: range) -> str:
        return f"{self.what} [{chunk.start}:{chunk.stop}]"

    def apply(self, state: State) -> None:
        delta_debug(state, self)


def delta_debug(state: State, reduction: Chunked) -> None:
    """Chunks of n/2, n/4, ... 1 parts, last chunk first. A kept removal leaves the parts before
    it where they were, so the sweep goes on from there."""
    def count() -> int:
        return reduction.count(state.best)

    if reduction.first is First.SINGLE:
        size = 1
    else:
        size = max(1, count() if reduction.first is First.WHOLE else count() // 2)
    while True:
        end = count()
        while end > 0:
            chunk = range(max(0, end - size), end)
            state.attempt(functools.partial(reduction.remove, chunk=chunk), reduction.label(chunk))
            end = min(chunk.start, count())
        if size == 1:
            return
        size //= 2


def run_rounds(state: State, prelude: Sequence[Reduction], rounds: Sequence[Reduction]) -> None:
    """The prelude once, then rounds of every reduction until one finds nothing."""
    for reduction in prelude:
        reduction.apply(state)
    while True:
        before = state.metric
        for reduction in rounds:
            reduction.apply(state)
        if state.metric == before:
            return


# --- the IR reductions ---------------------------------------------------------------------------


def reduce_ir(state: IRState) -> None:
    options = state.session.options
    cleanup = [Cleanup()] if options.cleanup else []
    prelude = [SliceToSubject(), *([SplatWeights()] if options.splat_weights else []), *cleanup]
    run_rounds(state, prelude, [
        DropSymbols(),
        DropOps(Substitute.MIXED), DropResults(), DropDead(),
        DropOps(Substitute.MIXED, First.SINGLE), DropOps(Substitute.ARGS, First.SINGLE),
        DropOps(Substitute.CONSTANTS, First.SINGLE), DropResults(), DropDead(),
        BypassOps(), DropDead(),
        InlineRegions(), DropArgs(), *cleanup])


class SliceToSubject(Reduction):
    """The subject op (``subject``) with only what computes its operands, in one edit: first
    alone (its tensor operands as arguments), then one op deep, then with its whole backward
    slice. Big inputs whose every try is slow (a pass on a whole model) shrink in one try."""

    def apply(self, state: State) -> None:
        self.kept(state)

    @staticmethod
    def kept(state: State) -> bool:
        """Whether one of the slices was kept (tried smallest first)."""
        assert isinstance(state, IRState)
        subject = state.session.subject
        if not subject:
            return False
        for depth in (0, 1, None):
            for alone in (True, False):
                if state.attempt(partial(edits.slice_to, subject=subject, depth=depth, alone=alone),
                                 f"the subject {subject[0]} and its operands"
                                 + ("" if depth is None else f" {depth} deep")
                                 + (", its function alone" if alone else "")):
                    return True
        return False


class SplatWeights(Chunked):
    """``dense_resource`` literals as zero splats: all at once, then halves (never adds ops)."""

    what = "weights as zero splats"
    first = First.WHOLE

    def count(self, best: ir.Operation) -> int:
        return len(edits.resource_literals(best))

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        literals = edits.resource_literals(candidate)
        return all(edits.splat_resource(literals[i]) for i in chunk)


class DropSymbols(Chunked):
    """Whole top-level ops (functions, globals, class types), with the ops that reference them."""

    what = "dropped symbols"

    def count(self, best: ir.Operation) -> int:
        return sum(1 for _ in children(best))

    def apply(self, state: State) -> None:
        if self.count(state.best) > 1:
            super().apply(state)

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        tops = list(children(candidate))
        if len(tops) - len(chunk) < 1:
            return False
        names = {n for i in chunk if (n := edits.sym_name(tops[i]))}
        users = edits.symbol_users(candidate)
        referencing = dict.fromkeys(u for n in names for u in users.get(n, []))
        if not all(edits.erase_with_constants(u) for u in referencing):
            return False
        for op in reversed([tops[i] for i in chunk]):  # users (a parent nn_module) come after what they use
            if any(edits.has_uses(r) for r in op.results):
                return False
            op.erase()
        return True


class Substitute(ParsableEnum):
    """What stands in for the used results of the ops ``DropOps`` erases."""

    MIXED = "mixed"          # scalars: zero constants; tensors: new function arguments
    ARGS = "args"            # new function arguments only
    CONSTANTS = "constants"  # zero constants only


class Plan(ParsableEnum):
    """What becomes of one result of an op being erased."""

    UNUSED = "unused"      # nothing uses it
    CONSTANT = "constant"  # a zero constant of its type
    ARGUMENT = "argument"  # a new argument of its function, of its type
    KEEP = "keep"          # nothing may stand in for it: the op stays


def plan(result: ir.Value, op: ir.Operation, substitute: Substitute, free: bool) -> Plan:
    """How ``result`` of ``op`` is replaced; ``free``: its function's signature may change.

    Only a tensor whose type gives rank and dtype becomes an argument. A scalar only ever
    becomes a constant, and a scalar constant stays: its value may be a size or a dim.
    """
    if not edits.has_uses(result):
        return Plan.UNUSED
    constant = edits.zero_constant(result.type) is not None and op.operation.name not in edits.CONSTANT_OPS
    argument = free and edits.states_rank_and_dtype(result.type)
    if substitute is Substitute.ARGS:
        return Plan.ARGUMENT if argument else Plan.KEEP
    if substitute is Substitute.CONSTANTS or edits.is_scalar(result.type):
        return Plan.CONSTANT if constant else Plan.KEEP
    if argument:
        return Plan.ARGUMENT
    # A tensor literal may still shrink to a zero one of its type.
    return Plan.CONSTANT if edits.zero_constant(result.type) is not None else Plan.KEEP


class DropOps(Chunked):
    """A chunk of ops erased; their used results get stand-ins (``plan``), and an operand whose
    last user goes is returned by its function, so the chain that computes it stays alive."""

    def __init__(self, substitute: Substitute, first: First = First.HALF):
        self.substitute = substitute
        self.first = first
        self.what = f"dropped ops ({substitute.value})"

    def count(self, best: ir.Operation) -> int:
        return len(edits.op_units(best))

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        units = edits.op_units(candidate)
        callers = edits.symbol_users(candidate)
        gone = edits.covered(units, chunk)
        index = {u.op: i for i, u in enumerate(units)}
        to_return: dict[tuple[int, int], ir.Value] = {}
        erased = 0
        for i in sorted(chunk, reverse=True):
            unit = units[i]
            if unit.parent in gone:
                continue  # goes with its parent
            free = unit.func is not None and not callers.get(edits.sym_name(unit.func) or "")
            plans = [plan(r, unit.op, self.substitute, free) for r in unit.op.results]
            if Plan.KEEP in plans:
                continue
            for result, p in zip(unit.op.results, plans, strict=False):
                if p is Plan.CONSTANT:
                    result.replace_all_uses_with(
                        edits.insert_constant(result.type, unit.op, unit.op.location))
                elif p is Plan.ARGUMENT:
                    result.replace_all_uses_with(edits.add_argument(
                        unit.func, result.type, unit.op.location, (unit.op, result.result_number)))
            if free:
                to_return.update(self._operands_worth_returning(unit.op, units, index, gone))
            unit.op.erase()
            erased += 1
        for (j, _), value in sorted(to_return.items()):
            if not edits.has_uses(value):
                edits.append_result(units[j].func, value)
        return erased > 0

    @staticmethod
    def _operands_worth_returning(op: ir.Operation, units: list[edits.Unit], index: dict,
                                  gone: set[int]) -> dict[tuple[int, int], ir.Value]:
        """Results of function-level, non-constant ops that stay, which ``op`` uses."""
        found = {}
        for value in op.operands:
            if not isinstance(value, ir.OpResult) or not edits.returnable(value.type):
                continue
            owner = value.owner.operation if hasattr(value.owner, "operation") else value.owner
            j = index.get(owner)
            if (j is None or j in gone or units[j].parent is not None
                    or owner.operation.name in edits.CONSTANT_OPS):
                continue
            found[(j, value.result_number)] = value
        return found


class BypassOps(Chunked):
    """A chunk of ops erased, each used result replaced by an operand of exactly its type (an
    op's input standing in for its output). What removes ops where no argument may stand in:
    raw TorchScript IR, whose ``!torch.tensor`` values state neither rank nor dtype."""

    what = "bypassed ops"

    def count(self, best: ir.Operation) -> int:
        return len(edits.op_units(best))

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        units = edits.op_units(candidate)
        gone = edits.covered(units, chunk)
        bypassed = 0
        for i in sorted(chunk, reverse=True):
            unit = units[i]
            if unit.parent in gone:
                continue
            inputs = edits.same_typed_operands(unit.op)
            if inputs is None:
                continue
            for result, value in zip(unit.op.results, inputs, strict=False):
                if value is not None:
                    result.replace_all_uses_with(value)
            unit.op.erase()
            bypassed += 1
        return bypassed > 0


class PerFunction(Chunked):
    """A reduction over one function's parts, run for each function nothing names (so its
    signature may change)."""

    template = "{}"  # what, of the function's name

    def __init__(self, function: str = ""):
        self.function = function
        self.what = self.template.format(function)

    def apply(self, state: State) -> None:
        for name in edits.uncalled_functions(state.best):
            bound = type(self)(name)
            if bound.count(state.best):
                delta_debug(state, bound)


class DropResults(PerFunction):
    """Return operands."""

    template = "dropped results of @{}"

    def _return(self, module: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
        func = edits.find_function(module, self.function)
        ret = edits.single_return(func) if func is not None else None
        return (func, ret) if ret is not None else None

    def count(self, best: ir.Operation) -> int:
        found = self._return(best)
        return len(found[1].operands) if found else 0

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        found = self._return(candidate)
        if found is None:
            return False
        func, ret = found
        keep = [i for i in range(len(ret.operands)) if i not in chunk]
        edits.set_return(func, [ret.operands[i] for i in keep], keep)
        return True


class DropArgs(PerFunction):
    """Arguments: unused ones erased, used ones replaced by zero constants."""

    template = "dropped arguments of @{}"

    def count(self, best: ir.Operation) -> int:
        func = edits.find_function(best, self.function)
        return len(edits.entry_block(func).arguments) if func is not None else 0

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        func = edits.find_function(candidate, self.function)
        return func is not None and edits.erase_arguments(func, chunk)


class DropDead(Reduction):
    """Every op whose results nobody uses, all at once (delta debugging does the rest)."""

    def apply(self, state: State) -> None:
        state.attempt(self.remove, "dropped dead ops")

    @staticmethod
    def remove(candidate: ir.Operation) -> bool:
        erased_any, changed = False, True
        while changed:
            changed = False
            for unit in reversed(edits.op_units(candidate)):
                op = unit.op
                if len(op.results) and not any(edits.has_uses(r) for r in op.results):
                    op.erase()
                    changed = erased_any = True
        return erased_any


class InlineRegions(Chunked):
    """An op replaced by the body of one of its single-block, argument-free regions."""

    first = First.SINGLE

    @staticmethod
    def _regions(module: ir.Operation) -> list[tuple[ir.Operation, int]]:
        return [(u.op, r) for u in edits.op_units(module) for r in range(len(u.op.regions))]

    def count(self, best: ir.Operation) -> int:
        return len(self._regions(best))

    def remove(self, candidate: ir.Operation, chunk: range) -> bool:
        op, region = self._regions(candidate)[chunk.start]
        return edits.inline_region(op, region)

    def label(self, chunk: range) -> str:
        return "inlined a region"


class Cleanup(Reduction):
    """The binary's own cleanups, kept only when the failure survives them."""

    def apply(self, state: State) -> None:
        assert isinstance(state, IRState)
        src = state.session.workdir / "cleanup-in.mlir"
        dst = state.session.workdir / "cleanup-out.mlir"
        for pipeline in CLEANUP_PIPELINES:
            src.write_text(state.text)
            record = state.session.run(src, pipeline, dst, ("-mlir-print-debuginfo",))
            if not record.ok or not dst.is_file():
                continue
            cleaned = parse_ir(dst.read_text(errors="replace"))
            if cleaned is not None:
                state.offer(cleaned[1], pipeline, cleaned[0])


# --- lines: for inputs the bindings cannot read ---------------------------------------------


class DropLines(Chunked):
    what = "dropped lines"

    def count(self, best: list[str]) -> int:
        return len(best)

    def remove(self, candidate: list[str], chunk: range) -> bool:
        del candidate[chunk.start:chunk.stop]
        return True


def reduce_lines(state: LineState) -> None:
    run_rounds(state, (), (DropLines(),))
