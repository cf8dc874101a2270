"""Numerics: run lowered IR on the project's RefBackend and compare with a reference.

- ``refbackend``: linalg-on-tensors -> LLVM dialect (pipelines.toml ``linalg-to-llvm``, on the
  wheel's MLIR Python bindings in a child process) -> the wheel's ExecutionEngine.
- ``reference``: a torch-dialect function evaluated op by op in eager PyTorch.
- ``numerics``: outputs compared with per-dtype tolerances: ``verified`` or ``numerics-mismatch``.
- ``check``: the three together, behind ``harness check``.
"""
