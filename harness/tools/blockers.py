"""The ops that really block a lowering, told apart from the ops left over because of them.

A legalization failure names the first illegal op the reporting pass meets. That is often a
symptom: in stock OPT, ``torch.vtensor.literal dense<true>`` is named, but the literal only
stays because its user ``torch.aten.__and__.Tensor`` has no conversion (convert-torch-to-arith
lowers the literal; canonicalize folds it back while its user still wants a torch tensor).

So the diagnosis is made from the IR itself:

1. rerun with ``--mlir-print-ir-after-failure --mlir-print-ir-module-scope`` for the whole
   module as the failing pass left it;
2. take every op still in the ``torch`` dialect there (``torch_c`` casts are the conversion's
   own glue, not blockers) and put each kind alone in a function: its tensor operands become
   arguments, constant operands (``torch.constant.*``, lists of them, literals) are cloned with
   it, since conversions match on constant values;
3. run the same pipeline on each one-op function. An op that still fails alone is a
   **blocker**; one that lowers alone is a **symptom** of a blocker that uses it.

Each blocker comes with its one-op reproducer and, by replaying the pipeline's conversion passes
one at a time on it, which of them (if any) changes it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir
from torch_mlir.dialects import func as func_dialect

from harness.compiler.mlir import PrintOptions, print_op, read_module
from harness.compiler.pipeline_text import PassRef, parse_pipeline
from harness.compiler.records import RunRecord
from harness.compiler.runner import DEFAULT_TIMEOUT_S, RunOptions, run_pipeline

_DUMP_HEADER = "// -----// IR Dump After "
# Scalars and lists of them: conversions match on their values, so they go with the op. Tensor
# literals do not: they become arguments, so the one-op function names only the op.
_CONSTANT_OPS = ("torch.constant.",)
_CONSTANT_AGGREGATES = ("torch.prim.ListConstruct", "torch.prim.TupleConstruct")
_GLUE_DIALECTS = ("torch_c.",)


@dataclass
class IllegalOp:
    """One kind of op still in the torch dialect after the failing pass."""

    name: str                      # torch.aten.__and__.Tensor (a torch.operator with its name)
    count: int                     # how many of them are left
    location: str                  # the first one's location, as MLIR prints it
    signature: str                 # operand and result types of the first one
    blocker: bool = False          # still fails alone
    isolated_ir: str = ""          # the one-op function (text)
    isolated_record: RunRecord | None = None
    converted_by: list[str] = field(default_factory=list)  # conversion passes that change it alone
    users: list[str] = field(default_factory=list)  # illegal op kinds that use its results


@dataclass
class BlockerAnalysis:
    input_path: str
    pipeline: str
    illegal: list[IllegalOp] = field(default_factory=list)
    detail: str = ""               # why there is no analysis, when there is none
    runs: int = 0

    @property
    def blockers(self) -> list[IllegalOp]:
        return [op for op in self.illegal if op.blocker]

    @property
    def symptoms(self) -> list[IllegalOp]:
        return [op for op in self.illegal if not op.blocker]


def _op_label(op: ir.Operation) -> str:
    name = op.name
    if name == "torch.operator" and "name" in op.attributes:
        return f'torch.operator "{ir.StringAttr(op.attributes["name"]).value}"'
    return name


def _walk(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


def _is_illegal(op: ir.Operation) -> bool:
    return op.name.startswith("torch.") and not op.name.startswith(_GLUE_DIALECTS)


def _is_constant(op: ir.Operation) -> bool:
    if op.name.startswith(_CONSTANT_OPS):
        return True
    if op.name in _CONSTANT_AGGREGATES:
        return all(_defining_constant(v) is not None for v in op.operands)
    return False


def _defining_constant(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.Block):  # a block argument
        return None
    owner = owner.operation if hasattr(owner, "operation") else owner
    return owner if _is_constant(owner) else None


def failure_ir(input_path: str | os.PathLike, pipeline: str, *, opt: str | None,
               timeout_s: float, workdir: Path) -> tuple[Path | None, RunRecord]:
    """The whole module as the failing pass left it (None when MLIR printed no dump)."""
    record = run_pipeline(input_path, pipeline, opt=opt, options=RunOptions(
        timeout_s=timeout_s, disable_threading=True,
        extra_args=("--mlir-print-ir-after-failure", "--mlir-print-ir-module-scope",
                    "--mlir-print-debuginfo", "--dump-pass-pipeline")))
    at = record.stderr.find(_DUMP_HEADER)
    if at < 0:
        return None, record
    body = record.stderr[record.stderr.index("\n", at) + 1:]
    path = workdir / "after-failure.mlir"
    path.write_text(body)
    return path, record


def isolate(op: ir.Operation, context: ir.Context) -> str:
    """``op`` alone in ``func.func @isolated``: non-constant operands become arguments, the
    constants it uses are cloned in, its results are returned."""
    with context, ir.Location.unknown():
        module = ir.Module.create()
        constants: list[ir.Operation] = []

        def collect(value: ir.Value) -> None:
            const = _defining_constant(value)
            if const is not None and const not in constants:
                for operand in const.operands:
                    collect(operand)
                constants.append(const)

        for operand in op.operands:
            collect(operand)
        arg_values = [v for v in op.operands if _defining_constant(v) is None]
        unique_args: list[ir.Value] = []
        for v in arg_values:
            if not any(v == u for u in unique_args):
                unique_args.append(v)
        ftype = ir.FunctionType.get([v.type for v in unique_args], [r.type for r in op.results])
        with ir.InsertionPoint(module.body):
            fn = func_dialect.FuncOp("isolated", ftype)
        block = fn.add_entry_block()
        mapping: list[tuple[ir.Value, ir.Value]] = [(old, new) for old, new in zip(unique_args, block.arguments)]

        def lookup(value: ir.Value) -> ir.Value:
            for old, new in mapping:
                if old == value:
                    return new
            raise KeyError(value)

        with ir.InsertionPoint(block):
            for const in constants + [op]:
                clone = const.clone()
                for i, operand in enumerate(const.operands):
                    clone.operands[i] = lookup(operand)
                mapping += list(zip(const.results, clone.results))
                if const is op:
                    func_dialect.ReturnOp(list(clone.results))
        return print_op(module.operation, PrintOptions(debug_info=True))


def _conversion_passes(pipeline: str, stderr: str) -> list[PassRef]:
    """The ``convert-*`` passes of the pipeline as torch-mlir-opt expanded it, nested as run."""
    from harness.tools.bisect import dumped_pipeline

    refs = dumped_pipeline(stderr) or parse_pipeline(pipeline)
    unique: dict[str, PassRef] = {}
    for ref in refs:
        if ref.name.startswith("convert-") and ref.name not in unique:
            unique[ref.name] = ref
    return list(unique.values())


def analyze(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
            timeout_s: float = DEFAULT_TIMEOUT_S, replay_conversions: bool = True) -> BlockerAnalysis:
    """Which of the ops left illegal by ``pipeline`` on ``input_path`` block it (see module doc)."""
    result = BlockerAnalysis(str(input_path), pipeline)
    with tempfile.TemporaryDirectory(prefix="harness-blockers-") as tmp:
        workdir = Path(tmp)
        dump, record = failure_ir(input_path, pipeline, opt=opt, timeout_s=timeout_s, workdir=workdir)
        result.runs += 1
        if record.ok:
            result.detail = "the pipeline succeeds"
            return result
        if dump is None:
            result.detail = "MLIR printed no IR after the failure (a crash, or a failure outside a pass)"
            return result
        parsed = read_module(dump, opt=opt)
        if parsed is None:
            result.detail = "the IR after the failure does not parse"
            return result
        context, module = parsed
        seen: dict[str, IllegalOp] = {}
        firsts: dict[str, ir.Operation] = {}
        with context:
            for op in _walk(module):
                if not _is_illegal(op) or _is_constant(op):
                    continue
                label = _op_label(op)
                if label in seen:
                    seen[label].count += 1
                    continue
                seen[label] = IllegalOp(label, 1, str(op.location), _types(op))
                firsts[label] = op
            for label, op in firsts.items():
                users = []
                for r in op.results:
                    for use in r.uses:
                        owner = use.owner
                        if _is_illegal(owner) and _op_label(owner) not in users:
                            users.append(_op_label(owner))
                seen[label].users = users
            texts = {label: isolate(op, context) for label, op in firsts.items()
                     if not op.regions or not len(op.regions)}
        conversions = _conversion_passes(pipeline, record.stderr) if replay_conversions else []
        for label, entry in seen.items():
            text = texts.get(label)
            if text is None:  # ops with regions are not isolated: count them as blockers
                entry.blocker = True
                continue
            path = workdir / "isolated.mlir"
            path.write_text(text)
            alone = run_pipeline(path, pipeline, opt=opt, options=RunOptions(timeout_s=timeout_s))
            result.runs += 1
            entry.isolated_ir, entry.isolated_record = text, alone
            entry.blocker = not alone.ok
            for conversion in conversions:
                changed = _changes(path, conversion, label, opt, timeout_s)
                result.runs += 1
                if changed:
                    entry.converted_by.append(conversion.name)
        result.illegal = sorted(seen.values(), key=lambda e: (not e.blocker, -e.count, e.name))
    return result


def _types(op: ir.Operation) -> str:
    ins = ", ".join(str(v.type) for v in op.operands)
    outs = ", ".join(str(r.type) for r in op.results)
    return f"({ins}) -> ({outs})"


def _changes(path: Path, conversion: PassRef, label: str, opt: str | None, timeout_s: float) -> bool:
    """Whether ``conversion`` alone removes the op ``label`` from the one-op function."""
    out = path.with_name("converted.mlir")
    record = run_pipeline(path, conversion.textual(), opt=opt,
                          options=RunOptions(timeout_s=timeout_s, output_path=str(out)))
    if not record.ok:
        return False
    parsed = read_module(out, opt=opt)
    if parsed is None:
        return False
    context, module = parsed
    with context:
        return not any(_op_label(op) == label for op in _walk(module))
