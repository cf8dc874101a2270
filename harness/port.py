"""Porting one model: import it through a frontend, write the IR, run the stages, summarize.

The data path end to end for one program: the frontend writes ``<stem>.torch.mlir``; each
pipeline stage runs in a torch-mlir-opt subprocess on the previous stage's file, with debug
locations printed so a failure still names the Python line. ``port_opt`` is ``harness opt``:
stock OPT and the project's FixedOPT through it.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .compiler.irfile import WriteOptions, unique_dir, write_module
from .compiler.records import Diagnostic
from .compiler.runner import DEFAULT_TIMEOUT_S, repro_command
from .compiler.stages import (
    FunctionSignature,
    StageOptions,
    StageResult,
    public_functions,
    run_stages,
)
from .frontends.base import FrontendName, Program, frontend
from .tools.source import excerpt

LINALG_STAGES = ("torch-to-linalg",)


@dataclass
class PortResult:
    program: str
    frontend: FrontendName
    ir_path: str
    import_seconds: float
    import_stats: object | None
    stages: list[StageResult] = field(default_factory=list)
    keep_weights: bool = False
    opt: str | None = None

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)

    def failed_stage(self) -> StageResult | None:
        return next((s for s in self.stages if not s.ok), None)

    def lowered(self) -> tuple[str, list[FunctionSignature]]:
        """What the last stage's output is (its pipeline's declared contract) and its public
        function signatures, read through the MLIR bindings; ("", []) unless every stage passed."""
        if not self.stages or not self.ok:
            return "", []
        last = self.stages[-1]
        return last.contract, public_functions(last.output_path, opt=self.opt)


def port_program(program: Program, out_dir: Path, *, stem: str,
                 frontend_name: FrontendName = FrontendName.TORCHSCRIPT,
                 stages: Sequence[str] | None = None, keep_weights: bool = False,
                 stage_options: StageOptions = StageOptions()) -> PortResult:
    """Imports ``program`` and runs ``stages`` (default: the frontend's pipeline to the backend
    contract, then torch-to-linalg) on it, in ``out_dir``."""
    chosen = frontend(frontend_name)
    imported = chosen.import_program(program)
    start = time.monotonic()
    ir_path = write_module(imported.module, out_dir / f"{stem}.torch.mlir",
                           WriteOptions(keep_weights=keep_weights))
    seconds = imported.seconds + time.monotonic() - start
    if stages is None:
        stages = (chosen.torch_pipeline, *LINALG_STAGES)
    result = PortResult(program.name, chosen.name, str(ir_path), seconds, imported.stats,
                        keep_weights=keep_weights, opt=stage_options.opt)
    result.stages = run_stages(ir_path, stages, out_dir, stem=stem, options=stage_options)
    return result


def source_excerpt(diag: Diagnostic, context: int = 2) -> list[str]:
    """The Python lines around a diagnostic's location, when the file is readable."""
    return excerpt(diag.file, diag.line, context)


def render(result: PortResult) -> list[str]:
    """The human summary of one port."""
    st = result.import_stats
    weights = "weights kept" if result.keep_weights else "weights elided"
    if st is not None:
        lines = [f"imported: {st.nodes} TorchScript nodes of {len(st.node_kinds)} kinds, "
                 f"{st.class_types} class types, {st.tensor_bytes / 2**20:.1f} MiB of tensors "
                 f"in {result.import_seconds:.2f} s"]
    else:
        lines = [f"imported through {result.frontend.value} in {result.import_seconds:.2f} s"]
    lines.append(f"  -> {result.ir_path} ({weights}, debug locations on)")
    for stage in result.stages:
        rec = stage.record
        if stage.ok:
            lines.append(f"{stage.name}: ok in {rec.elapsed_s:.2f} s -> {stage.output_path}")
            continue
        lines.append(f"{stage.name}: FAILED ({rec.outcome.value}{', ' + rec.signal if rec.signal else ''}) "
                     f"after {rec.elapsed_s:.2f} s")
        diag = rec.first_error()
        if diag is not None:
            lines.append(f"  {diag.location}: error: {diag.message}")
            lines += ["  " + s for s in source_excerpt(diag)]
        elif rec.stderr.strip():
            lines += ["  " + s for s in rec.stderr.strip().splitlines()[:8]]
        lines.append(f"  reproduce: {repro_command(stage.pipeline, rec.input_path, shlex.quote(rec.binary))}")
    contract, functions = result.lowered()
    for signature in functions:
        lines.append(f"lowered to the {contract}: {signature}")
    return lines


# ---------------------------------------------------------------------------------------------
# harness opt: stock OPT and FixedOPT

@dataclass(frozen=True)
class OptPortOptions:
    preset: str = "125m"                       # models.opt preset: 125m or tiny
    overrides: dict = field(default_factory=dict)  # OPTConfig fields to set
    batch: int = 1
    seq: int = 7                               # the 2022 walkthrough's prompt length
    seed: int = 0                              # seed of the random weights
    variants: tuple[str, ...] = ("stock", "fixed")
    torch_only: bool = False                   # stop at the torch backend contract
    keep_weights: bool = False
    out_dir: str = "harness-out"               # parent of each variant's unique folder
    opt: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S       # per stage
    invocation: str = "harness"                # how the user started harness, for next steps


