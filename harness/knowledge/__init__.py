"""What the harness knows, as plain data with no imports of its own: model idioms that break
torch-mlir lowerings (``idioms``), the named fixes that answer them (``fixes``, implemented in
``harness/fixes/``) and upstream reports that may already cover a blocker (``upstream``). Any
layer may read it (like errors and versions)."""
