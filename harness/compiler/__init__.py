"""torch-mlir-opt as a service: the binary, the pipelines, the subprocess runner, its records,
crash parsing and IR files. Knows nothing of torch."""
