// Seed idiom 6, tuple-of-views, the fix (one tensor out, no cache) exported through torch.export
// and the FX importer (2022 and now: README.md here): it lowers to the same linalg as the traced
// fix.

// RUN: %PYTHON -m harness emit seed-tuple-of-views-fixed --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=FIXED,FIXED-EXPORTED
