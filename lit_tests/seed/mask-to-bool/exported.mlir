// Seed idiom 4, mask-to-bool, exported through torch.export and the FX importer (2022 and now:
// README.md here): it lowers to the same linalg as the traced import.

// RUN: %PYTHON -m harness emit seed-mask-to-bool --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
