"""What a numerics bisection or reduction works on: the file at the torch backend contract, its
inputs, and the reference's value of every op of its entry function.

1. The pipeline is split where the torch level ends (``harness.execute.levels``); the part
   before it runs once, debug locations kept, so every op still says where it came from.
2. The reference evaluator runs the contract-level function op by op and records every value.
   When the user's file is not at the contract (raw TorchScript), it runs that file too: if the
   two disagree, the torch-level passes changed what the model computes, and no cut of the
   contract-level IR can say more.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import torch
from torch_mlir import ir

from harness import defaults
from harness.compiler.irfile import unique_dir
from harness.compiler.mlir import new_context
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions
from harness.errors import InputFileError, NoMiscompileError, PipelineConfigError
from harness.execute.check import flatten_outputs
from harness.execute.inputs import RandomInputs, load_npz, random_inputs, save_npz
from harness.execute.levels import SplitPipeline, split_pipeline
from harness.execute.lowering import run_stage
from harness.execute.closeness import NumericsResult, Tolerances, compare
from harness.execute.probe import ProbeOptions
from harness.execute.reference import (
    OpEvaluator,
    ReferenceOptions,
    ReferenceResult,
    entry_signature,
    evaluate,
)

from .programs import Cuts, CutProgram, ValueRef, Values, value_ref


class SubjectRunOptions(Protocol):
    """What the options of every tool over a subject say about its runs (``NumericsBisectOptions``,
    ``NumericsReduceOptions``, ``RuntimeReduceOptions``): read by :meth:`SubjectOptions.of`."""

    @property
    def inputs_path(self) -> str | None: ...
    @property
    def random(self) -> RandomInputs: ...
    @property
    def function(self) -> str | None: ...
    @property
    def opt(self) -> str | None: ...
    @property
    def tolerances(self) -> Tolerances: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def out_dir(self) -> str | None: ...


@dataclass(frozen=True)
class SubjectOptions:
    pipeline: str                       # FILE -> linalg, as `harness check` takes it
    inputs_path: str | None = None      # .npz of the arguments; None: random
    random: RandomInputs = RandomInputs()
    function: str | None = None         # entry point; None: the only public function
    opt: str | None = None              # torch-mlir-opt
    tolerances: Tolerances = Tolerances()
    timeout_s: float = defaults.TIMEOUT_S  # per subprocess
    out_dir: str | None = None          # parent of the unique work folder

    @classmethod
    def of(cls, pipeline: str, options: SubjectRunOptions) -> SubjectOptions:
        """The subject's options from a tool's: the one place bisect, one_op and the reducers
        build them."""
        return cls(pipeline=pipeline, inputs_path=options.inputs_path, random=options.random,
                   function=options.function, opt=options.opt, tolerances=options.tolerances,
                   timeout_s=options.timeout_s, out_dir=options.out_dir)


@dataclass
class NumericsSubject:
    path: Path                          # the user's file
    split: SplitPipeline
    contract_path: Path                 # that file at the torch backend contract
    to_torch: RunRecord | None          # the run that brought it there (None: it was)
    context: ir.Context
    module: ir.Operation                # the contract-level module
    function: str
    inputs: list[np.ndarray]
    inputs_text: str
    reference: ReferenceResult          # of the contract-level function, every value kept
    values: Values
    cuts: Cuts
    file_reference: ReferenceResult | None  # of the user's file, when it is not at the contract
    torch_level: NumericsResult | None      # the contract's outputs against the file's
    work_dir: Path
    options: SubjectOptions
    # The float64 evaluations, made when first asked for: per op (on the reference's operands),
    # and of the whole function (on the inputs widened).
    _wide: dict[int, list | None] = field(default_factory=dict, repr=False)
    _op_evaluator: OpEvaluator | None = field(default=None, repr=False)
    _wide_outputs: list | None = field(default=None, repr=False)
    _wide_programs: dict[str, list | None] = field(default_factory=dict, repr=False)

    def wide(self, ref: ValueRef) -> torch.Tensor | npt.ArrayLike | None:
        """The float64 evaluation of the op that defines ``ref`` on the reference's values of its
        operands (None: an argument, or no float64 evaluation of it): the measure of the op's
        own error, free of what its operands carry in."""
        if ref.op < 0:
            return None
        if ref.op not in self._wide:
            self._wide[ref.op] = self._widened(ref.op)
        found = self._wide[ref.op]
        return found[ref.index] if found is not None and ref.index < len(found) else None

    def _widened(self, position: int) -> list | None:
        op = self.cuts.ops[position]
        operands = []
        for v in op.operands:
            ref = value_ref(self.cuts, v)
            if ref is None:
                return None
            value = self.values.get(ref)
            operands.append(torch.from_numpy(value) if isinstance(value, np.ndarray) else value)
        with self.context:
            if self._op_evaluator is None:
                self._op_evaluator = OpEvaluator(self.module)
            return self._op_evaluator.widened(op, operands)

    def wide_outputs(self) -> list | None:
        """The function's results evaluated in float64 on the inputs widened (the literals stay
        the float32 values they are); None when it does not evaluate so."""
        if self._wide_outputs is None:
            with self.context:
                found = self._evaluate_wide(self.module, self.inputs, self.function)
            self._wide_outputs = found if found is not None else []
        return self._wide_outputs or None

    def program_wide(self, program: CutProgram) -> list | None:
        """A piece of the function evaluated in float64 on the reference's values of its
        arguments (widened): what the piece's results are judged against, by the float64 rule
        (None: it does not evaluate so; the flat tolerance judges it)."""
        if program.text not in self._wide_programs:
            with self.context:
                module = ir.Module.parse(program.text)
                self._wide_programs[program.text] = self._evaluate_wide(
                    module.operation, program.inputs(self.values), None)
        return self._wide_programs[program.text]

    @staticmethod
    def _evaluate_wide(module: ir.Operation, inputs: list, function: str | None) -> list | None:
        try:
            found = evaluate(module, inputs, ReferenceOptions(function=function, check_types=False,
                                                              widen=True))
            return flatten_outputs(found.outputs)
        except Exception:  # a float32-only kernel, an op it cannot run: no float64 opinion
            return None

    def probe_options(self) -> ProbeOptions:
        """How a piece of this subject is lowered (the split's torch-to-linalg part) and judged."""
        return ProbeOptions(to_linalg=self.split.to_linalg, opt=self.options.opt,
                            tolerances=self.options.tolerances, timeout_s=self.options.timeout_s)

    @property
    def torch_level_changed_values(self) -> bool:
        return self.torch_level is not None and not self.torch_level.ok

    def ops(self) -> int:
        """Ops of the entry function at the contract (every op of its body)."""
        return len(self.cuts.ops)


def prepare(path: str | os.PathLike, options: SubjectOptions, *,
            reference_of_file: bool = True) -> NumericsSubject:
    """``reference_of_file=False``: do not evaluate the user's file itself (a reduction trusts
    the torch-level passes; a bisection checks them)."""
    src = Path(path)
    if not src.is_file():
        raise InputFileError(f"input IR file {src} does not exist or is not a file. Check the path.")
    split = split_pipeline(options.pipeline)
    work = unique_dir("harness-numerics-", options.out_dir)
    context = new_context()
    with context:
        module = _parse(src)
        signature = entry_signature(module.operation, options.function)
        if options.inputs_path is not None:
            inputs = load_npz(options.inputs_path, signature)
            inputs_text = f"from {options.inputs_path}"
        else:
            inputs = random_inputs(signature, options.random)
            inputs_text = options.random.describe()
        save_npz(work / "inputs.npz", inputs)
        file_reference = None
        to_torch = None
        contract_path = src
        if split.to_torch and reference_of_file:
            file_reference = evaluate(module.operation, inputs, ReferenceOptions(function=signature.name))
        if split.to_torch:
            contract_path = work / f"{src.name.removesuffix('.mlir')}.torch.mlir"
            to_torch = run_stage(src, split.to_torch, output_path=contract_path, opt=options.opt,
                                 options=RunOptions(timeout_s=options.timeout_s,
                                                    extra_args=("-mlir-print-debuginfo",)))
            if not to_torch.ok:
                raise NoMiscompileError(str(src), options.pipeline, "fails",
                                        f"{split.to_torch} ends {to_torch.outcome.value}: "
                                        f"{to_torch.signature}")
            module = _parse(contract_path)
        function = _contract_function(module.operation, options.function if not split.to_torch else None)
        reference = evaluate(module.operation, inputs, ReferenceOptions(function=function, keep_values=True))
        torch_level = None
        if file_reference is not None:
            torch_level = compare(flatten_outputs(reference.outputs),
                                  flatten_outputs(file_reference.outputs), options.tolerances)
        values = Values(inputs, reference)
        cuts = Cuts(module.operation, function, values)
    return NumericsSubject(src, split, contract_path, to_torch, context, module.operation, function, inputs,
                   inputs_text, reference, values, cuts, file_reference, torch_level, work, options)


def _parse(path: Path) -> ir.Module:
    try:
        return ir.Module.parseFile(os.fspath(path))
    except ir.MLIRError as e:
        raise InputFileError(
            f"cannot parse {path}: {str(e).splitlines()[0][:300]}. A numerics bisection takes "
            "torch-dialect IR (imported, or at the torch backend contract)."
        ) from None


def _contract_function(module_op: ir.Operation, name: str | None) -> str:
    """The entry function at the contract: the given one, else the only public one. A raw
    TorchScript method (``__torch__.M.forward``) is ``@forward`` after torchscript-to-torch."""
    from harness.execute.signature import find_function, function_name

    return function_name(find_function(module_op, name, "the IR at the torch backend contract"))


def pipeline_name(textual: str) -> str:
    """Our name for a textual pipeline when it is one of ours unchanged (torch-to-linalg), or
    a target's stages chained (torch-to-tosa,tosa-to-linalg)."""
    from harness.compiler import pipelines
    from harness.compiler.targets import TARGETS
    from harness.execute.levels import join
    from harness.compiler.pipeline_text import parse_pipeline

    known = pipelines.default()
    for name in known.pipelines:
        try:
            if known.resolve(name) == textual:
                return name
        except PipelineConfigError:  # a pipeline that needs options is no match
            continue
    for path in TARGETS.values():
        if len(path.stages) > 1 and join([p for stage in path.stages
                                          for p in parse_pipeline(known.resolve(stage))]) == textual:
            return ",".join(path.stages)
    return textual
