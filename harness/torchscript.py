"""``from harness import torchscript as torch_mlir``: the old ``torch_mlir.compile`` API.

A thin alias kept for users' scripts; the code lives in ``harness.frontends.compat``.
"""

from harness.frontends.compat import *  # noqa: F401,F403
from harness.frontends.compat import __all__  # noqa: F401
