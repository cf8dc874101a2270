"""The ops that really block a lowering, told apart from the ops left over because of them.

A legalization failure names the first illegal op the reporting pass meets. That is often a
symptom: in stock OPT, ``torch.vtensor.literal dense<true>`` is named, but the literal only
stays because its user ``torch.aten.__and__.Tensor`` has no conversion (convert-torch-to-arith
lowers the literal; canonicalize folds it back while its user still wants a torch tensor).

So the diagnosis is made from the IR itself:

1. rerun with ``--mlir-print-ir-after-failure --mlir-print-ir-module-scope`` for the whole
   module as the failing pass left it (weights elided: only op kinds and constants matter);
2. take every op still in the ``torch`` dialect there (``torch_c`` casts are the conversion's
   own glue, not blockers) and put each kind alone in a function: its tensor operands become
   arguments, constant operands (``torch.constant.*``, lists of them) are cloned with it,
   since conversions match on constant values;
3. run the same pipeline on each one-op function. An op that still fails alone is a
   **blocker**; one that lowers alone is a **symptom** of a blocker that uses it.

Each op is then replayed through the pipeline's conversion passes one at a time (which of them
converts it alone), and a blocker that a named fix replaces by an equivalent op
(``harness.knowledge.fixes``: ``__and__`` -> ``bitwise_and``) is replayed renamed too, so the
tools can say "no conversion pass of this pipeline lowers X; convert-torch-to-linalg lowers the
equivalent Y" from the passes themselves, not from a table.

Cost, measured on stock OPT through torch-to-linalg (2 op kinds left, 6 conversions, the
renamed __and__ too: 22 torch-mlir-opt runs, 2 at a time, ``tools/bench_blockers.py``): 0.8 s
for tiny, 1.4 s for 125m, beside 0.13 s and 0.39 s for one plain run of the pipeline.
Results are kept per input content, pipeline and binary for the life of the process, so report
(which bisects and titles from the same file) analyses once.

The run of step 1 also names the failing pass (``failing_pass``): MLIR prints the innermost
failed pass's dump first, so a caller that only wants the pass's name needs no bisect run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from torch_mlir import ir
from torch_mlir.dialects import func as func_dialect

from harness import defaults
from harness.compiler import builds as builds_module
from harness.compiler.mlir import PrintOptions, print_op, read_module
from harness.compiler.outcomes import Outcome
from harness.compiler.pipeline_text import PassRef, dumped_pipeline, parse_pipeline
from harness.compiler.process import map_interruptibly
from harness.compiler.records import Diagnostic, RunRecord
from harness.compiler.runner import (ELIDE_PRINTED_WEIGHTS, RunOptions,
                                     run_pipeline)
from harness.compiler.text import DUMP_HEADER, DUMP_HEADER_PREFIX
from harness.knowledge import fixes

# The dump is read from stderr whole, not as the head and tail a run keeps by default: 64 MiB
# at each end is many times a large model's module with its weights elided.
DUMP_KEEP_BYTES = 64 * 2**20
# Scalars and lists of them: conversions match on their values, so they go with the op. Tensor
# literals do not: they become arguments, so the one-op function names only the op.
_CONSTANT_OPS = ("torch.constant.",)
_CONSTANT_AGGREGATES = ("torch.prim.ListConstruct", "torch.prim.TupleConstruct")
_GLUE_DIALECTS = ("torch_c.",)
WORKERS = 2  # torch-mlir-opt runs at a time (the runs are small; the machine may have 2 cores)


@dataclass
class Equivalent:
    """A blocker as a named fix rewrites it, replayed through the same passes."""

    op: str                        # torch.aten.bitwise_and.Tensor
    fix: str                       # bitwise-and-or
    lowers: bool = False           # the pipeline passes on the renamed one-op function
    converted_by: list[str] = field(default_factory=list)  # conversion passes that change it

    def to_json(self) -> dict:
        return {"op": self.op, "fix": self.fix, "lowers": self.lowers,
                "converted_by": list(self.converted_by)}


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
    equivalent: Equivalent | None = None  # what a named fix turns a blocker into

    @property
    def diagnostic(self) -> Diagnostic | None:
        """The error the one-op run gives about this op (its location, "called from" notes)."""
        if self.isolated_record is None:
            return None
        errors = self.isolated_record.errors()
        about = [d for d in errors if self.name in (d.op, d.illegal_op) or self.name in d.current_op]
        return next(iter(about or errors), None)

    @property
    def reproduces_alone(self) -> bool:
        """The one-op function fails the pipeline naming this op itself: a reproducer of it."""
        rec = self.isolated_record
        return (rec is not None and rec.outcome is Outcome.LEGALIZATION_FAILURE
                and rec.signature.op == self.name)

    def to_json(self) -> dict:
        return {"name": self.name, "count": self.count, "location": self.location,
                "signature": self.signature, "blocker": self.blocker,
                "converted_by": list(self.converted_by), "users": list(self.users),
                "equivalent": self.equivalent.to_json() if self.equivalent else None,
                "isolated_ir": self.isolated_ir,
                "isolated_signature": str(self.isolated_record.signature) if self.isolated_record else ""}


@dataclass
class _Replays:
    """What an analysis's conversion replays need after its one-op runs: the conversion passes
    (from the failing run's pipeline dump) and the renamed one-op functions, by op."""

    conversions: list[PassRef]
    renamed: dict[str, str]
    opt: str
    timeout_s: float
    key: tuple | None = None  # the cache key of the analysis with its replays, kept there too


@dataclass
class BlockerAnalysis:
    input_path: str
    pipeline: str
    illegal: list[IllegalOp] = field(default_factory=list)
    conversions: list[str] = field(default_factory=list)  # the conversion passes replayed
    detail: str = ""               # why there is no analysis, when there is none
    failing_pass: str = ""         # the innermost pass that failed (its argument), from the dump
    runs: int = 0
    seconds: float = 0.0
    # analyze(replay_conversions=False): the replays not run yet (with_replays runs them)
    pending: _Replays | None = field(default=None, repr=False, compare=False)

    @property
    def blockers(self) -> list[IllegalOp]:
        return [op for op in self.illegal if op.blocker]

    @property
    def symptoms(self) -> list[IllegalOp]:
        return [op for op in self.illegal if not op.blocker]

    def names(self) -> list[str]:
        """The blockers' names: what ``RunRecord.blockers`` records."""
        return [b.name for b in self.blockers]

    def get(self, name: str) -> IllegalOp | None:
        return next((op for op in self.illegal if op.name == name), None)

    def explained_by(self, blocker: str) -> list[IllegalOp]:
        """The symptoms left over because of ``blocker``: ops whose results reach it through
        other left-over ops."""
        out = []
        for symptom in self.symptoms:
            seen, todo = set(), list(symptom.users)
            while todo:
                user = todo.pop()
                if user == blocker:
                    out.append(symptom)
                    break
                if user in seen:
                    continue
                seen.add(user)
                entry = self.get(user)
                if entry is not None and not entry.blocker:
                    todo += entry.users
        return out

    def to_json(self) -> dict:
        return {"input": self.input_path, "pipeline": self.pipeline,
                "blockers": self.names(), "illegal": [op.to_json() for op in self.illegal],
                "conversions": list(self.conversions), "detail": self.detail,
                "failing_pass": self.failing_pass, "runs": self.runs, "seconds": round(self.seconds, 3)}


def _op_label(op: ir.Operation) -> str:
    name = op.operation.name
    if name == "torch.operator" and "name" in op.attributes:
        return f'torch.operator "{ir.StringAttr(op.attributes["name"]).value}"'
    return name


def _walk(op: ir.Operation) -> Iterator[ir.Operation]:
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


def _is_illegal(op: ir.Operation) -> bool:
    # op.operation.name: an OpView (a use's owner) of an op with a `name` attribute of its own
    # (torch.operator "aten._grouped_mm") answers `.name` with that StringAttr.
    name = op.operation.name
    return name.startswith("torch.") and not name.startswith(_GLUE_DIALECTS)


def _is_constant(op: ir.Operation) -> bool:
    name = op.operation.name
    if name.startswith(_CONSTANT_OPS):
        return True
    if name in _CONSTANT_AGGREGATES:
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
        timeout_s=timeout_s, disable_threading=True, keep_output_bytes=DUMP_KEEP_BYTES,
        extra_args=("--mlir-print-ir-after-failure", "--mlir-print-ir-module-scope",
                    "--mlir-print-debuginfo", "--dump-pass-pipeline",
                    # Printed to find op kinds and constants: weights only cost time here.
                    *ELIDE_PRINTED_WEIGHTS)))
    at = record.stderr.find(DUMP_HEADER_PREFIX)
    if at < 0:
        return None, record
    body = record.stderr[record.stderr.index("\n", at) + 1:]
    path = workdir / "after-failure.mlir"
    path.write_text(body)
    return path, record


