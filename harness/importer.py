"""``harness.importer``: the importer's former path, kept as an alias for scripts (and the
conformance shim) that import upstream's ``jit_ir_importer`` names from it.

The code lives in ``harness.frontends.torchscript``.
"""

from harness.frontends.torchscript import *  # noqa: F403
from harness.frontends.torchscript import __all__  # noqa: F401
