"""The backends, by name: the one table a new backend is registered in.

A backend is one module that implements :class:`harness.execute.backend.Backend`; its name is a
member of :class:`harness.execute.backend_names.BackendName`. Nothing else in the harness names
a backend's module.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from harness.errors import UsageError

from .backend import Backend, SearchRunner
from .backend_iree import IreeBackend
from .backend_names import BackendName
from .backend_ref import RefBackend

BACKENDS: dict[BackendName, Callable[[], Backend]] = {
    BackendName.REFBACKEND: RefBackend,
    BackendName.IREE: IreeBackend,
}


def backend(name: BackendName | str) -> Backend:
    """A fresh backend of ``name`` (each port's numbers check makes its own: it keeps timings)."""
    return BACKENDS[BackendName.parse(name)]()


def search_runner(name: BackendName | str = BackendName.REFBACKEND, *, timeout_s: float,
                  work_dir: str | os.PathLike | None) -> SearchRunner:
    """The numbers search's runner on backend ``name``; a backend the search does not speak for
    is a usage error naming the one that it does."""
    runner = backend(name).search_runner(timeout_s=timeout_s, work_dir=work_dir)
    if runner is None:
        speaks = ", ".join(n.value for n, make in BACKENDS.items() if make().searchable)
        raise UsageError(f"the numbers search does not run on backend '{BackendName.parse(name).value}': "
                         f"it cuts the function into pieces and runs each, which it does on {speaks}. "
                         "Search there; a backend's own mismatch is shown by its port's numbers.")
    return runner


def child_modules() -> frozenset[str]:
    """Every backend's child-process modules: what the warm server preloads and forks."""
    return frozenset(m for make in BACKENDS.values() for m in make().child_modules)