def failed_pass(stderr: str) -> str:
    """The argument of the pass named by the first ``IR Dump After X Failed: ARG`` header
    (``torch-reduce-op-variants``): MLIR prints the innermost failed pass first, then the passes
    that ran it (``torch-lower-to-backend-contract``). "" when there is no such header."""
    at = stderr.find(DUMP_HEADER_PREFIX)
    if at < 0:
        return ""
    end = stderr.find("\n", at)
    found = DUMP_HEADER.match(stderr[at:end if end >= 0 else len(stderr)])
    return found["arg"] if found and found["failed"] else ""


def isolate(op: ir.Operation, context: ir.Context, *, rename: str = "") -> str:
    """``op`` alone in ``func.func @isolated``: non-constant operands become arguments, the
    constants it uses are cloned in, its results are returned. ``rename``: the op is created
    under that name instead (same operands, attributes, result types and location). The enclosing
    function's ``torch.onnx_meta.*`` attributes are kept: the ONNX conversion picks its pattern
    by the opset they record, so an ONNX op without them is another reproducer."""
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
        enclosing = op.parent
        while enclosing is not None and enclosing.name != "func.func":
            enclosing = enclosing.parent
        if enclosing is not None:
            attributes = enclosing.operation.attributes
            for named in (attributes[i] for i in range(len(attributes))):
                if named.name.startswith("torch.onnx_meta."):
                    fn.operation.attributes[named.name] = named.attr
        block = fn.add_entry_block()
        mapping: list[tuple[ir.Value, ir.Value]] = list(zip(unique_args, block.arguments, strict=False))

        def lookup(value: ir.Value) -> ir.Value:
            for old, new in mapping:
                if old == value:
                    return new
            raise KeyError(value)

        with ir.InsertionPoint(block):
            for const in [*constants, op]:
                if const is op and rename:
                    clone = ir.Operation.create(
                        rename, results=[r.type for r in op.results],
                        operands=[lookup(v) for v in op.operands],
                        attributes={a.name: a.attr for a in op.attributes}, loc=op.location)
                else:
                    clone = const.clone()
                    for i, operand in enumerate(const.operands):
                        clone.operands[i] = lookup(operand)
                mapping += list(zip(const.results, clone.results, strict=False))
                if const is op:
                    func_dialect.ReturnOp(list(clone.results))
        return print_op(module.operation, PrintOptions(debug_info=True))


