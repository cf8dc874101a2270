"""torch-mlir-harness: import PyTorch models into torch-mlir and find out why lowering fails."""

__version__ = "0.1.0"
