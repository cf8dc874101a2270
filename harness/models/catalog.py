"""Named models that ``harness emit NAME`` turns into IR: OPT (stock and fixed) and the seed idioms.

A name fixes everything that decides the emitted IR (config preset, batch, sequence length,
weights' seed), so an IR file cached under a name and the versions is always the same IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import torch
from torch import nn

from harness.errors import UnknownModelError


@dataclass(frozen=True)
class Traced:
    """What an importer needs: the eager module (for FX), its TorchScript trace, the examples."""

    eager: nn.Module
    script: torch.jit.ScriptModule
    examples: tuple[torch.Tensor, ...]
    debug_name: str


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    build: Callable[[], Traced]


def _opt(preset: str, fixed: bool) -> Callable[[], Traced]:
    def build() -> Traced:
        from . import opt as opt_driver
        from . import opt_fixed

        model = opt_driver.build_opt(preset, seed=0)
        inputs = opt_driver.example_inputs(model.config, opt_driver.DEFAULT_BATCH, opt_driver.DEFAULT_SEQ)
        if fixed:
            eager = opt_fixed.FixedOPT.from_hf(model)
            traced = opt_fixed.trace_fixed(eager, inputs)
            return Traced(eager, traced.module, tuple(inputs), "FixedOPT")
        traced = opt_driver.trace_opt(model, inputs)
        return Traced(opt_driver.OPTLastHiddenState(model).eval(), traced.module, tuple(inputs), "OPTModel")
    return build


def _seed(idiom_name: str, fixed: bool) -> Callable[[], Traced]:
    def build() -> Traced:
        import warnings

        from . import seed

        idiom = seed.IDIOMS[idiom_name]
        torch.manual_seed(0)
        eager = (idiom.make_fixed if fixed else idiom.make)().eval()
        examples = idiom.examples()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
            script = torch.jit.trace(eager, examples, strict=False)
        return Traced(eager, script, examples, type(eager).__name__)
    return build


def entries() -> dict[str, Entry]:
    from . import seed

    found: dict[str, Entry] = {}
    for preset in ("tiny", "125m"):
        found[f"opt-{preset}"] = Entry(f"opt-{preset}", f"stock HF OPTModel, preset {preset}, "
                                       "batch 1, sequence 7, random weights (seed 0)", _opt(preset, False))
        found[f"opt-fixed-{preset}"] = Entry(f"opt-fixed-{preset}", f"FixedOPT (static structure) "
                                             f"from the same model as opt-{preset}", _opt(preset, True))
    for name, idiom in seed.IDIOMS.items():
        # Whether the pinned torch-mlir still fails on it (lit_tests/seed/ checks each claim).
        status = "STILL FAILS today" if idiom.known.fails_today else "lowers today"
        found[f"seed-{name}"] = Entry(f"seed-{name}", f"seed idiom: {idiom.title} [{status}: "
                                      f"{idiom.known.now}]", _seed(name, False))
        found[f"seed-{name}-fixed"] = Entry(f"seed-{name}-fixed", f"its fix: {idiom.hint}", _seed(name, True))
    return found


def get(name: str) -> Entry:
    known = entries()
    if name not in known:
        raise UnknownModelError(name, sorted(known))
    return known[name]
