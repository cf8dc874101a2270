"""The backends, by name: the one table a new backend is registered in.

A backend is one module that implements :class:`harness.execute.backend.Backend`; its name is a
member of :class:`harness.execute.backend_names.BackendName`. Nothing else in the harness names
a backend's module.
"""

from __future__ import annotations

from collections.abc import Callable

from .backend import Backend
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
