"""``from harness import torchscript as torch_mlir``: the older name of :mod:`harness.compat`
(the old ``torch_mlir.compile`` API), kept for scripts that import it."""

from harness.compat import *  # noqa: F403
from harness.compat import __all__  # noqa: F401
