"""Shrinks a failing IR file while it keeps failing the same way.

The interestingness test is the runner itself: a candidate is kept when torch-mlir-opt, run on
it with the same pipeline, gives a record whose ``RunRecord.signature`` equals the original's
(same outcome and first diagnostic, or the same crash). Each candidate is built on the MLIR
Python bindings and verified before it is run, so the output is always IR the binary parses;
an input the bindings cannot parse (a parse error, a dialect the wheel's Python side lacks) is
reduced line by line instead, where the signature alone decides.

Reductions, largest first (delta debugging: halves, quarters, ... then single ops): dense
resource weights to zero splats, whole symbols (functions and the ops that reference them),
ops (a used result becomes a new function argument or a zero constant of its type; values an
erased op used are returned so the chain that fails stays alive), function results, dead ops,
regions inlined, function arguments, and the binary's own ``symbol-dce``/``canonicalize``.
A candidate must be smaller (ops, then characters) to be tried, so the search terminates;
the best file so far is written atomically after every step, so a spent budget loses nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from torch_mlir import ir

from harness.compiler import pipelines
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.mlir import (
    BYTECODE_MAGIC,
    children,
    count_ops,
    parse_ir,
    print_op,
)
from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import RunOptions, _check_input, run_pipeline
from harness.errors import (
    HarnessError,
    InputFileError,
    NothingToReduceError,
    OutputError,
)

DEFAULT_BUDGET_S = 60.0
DEFAULT_MAX_TRIES = 10_000
# A candidate may take this many times the original run (plus the slack) before it counts as a hang.
_TRY_TIMEOUT_FACTOR = 5.0
_TRY_TIMEOUT_SLACK_S = 5.0
_FIRST_TIMEOUT_MIN_S = 60.0
_CAN_FORK = hasattr(os, "fork")
_VERIFY_TIMEOUT_S = 120.0
_CLEANUP_PIPELINES = ("builtin.module(symbol-dce)", "builtin.module(canonicalize,symbol-dce)")


@dataclass(frozen=True)
class ReduceOptions:
    """How long to search and how to run each candidate."""

    output_path: str | os.PathLike | None = None  # None: FILE.reduced.mlir beside the input
    budget_s: float = DEFAULT_BUDGET_S  # wall clock for the whole reduction
    max_tries: int = DEFAULT_MAX_TRIES  # runs of torch-mlir-opt on candidates
    opt: str | None = None  # torch-mlir-opt binary (runner's default order otherwise)
    try_timeout_s: float | None = None  # None: from the original run's time
    disable_threading: bool = True  # deterministic first error, full crash dumps
    splat_weights: bool = True  # try dense_resource weights as zero splats
    cleanup: bool = True  # try the binary's symbol-dce / canonicalize on the result
    progress: Callable[[str], None] | None = None  # called with one line per kept reduction
    strategy: str = "ir"  # "ir": edits on the MLIR bindings; "lines": delete text lines only
    # The input's run through the same pipeline when the caller already has it (report does):
    # a large input is then not run a second time just to learn its signature.
    original: RunRecord | None = None


@dataclass
class ReduceResult:
    """What a reduction did; ``output_path`` holds the smallest file that kept ``signature``."""

    ops_before: int
    ops_after: int
    tries: int
    kept: int
    elapsed_s: float
    signature: str
    output_path: str
    input_path: str = ""
    pipeline: str = ""  # as the caller named it
    pipeline_text: str = ""  # the -pass-pipeline value that was run
    mode: str = "ir"  # "ir": on the MLIR bindings; "lines": line by line (input not parseable)
    stopped: str = "done"  # done | budget | max-tries

    def summary(self) -> str:
        why = {"done": "", "budget": " (budget spent: best so far)",
               "max-tries": " (max tries reached: best so far)"}[self.stopped]
        return (f"{self.ops_before} -> {self.ops_after} ops in {self.tries} tries "
                f"({self.kept} kept), {self.elapsed_s:.1f} s{why}")


def reduce_file(path: str | os.PathLike, pipeline: str, *,
                options: ReduceOptions = ReduceOptions()) -> ReduceResult:
    """Reduces ``path``, which fails ``pipeline``, to a small file that fails the same way."""
    start = time.monotonic()
    if options.strategy not in ("ir", "lines"):
        raise HarnessError(f"unknown reduction strategy '{options.strategy}'; use 'ir' or 'lines'.")
    src = _check_input(path)  # before the output check, which creates folders beside it
    textual = pipelines.default().resolve(pipeline)
    out = Path(options.output_path) if options.output_path else src.with_name(f"{src.stem}.reduced.mlir")
    _check_output(src, out)
    extra = ("-mlir-disable-threading",) if options.disable_threading else ()
    # The original run decides the signature, so a slow input (a big model with its weights
    # takes tens of seconds) must not be mistaken for a hang: it gets at least a minute, or the
    # whole budget. Reducing a real hang, pass --timeout (try_timeout_s) to keep it short.
    first_timeout = options.try_timeout_s or max(_FIRST_TIMEOUT_MIN_S, options.budget_s)
    original = options.original
    if original is None or original.pipeline != textual or \
            Path(original.input_path).resolve() != src.resolve():
        original = run_pipeline(src, textual, opt=options.opt,
                                options=RunOptions(timeout_s=first_timeout, extra_args=extra))
    if original.ok:
        raise NothingToReduceError(str(src), pipeline)
    raw = src.read_bytes()
    bytecode = raw.startswith(BYTECODE_MAGIC)
    text = "" if bytecode else raw.decode(errors="replace")
    parsed = _parse_input(raw if bytecode else text, src)
    if bytecode and parsed is None:
        raise InputFileError(f"cannot reduce {src}: it is MLIR bytecode the MLIR Python bindings "
                             "cannot read. Convert it to text with 'torch-mlir-opt FILE -o OUT.mlir' "
                             "and reduce that.")
    workdir = unique_dir("reduce-")
    try:
        session = _Session(textual, original, options, extra, workdir, out, start)
        _write_atomic(out, raw)  # the best so far, until something smaller fails alike
        use_ir = parsed is not None and options.strategy == "ir"
        reducer: _IRReducer | _LineReducer = (
            _IRReducer(session, *parsed) if use_ir else _LineReducer(session, text))
        try:
            if isinstance(reducer, _IRReducer) and not reducer.roundtrips():
                if bytecode:  # no text to fall back on: lines of bytecode mean nothing
                    out.unlink(missing_ok=True)
                    raise InputFileError(
                        f"cannot reduce {src}: it is MLIR bytecode, and printed as text by the "
                        f"MLIR Python bindings it no longer fails as '{session.signature}'. "
                        "Convert it to text with 'torch-mlir-opt FILE -o OUT.mlir' and reduce that.")
                reducer = _LineReducer(session, text)
            reducer.run()
        except _Stop:
            pass
        return ReduceResult(
            ops_before=reducer.ops_before, ops_after=reducer.ops_now, tries=session.tries,
            kept=session.kept, elapsed_s=time.monotonic() - start, signature=str(session.signature),
            output_path=str(out), input_path=str(src), pipeline=pipeline, pipeline_text=textual,
            mode="ir" if isinstance(reducer, _IRReducer) else "lines", stopped=session.stopped,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# --- the interestingness test, the budget and the output -------------------------------------


class _Stop(Exception):
    """The budget or the try limit is spent: keep what was found."""


class _Session:
    """Runs candidates, counts tries, watches the budget and writes each kept file."""

    def __init__(self, textual: str, original: RunRecord, options: ReduceOptions,
                 extra: tuple[str, ...], workdir: Path, out: Path, start: float):
        self.textual = textual
        self.signature = original.signature
        self.options = options
        self.extra = extra
        self.workdir = workdir
        self.out = out
        self.start = start
        self.tries = 0
        self.kept = 0
        self.stopped = "done"
        self._seen: set[bytes] = set()
        self.hang = original.outcome is Outcome.TIMEOUT
        if options.try_timeout_s:
            self.try_timeout = options.try_timeout_s
        elif original.outcome is Outcome.TIMEOUT:
            self.try_timeout = original.elapsed_s
        else:
            self.try_timeout = original.elapsed_s * _TRY_TIMEOUT_FACTOR + _TRY_TIMEOUT_SLACK_S

    def remaining_s(self) -> float:
        return self.options.budget_s - (time.monotonic() - self.start)

    def _check_budget(self) -> None:
        if self.tries >= self.options.max_tries:
            self.stopped = "max-tries"
            raise _Stop
        if self.remaining_s() <= 0.05:
            self.stopped = "budget"
            raise _Stop

    def run(self, path: Path, pipeline: str | None = None, output: Path | None = None,
            extra: tuple[str, ...] = ()) -> RunRecord:
        self._check_budget()
        if self.hang and pipeline is None and self.remaining_s() < self.try_timeout:
            # Cut short by the budget, any candidate would "hang": that proves nothing.
            self.stopped = "budget"
            raise _Stop
        self.tries += 1
        timeout = max(0.1, min(self.try_timeout, self.remaining_s()))
        return run_pipeline(path, pipeline or self.textual, opt=self.options.opt,
                            options=RunOptions(timeout_s=timeout, extra_args=self.extra + extra,
                                               output_path=str(output) if output else None))

    def interesting(self, text: str) -> bool:
        """Whether ``text`` fails with the original signature (each distinct text runs once)."""
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        if digest in self._seen:
            return False
        self._check_budget()
        self._seen.add(digest)
        path = self.workdir / "candidate.mlir"
        path.write_text(text)
        return self.run(path).signature == self.signature

    def keep(self, text: str, ops: int, what: str, *, reduction: bool = True) -> None:
        self.kept += reduction
        _write_atomic(self.out, text)
        if self.options.progress:
            self.options.progress(f"{what}: {ops} ops, {len(text)} chars "
                                  f"(try {self.tries}, {time.monotonic() - self.start:.1f} s)")


def _check_output(src: Path, out: Path) -> None:
    """Fails before the search, not after it, when the output cannot be written."""
    if out.exists() and out.is_dir():
        raise OutputError(f"reduce output {out} is a folder. Name a file, e.g. {out / 'reduced.mlir'}.")
    if src.exists() and out.exists() and os.path.samefile(src, out):
        raise OutputError(f"reduce output {out} is the input file; name another file so the "
                          "original failure stays on disk.")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputError(f"cannot write the reduced file {out}: {e.strerror}. "
                          "Choose a writable output location (-o).") from None


def _write_atomic(path: Path, data: str | bytes) -> None:
    write_atomically(path, data, hint="Choose a writable output location (-o).")


# --- IR helpers on the MLIR bindings ---------------------------------------------------------


def _parse_input(text: str | bytes, src: Path) -> tuple[ir.Context, ir.Operation] | None:
    """The input, with the locations the parser made naming ``src`` (the bindings say "-")."""
    parsed = parse_ir(text)
    if parsed is None:
        return None
    printed = print_op(parsed[1])
    if 'loc("-":' not in printed:
        return parsed
    name = str(src).replace("\\", "\\\\").replace('"', '\\"')
    renamed = parse_ir(printed.replace('loc("-":', f'loc("{name}":'))
    if renamed is None:
        return parsed
    parsed[1].erase()
    return renamed


def _wait_child(pid: int, timeout_s: float) -> int | None:
    """The child's exit status (a signal counts as None); killed after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def _is_function(op: ir.Operation) -> bool:
    return "function_type" in op.attributes and len(op.regions) == 1


