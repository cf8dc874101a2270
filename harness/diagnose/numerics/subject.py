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
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
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
    ReferenceOptions,
    ReferenceResult,
    entry_signature,
    evaluate,
)

from .programs import Cuts, Values


class NumericsRun(Protocol):
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
    def of(cls, pipeline: str, options: NumericsRun) -> SubjectOptions:
        """The subject's options from a tool's: the one place bisect, one_op and the reducers
        build them."""
        return cls(pipeline=pipeline, inputs_path=options.inputs_path, random=options.random,
                   function=options.function, opt=options.opt, tolerances=options.tolerances,
                   timeout_s=options.timeout_s, out_dir=options.out_dir)


@dataclass
class Subject:
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
            reference_of_file: bool = True) -> Subject:
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
    return Subject(src, split, contract_path, to_torch, context, module.operation, function, inputs,
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
    """Our name for a textual pipeline when it is one of ours unchanged (torch-to-linalg)."""
    from harness.compiler import pipelines

    known = pipelines.default()
    for name in known.pipelines:
        try:
            if known.resolve(name) == textual:
                return name
        except PipelineConfigError:  # a pipeline that needs options is no match
            continue
    return textual
