"""Versions of the packages that decide what the harness produces, read from their metadata.

Nothing is imported (torch takes seconds to import), so the IR cache key, lit's cache folder and
a bug report's version lines all read the same three numbers cheaply.
"""

from __future__ import annotations

import importlib.metadata

PACKAGES = ("torch", "torch-mlir", "transformers")


def installed(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Package -> version, "not installed" for an absent one."""
    found: dict[str, str] = {}
    for dist in packages:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = "not installed"
    return found