def _sym_name(op: ir.Operation) -> str | None:
    if "sym_name" not in op.attributes:
        return None
    return ir.StringAttr(op.attributes["sym_name"]).value


def _symbol_users(module: ir.Operation) -> dict[str, list[ir.Operation]]:
    """Ops that name a symbol in a top-level attribute (calls, mostly), by symbol."""
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


def _has_uses(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is not None


_CONSTANT_OPS = frozenset({"torch.constant.int", "torch.constant.float", "torch.constant.bool",
                           "torch.constant.none", "torch.constant.str", "torch.constant.device",
                           "torch.constant.number", "torch.vtensor.literal", "arith.constant"})
# A zero constant of each scalar type: (op name, its `value` attribute or None).
_SCALAR_CONSTANTS = {
    "!torch.int": ("torch.constant.int", "0 : i64"),
    "!torch.float": ("torch.constant.float", "0.0 : f64"),
    "!torch.bool": ("torch.constant.bool", "false"),
    "!torch.none": ("torch.constant.none", None),
    "!torch.str": ("torch.constant.str", '""'),
    "!torch.Device": ("torch.constant.device", '"cpu"'),
}
_VTENSOR = re.compile(r"^!torch\.vtensor<\[([0-9,]*)\],([a-z]+[0-9]*)>$")
_FLOAT_DTYPES = frozenset({"f16", "bf16", "f32", "f64"})
_INT_DTYPES = re.compile(r"^(si|ui|i)(8|16|32|64)$")
# Types a removed op's operand may be returned as, to keep what computes the failure alive.
_RETURNABLE = re.compile(r"^(!torch\.vtensor<|!torch\.(int|float|bool)$|tensor<)")


def _zero_tensor_attr(dtype: str, shape: str) -> str | None:
    """``dense<0> : tensor<...>`` text for a value tensor of static shape, or None."""
    if dtype in _FLOAT_DTYPES:
        zero = "0.000000e+00"
    elif dtype == "i1":
        zero = "false"
    elif _INT_DTYPES.match(dtype):
        zero = "0"
    else:
        return None
    dims = [d for d in shape.split(",") if d]
    return f"dense<{zero}> : tensor<{''.join(d + 'x' for d in dims)}{dtype}>"


def _constant_for(type_: ir.Type) -> tuple[str, str | None] | None:
    """(op name, value attribute text) of a zero constant of ``type_``, or None."""
    text = str(type_)
    if text in _SCALAR_CONSTANTS:
        return _SCALAR_CONSTANTS[text]
    m = _VTENSOR.match(text)
    if m:
        attr = _zero_tensor_attr(m.group(2), m.group(1))
        return ("torch.vtensor.literal", attr) if attr else None
    return None


def _insert_constant(type_: ir.Type, before: ir.Operation, loc: ir.Location) -> ir.Value:
    name, value = _constant_for(type_)  # type: ignore[misc]  # callers checked _constant_for
    attrs = {"value": ir.Attribute.parse(value)} if value is not None else {}
    op = ir.Operation.create(name, results=[type_], attributes=attrs, loc=loc,
                             ip=ir.InsertionPoint(before))
    return op.results[0]


def _entry_block(func: ir.Operation) -> ir.Block:
    return func.regions[0].blocks[0]


def _single_return(func: ir.Operation) -> ir.Operation | None:
    """The function's ``func.return`` when it has one block (so any entry value dominates it)."""
    blocks = list(func.regions[0].blocks)
    if len(blocks) != 1:
        return None
    ops = list(blocks[0].operations)
    if not ops or ops[-1].operation.name != "func.return":
        return None
    return ops[-1].operation


def _update_attr_array(func: ir.Operation, name: str, keep: list[int] | None = None,
                       append: int = 0) -> None:
    """Keeps ``arg_attrs``/``res_attrs`` in step with the arguments or results."""
    if name not in func.attributes:
        return
    items = list(ir.ArrayAttr(func.attributes[name]))
    if keep is not None:
        items = [items[i] for i in keep if i < len(items)]
    items += [ir.DictAttr.get({}) for _ in range(append)]
    func.attributes[name] = ir.ArrayAttr.get(items)


def _sync_function_type(func: ir.Operation) -> None:
    """Sets ``function_type`` from the entry block's arguments and the return's operands."""
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    ret = _single_return(func)
    results = [v.type for v in ret.operands] if ret is not None else list(old.results)
    inputs = [a.type for a in _entry_block(func).arguments]
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _set_return(func: ir.Operation, values: list[ir.Value]) -> None:
    """Replaces the function's single ``func.return`` by one returning ``values``."""
    ret = _single_return(func)
    assert ret is not None, "callers check _single_return first"
    ir.Operation.create("func.return", operands=values, loc=ret.location, ip=ir.InsertionPoint(ret))
    ret.erase()


@dataclass
class _Unit:
    """An op that reductions may remove: its parent unit (None at function level) and function."""

    op: ir.Operation
    parent: int | None
    func: ir.Operation | None


def _op_units(module: ir.Operation) -> list[_Unit]:
    """The ops inside top-level ops in pre-order; block terminators are not units."""
    units: list[_Unit] = []

    def walk(op: ir.Operation, parent: int | None, func: ir.Operation | None) -> None:
        for region in op.regions:
            for block in region.blocks:
                ops = [o.operation for o in block.operations]
                for i, child in enumerate(ops):
                    if i == len(ops) - 1 and len(child.results) == 0:
                        walk(child, parent, func)  # a terminator; its regions (rare) still count
                        continue
                    units.append(_Unit(child, parent, func))
                    walk(child, len(units) - 1, func)

    for top in children(module):
        walk(top, None, top if _is_function(top) else None)
    return units


class _Mode(Enum):
    """How a removed op's used results are replaced."""

    MIXED = "mixed"  # scalars by constants, the rest by new function arguments
    ARGS = "args"  # all by new function arguments
    CONSTANTS = "constants"  # all by zero constants


# --- the reducer on the bindings --------------------------------------------------------------


class _IRReducer:
    """Holds the best module so far and tries edits on clones of it."""

    def __init__(self, session: _Session, context: ir.Context, module: ir.Operation):
        self.session = session
        self.ctx = context  # the best module's; a kept cleanup output brings its own
        self.best = module
        self.text = print_op(module)
        self.ops_before = count_ops(module)
        self.ops_now = self.ops_before
        self.metric = (self.ops_now, len(self.text))

    def roundtrips(self) -> bool:
        """The bindings' printing of the input must fail the same way, or reduce by lines."""
        if self.session.interesting(self.text):
            self.session.keep(self.text, self.ops_now, "reprinted", reduction=False)
            return True
        return False

    # The search: rounds of every reduction until a round finds nothing.
    def run(self) -> None:
        if self.session.options.splat_weights:
            self.splat_weights()
        if self.session.options.cleanup:
            self.cleanup()
        while True:
            before = self.metric
            self.drop_symbols()
            self.drop_ops(keep_alive=True, modes=(_Mode.MIXED,))
            self.drop_results()
            self.drop_dead()
            self.drop_ops(keep_alive=True, modes=(_Mode.MIXED, _Mode.ARGS, _Mode.CONSTANTS),
                          single_only=True)
            self.drop_results()
            self.drop_dead()
            self.inline_regions()
            self.drop_args()
            if self.session.options.cleanup:
                self.cleanup()
            if self.metric == before:
                return

    def attempt(self, edit: Callable[[ir.Operation], bool], what: str) -> bool:
        """Applies ``edit`` to a clone; keeps the clone if it verifies, is smaller and fails alike."""
        with self.ctx, ir.Location.unknown():
            clone = self.best.clone()
            try:
                edited = edit(clone)
            except (ir.MLIRError, ValueError, RuntimeError):  # what the bindings raise for bad IR
                edited = False
        text = self._verified_text(clone) if edited else None
        if text is None:
            clone.erase()
            return False
        return self._consider(clone, what, text=text)

    def _verified_text(self, clone: ir.Operation) -> str | None:
        """The clone's text if it verifies, else None; checked in a forked child where possible.

        torch-mlir's verifiers can crash on IR a reduction made (a ``torch.nn_module`` whose
        class type is gone), and such a crash must cost one candidate, not the whole reduction.
        """
        path = self.session.workdir / "verified.mlir"
        pid = -1
        if _CAN_FORK:
            try:
                pid = os.fork()
            except OSError:  # no memory to copy a big parent: verify here, as without fork
                pid = -1
        if pid < 0:
            with self.ctx:
                try:
                    clone.verify()
                except ir.MLIRError:
                    return None
            return print_op(clone)
        if pid == 0:  # the child: verify, print, and leave without running Python's exit hooks
            code = 1
            try:
                with self.ctx:
                    clone.verify()
                    with open(path, "w") as f:
                        print_op(clone, file=f)
                    code = 0
            finally:
                os._exit(code)
        status = _wait_child(pid, _VERIFY_TIMEOUT_S)
        return path.read_text() if status == 0 else None

    def _consider(self, clone: ir.Operation, what: str, context: ir.Context | None = None,
                  text: str | None = None) -> bool:
        text = text if text is not None else print_op(clone)
        ops = count_ops(clone)
        if (ops, len(text)) >= self.metric or not self.session.interesting(text):
            clone.erase()
            return False
        self.best.erase()
        self.best, self.text, self.ops_now, self.metric = clone, text, ops, (ops, len(text))
        self.ctx = context or self.ctx
        self.session.keep(text, ops, what)
        return True

    def chunks(self, count: Callable[[], int], remove: Callable[[ir.Operation, range], bool],
               what: str, single_only: bool = False, whole_first: bool = False) -> None:
        """Delta debugging over ``count()`` units: chunks of n/2, n/4, ... 1, last chunk first.

        A kept removal leaves the units before it where they were, so the sweep goes on from there.
        """
        size = 1 if single_only else max(1, count() if whole_first else count() // 2)
        while True:
            end = count()
            while end > 0:
                begin = max(0, end - size)
                chunk = range(begin, end)
                self.attempt(lambda m, chunk=chunk: remove(m, chunk), f"{what} [{begin}:{end}]")
                end = min(begin, count())
            if size == 1:
                return
            size //= 2

    # Symbols: whole functions (and globals), with the ops that reference them.
    def drop_symbols(self) -> None:
        def count() -> int:
            return sum(1 for _ in children(self.best))

        def remove(m: ir.Operation, chunk: range) -> bool:
            tops = list(children(m))
            if len(tops) - len(chunk) < 1:
                return False
            names = {n for i in chunk if (n := _sym_name(tops[i]))}
            users = _symbol_users(m)
            doomed = [tops[i] for i in chunk]
            referencing = [u for n in names for u in users.get(n, [])]
            for op in referencing:
                if not self._erase_with_constants(op):
                    return False
            for op in reversed(doomed):  # users (a parent nn_module) come after what they use
                if any(_has_uses(r) for r in op.results):
                    return False
                op.erase()
            return True

        if count() > 1:
            self.chunks(count, remove, "dropped symbols")

    @staticmethod
    def _erase_with_constants(op: ir.Operation) -> bool:
        """Erases an op outside the units sweep (a call of a dropped function)."""
        for r in op.results:
            if _has_uses(r):
                if _constant_for(r.type) is None:
                    return False
                r.replace_all_uses_with(_insert_constant(r.type, op, op.location))
        op.erase()
        return True

    # Ops: a chunk of units erased; used results replaced, inputs that die returned.
    def drop_ops(self, *, keep_alive: bool, modes: tuple[_Mode, ...], single_only: bool = False) -> None:
        for mode in modes:
            self.chunks(lambda: len(_op_units(self.best)),
                        lambda m, chunk, mode=mode: self._remove_units(m, chunk, mode, keep_alive),
                        f"dropped ops ({mode.value})", single_only=single_only)
            single_only = True  # other modes only as alternatives for single ops

    def _remove_units(self, m: ir.Operation, chunk: range, mode: _Mode, keep_alive: bool) -> bool:
        units = _op_units(m)
        chosen = set(chunk)
        index = {u.op: i for i, u in enumerate(units)}
        callers = _symbol_users(m)

        def doomed(i: int) -> bool:
            while i is not None:
                if i in chosen:
                    return True
                i = units[i].parent  # type: ignore[assignment]
            return False

        def can_add_args(func: ir.Operation | None) -> bool:
            return func is not None and not callers.get(_sym_name(func) or "", [])

        erased = 0
        revive: dict[tuple[int, int], ir.Value] = {}
        touched: dict[int, ir.Operation] = {}
        for i in sorted(chosen, reverse=True):
            if units[i].parent is not None and doomed(units[i].parent):
                continue  # goes with its parent
            unit = units[i]
            op = unit.op
            plan = [self._plan(r, op, unit.func, mode, can_add_args(unit.func)) for r in op.results]
            if any(p == "keep" for p in plan):
                continue
            for r, p in zip(op.results, plan):
                if p == "const":
                    r.replace_all_uses_with(_insert_constant(r.type, op, op.location))
                elif p == "arg":
                    block = _entry_block(unit.func)  # type: ignore[arg-type]
                    r.replace_all_uses_with(block.add_argument(r.type, op.location))
                    _update_attr_array(unit.func, "arg_attrs", append=1)  # type: ignore[arg-type]
                    touched[id(unit.func)] = unit.func  # type: ignore[assignment]
            if keep_alive and can_add_args(unit.func):
                for v in op.operands:
                    if not isinstance(v, ir.OpResult) or not _RETURNABLE.match(str(v.type)):
                        continue
                    owner = v.owner.operation if hasattr(v.owner, "operation") else v.owner
                    j = index.get(owner)
                    if j is None or doomed(j) or units[j].parent is not None:
                        continue
                    if owner.name in _CONSTANT_OPS:
                        continue
                    revive[(j, v.result_number)] = v
            op.erase()
            erased += 1
        if not erased:
            return False
        for (j, _), v in sorted(revive.items()):
            if _has_uses(v):
                continue
            func = units[j].func
            if func is None or _single_return(func) is None:
                continue
            ret = _single_return(func)
            _set_return(func, list(ret.operands) + [v])  # type: ignore[union-attr]
            _update_attr_array(func, "res_attrs", append=1)
            touched[id(func)] = func
        for func in touched.values():
            _sync_function_type(func)
        return True

    @staticmethod
    def _plan(r: ir.Value, op: ir.Operation, func: ir.Operation | None, mode: _Mode,
              args_ok: bool) -> str:
        """How to replace result ``r`` of ``op``: none | const | arg | keep (cannot remove)."""
        if not _has_uses(r):
            return "none"
        constant = _constant_for(r.type) is not None
        scalar = str(r.type) in _SCALAR_CONSTANTS
        if mode is _Mode.MIXED:
            if scalar:
                # A constant replacing a constant gains nothing; its users go first.
                return "keep" if op.name in _CONSTANT_OPS or not constant else "const"
            if args_ok:
                return "arg"
            return "const" if constant else "keep"
        if mode is _Mode.ARGS:
            return "arg" if args_ok else "keep"
        # A constant for a constant only changes its value: the splat pass does that for weights.
        return "const" if constant and op.name not in _CONSTANT_OPS else "keep"

    # Function results: drop return operands of functions nobody calls.
    def drop_results(self) -> None:
        for name in self._uncalled_functions():
            def count(name: str = name) -> int:
                func = self._function(self.best, name)
                ret = _single_return(func) if func is not None else None
                return len(ret.operands) if ret is not None else 0

            def remove(m: ir.Operation, chunk: range, name: str = name) -> bool:
                func = self._function(m, name)
                ret = _single_return(func) if func is not None else None
                if ret is None:
                    return False
                keep = [i for i in range(len(ret.operands)) if i not in chunk]
                _set_return(func, [ret.operands[i] for i in keep])
                _update_attr_array(func, "res_attrs", keep=keep)
                _sync_function_type(func)
                return True

            if count():
                self.chunks(count, remove, f"dropped results of @{name}")

    def _uncalled_functions(self) -> list[str]:
        users = _symbol_users(self.best)
        return [n for op in children(self.best)
                if _is_function(op) and (n := _sym_name(op)) and not users.get(n)
                and len(op.regions[0].blocks) > 0]

    @staticmethod
    def _function(m: ir.Operation, name: str) -> ir.Operation | None:
        return next((op for op in children(m) if _is_function(op) and _sym_name(op) == name), None)

    # Dead ops: everything whose results nobody uses, all at once (then ddmin does the rest).
    def drop_dead(self) -> None:
        def remove(m: ir.Operation) -> bool:
            erased_any, changed = False, True
            while changed:
                changed = False
                for unit in reversed(_op_units(m)):
                    op = unit.op
                    if len(op.results) and not any(_has_uses(r) for r in op.results):
                        op.erase()
                        changed = erased_any = True
            return erased_any

        self.attempt(remove, "dropped dead ops")

    # Regions: an op replaced by the body of one of its single-block, argument-free regions.
    def inline_regions(self) -> None:
        def candidates() -> list[tuple[int, int]]:
            return [(i, r) for i, u in enumerate(_op_units(self.best)) for r in range(len(u.op.regions))]

        def inline(m: ir.Operation, i: int, r: int) -> bool:
            op = _op_units(m)[i].op
            blocks = list(op.regions[r].blocks)
            if len(blocks) != 1 or len(blocks[0].arguments):
                return False
            body = [o.operation for o in blocks[0].operations]
            if not body:
                return False
            term = body[-1]
            if len(term.operands) != len(op.results) or any(
                    a.type != b.type for a, b in zip(term.operands, op.results)):
                return False
            for child in body[:-1]:
                child.move_before(op)
            for res, val in zip(op.results, list(term.operands)):
                res.replace_all_uses_with(val)
            op.erase()
            return True

        for i, r in reversed(candidates()):
            self.attempt(lambda m, i=i, r=r: inline(m, i, r), "inlined a region")

    # Function arguments: unused ones erased, used ones replaced by zero constants.
    def drop_args(self) -> None:
        for name in self._uncalled_functions():
            def count(name: str = name) -> int:
                func = self._function(self.best, name)
                return len(_entry_block(func).arguments) if func is not None else 0

            def remove(m: ir.Operation, chunk: range, name: str = name) -> bool:
                func = self._function(m, name)
                if func is None:
                    return False
                block = _entry_block(func)
                total = len(block.arguments)
                first = next(iter(block.operations)).operation
                for i in sorted(chunk, reverse=True):
                    arg = block.arguments[i]
                    if _has_uses(arg):
                        if _constant_for(arg.type) is None:
                            return False
                        arg.replace_all_uses_with(_insert_constant(arg.type, first, arg.location))
                        first = next(iter(block.operations)).operation
                    block.erase_argument(i)
                _update_attr_array(func, "arg_attrs", keep=[i for i in range(total) if i not in chunk])
                _sync_function_type(func)
                return True

            if count():
                self.chunks(count, remove, f"dropped arguments of @{name}")

    # Weights: dense_resource literals as zero splats (all at once, then halves, ...).
    def splat_weights(self) -> None:
        def resources(m: ir.Operation) -> list[ir.Operation]:
            found = []
            for unit in _op_units(m):
                if "value" in unit.op.attributes and str(unit.op.attributes["value"]).startswith("dense_resource<"):
                    found.append(unit.op)
            return found

        def remove(m: ir.Operation, chunk: range) -> bool:
            ops = resources(m)
            for i in chunk:
                op = ops[i]
                type_ = ir.ShapedType(op.attributes["value"].type)
                if not type_.has_static_shape:
                    return False
                attr = _zero_tensor_attr(str(type_.element_type), ",".join(str(d) for d in type_.shape))
                if attr is None:
                    return False
                op.attributes["value"] = ir.Attribute.parse(attr)
            return True

        # Splats never add ops: keep going over the shrinking list of resources.
        def count() -> int:
            return len(resources(self.best))

        if count():
            self.chunks(count, remove, "weights as zero splats", whole_first=True)

    # The binary's own cleanups, kept only when the failure survives them.
    def cleanup(self) -> None:
        src = self.session.workdir / "cleanup-in.mlir"
        dst = self.session.workdir / "cleanup-out.mlir"
        for pipeline in _CLEANUP_PIPELINES:
            src.write_text(self.text)
            record = self.session.run(src, pipeline, dst, ("-mlir-print-debuginfo",))
            if not record.ok or not dst.is_file():
                continue
            cleaned = parse_ir(dst.read_text(errors="replace"))
            if cleaned is not None:
                self._consider(cleaned[1], pipeline, cleaned[0])


# --- the fallback: lines ------------------------------------------------------------------------

_NOT_OP_LINE = re.compile(r"^\s*($|//|}|\{-#|#-}|#|\^|module\b)")


def _count_op_lines(text: str) -> int:
    """Lines that hold an op: what 'ops' means for a file the bindings cannot parse."""
    return sum(1 for line in text.splitlines() if not _NOT_OP_LINE.match(line))


class _LineReducer:
    """Delta debugging over lines, for inputs the bindings reject (parse errors, other dialects)."""

    def __init__(self, session: _Session, text: str):
        self.session = session
        self.lines = text.splitlines(keepends=True)
        self.ops_before = _count_op_lines(text)
        self.ops_now = self.ops_before

    def run(self) -> None:
        while True:
            before = len(self.lines)
            size = max(1, len(self.lines) // 2)
            while True:
                end = len(self.lines)
                while end > 0:
                    begin = max(0, end - size)
                    candidate = self.lines[:begin] + self.lines[end:]
                    text = "".join(candidate)
                    if candidate and self.session.interesting(text):
                        self.lines = candidate
                        self.ops_now = _count_op_lines(text)
                        self.session.keep(text, self.ops_now, f"dropped lines [{begin}:{end}]")
                    end = min(begin, len(self.lines))
                if size == 1:
                    break
                size //= 2
            if len(self.lines) == before:
                return