def _conversion_passes(pipeline: str, stderr: str) -> list[PassRef]:
    """The ``convert-*`` passes of the pipeline as torch-mlir-opt expanded it, nested as run."""
    refs = dumped_pipeline(stderr) or parse_pipeline(pipeline)
    unique: dict[str, PassRef] = {}
    for ref in refs:
        if ref.name.startswith("convert-") and ref.name not in unique:
            unique[ref.name] = ref
    return list(unique.values())


# Per process: (input digest, pipeline, binary, replay) -> the analysis.
_CACHE: dict[tuple, BlockerAnalysis] = {}
_CACHE_LOCK = threading.Lock()
_REPLAY_LOCK = threading.Lock()


def _digest(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def analyze(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
            timeout_s: float = defaults.TIMEOUT_S, replay_conversions: bool = True,
            cache: bool = True) -> BlockerAnalysis:
    """Which of the ops left illegal by ``pipeline`` on ``input_path`` block it (see module doc).

    ``cache``: reuse this process's analysis of the same content, pipeline and binary.
    """
    exe = builds_module.resolve(opt).path
    key = None
    if cache and Path(input_path).is_file():
        key = (_digest(input_path), pipeline, exe, replay_conversions, timeout_s)
        with _CACHE_LOCK:
            hit = _CACHE.get(key)
        if hit is not None:
            return hit
    start = time.monotonic()
    result = _analyze(input_path, pipeline, exe, timeout_s, replay_conversions)
    result.seconds = time.monotonic() - start
    if result.pending is not None:
        result.pending.key = (key[0], pipeline, exe, True, timeout_s) if key else None
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = result
    return result


def _analyze(input_path: str | os.PathLike, pipeline: str, opt: str, timeout_s: float,
             replay_conversions: bool) -> BlockerAnalysis:
    result = BlockerAnalysis(str(input_path), pipeline)
    with tempfile.TemporaryDirectory(prefix="harness-blockers-") as tmp:
        workdir = Path(tmp)
        dump, record = failure_ir(input_path, pipeline, opt=opt, timeout_s=timeout_s, workdir=workdir)
        result.runs += 1
        if record.ok:
            result.detail = "the pipeline succeeds"
            return result
        result.failing_pass = failed_pass(record.stderr)
        if dump is None:
            result.detail = "MLIR printed no IR after the failure (a crash, or a failure outside a pass)"
            return result
        parsed = read_module(dump, opt=opt)
        if parsed is None:
            result.detail = "the IR after the failure does not parse"
            return result
        seen, texts, renamed = _left_over(*parsed)
        jobs = _Jobs(workdir, pipeline, opt, timeout_s)
        _run_alone(seen, texts, renamed, jobs)
        result.runs += jobs.done
        result.illegal = sorted(seen.values(), key=lambda e: (not e.blocker, -e.count, e.name))
        result.pending = _Replays(_conversion_passes(pipeline, record.stderr),
                                  {label: text for label, (_, _, text) in renamed.items()},
                                  opt, timeout_s)
    return with_replays(result) if replay_conversions else result


def with_replays(analysis: BlockerAnalysis) -> BlockerAnalysis:
    """``analysis`` with its conversion replays run, when ``analyze(replay_conversions=False)``
    left them for later: the ``--fix`` loop needs only the blockers (tiny BERT's through
    torch-to-linalg: 4 runs, 0.10 s, against 22 runs, 0.30-0.39 s with the replays), and a
    port that stays blocked replays them once for its diagnosis, without the failing run again."""
    with _REPLAY_LOCK:  # an analysis is replayed once, whoever shares it
        replays, analysis.pending = analysis.pending, None
        if replays is None:
            return analysis
        start = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="harness-blockers-") as tmp:
            jobs = _Jobs(Path(tmp), analysis.pipeline, replays.opt, replays.timeout_s)
            _replay(analysis.illegal, replays, jobs)
            analysis.runs += jobs.done
        analysis.conversions = [c.name for c in replays.conversions]
        order = {c.name: i for i, c in enumerate(replays.conversions)}
        for entry in analysis.illegal:  # pipeline order, whatever order the runs finished in
            entry.converted_by.sort(key=order.__getitem__)
            if entry.equivalent is not None:
                entry.equivalent.converted_by.sort(key=order.__getitem__)
        analysis.seconds += time.monotonic() - start
    if replays.key is not None:  # what analyze(replay_conversions=True) of it would give
        with _CACHE_LOCK:
            _CACHE.setdefault(replays.key, analysis)
    return analysis


