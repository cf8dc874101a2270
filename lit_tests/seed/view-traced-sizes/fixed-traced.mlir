// Seed idiom 5, view-traced-sizes, the fix (int sizes, constants of the trace) traced through our
// TorchScript importer (2022 and now: README.md here): no aten.Int.Tensor, and the same linalg
// as the idiom.

// RUN: %PYTHON -m harness emit seed-view-traced-sizes-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.mlir
// FIXED-IMPORT-NOT: torch.aten.Int.Tensor
// FIXED-IMPORT:     torch.aten.view

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
