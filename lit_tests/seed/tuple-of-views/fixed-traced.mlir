// Seed idiom 6, tuple-of-views, the fix (one tensor out, no cache) traced through our TorchScript
// importer (2022 and now: README.md here): every view stays inside the function, gets value
// semantics, and lowers to linalg.

// RUN: %PYTHON -m harness emit seed-tuple-of-views-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=FIXED,FIXED-TRACED
