"""What the harness knows, as plain data with no imports of its own: model idioms that break
torch-mlir lowerings and their fixes. Any layer may read it (like errors and versions)."""
