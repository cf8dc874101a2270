"""``from harness import compat as torch_mlir``: the old ``torch_mlir.compile`` API, for users'
scripts written against torch-mlir's removed TorchScript entry point. A thin alias (named for
what it is, beside the TorchScript importer in ``harness.frontends.torchscript``); the code
lives in ``harness.frontends.compat``. ``harness.torchscript`` is the same alias under its
older name.
"""

from harness.frontends.compat import *  # noqa: F403
from harness.frontends.compat import __all__  # noqa: F401