def _left_over(context: ir.Context, module: ir.Operation) -> tuple[
        dict[str, IllegalOp], dict[str, str], dict[str, tuple[str, str, str]]]:
    """The illegal ops left after the failure, by label, with their illegal users; each one
    without regions isolated in a one-op function (``texts``), and, where a named fix renames
    it to an op that may lower, that renamed function (``renamed``: label -> (fix, op, text))."""
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
            users: list[str] = []
            for r in op.results:
                for use in r.uses:
                    owner = use.owner.operation
                    if _is_illegal(owner) and _op_label(owner) not in users:
                        users.append(_op_label(owner))
            seen[label].users = users
        isolatable = {label: op for label, op in firsts.items() if not len(op.regions)}
        texts = {label: isolate(op, context) for label, op in isolatable.items()}
        renamed: dict[str, tuple[str, str, str]] = {}
        for label, op in isolatable.items():
            found = fixes.renaming(label)
            if found is not None:
                renamed[label] = (found[0].name, found[1], isolate(op, context, rename=found[1]))
    return seen, texts, renamed


def _run_alone(seen: dict[str, IllegalOp], texts: dict[str, str],
               renamed: dict[str, tuple[str, str, str]], jobs: _Jobs) -> None:
    """Each left-over op alone through the pipeline (a blocker fails alone; a symptom lowers);
    then a blocker's renamed form, where a fix names one."""
    for label, entry in seen.items():
        text = texts.get(label)
        if text is None:  # ops with regions are not isolated: count them as blockers
            entry.blocker = True
            continue
        entry.isolated_ir = text
        jobs.add(text, jobs.pipeline, functools.partial(_set_alone, entry))
    jobs.run()
    for label, (fix_name, new_op, text) in renamed.items():
        entry = seen[label]
        if entry.blocker:
            entry.equivalent = equivalent = Equivalent(new_op, fix_name)
            jobs.add(text, jobs.pipeline, functools.partial(_set_lowers, equivalent))
    jobs.run()


