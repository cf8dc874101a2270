// Seed idiom 3, mask-to-dtype-device, the fix (the mask built in x's dtype, no `.to`) exported
// through torch.export and the FX importer (2022 and now: README.md here): it lowers to the same
// linalg as the idiom.

// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device-fixed --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
