// Seed idiom 1, arange-traced-size, the fix `torch.arange(int(mask.size(-1)))` exported through
// torch.export and the FX importer (2022 and now: README.md here): it lowers to the same linalg
// as the idiom.

// RUN: %PYTHON -m harness emit seed-arange-traced-size-fixed --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