def _replay(illegal: list[IllegalOp], replays: _Replays, jobs: _Jobs) -> None:
    """Each one-op function through each conversion pass alone (which of them converts it);
    then, for a blocker no conversion changes alone, its renamed form the same way (a blocker
    one of them converts keeps no renamed form: the gap is not the op's conversion)."""
    for entry in illegal:
        if not entry.isolated_ir:
            continue
        for conversion in replays.conversions:
            jobs.add(entry.isolated_ir, conversion.textual(),
                     functools.partial(_note_change, entry.converted_by, label=entry.name,
                                       conversion=conversion.name, opt=replays.opt), output=True)
    jobs.run()
    for entry in illegal:
        equivalent = entry.equivalent
        if equivalent is None:
            continue
        if entry.converted_by:
            entry.equivalent = None
            continue
        for conversion in replays.conversions:
            jobs.add(replays.renamed[entry.name], conversion.textual(),
                     functools.partial(_note_change, equivalent.converted_by, label=equivalent.op,
                                       conversion=conversion.name, opt=replays.opt), output=True)
    jobs.run()


def _set_alone(entry: IllegalOp, record: RunRecord) -> None:
    entry.isolated_record = record
    entry.blocker = not record.ok


def _set_lowers(equivalent: Equivalent, record: RunRecord) -> None:
    equivalent.lowers = record.ok


def _note_change(into: list[str], record: RunRecord, label: str, conversion: str,
                 opt: str) -> None:
    """Appends ``conversion`` when its run removed every ``label`` op from the one-op function."""
    if not record.ok or not record.output_path:
        return
    parsed = read_module(record.output_path, opt=opt)
    if parsed is None:
        return
    context, module = parsed
    with context:
        if not any(_op_label(op) == label for op in _walk(module)):
            into.append(conversion)


class _Jobs:
    """torch-mlir-opt runs on one-op functions, ``WORKERS`` at a time, each in its own file."""

    def __init__(self, workdir: Path, pipeline: str, opt: str, timeout_s: float):
        self.workdir, self.pipeline, self.opt, self.timeout_s = workdir, pipeline, opt, timeout_s
        self.pending: list[tuple[Path, str, Callable[[RunRecord], None], bool]] = []
        self.count = 0
        self.done = 0

    def add(self, text: str, pipeline: str, then: Callable[[RunRecord], None], *,
            output: bool = False) -> None:
        self.count += 1
        path = self.workdir / f"isolated-{self.count}.mlir"
        path.write_text(text)
        self.pending.append((path, pipeline, then, output))

    def _one(self, job: tuple[Path, str, Callable[[RunRecord], None], bool]
             ) -> tuple[RunRecord, Callable[[RunRecord], None]]:
        path, pipeline, then, output = job
        out = str(path.with_suffix(".out.mlir")) if output else None
        return run_pipeline(path, pipeline, opt=self.opt, options=RunOptions(
            timeout_s=self.timeout_s, output_path=out)), then

    def run(self) -> None:
        jobs, self.pending = self.pending, []
        if not jobs:
            return
        with ThreadPoolExecutor(max_workers=min(WORKERS, len(jobs))) as pool:
            finished = map_interruptibly(pool, self._one, jobs)
        for record, then in finished:  # callbacks in submission order, on this thread
            then(record)
        self.done += len(jobs)


def _types(op: ir.Operation) -> str:
    ins = ", ".join(str(v.type) for v in op.operands)
    outs = ", ".join(str(r.type) for r in op.results)
    return f"({ins}) -> ({outs})"