@dataclass
class VariantOutcome:
    stem: str
    result: PortResult
    out_dir: Path
    summary: str
    next_steps: list[str] = field(default_factory=list)


def _explain(failed: StageResult, options: OptPortOptions):
    """The failed stage explained, with its blockers for a legalization failure."""
    from .compiler.outcomes import Outcome
    from .tools.blockers import analyze
    from .tools.explain import explain_record

    rec = failed.record
    analysis = None
    if rec.outcome is Outcome.LEGALIZATION_FAILURE:
        analysis = analyze(rec.input_path, failed.pipeline, opt=rec.binary, timeout_s=options.timeout_s)
    return explain_record(rec, analysis=analysis)


def port_opt(options: OptPortOptions, say: Callable[[str], None]) -> list[VariantOutcome]:
    """Builds OPT from its config with random weights, then ports each variant, saying what it
    does as it goes. Returns one outcome per variant."""
    from .models import opt as opt_driver
    from .models import opt_fixed

    config = opt_driver.make_config(options.preset, options.overrides)
    set_text = ", ".join(f"{k}={v}" for k, v in options.overrides.items())
    say(f"OPT port: preset '{options.preset}'" + (f" with {set_text}" if set_text else "")
        + f": {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
        f"{config.num_attention_heads} heads, ffn {config.ffn_dim}, vocab {config.vocab_size}; "
        f"batch {options.batch}, sequence {options.seq}; random weights (seed {options.seed})")
    model = opt_driver.build_opt(options.preset, options.overrides, seed=options.seed)
    inputs = opt_driver.example_inputs(config, options.batch, options.seq)
    stages = ("torchscript-to-torch",) if options.torch_only else ("torchscript-to-torch", "torch-to-linalg")
    outcomes = []
    for variant in options.variants:
        if variant == "fixed":
            eager = opt_fixed.FixedOPT.from_hf(model)
            traced = opt_fixed.trace_fixed(eager, inputs)
            stem, title, name = "opt-fixed", "the project's rewrite of OPT with static structure (FixedOPT)", "FixedOPT"
        else:
            traced = opt_driver.trace_opt(model, inputs)
            eager = opt_driver.OPTLastHiddenState(model).eval()
            stem, title, name = "opt", "stock Hugging Face OPTModel", "OPTModel"
        say(f"\n== {title} ==")
        say("settings:")
        for sentence in traced.settings.sentences():
            say(f"  - {sentence}")
        counts = traced.warning_counts()
        if counts:
            say("  - Warnings while tracing: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
        out_dir = unique_dir(f"{stem}-{options.preset}-", parent=options.out_dir)
        result = port_program(Program(name, eager, tuple(inputs), traced.module), out_dir, stem=stem,
                              stages=stages, keep_weights=options.keep_weights,
                              stage_options=StageOptions(opt=options.opt, timeout_s=options.timeout_s))
        for line in render(result):
            say(line)
        outcome = VariantOutcome(stem, result, out_dir, "")
        if result.ok:
            outcome.summary = f"lowers through {' and '.join(stages)}"
        else:
            failed = result.failed_stage()
            outcome.summary = f"fails in {failed.name} ({failed.record.outcome.value})"
            explained = _explain(failed, options)
            for b in explained.blockers[:1]:
                where = b.user_frame()
                at = f" at {Path(where.file).name}:{where.line}" if where is not None else ""
                fix = f" (fix: {b.fixes[0].name})" if b.fixes else ""
                outcome.summary += f": {b.op}{at} has no lowering{fix}"
                say(f"  blocker: {b.op}{at}: {b.lowering_line()}")
                for s in b.symptoms:
                    say(f"    (the error names {s.op}, left only because {b.op} was not converted)")
                for hint in b.hints[:1]:
                    say(f"  hint ({hint.name}): {hint.hint}")
            if not explained.blockers:
                diag = failed.record.first_error()
                if diag is not None:
                    outcome.summary += f" at {Path(diag.file).name}:{diag.line}"
                for explanation in explained.explanations[:1]:
                    for hint in explanation.hints[:1]:
                        say(f"  hint ({hint.name}): {hint.hint}")
            failing = shlex.quote(failed.record.input_path)
            # The binary that ran: pasted without it, the commands would run the wheel's.
            opt = f" --opt {shlex.quote(os.path.abspath(options.opt))}" if options.opt else ""
            outcome.next_steps = [
                f"{options.invocation} {tool} {failing} --pipeline {failed.name}{opt}{extra}"
                for tool, extra in (("explain", ""), ("bisect", ""),
                                    ("reduce", f" -o {shlex.quote(str(out_dir / 'reduced.mlir'))}"),
                                    ("report", f" --out {shlex.quote(str(out_dir / 'report'))}"))]
        outcome.summary += f"; files in {out_dir}"
        outcomes.append(outcome)
    return outcomes
