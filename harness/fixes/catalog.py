"""The catalog: one instance of each fix, and which of them answer a blocker.

The names and descriptions are ``knowledge.fixes.FIXES`` (what explain, bisect and report
print); ``tests/fixes/test_fix_cli.py`` checks the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from harness.errors import UsageError
from harness.knowledge.fixes import FIXES

from .autograd import AutogradFunctionForward
from .base import BlockerSeen, Fix
from .bitwise import BitwiseAndOr
from .buffers import PersistentBuffers
from .experts import MoeBatchedExperts
from .sdpa import SdpaExplicitScale
from .tosa import TosaCastViaI32, TosaGatherViaI32, TosaVarianceF32

CATALOG: tuple[Fix, ...] = (BitwiseAndOr(), SdpaExplicitScale(), PersistentBuffers(),
                            AutogradFunctionForward(), MoeBatchedExperts(), TosaVarianceF32(),
                            TosaCastViaI32(), TosaGatherViaI32())


def _agree_with_knowledge() -> None:
    """The catalog implements exactly the fixes ``knowledge.fixes`` names, at the same levels:
    explain, bisect and report point at names that ``harness fix`` runs."""
    names = [f.name for f in CATALOG]
    if sorted(names) != sorted(FIXES) or any(f.level is not FIXES[f.name].level for f in CATALOG):
        raise AssertionError(f"harness.fixes implements {names}, harness.knowledge.fixes names "
                             f"{list(FIXES)}: add or rename one so both list the same fixes")


_agree_with_knowledge()


def by_name(name: str, catalog: Sequence[Fix] = CATALOG) -> Fix:
    for fix in catalog:
        if fix.name == name:
            return fix
    raise UsageError(f"unknown fix {name!r}; the fixes are: {', '.join(f.name for f in catalog)} "
                     "('harness fix --list' says what each changes).")


def choose(names: Iterable[str], catalog: Sequence[Fix] = CATALOG) -> tuple[Fix, ...]:
    """The fixes named (each checked), in the catalog's order; all of them for no names."""
    wanted = [n.strip() for name in names for n in name.split(",") if n.strip()]
    if not wanted:
        return tuple(catalog)
    chosen = {by_name(n, catalog).name for n in wanted}
    return tuple(f for f in catalog if f.name in chosen)


def answering(blockers: Sequence[BlockerSeen],
              catalog: Sequence[Fix] = CATALOG) -> list[tuple[Fix, BlockerSeen]]:
    """Each fix that answers one of ``blockers``, with the first blocker it answers, in the
    catalog's order."""
    out = []
    for fix in catalog:
        hit = next((b for b in blockers if fix.answers(b)), None)
        if hit is not None:
            out.append((fix, hit))
    return out
